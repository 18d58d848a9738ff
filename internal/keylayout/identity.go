package keylayout

import (
	"strconv"
	"strings"

	"github.com/ratelimitkit/ratelimit/internal/secrethash"
)

// MaxIdentityLen is the longest identity used verbatim in a key; longer
// ones are replaced by their hash.
const MaxIdentityLen = 64

// hashedMark starts every hashed identity. It is outside the safe byte
// set, so a hashed identity never equals a verbatim one.
const hashedMark = "~"

// SafeIdentity returns id as it appears inside a key's hash tag: id itself
// when it is at most [MaxIdentityLen] bytes of safe characters (letters,
// digits and "-_.:@/+=!*|"), otherwise "~" followed by a 22-character
// base64url SHA-256 of id ([secrethash.Hash22]). The result never contains
// '{', '}', spaces or control bytes.
func SafeIdentity(id string) string {
	if id != "" && len(id) <= MaxIdentityLen && isSafe(id) {
		return id
	}
	return hashedMark + secrethash.Hash22(id)
}

func isSafe(id string) bool {
	for i := 0; i < len(id); i++ {
		if c := id[i]; c >= 128 || safeBytes[c>>6]&(1<<(c&63)) == 0 {
			return false
		}
	}
	return true
}

// safeBytes is the set of bytes [SafeIdentity] keeps (letters, digits,
// "-_." and ":@/+=!*|"), as a bit set over 0-127: one load per byte of an
// identity, on every request.
var safeBytes = [2]uint64{
	(1<<10-1)<<'0' | 1<<'-' | 1<<'.' | 1<<':' | 1<<'/' | 1<<'+' | 1<<'=' | 1<<'!' | 1<<'*',
	(1<<26-1)<<('A'-64) | (1<<26-1)<<('a'-64) | 1<<('_'-64) | 1<<('@'-64) | 1<<('|'-64),
}

// Identity joins parts into one unambiguous identity: each part prefixed
// by its length and a colon, parts separated by '|', so that
// Identity("a:b", "c") and Identity("a", "b:c") differ.
func Identity(parts ...string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(strconv.Itoa(len(p)))
		b.WriteByte(':')
		b.WriteString(p)
	}
	return b.String()
}
