// Package keylayout is the layout of a client's store keys, written once
// for core, the stores, keyfunc and the ratelimit command:
//
//	<prefix>:{<safe identity>}:<limit name>:<algorithm tag>
//
// (the lockout state of a limit has the tag [LockoutTag], "x", in place
// of an algorithm's: [LockoutKey]), with the encodings it rests on: the
// identity between the braces ([SafeIdentity], [Identity]) and the time
// values the stores keep under the keys, whole microseconds since
// [EpochUnix]. [Key] (with [Head] and [Suffix], its two halves) builds a
// key and [Parse] splits one. The controls of a prefix (overrides, blocks,
// exemptions) live under a tag no client has, <prefix>:{~ctl}:<part>
// ([ControlKey]).
//
// It imports no project package but internal/secrethash, so that keyfunc,
// which may import only internal leaves, encodes identities as core does.
// docs/redis-protocol.md states the same layout for other languages.
package keylayout
