package core

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
)

// MaxIdentityLen is the longest identity used verbatim in a key; longer
// ones are replaced by their hash.
const MaxIdentityLen = 64

// hashedIdentityMark starts every hashed identity. It is outside the safe
// byte set, so a hashed identity never equals a verbatim one.
const hashedIdentityMark = "~"

// SafeIdentity returns id as it appears inside a key's hash tag: id itself
// when it is at most [MaxIdentityLen] bytes of safe characters
// (letters, digits and "-_.:@/+=!*|"), otherwise "~" followed by a
// 22-character base64url SHA-256 of id. The result can never contain '{',
// '}', spaces or control bytes, so a client cannot choose its Cluster slot,
// break out of the hash tag, collide with another identity or bloat memory.
func SafeIdentity(id string) string {
	if id != "" && len(id) <= MaxIdentityLen && isSafeIdentity(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return hashedIdentityMark + base64.RawURLEncoding.EncodeToString(sum[:16])
}

func isSafeIdentity(id string) bool {
	for i := 0; i < len(id); i++ {
		if c := id[i]; c >= 128 || safeIdentityBytes[c>>6]&(1<<(c&63)) == 0 {
			return false
		}
	}
	return true
}

// safeIdentityBytes is the set of bytes [SafeIdentity] keeps (name bytes
// and ":@/+=!*|"), as a bit set over 0-127: one load per byte of an
// identity, on every request.
var safeIdentityBytes = [2]uint64{
	(1<<10-1)<<'0' | 1<<'-' | 1<<'.' | 1<<':' | 1<<'/' | 1<<'+' | 1<<'=' | 1<<'!' | 1<<'*',
	(1<<26-1)<<('A'-64) | (1<<26-1)<<('a'-64) | 1<<('_'-64) | 1<<('@'-64) | 1<<('|'-64),
}

// Identity joins parts into one unambiguous identity, for composite keys
// (API key + IP, account + IP). Each part is length-prefixed, so
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

// A KeyBuilder makes the store keys of a client:
//
//	<prefix>:{<safe identity>}:<limit name>:<algorithm tag>
//
// The identity is the Redis Cluster hash tag, so all keys of one client live
// in one slot and one script can take them all. The zero value is not
// usable; make one with [NewKeyBuilder].
type KeyBuilder struct {
	prefix string
}

// NewKeyBuilder returns a KeyBuilder for prefix, which must be 1 to 64
// bytes of [A-Za-z0-9_.-:] and no braces.
func NewKeyBuilder(prefix string) (KeyBuilder, error) {
	if err := validatePrefix(prefix); err != nil {
		return KeyBuilder{}, err
	}
	return KeyBuilder{prefix: prefix}, nil
}

func validatePrefix(prefix string) error {
	// A prefix may also contain ':' to namespace (e.g. "app:rl").
	return validateName("key prefix", strings.ReplaceAll(prefix, ":", "_"), 64)
}

// Key returns the key of limit l for the client id. id is passed through
// [SafeIdentity].
func (b KeyBuilder) Key(id string, l Limit) string {
	return b.prefix + ":{" + SafeIdentity(id) + "}:" + l.EffectiveName() + ":" + l.Algorithm.Tag()
}

// AppendKeys appends the keys of every limit for the client id to dst.
func (b KeyBuilder) AppendKeys(dst []string, id string, limits []Limit) []string {
	head := b.prefix + ":{" + SafeIdentity(id) + "}:"
	for _, l := range limits {
		dst = append(dst, head+l.EffectiveName()+":"+l.Algorithm.Tag())
	}
	return dst
}
