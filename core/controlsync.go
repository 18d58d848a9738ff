package core

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/ratelimitkit/ratelimit/internal/logsample"
)

// A controlSnap is what a node knows of the controls of its space: every
// record, as of the store's generation gen. It is never changed once
// stored in [Controls].snap: a read stores a new one. A take loads it with
// one atomic load, and looks a client up only when it is not empty.
type controlSnap struct {
	gen     uint64
	read    time.Time     // when the read that made it started (node clock); zero: never read
	skew    time.Duration // the store's clock minus the node's, at that read
	retry   time.Time     // after a failed read: no new one before then
	failed  bool          // the last read failed
	due     bool          // a take must look at the clock: a read may be due
	clients map[string]*clientControl
}

// A clientControl is the decoded record of one client, with the plan its
// override gives (built on first use).
type clientControl struct {
	rec     ControlRecord
	expires time.Time
	timed   bool // a part of rec ends: a take reads the clock
	plan    atomic.Pointer[overridePlan]
}

// A controlRead is one read of the changes of a space, which every caller
// that asks meanwhile waits for.
type controlRead struct {
	done chan struct{}
	err  error
}

// wait waits for the read to end, or for ctx.
func (f *controlRead) wait(ctx context.Context) error {
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// refresh returns the snapshot a take applies when the one in force is
// due ([Limiter.controlSnapshot]): read again first when the take must
// wait for a read.
func (c *Controls) refresh(ctx context.Context) *controlSnap {
	c.due(ctx, c.snap.Load())
	return c.snap.Load()
}

// due starts a read when s is ControlSyncEvery old, unless one runs or
// the last one failed less than ControlSyncEvery ago. The take waits for
// it, under the limiter's timeout, when s is older than three periods (an
// idle node, whose snapshot may be far behind) and the last read did not
// fail; otherwise it goes on with s. Over a store that never blocks, the
// take reads in its own goroutine: as cheap as a take.
func (c *Controls) due(ctx context.Context, s *controlSnap) {
	if c.reading.Load() {
		return
	}
	now := c.now()
	age := now.Sub(s.read)
	switch {
	case age < ControlSyncEvery || now.Before(s.retry):
		return
	case c.local:
		_ = c.sync(context.WithoutCancel(ctx), true, true)
	case s.failed || age < 3*ControlSyncEvery:
		_ = c.sync(ctx, false, false)
	default:
		wctx, cancel := context.WithTimeout(ctx, c.timeout)
		_ = c.sync(wctx, true, false) // a failure is logged by the read; the take goes on with s
		cancel()
	}
}

// sync reads the changes of the space into the snapshot: it joins the
// read running, or starts one (in this goroutine under ctx when inline,
// else in a goroutine of its own under the limiter's timeout, which
// outlives the take that started it), and when wait, waits for it (or for
// ctx).
func (c *Controls) sync(ctx context.Context, wait, inline bool) error {
	c.mu.Lock()
	f, run := c.flight, false
	if f == nil {
		f, run = &controlRead{done: make(chan struct{})}, true
		c.flight = f
		c.reading.Store(true)
	}
	c.mu.Unlock()
	if run && inline {
		c.finish(f, c.read(ctx))
	} else if run {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.timeout)
		go func() {
			defer cancel()
			c.finish(f, c.read(rctx))
		}()
	}
	if !wait {
		return nil
	}
	return f.wait(ctx)
}

// syncFresh waits for a read that starts after it is called, so that the
// snapshot holds a change just written: the read running, which may have
// started before the change, is waited for first.
func (c *Controls) syncFresh(ctx context.Context) error {
	c.mu.Lock()
	f := c.flight
	c.mu.Unlock()
	if f != nil {
		if err := f.wait(ctx); err != nil && ctx.Err() != nil {
			return err
		}
	}
	return c.sync(ctx, true, true)
}

// finish ends the read f with err.
func (c *Controls) finish(f *controlRead, err error) {
	c.mu.Lock()
	c.flight = nil
	c.reading.Store(false)
	c.mu.Unlock()
	f.err = err
	close(f.done)
}

// read asks the store for the changes since the snapshot's generation and
// stores the snapshot they make.
func (c *Controls) read(ctx context.Context) error {
	start := c.now()
	ch, err := c.store.Controls(ctx, c.space, c.snap.Load().gen)
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.snap.Load()
	if err != nil {
		next := *cur
		next.failed, next.retry, next.due = true, c.now().Add(ControlSyncEvery), c.poll
		c.store1(&next)
		c.failLog.Emit(ctx, slog.LevelWarn, "ratelimit: controls not read; the node applies what it read last",
			slog.String("prefix", c.space), slog.String("error", logsample.ErrorText(err)))
		return fmt.Errorf("ratelimit: read controls: %w", err)
	}
	next, changed := cur.apply(ctx, ch, start, c.failLog)
	next.due = c.poll
	c.store1(next)
	if c.onRead != nil {
		// A read from generation 0 is full (ControlStore.Controls): a
		// space never written to is read in full every time, with
		// nothing changed, and the first change of a space reaches
		// every node as a full read.
		c.onRead(changed, ch.Full && (ch.Gen != cur.gen || cur.read.IsZero()), next)
	}
	return nil
}

// store1 stores s as the snapshot and, on a limiter's Controls with the
// real clock, arms the timer that marks it due in ControlSyncEvery. c.mu
// is held.
func (c *Controls) store1(s *controlSnap) {
	c.snap.Store(s)
	if !c.takes || c.poll {
		return
	}
	if c.timer == nil {
		c.timer = time.AfterFunc(ControlSyncEvery, c.markDue)
		return
	}
	c.timer.Reset(ControlSyncEvery)
}

// markDue marks the snapshot due: the next take looks at the clock.
func (c *Controls) markDue() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.snap.Load(); !s.due {
		next := *s
		next.due = true
		c.snap.Store(&next)
	}
}

// apply returns the snapshot s becomes with the changes ch, read from a
// call started at start, and the clients that changed (nil when ch is
// full: every client may have).
func (s *controlSnap) apply(ctx context.Context, ch ControlChanges, start time.Time, log *logsample.Sampler) (*controlSnap, []string) {
	next := &controlSnap{gen: ch.Gen, read: start}
	if !ch.Now.IsZero() {
		next.skew = ch.Now.Sub(start)
	}
	var changed []string
	if ch.Full {
		next.clients = make(map[string]*clientControl, len(ch.Records))
	} else {
		next.clients = maps.Clone(s.clients)
		changed = make([]string, 0, len(ch.Records))
	}
	for _, e := range ch.Records {
		if !ch.Full {
			changed = append(changed, e.ID)
		}
		delete(next.clients, e.ID)
		if cc := decodeControl(ctx, e, log); cc != nil {
			if next.clients == nil {
				next.clients = make(map[string]*clientControl)
			}
			next.clients[e.ID] = cc
		}
	}
	return next, changed
}

// decodeControl returns the decoded record of e, or nil when it has none
// or cannot be read (logged: a node of another version wrote it, say).
func decodeControl(ctx context.Context, e ControlEntry, log *logsample.Sampler) *clientControl {
	if e.Value == nil {
		return nil
	}
	cc := &clientControl{expires: e.Expires}
	if err := json.Unmarshal(e.Value, &cc.rec); err != nil {
		log.Emit(ctx, slog.LevelError, "ratelimit: control record not read; the client has none on this node",
			slog.String("client", HashIdentity(e.ID)), slog.String("error", logsample.ErrorText(err)))
		return nil
	}
	cc.timed = cc.rec.Block != nil || slices.ContainsFunc(cc.rec.untils(), func(t time.Time) bool { return !t.IsZero() })
	return cc
}
