package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// BenchmarkControls measures the calls of the program "control" on a
// server of its own, with the server's time per call (INFO commandstats,
// server-µs/call): a node's read once a second when nothing changed
// (read-unchanged), a node's first read of a prefix holding n records of
// 200 bytes (read-full), and the writes of an operator (set, touch) on a
// prefix holding n records:
//
//	go test -run '^$' -bench Controls -benchtime 2000x ./core/redisstore
func BenchmarkControls(b *testing.B) {
	client := redistest.Dedicated(b).Client(b)
	store := mustNew(b, client)
	ctx := context.Background()
	record := []byte(strings.Repeat("r", 200))
	for _, n := range []int{10, 1000} {
		space := fmt.Sprintf("bench-%d", n)
		var gen uint64
		for i := range n {
			var err error
			gen, err = store.SetControl(ctx, space, fmt.Sprintf("client-%d", i), record, time.Time{})
			require.NoError(b, err)
		}
		b.Run(fmt.Sprintf("records=%d/read-unchanged", n), func(b *testing.B) {
			serverTime(b, client, func() {
				for range b.N {
					_, err := store.Controls(ctx, space, gen)
					require.NoError(b, err)
				}
			})
		})
		b.Run(fmt.Sprintf("records=%d/read-full", n), func(b *testing.B) {
			serverTime(b, client, func() {
				for range b.N {
					ch, err := store.Controls(ctx, space, 0)
					require.NoError(b, err)
					require.Len(b, ch.Records, n)
				}
			})
		})
		b.Run(fmt.Sprintf("records=%d/set", n), func(b *testing.B) {
			serverTime(b, client, func() {
				for i := range b.N {
					_, err := store.SetControl(ctx, space, fmt.Sprintf("client-%d", i%n), record, time.Time{})
					require.NoError(b, err)
				}
			})
		})
		b.Run(fmt.Sprintf("records=%d/touch", n), func(b *testing.B) {
			serverTime(b, client, func() {
				for i := range b.N {
					_, err := store.TouchControl(ctx, space, fmt.Sprintf("client-%d", i%n))
					require.NoError(b, err)
				}
			})
		})
	}
}
