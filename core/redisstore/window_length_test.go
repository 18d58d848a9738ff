package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
)

// A window key written by a release that did not store the window length
// d (fields w and n, and p for the sliding window) is read in the limit's
// period, as that release reads it, so that nodes of both releases share
// keys during a rolling deploy; the take that opens the next window writes
// d. The conformance suite covers keys with d (storetest's period change
// cases).
func TestWindowKeyWithoutLengthIsReadInThePeriod(t *testing.T) {
	epoch := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, b := range backends {
		for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
			t.Run(b.name+"/"+alg.String(), func(t *testing.T) {
				ctx := context.Background()
				client := b.client(t)
				clk := storetest.NewClock()
				store, kb := newStore(t, client, redisstore.WithClock(clk.Now))
				limits := []core.Limit{{Name: "w", Rate: 10, Period: time.Minute, Algorithm: alg}}
				keys := kb.AppendKeys(nil, "client", limits)
				clk.SetOffset(30 * time.Second)
				w := clk.Now().Sub(epoch) / time.Minute // the current minute's number
				old := []any{"w", strconv.FormatInt(int64(w), 10), "n", "4"}
				if alg == core.SlidingWindow {
					old = append(old, "p", "0")
				}
				require.NoError(t, client.HSet(ctx, keys[0], old...).Err())
				require.NoError(t, client.PExpire(ctx, keys[0], time.Hour).Err())

				ds, err := store.Take(ctx, nil, keys, limits, 1)
				require.NoError(t, err)
				assert.True(t, ds[0].Allowed)
				assert.Equal(t, int64(5), ds[0].Remaining, "4 counted in this minute, 1 taken")

				clk.SetOffset(time.Minute + 30*time.Second) // the next window
				_, err = store.Take(ctx, nil, keys, limits, 1)
				require.NoError(t, err)
				d, err := client.HGet(ctx, keys[0], "d").Result()
				require.NoError(t, err)
				assert.Equal(t, "60000000", d, "the window length, µs")
			})
		}
	}
}
