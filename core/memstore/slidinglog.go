package memstore

import "github.com/ratelimitkit/ratelimit/core"

// evalLog evaluates the sliding log lg (nil for a key without state) for a
// take of cost at now. The log's time is the later of now and its newest
// unit ([timeLog.clock]): a reading behind the newest unit is taken as its
// time, and the durations are measured from the reading. It prunes the
// units that left the window (at − P, at], which changes no decision, and
// writes nothing else; an admitted take then adds cost units at the log's
// time with [timeLog.add].
func evalLog(o *outcome, lg *timeLog, l *core.Limit, now, cost int64) {
	p, r := periodMicros(l.Period), l.Rate
	at := now
	var n int64
	if lg != nil {
		at = lg.clock(now)
		lg.prune(at - p)
		n = lg.total
	}
	o.remainingBefore = r - n
	if n > 0 {
		o.resetBefore = lg.newest() + p - now
	}
	if o.settle(cost, r) {
		return
	}
	if n+cost > r {
		o.deny(lg.kthOldest(n+cost-r) + p - now)
		return
	}
	reset := at + p - now
	o.admit(r-n-cost, reset, ttlMicros(reset))
}

// A timeLog is the sliding log of one key: the times of its admitted
// request units, oldest first, as runs of units sharing a microsecond. It
// holds at most Rate units and reuses its memory as it slides.
type timeLog struct {
	runs  []stampRun // runs[head:] are live, in increasing order of at
	head  int
	total int64 // units in runs[head:]
}

// A stampRun is n request units admitted at the same microsecond.
type stampRun struct {
	at int64
	n  int64
}

// reset empties the log, keeping its memory.
func (lg *timeLog) reset() {
	lg.runs, lg.head, lg.total = lg.runs[:0], 0, 0
}

// prune drops the units at or before cut.
func (lg *timeLog) prune(cut int64) {
	for lg.head < len(lg.runs) && lg.runs[lg.head].at <= cut {
		lg.total -= lg.runs[lg.head].n
		lg.head++
	}
	if lg.head == len(lg.runs) {
		lg.runs, lg.head = lg.runs[:0], 0
	}
}

// clock returns the log's time at a reading now: now, or the time of the
// newest unit if that is later (a clock stepped back).
func (lg *timeLog) clock(now int64) int64 {
	if lg.head == len(lg.runs) {
		return now
	}
	return max(now, lg.newest())
}

// newest returns the time of the newest unit; the log must not be empty.
func (lg *timeLog) newest() int64 {
	return lg.runs[len(lg.runs)-1].at
}

// kthOldest returns the time of the k-th oldest unit (k ≥ 1, k ≤ total).
func (lg *timeLog) kthOldest(k int64) int64 {
	for _, run := range lg.runs[lg.head:] {
		if k <= run.n {
			return run.at
		}
		k -= run.n
	}
	return lg.newest()
}

// add records n units at time at, which is never before the newest unit:
// at is the log's [timeLog.clock].
func (lg *timeLog) add(at, n int64) {
	lg.total += n
	if last := len(lg.runs) - 1; last >= lg.head && lg.runs[last].at == at {
		lg.runs[last].n += n
		return
	}
	lg.compact()
	lg.runs = append(lg.runs, stampRun{at: at, n: n})
}

// compact moves the live runs to the front when the slice is full, so
// appending reuses the room left by pruned runs instead of growing.
func (lg *timeLog) compact() {
	if lg.head == 0 || len(lg.runs) < cap(lg.runs) {
		return
	}
	k := copy(lg.runs, lg.runs[lg.head:])
	lg.runs, lg.head = lg.runs[:k], 0
}
