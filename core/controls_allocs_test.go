//go:build !race

package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// A limiter over a store that keeps controls allocates nothing per take,
// for a client without a control, one with an override, an exempt and a
// blocked one: the snapshot is read, never copied, and an override's plan
// is built once. (The race detector adds allocations, hence the build
// tag.)
func TestControlsAllocateNothingPerTake(t *testing.T) {
	ctx := context.Background()
	limits := []core.Limit{core.PerSecond(100_000).WithName("s"), core.PerDay(1e9).WithName("d")}
	tests := []struct {
		name    string
		control func(l *core.Limiter) error
		check   func(core.Result) bool
	}{
		{"no control", func(l *core.Limiter) error { return l.Block(ctx, "someone-else", time.Hour, "") }, func(r core.Result) bool { return r.Allowed }},
		{"override", func(l *core.Limiter) error {
			return l.SetOverride(ctx, "203.0.113.7", core.Override{Limits: []core.Limit{core.PerSecond(200_000).WithName("s")}})
		}, func(r core.Result) bool { return r.Allowed && r.Overridden }},
		{"exempt", func(l *core.Limiter) error { return l.Exempt(ctx, "203.0.113.7", 0, "") }, func(r core.Result) bool { return r.Exempt }},
		{"blocked", func(l *core.Limiter) error { return l.Block(ctx, "203.0.113.7", time.Hour, "") }, func(r core.Result) bool { return !r.Allowed }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := benchControlLimiter(t, true, limits...)
			require.NoError(t, tt.control(l))
			_, err := l.Allow(ctx, "203.0.113.7")
			require.NoError(t, err)

			allocs := testing.AllocsPerRun(1000, func() {
				res, err := l.Take(ctx, core.Request{Identity: "203.0.113.7", Cost: 1})
				if err != nil || !tt.check(res) {
					t.Fatal(res, err)
				}
			})

			assert.Zero(t, allocs)
		})
	}
}
