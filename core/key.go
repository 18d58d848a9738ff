package core

import (
	"strings"

	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// MaxIdentityLen is the longest identity used verbatim in a key, 64
// bytes; longer ones are replaced by their hash.
const MaxIdentityLen = keylayout.MaxIdentityLen

// SafeIdentity returns id as it appears inside a key's hash tag: id itself
// when it is at most [MaxIdentityLen] bytes of safe characters
// (letters, digits and "-_.:@/+=!*|"), otherwise "~" followed by a
// 22-character base64url SHA-256 of id. The result can never contain '{',
// '}', spaces or control bytes, so a client cannot choose its Cluster slot,
// break out of the hash tag, collide with another identity or bloat memory.
func SafeIdentity(id string) string {
	return keylayout.SafeIdentity(id)
}

// Identity joins parts into one unambiguous identity, for composite keys
// (API key + IP, account + IP). Each part is length-prefixed, so
// Identity("a:b", "c") and Identity("a", "b:c") differ.
func Identity(parts ...string) string {
	return keylayout.Identity(parts...)
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
	return keylayout.Key(b.prefix, SafeIdentity(id), l.EffectiveName(), l.Algorithm.Tag())
}

// AppendKeys appends the keys of every limit for the client id to dst.
func (b KeyBuilder) AppendKeys(dst []string, id string, limits []Limit) []string {
	head := keylayout.Head(b.prefix) + SafeIdentity(id)
	for _, l := range limits {
		dst = append(dst, head+keylayout.Suffix(l.EffectiveName(), l.Algorithm.Tag()))
	}
	return dst
}
