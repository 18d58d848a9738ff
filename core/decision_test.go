package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestResultBinding(t *testing.T) {
	allowed := func(name string, remaining int64, reset time.Duration) Decision {
		return Decision{Limit: Limit{Name: name}, Allowed: true, Remaining: remaining, ResetAfter: reset}
	}
	denied := func(name string, reason Reason, retry time.Duration) Decision {
		return Decision{Limit: Limit{Name: name}, Reason: reason, RetryAfter: retry}
	}
	tests := []struct {
		name      string
		decisions []Decision
		want      string
	}{
		{"all allowed: fewest remaining", []Decision{allowed("a", 5, time.Second), allowed("b", 2, time.Second)}, "b"},
		{"all allowed, tie: longest reset", []Decision{allowed("a", 2, time.Second), allowed("b", 2, time.Hour)}, "b"},
		{"a denial beats any allowance", []Decision{allowed("a", 0, time.Hour), denied("b", Exhausted, time.Millisecond)}, "b"},
		{"denials: longest retry", []Decision{denied("a", Exhausted, time.Hour), denied("b", Exhausted, time.Second)}, "a"},
		{"cost too high beats a wait", []Decision{denied("a", Exhausted, time.Hour), denied("b", CostTooHigh, 0)}, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, NewResult(tt.decisions...).Binding().Limit.Name)
		})
	}
	assert.Equal(t, Decision{}, Result{}.Binding())
}

func TestReasonStrings(t *testing.T) {
	assert.Equal(t, "not_denied", NotDenied.String())
	assert.Equal(t, "exhausted", Exhausted.String())
	assert.Equal(t, "cost_too_high", CostTooHigh.String())
	assert.Equal(t, "unavailable", Unavailable.String())
}

// A Result gives back the decisions it was made of, in order, whether it
// holds them inline (up to four) or in a slice of its own.
func TestResultHoldsItsDecisions(t *testing.T) {
	for _, n := range []int{0, 1, inlineVerdicts, inlineVerdicts + 1, maxLimitsPerTier} {
		t.Run(fmt.Sprintf("%d decisions", n), func(t *testing.T) {
			ds := make([]Decision, n)
			for i := range ds {
				ds[i] = Decision{Limit: PerSecond(int64(i + 1)).WithName(fmt.Sprint("l", i)), Allowed: i != 2,
					Reason: Reason(min(i, 2)), Remaining: int64(10 * i), ResetAfter: time.Duration(i) * time.Second,
					RetryAfter: time.Duration(i) * time.Millisecond}
			}
			res := NewResult(ds...)
			want := append([]Decision{}, ds...)
			clear(ds) // NewResult copied them

			assert.Equal(t, n, res.Len())
			assert.Equal(t, n <= 2, res.Allowed)
			for i := range n {
				assert.Equal(t, want[i], res.Decision(i), "decision %d", i)
			}
			assert.Equal(t, want, res.Decisions())
			assert.Panics(t, func() { res.Decision(n) })
		})
	}
}

// A deny cache hands out aged copies of one cached Result: aging one must
// not change the cached one, inline or not.
func TestAgedLeavesTheOriginal(t *testing.T) {
	for _, n := range []int{1, inlineVerdicts + 2} {
		ds := make([]Decision, n)
		for i := range ds {
			ds[i] = Decision{Limit: PerSecond(1).WithName(fmt.Sprint("l", i)), Reason: Exhausted, ResetAfter: time.Hour, RetryAfter: time.Minute}
		}
		cached := NewResult(ds...)

		aged := cached
		aged.age(time.Second)

		for i := range n {
			assert.Equal(t, time.Minute, cached.Decision(i).RetryAfter, "%d decisions: cached %d", n, i)
			assert.Equal(t, time.Minute-time.Second, aged.Decision(i).RetryAfter, "%d decisions: aged %d", n, i)
			assert.Equal(t, time.Hour-time.Second, aged.Decision(i).ResetAfter, "%d decisions: aged %d", n, i)
		}
	}
}
