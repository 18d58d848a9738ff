package storetest

import (
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// window returns a window limit named "w" of algorithm a: 10 per period,
// so that the limits of one case share their key whatever the period.
func window(a core.Algorithm, period time.Duration) core.Limit {
	return core.Limit{Name: "w", Rate: 10, Period: period, Algorithm: a}
}

// fixedWindowPeriodTests are the tables of a fixed window whose period
// changes under a live key (docs/algorithms.md, "When the period
// changes"): the stored count belongs to the window of the new period
// that holds the stored window's start, w·d, or to none. Start is a
// boundary of every period used.
func fixedWindowPeriodTests() []sequence {
	s1, m1 := window(core.FixedWindow, sec), window(core.FixedWindow, minute)
	s45 := window(core.FixedWindow, 45*sec)
	return []sequence{
		{
			// Read as a number of minutes, window 30 of seconds (counted
			// from 2024) would be a window decades from now.
			name:   "1s to 1m: the count carries into the minute holding its window",
			limits: []core.Limit{s1},
			steps: []step{
				take(30*sec+500*ms, 3, ok(7, 500*ms)),
				take(30*sec+600*ms, 1, ok(6, 29400*ms)).of(m1),
				take(40*sec, 6, ok(0, 20*sec)),
				take(59*sec, 1, denied(0, sec, sec)),
				take(minute, 1, ok(9, minute)),
			},
		},
		{
			// The clock-back guard applies to the stored window's own
			// start, 30s: the key's time is 30s, in minute 0.
			name:   "1s to 1m on a clock behind the stored window: its start, not later",
			limits: []core.Limit{s1},
			steps: []step{
				take(30*sec+500*ms, 10, ok(0, 500*ms)),
				take(29*sec, 1, denied(0, 31*sec, 31*sec)).of(m1),
				take(30*sec, 0, ok(0, 30*sec)),
			},
		},
		{
			// Window 1 of 45s is [45s, 90s); at 61s the window of the new
			// period is minute 1, [60s, 120s), and 45s lies in minute 0:
			// a fresh window (read with the old numbers, window 1 would be
			// minute 1 and its count kept).
			name:   "45s to 1m: a window that started in an earlier minute counts for none",
			limits: []core.Limit{s45},
			steps: []step{
				take(50*sec, 10, ok(0, 40*sec)),
				take(55*sec, 1, denied(0, 5*sec, 5*sec)).of(m1),
				take(61*sec, 1, ok(9, 59*sec)),
			},
		},
		{
			name:   "1m to 1s: the count carries into the second holding the minute's start",
			limits: []core.Limit{m1},
			steps: []step{
				take(0, 4, ok(6, minute)),
				take(500*ms, 1, ok(5, 500*ms)).of(s1),
				take(sec+200*ms, 1, ok(9, 800*ms)),
			},
		},
		{
			// The minute's count is not the count of second 30: a fresh
			// window.
			name:   "1m to 1s: later in the minute, a fresh window",
			limits: []core.Limit{m1},
			steps: []step{
				take(10*sec, 10, ok(0, 50*sec)),
				take(30*sec, 10, ok(0, sec)).of(s1),
				take(30*sec+500*ms, 1, denied(0, 500*ms, 500*ms)),
				// Back to the minute: second 30's 10 are minute 0's (the
				// minute's earlier 10 are forgotten).
				take(31*sec, 1, denied(0, 29*sec, 29*sec)).of(m1),
			},
		},
	}
}

// slidingWindowPeriodTests are the tables of a sliding window counter
// whose period changes under a live key: each stored count (the current
// window's and the previous one's) belongs to the window of the new period
// that holds its window's start, or to none. Estimates as in
// slidingWindowTests, scaled by P.
func slidingWindowPeriodTests() []sequence {
	s1, s10, s20 := window(core.SlidingWindow, sec), window(core.SlidingWindow, 10*sec), window(core.SlidingWindow, 20*sec)
	m1 := window(core.SlidingWindow, minute)
	return []sequence{
		{
			name:   "1s to 1m: both counts carry into the current minute",
			limits: []core.Limit{s1},
			steps: []step{
				take(29*sec+500*ms, 2, ok(8, 1500*ms)),
				// Window 30, prev = 2, e = 0.2s: 2·0.8s + 3·1s = 4.6s of 10s.
				take(30*sec+200*ms, 3, ok(5, 1800*ms)),
				// Minute 0 holds 29s and 30s: cur = 5, prev = 0, e = 30.5s.
				take(30*sec+500*ms, 1, ok(4, 89500*ms)).of(m1),
				take(40*sec, 4, ok(0, 80*sec)),
				// cur + c = 11 > R: (60s − 50s) + 60s − 9·60s/10 = 16s.
				take(50*sec, 1, denied(0, 70*sec, 16*sec)),
			},
		},
		{
			// Windows 3 ([30s, 40s), n = 3) and 2 ([20s, 30s), p = 2) both
			// start in window 1 of 20s, [20s, 40s): at 41s, in window 2,
			// they are its previous window's 5.
			name:   "10s to 20s: both counts become the previous window's",
			limits: []core.Limit{s10},
			steps: []step{
				take(25*sec, 2, ok(8, 15*sec)),
				take(35*sec, 3, ok(6, 15*sec)),
				// e = 1s: 5·19s = 95s of 200s: 5 whole left.
				take(41*sec, 0, ok(5, 19*sec)).of(s20),
				// cur + c = 6 ≤ R: 19s − 4·20s/5 = 3s.
				take(41*sec, 6, denied(5, 19*sec, 3*sec)),
				take(44*sec, 6, ok(0, 36*sec)),
			},
		},
		{
			// Minute 0 starts in second 0; minute −1 in none near.
			name:   "1m to 1s: the count carries into the second holding the minute's start",
			limits: []core.Limit{m1},
			steps: []step{
				take(0, 4, ok(6, 2*minute)),
				take(500*ms, 1, ok(5, 1500*ms)).of(s1),
				// Second 1: prev = 5, e = 0.2s: 5·0.8s = 4s of 10s.
				take(sec+200*ms, 0, ok(6, 800*ms)),
			},
		},
		{
			name:   "1m to 1s: later in the minute, a fresh window",
			limits: []core.Limit{m1},
			steps: []step{
				take(0, 10, ok(0, 2*minute)),
				take(30*sec, 1, ok(9, 2*sec)).of(s1),
			},
		},
	}
}

// windowsPeriodTests change the period of a fixed and a sliding window
// taken together, in one store call (Redis: the program take, where each
// charge runs apart from its decision).
func windowsPeriodTests() []sequence {
	named := func(a core.Algorithm, period time.Duration, name string) core.Limit {
		l := window(a, period)
		l.Name = name
		return l
	}
	f1, s1 := named(core.FixedWindow, sec, "f"), named(core.SlidingWindow, sec, "s")
	fm, sm := named(core.FixedWindow, minute, "f"), named(core.SlidingWindow, minute, "s")
	return []sequence{
		{
			name:   "1s to 1m, both windows in one take",
			limits: []core.Limit{f1, s1},
			steps: []step{
				take(30*sec+500*ms, 3, ok(7, 500*ms), ok(7, 1500*ms)),
				// Sliding: cur = 3 in minute 0, e = 30.6s: 4·60s of 600s.
				take(30*sec+600*ms, 1, ok(6, 29400*ms), ok(6, 89400*ms)).of(fm, sm),
				take(40*sec, 6, ok(0, 20*sec), ok(0, 80*sec)),
				// Sliding: cur + c = 11 > R: 1s + 60s − 9·60s/10 = 7s.
				take(59*sec, 1, denied(0, sec, sec), denied(0, 61*sec, 7*sec)),
			},
		},
	}
}
