package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// A lockoutPhase is a burst of takes at one frozen instant, Start + at,
// and what it must end in: the takes admitted, the denials counted
// (Exhausted, the last of which before a lockout reports LockedOut), and
// the RetryAfter every LockedOut decision reports.
type lockoutPhase struct {
	at        time.Duration
	admitted  int
	exhausted int
	lockout   time.Duration
}

// lockoutOutcomes counts the decisions of a phase.
type lockoutOutcomes struct {
	mu        sync.Mutex
	admitted  int
	exhausted int
	lockedOut map[time.Duration]int // by RetryAfter
	other     []string
}

func (o *lockoutOutcomes) add(d core.Decision) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case d.Allowed:
		o.admitted++
	case d.Reason == core.Exhausted:
		o.exhausted++
	case d.Reason == core.LockedOut:
		o.lockedOut[d.RetryAfter]++
	default:
		o.other = append(o.other, decisionString(d))
	}
}

// testLockoutConcurrency hammers one client of a limit with a Lockout
// from every store at once, 512 takes per phase at a frozen instant: the
// quota's takes are admitted, exactly After − 1 denials come back
// Exhausted, and every other take is LockedOut for exactly the lockout of
// the phase's level. A store that let two takes read the same count (a
// missed After-th denial) would give more Exhausted, or start a second
// lockout, which the next phase's level would show.
func testLockoutConcurrency(t *testing.T, stores []core.Store, clock *Clock) {
	lo := core.Lockout{After: 5, Within: hour, For: minute, Multiplier: 2, Max: hour, Cooldown: hour}
	limits := []core.Limit{core.PerHour(10).WithAlgorithm(core.FixedWindow).WithName("login").WithLockout(lo)}
	keys := UniqueKeyBuilder(t).AppendKeys(nil, "hammered", limits)
	phases := []lockoutPhase{
		{at: 0, admitted: 10, exhausted: 4, lockout: minute},
		{at: minute, admitted: 0, exhausted: 4, lockout: 2 * minute},             // the window is still full
		{at: 3 * minute, admitted: 0, exhausted: 4, lockout: 4 * minute},         // level 3
		{at: 7*minute - us, admitted: 0, exhausted: 0, lockout: us},              // still locked out
		{at: 7 * minute, admitted: 0, exhausted: 4, lockout: 8 * minute},         // level 4
		{at: hour + 14*minute, admitted: 10, exhausted: 4, lockout: 16 * minute}, // a new window; level 5
	}
	takes := concurrencyGoroutines * takesPerGoroutine
	for i, ph := range phases {
		clock.SetOffset(ph.at)
		where := fmt.Sprintf("phase %d at %v", i+1, ph.at)
		o := hammerLockout(t, stores, keys, limits)
		assert.Empty(t, o.other, "%s: decisions neither admitted, Exhausted nor LockedOut", where)
		assert.Equal(t, ph.admitted, o.admitted, "%s: admitted", where)
		assert.Equal(t, ph.exhausted, o.exhausted, "%s: Exhausted (denials counted without a lockout)", where)
		assert.Equal(t, map[time.Duration]int{ph.lockout: takes - ph.admitted - ph.exhausted}, o.lockedOut,
			"%s: LockedOut decisions by RetryAfter", where)
	}
}

// hammerLockout makes the takes of one phase, spread over the stores, and
// counts their decisions.
func hammerLockout(t *testing.T, stores []core.Store, keys []string, limits []core.Limit) *lockoutOutcomes {
	o := &lockoutOutcomes{lockedOut: map[time.Duration]int{}}
	var once sync.Once
	var firstErr error
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range concurrencyGoroutines {
		store := stores[g%len(stores)]
		wg.Go(func() {
			<-start
			ds := make([]core.Decision, 0, len(limits))
			for range takesPerGoroutine {
				var err error
				if ds, err = store.Take(context.Background(), ds[:0], keys, limits, 1); err != nil {
					once.Do(func() { firstErr = err })
					continue
				}
				o.add(ds[0])
			}
		})
	}
	close(start)
	wg.Wait()
	require.NoError(t, firstErr)
	return o
}
