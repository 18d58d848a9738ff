package main

import (
	"context"
	"slices"

	"github.com/redis/go-redis/v9"
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

// clientKeys returns the keys of cl, sorted, and the node that holds them
// (all keys of a client share its hash tag, hence one Cluster node).
func (t *target) clientKeys(ctx context.Context, cl client) (*redis.Client, []string, error) {
	node, err := t.nodeFor(ctx, t.prefix+":{"+cl.tag+"}:")
	if err != nil {
		return nil, nil, err
	}
	var found []string
	err = scan(ctx, node, t.clientPattern(cl), scanCount, func(keys []string) error {
		found = append(found, keys...)
		return nil
	})
	slices.Sort(found)
	return node, slices.Compact(found), err
}
