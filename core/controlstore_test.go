package core_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// newControlStore returns a memory store, which keeps controls, whose
// clock is now.
func newControlStore(t testing.TB, now func() time.Time) core.Store {
	t.Helper()
	s, err := memstore.New(memstore.WithClock(now))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// controlProbe forwards to a store that keeps controls, counting the reads
// of controls and failing or delaying them on demand.
type controlProbe struct {
	core.Store
	cs core.ControlStore

	// blocking states that takes wait on I/O, as Redis's do: reads of
	// controls then run in the background. realClock states no clock:
	// the limiter then reads time.Now, and a timer marks reads due.
	blocking, realClock bool

	fail  atomic.Bool  // Controls fails as an unavailable store does
	reads atomic.Int64 // calls of Controls
	gate  atomic.Pointer[chan struct{}]
}

var (
	_ core.ControlStore = (*controlProbe)(nil)
	_ core.Leaser       = (*controlProbe)(nil)
)

func newControlProbe(s core.Store) *controlProbe {
	return &controlProbe{Store: s, cs: s.(core.ControlStore)}
}

// hold makes the reads of controls wait until release is called.
func (p *controlProbe) hold() (release func()) {
	g := make(chan struct{})
	p.gate.Store(&g)
	return func() { p.gate.Store(nil); close(g) }
}

func (p *controlProbe) Capabilities() core.Capabilities {
	caps := core.CapabilitiesOf(p.Store)
	caps.NonBlocking = caps.NonBlocking && !p.blocking
	if p.realClock {
		caps.Clock = nil
	}
	return caps
}

func (p *controlProbe) Controls(ctx context.Context, space string, since uint64) (core.ControlChanges, error) {
	p.reads.Add(1)
	if g := p.gate.Load(); g != nil {
		select {
		case <-*g:
		case <-ctx.Done():
			return core.ControlChanges{}, core.ErrStoreUnavailable
		}
	}
	if p.fail.Load() {
		return core.ControlChanges{}, core.ErrStoreUnavailable
	}
	return p.cs.Controls(ctx, space, since)
}

func (p *controlProbe) SetControl(ctx context.Context, space, id string, value []byte, expires time.Time) (uint64, error) {
	return p.cs.SetControl(ctx, space, id, value, expires)
}

func (p *controlProbe) TouchControl(ctx context.Context, space, id string) (uint64, error) {
	return p.cs.TouchControl(ctx, space, id)
}

func (p *controlProbe) DeleteKeys(ctx context.Context, keys []string) (int64, error) {
	return p.cs.DeleteKeys(ctx, keys)
}

func (p *controlProbe) TakeLease(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64, lease string) ([]core.Decision, error) {
	return p.Store.(core.Leaser).TakeLease(ctx, dst, keys, limits, cost, lease)
}

func (p *controlProbe) Release(ctx context.Context, key string, l core.Limit, lease string) error {
	return p.Store.(core.Leaser).Release(ctx, key, l, lease)
}

func (p *controlProbe) Renew(ctx context.Context, key string, l core.Limit, lease string) (bool, error) {
	return p.Store.(core.Leaser).Renew(ctx, key, l, lease)
}
