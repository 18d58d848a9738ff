package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// scanCount is the COUNT hint of SCAN: keys examined per call.
const scanCount = 1000

// scan calls fn with every batch of keys of node matching pattern. It uses
// SCAN, never KEYS, so it never blocks the server for long.
func scan(ctx context.Context, node *redis.Client, pattern string, count int64, fn func(keys []string) error) error {
	var cursor uint64
	for {
		keys, next, err := node.Scan(ctx, cursor, pattern, count).Result()
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			if err := fn(keys); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// The keys of one client, found by [target.clientKeys].
type clientKeys struct {
	node *redis.Client // the node of the client's hash tag
	keys []string      // under the prefix, sorted
	// elsewhere holds the client's keys under sub-prefixes (P:<sub>): the
	// state other limiters keep for the same identity, not worked on.
	elsewhere []string
}

// clientKeys returns the keys of cl. All keys of a client share its hash
// tag, hence one Cluster node, whatever their prefix: one SCAN of that
// node finds them under the prefix and its sub-prefixes.
func (t *target) clientKeys(ctx context.Context, cl client) (clientKeys, error) {
	node, err := t.nodeFor(ctx, keylayout.ClientHead(t.prefix, cl.tag))
	if err != nil {
		return clientKeys{}, err
	}
	ck := clientKeys{node: node}
	err = scan(ctx, node, t.clientPattern(cl), scanCount, func(keys []string) error {
		for _, k := range keys {
			switch name := parseKey(k); {
			case !name.hasTag || name.control || name.tag != cl.tag || !t.inFamily(name.prefix):
			case name.prefix == t.prefix:
				ck.keys = append(ck.keys, k)
			default:
				ck.elsewhere = append(ck.elsewhere, k)
			}
		}
		return nil
	})
	// SCAN may return a key twice.
	slices.Sort(ck.keys)
	ck.keys = slices.Compact(ck.keys)
	slices.Sort(ck.elsewhere)
	ck.elsewhere = slices.Compact(ck.elsewhere)
	return ck, err
}

// printElsewhere tells about the client's keys under sub-prefixes, which
// the command left alone (what says how: "not shown").
func (ck clientKeys) printElsewhere(w io.Writer, what string) {
	if len(ck.elsewhere) == 0 {
		return
	}
	count := map[string]int{}
	for _, k := range ck.elsewhere {
		count[parseKey(k).prefix]++
	}
	prefixes := slices.Sorted(maps.Keys(count))
	parts := make([]string, len(prefixes))
	for i, p := range prefixes {
		parts[i] = fmt.Sprintf("%s (%s)", p, plural(count[p], "key"))
	}
	fmt.Fprintf(w, "keys of this client under other prefixes, %s: %s; run again with --prefix %s for them\n",
		what, strings.Join(parts, ", "), prefixes[0])
}

// plural returns "1 key", "2 keys".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
