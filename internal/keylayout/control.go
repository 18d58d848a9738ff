package keylayout

import "fmt"

// ControlTag is the hash tag of the keys that keep the controls of a key
// prefix (core.ControlStore): <prefix>:{~ctl}:<part>, all in one Cluster
// slot. No client has this tag: a verbatim identity never contains '~',
// and a hashed one is '~' and 22 more bytes ([SafeIdentity]).
const ControlTag = "~ctl"

// The parts of the control keys of a prefix (docs/redis-protocol.md,
// "Controls"), each the last part of a key [ControlKey] builds.
const (
	ControlRecords    = "r" // HASH: client id → record
	ControlExpiries   = "e" // ZSET: client id scored by the expiry of its record (µs)
	ControlLog        = "l" // ZSET: client id scored by the generation of its last change
	ControlGeneration = "g" // STRING: the generation of the prefix's controls
	ControlTrimmed    = "t" // STRING: the newest generation no longer in the log
)

// ControlKey returns the key of part (one of ControlRecords ...
// ControlTrimmed) of the controls of prefix: ClientHead(prefix,
// ControlTag) + part.
func ControlKey(prefix, part string) string {
	return ClientHead(prefix, ControlTag) + part
}

// IsControl reports whether n names a key of controls ([ControlTag]), not
// a client's key.
func (n Name) IsControl() bool {
	return n.HasTag && n.Tag == ControlTag
}

// MaxPrefixLen is the longest key prefix.
const MaxPrefixLen = 64

// ValidPrefix reports whether prefix can start a key: 1 to [MaxPrefixLen]
// bytes of letters, digits and "_-.:", as core.NewKeyBuilder requires.
func ValidPrefix(prefix string) bool {
	if prefix == "" || len(prefix) > MaxPrefixLen {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// CheckSpace returns an error naming space unless it is a key prefix
// ([ValidPrefix]): the space of controls is a limiter's prefix.
func CheckSpace(space string) error {
	if !ValidPrefix(space) {
		return fmt.Errorf("control space %.80q: want a key prefix, 1 to %d bytes of letters, digits and \"_-.:\"", space, MaxPrefixLen)
	}
	return nil
}

// CheckID returns an error naming id unless it can be the client of a
// control record: a safe identity ([SafeIdentity]), which is a valid tag of
// at most [MaxIdentityLen] bytes.
func CheckID(id string) error {
	if len(id) > MaxIdentityLen || !ValidTag(id) {
		return fmt.Errorf("control id %.80q: want a safe identity (SafeIdentity): 1 to %d bytes without braces, spaces or control bytes", id, MaxIdentityLen)
	}
	return nil
}

// CheckClientKeys returns an error naming the first key of keys that is
// not a key of the client of keys[0]: every key must have the same hash
// tag (one Cluster slot), and it must not be [ControlTag].
func CheckClientKeys(keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	tag := tagOf(keys[0])
	for i, k := range keys {
		switch t := tagOf(k); {
		case t == "":
			return fmt.Errorf("keys[%d] %.80q has no hash tag: want the keys of one client", i, k)
		case t == ControlTag:
			return fmt.Errorf("keys[%d] %.80q is a key of controls, not of a client", i, k)
		case t != tag:
			return fmt.Errorf("keys[%d] %.80q has hash tag %.80q, keys[0] %.80q: want the keys of one client", i, k, t, tag)
		}
	}
	return nil
}

// tagOf returns the hash tag of key, or "" when it has none.
func tagOf(key string) string {
	start, end := TagBounds(key)
	if start == 0 {
		return ""
	}
	return key[start:end]
}
