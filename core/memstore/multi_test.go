package memstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

func TestTakeMultiLimitIsAllOrNothing(t *testing.T) {
	burst := core.PerSecond(10).WithName("burst")
	minute := core.PerMinute(3).WithName("minute").WithAlgorithm(core.FixedWindow)
	logged := core.PerMinute(5).WithName("log").WithAlgorithm(core.SlidingLog)
	limits := []core.Limit{burst, minute, logged}
	kb, err := core.NewKeyBuilder("rl")
	require.NoError(t, err)
	keys := kb.AppendKeys(nil, "alice", limits)

	decision := func(l core.Limit, w want) core.Decision {
		return core.Decision{Limit: l, Allowed: w.allowed, Reason: w.reason, Remaining: w.remaining, ResetAfter: w.reset, RetryAfter: w.retry}
	}
	tests := []struct {
		name string
		cost int64
		want []core.Decision
	}{
		{
			name: "Take(cost=1) admitted: every limit charged, after-charge values",
			cost: 1,
			want: []core.Decision{
				decision(burst, allowed(9, 100*time.Millisecond)),
				decision(minute, allowed(2, time.Minute)),
				decision(logged, allowed(4, time.Minute)),
			},
		},
		{
			name: "Take(cost=2) admitted",
			cost: 2,
			want: []core.Decision{
				decision(burst, allowed(7, 300*time.Millisecond)),
				decision(minute, allowed(0, time.Minute)),
				decision(logged, allowed(2, time.Minute)),
			},
		},
		{
			name: "Take(cost=1) denied by the fixed window: nothing charged, before-charge values",
			cost: 1,
			want: []core.Decision{
				decision(burst, allowed(7, 300*time.Millisecond)),
				decision(minute, denied(0, time.Minute, time.Minute)),
				decision(logged, allowed(2, time.Minute)),
			},
		},
		{
			name: "Take(cost=4) cost too high for the fixed window, too much for the log",
			cost: 4,
			want: []core.Decision{
				decision(burst, allowed(7, 300*time.Millisecond)),
				decision(minute, tooHigh(0, time.Minute)),
				decision(logged, denied(2, time.Minute, time.Minute)),
			},
		},
		{
			name: "Take(cost=0) peek shows that the denials charged nothing",
			cost: 0,
			want: []core.Decision{
				decision(burst, allowed(7, 300*time.Millisecond)),
				decision(minute, allowed(0, time.Minute)),
				decision(logged, allowed(2, time.Minute)),
			},
		},
	}
	s, _ := newTestStore(t)
	for _, tt := range tests { // in order: each row continues the previous one
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Take(context.Background(), nil, keys, limits, tt.cost)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestTakeAppendsToDst(t *testing.T) {
	s, _ := newTestStore(t)
	dst := []core.Decision{{Remaining: 42}}
	got, err := s.Take(context.Background(), dst, []string{"k"}, []core.Limit{core.PerSecond(1)}, 1)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, int64(42), got[0].Remaining)
	assert.True(t, got[1].Allowed)
}

func TestTakeRejectsBadArguments(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	one := []core.Limit{core.PerSecond(1)}
	tests := []struct {
		name   string
		ctx    context.Context
		keys   []string
		limits []core.Limit
		cost   int64
		want   string
	}{
		{"canceled context", canceled, []string{"k"}, one, 1, "context canceled"},
		{"no limits", context.Background(), nil, nil, 1, "one key per limit"},
		{"more keys than limits", context.Background(), []string{"a", "b"}, one, 1, "one key per limit"},
		{"negative cost", context.Background(), []string{"k"}, one, -1, "cost must not be negative"},
		{"zero rate", context.Background(), []string{"k"}, []core.Limit{{Period: time.Second}}, 1, "Rate must be positive"},
		{"zero period", context.Background(), []string{"k"}, []core.Limit{{Rate: 1}}, 1, "Period must be positive"},
		{"unknown algorithm", context.Background(), []string{"k"}, []core.Limit{core.PerSecond(1).WithAlgorithm(9)}, 1, "unknown Algorithm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newTestStore(t)
			_, err := s.Take(tt.ctx, nil, tt.keys, tt.limits, tt.cost)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.True(t, strings.HasPrefix(err.Error(), "ratelimit: "), err.Error())
		})
	}
}
