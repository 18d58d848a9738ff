package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Prefix returns a key prefix no other call returns ("rt-" and 12 random
// hex digits), valid for core.NewKeyBuilder. Tests keep their keys under it,
// so they can share a server, even one they did not start.
func Prefix(t testing.TB) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("redistest: random prefix: %v", err)
	}
	return "rt-" + hex.EncodeToString(b[:])
}

// ScanKeys returns every key matching the SCAN pattern match, on every
// master when c is a cluster client.
func ScanKeys(t testing.TB, c redis.UniversalClient, match string) []string {
	t.Helper()
	ctx := context.Background()
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		keys, err := scan(ctx, c, match)
		if err != nil {
			t.Fatalf("redistest: scan %q: %v", match, err)
		}
		return keys
	}
	var (
		mu  sync.Mutex
		all []string
	)
	err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		keys, err := scan(ctx, node, match)
		mu.Lock()
		all = append(all, keys...)
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatalf("redistest: scan %q: %v", match, err)
	}
	return all
}

func scan(ctx context.Context, c redis.Cmdable, match string) ([]string, error) {
	var keys []string
	iter := c.Scan(ctx, 0, match, 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	return keys, iter.Err()
}
