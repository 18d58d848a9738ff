package core

import (
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
			assert.Equal(t, tt.want, Result{Decisions: tt.decisions}.Binding().Limit.Name)
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
