package storetest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// equivalenceTakes is the length of each random sequence.
const equivalenceTakes = 2000

// SeedEnv names the environment variable that sets the seed of the random
// sequences of [Run]: a number replays one (a failure prints the seed it
// used), "random" draws a new one.
const SeedEnv = "STORETEST_SEED"

// testEquivalence sends the same random takes to a GCRA key and a token
// bucket key with the same Rate, Period and Burst, and requires every
// decision to agree in every field (Limit aside): docs/algorithms.md
// defines the two as one machine, tat = now + (B − tokens)·T, for a clock
// that does not go back. The intervals include fractional ones (thirds,
// sevenths), and the gaps often land exactly on, or 1µs around, the
// RetryAfter just given, where the 0.5µs tolerance decides.
func testEquivalence(t *testing.T, newStore NewStore) {
	seed := equivalenceSeed(t)
	tests := []core.Limit{
		core.PerMinute(10),                    // T = 6s
		{Rate: 3, Period: 10 * sec, Burst: 5}, // T = 3333333.33µs
		{Rate: 7, Period: minute, Burst: 3},   // T = 8571428.57µs
		core.Every(3 * minute).WithBurst(2),   // T = 180s, B > Rate
	}
	for i, tt := range tests {
		name := fmt.Sprintf("%d per %v, burst %d", tt.Rate, tt.Period, tt.Capacity())
		t.Run(name, func(t *testing.T) {
			runEquivalence(t, newStore, tt, seed+uint64(i))
		})
	}
}

// defaultSeed makes the random takes the same on every run, so the suite
// never flakes: GCRA's tat and the bucket's tokens round differently in
// float64 and may drift apart by 1 µs over long runs of partial refills
// (docs/algorithms.md, "Precision"). Set [SeedEnv] to a number to replay a
// sequence, or to "random" to explore new ones.
const defaultSeed = 20250101

// equivalenceSeed returns the seed of [SeedEnv], or the default one, and
// arranges for it to be printed if t fails.
func equivalenceSeed(t *testing.T) uint64 {
	seed := uint64(defaultSeed)
	switch s := os.Getenv(SeedEnv); s {
	case "":
	case "random":
		seed = rand.Uint64()
	default:
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "%s must be an unsigned integer or \"random\"", SeedEnv)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random takes used seed %d; replay with %s=%d", seed, SeedEnv, seed)
		}
	})
	return seed
}

func runEquivalence(t *testing.T, newStore NewStore, l core.Limit, seed uint64) {
	clock := NewClock()
	store := newStore(t, clock.Now)
	kb := UniqueKeyBuilder(t)
	gcra := newClient(store, kb, "client", []core.Limit{l.WithAlgorithm(core.GCRA)})
	bucket := newClient(store, kb, "client", []core.Limit{l.WithAlgorithm(core.TokenBucket)})
	gen := takeGen{rnd: rand.New(rand.NewPCG(seed, seed)), limit: l}

	var last core.Decision
	var history []string
	for i := range equivalenceTakes {
		gap, cost := gen.next(last)
		clock.Advance(gap)
		g := gcra.take(t, cost)[0]
		b := bucket.take(t, cost)[0]
		history = append(history, fmt.Sprintf("take %d: +%v cost %d -> %s", i+1, gap, cost, decisionString(g)))
		if diff := decisionDiff(g, b); diff != "" {
			start := max(0, len(history)-8)
			t.Errorf("seed %d, take %d (at %v, cost %d): token bucket %s differs from GCRA\nGCRA:         %s\nToken bucket: %s\nlast takes (GCRA decisions):\n  %s",
				seed, i+1, clock.Now().Sub(Start()), cost, diff, decisionString(g), decisionString(b),
				strings.Join(history[start:], "\n  "))
			return
		}
		last = g
	}
}

// A takeGen draws random gaps and costs for a limit.
type takeGen struct {
	rnd   *rand.Rand
	limit core.Limit
}

// next returns the gap before the next take and its cost. After a denial
// it often waits exactly RetryAfter, or 1µs less or more.
func (g takeGen) next(last core.Decision) (time.Duration, int64) {
	t := max(1, int64(g.limit.Interval()/us))
	b := g.limit.Capacity()
	costs := []int64{0, 1, 1, 1, 1, 2, 3, b, b + 1}
	cost := costs[g.rnd.IntN(len(costs))]
	r := g.rnd.Float64()
	var gap int64
	switch {
	case !last.Allowed && last.RetryAfter > 0 && r < 0.4:
		gap = max(0, int64(last.RetryAfter/us)+g.rnd.Int64N(3)-1)
	case r < 0.55:
		gap = 0
	case r < 0.85:
		gap = 1 + g.rnd.Int64N(t+1)
	case r < 0.97:
		gap = 1 + g.rnd.Int64N(b*t)
	default:
		gap = 1 + g.rnd.Int64N(2*b*t)
	}
	return time.Duration(gap) * us, cost
}

// decisionDiff names the fields, Limit aside, in which a and b differ.
func decisionDiff(a, b core.Decision) string {
	var fields []string
	if a.Allowed != b.Allowed {
		fields = append(fields, "Allowed")
	}
	if a.Reason != b.Reason {
		fields = append(fields, "Reason")
	}
	if a.Remaining != b.Remaining {
		fields = append(fields, "Remaining")
	}
	if a.ResetAfter != b.ResetAfter {
		fields = append(fields, "ResetAfter")
	}
	if a.RetryAfter != b.RetryAfter {
		fields = append(fields, "RetryAfter")
	}
	return strings.Join(fields, ", ")
}

func decisionString(d core.Decision) string {
	return fmt.Sprintf("{Allowed:%v Reason:%v Remaining:%d ResetAfter:%v RetryAfter:%v}",
		d.Allowed, d.Reason, d.Remaining, d.ResetAfter, d.RetryAfter)
}
