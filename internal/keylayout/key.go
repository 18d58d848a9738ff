package keylayout

import "strings"

// Head returns what every key under prefix starts with, up to the
// identity: prefix + ":{".
func Head(prefix string) string {
	return prefix + ":{"
}

// Suffix returns what follows the identity in the key of a limit named
// limit with the algorithm tag alg: "}:" + limit + ":" + alg.
func Suffix(limit, alg string) string {
	return "}:" + limit + ":" + alg
}

// Key returns the key of the limit named limit, with the algorithm tag
// alg, of the client id under prefix: Head(prefix) + id + Suffix(limit,
// alg). id must be safe already ([SafeIdentity]).
func Key(prefix, id, limit, alg string) string {
	return Head(prefix) + id + Suffix(limit, alg)
}

// Client returns the name of the client whose hash tag is tag under
// prefix, the part of its keys that is the same for all of its limits
// but the final ':': prefix + ":{" + tag + "}".
func Client(prefix, tag string) string {
	return Head(prefix) + tag + "}"
}

// ClientHead returns what every key of the client whose hash tag is tag
// starts with under prefix: Client(prefix, tag) + ":". All of them share
// its Cluster slot.
func ClientHead(prefix, tag string) string {
	return Client(prefix, tag) + ":"
}

// A Name is a key split along the layout.
type Name struct {
	Prefix    string // before the first ":{" (it may hold colons: "rl:api")
	Tag       string // between the braces: the safe identity
	Limit     string // the limit name
	Algorithm string // the algorithm tag
	HasTag    bool   // the key has a prefix and a hash tag
	OK        bool   // the key follows the whole layout
}

// Parse splits key along the layout. A prefix has no braces but may have
// colons, so the prefix is what comes before the first ":{", and the tag
// what follows it up to the next "}:" (a safe identity has no braces).
// A key with a prefix and a tag but no "<limit>:<algorithm>" after them
// has HasTag only.
func Parse(key string) Name {
	prefix, rest, found := strings.Cut(key, ":{")
	if !found || prefix == "" {
		return Name{}
	}
	tag, rest, found := strings.Cut(rest, "}:")
	if !found || tag == "" {
		return Name{}
	}
	n := Name{Prefix: prefix, Tag: tag, HasTag: true}
	limit, alg, found := strings.Cut(rest, ":")
	if !found || limit == "" || alg == "" || strings.Contains(alg, ":") {
		return n
	}
	n.Limit, n.Algorithm, n.OK = limit, alg, true
	return n
}

// ValidTag reports whether tag can stand between the braces of a key: it
// is not empty and has no braces, spaces or control bytes. Every
// [SafeIdentity] is one.
func ValidTag(tag string) bool {
	if tag == "" {
		return false
	}
	for i := 0; i < len(tag); i++ {
		if c := tag[i]; c <= ' ' || c == 0x7f || c == '{' || c == '}' {
			return false
		}
	}
	return true
}

// TagBounds returns where the Redis Cluster hash tag of key starts and
// ends (key[start:end], key[end] being the closing '}'): the bytes between
// the first '{' and the next '}' when they are not empty. It returns 0 and
// len(key) when key has no tag: the whole key then picks the slot. It is a
// plain loop: the tag of a key of ours starts a few bytes in, and two calls
// of strings.IndexByte cost more than the bytes they skip.
func TagBounds(key string) (start, end int) {
	for i := 0; i < len(key); i++ {
		if key[i] != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j == i+1 { // "{}": no tag
					break
				}
				return i + 1, j
			}
		}
		break
	}
	return 0, len(key)
}

// LockoutTag stands in a key where an algorithm tag would: the key
// <prefix>:{<id>}:<limit name>:x holds the lockout state of that limit
// (core.Lockout) beside its own state, under the same hash tag. No
// algorithm has it.
const LockoutTag = "x"

// LockoutKey returns the key of the lockout state of the limit whose state
// key is key: key with its algorithm tag, what follows its last ':',
// replaced by [LockoutTag]. The stores derive it from the state key a take
// is given, so that it shares the client's hash tag and its Cluster slot.
func LockoutKey(key string) string {
	return string(AppendLockoutKey(make([]byte, 0, len(key)), key))
}

// AppendLockoutKey appends [LockoutKey](key) to dst, so that a store can
// look it up in a map without allocating.
func AppendLockoutKey(dst []byte, key string) []byte {
	i := strings.LastIndexByte(key, ':')
	if i < 0 { // not a key of the layout: the tag is appended
		return append(append(append(dst, key...), ':'), LockoutTag...)
	}
	return append(append(dst, key[:i+1]...), LockoutTag...)
}
