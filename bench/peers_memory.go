package main

import (
	"context"
	"net/http"
	"sync"

	"github.com/go-chi/httprate"
	"github.com/sethvargo/go-limiter/memorystore"
	throttledmem "github.com/throttled/throttled/v2/store/memstore"
	ulule "github.com/ulule/limiter/v3"
	ululemem "github.com/ulule/limiter/v3/drivers/store/memory"
	"golang.org/x/time/rate"
)

// The in-memory peers, each with the cell's quota and its documented
// defaults.

// xrate is golang.org/x/time/rate with one *rate.Limiter per client in a
// sync.Map: the usual hand-rolled per-key limiter.
func xrate() contender {
	return contender{name: "x/time/rate + sync.Map", open: func(e env) (*instance, error) {
		var limiters sync.Map
		every := rate.Limit(e.q.perSecond())
		ids := e.ids()
		return &instance{close: func() {}, newWorker: func() checkFunc {
			return func(_ context.Context, k int) (bool, error) {
				v, ok := limiters.Load(ids[k])
				if !ok {
					v, _ = limiters.LoadOrStore(ids[k], rate.NewLimiter(every, int(e.q.rate)))
				}
				return v.(*rate.Limiter).Allow(), nil
			}
		}}, nil
	}}
}

// sethvargoMemory is sethvargo/go-limiter's memorystore.
func sethvargoMemory() contender {
	return contender{name: "sethvargo memorystore", open: func(e env) (*instance, error) {
		st, err := memorystore.New(&memorystore.Config{Tokens: uint64(e.q.rate), Interval: e.q.period})
		if err != nil {
			return nil, err
		}
		ids := e.ids()
		return &instance{close: func() { _ = st.Close(context.Background()) }, newWorker: func() checkFunc {
			return func(ctx context.Context, k int) (bool, error) {
				_, _, _, ok, err := st.Take(ctx, ids[k])
				return ok, err
			}
		}}, nil
	}}
}

// ululeMemory is ulule/limiter's memory store.
func ululeMemory() contender {
	return contender{name: "ulule memory", open: func(e env) (*instance, error) {
		st := ululemem.NewStoreWithOptions(ulule.StoreOptions{Prefix: e.ns, CleanUpInterval: ulule.DefaultCleanUpInterval})
		return ululeInstance(e, st, func() {}), nil
	}}
}

// throttledMemory is throttled's memstore, bounded to 65,536 clients (LRU)
// as its README shows; ours is bounded too.
func throttledMemory() contender {
	return contender{name: "throttled memstore", open: func(e env) (*instance, error) {
		st, err := throttledmem.NewCtx(65536)
		if err != nil {
			return nil, err
		}
		return throttledInstance(e, st, func() {})
	}}
}

// httprateLocal is go-chi/httprate with its local counter.
func httprateLocal() contender {
	return contender{name: "httprate (local)", open: func(e env) (*instance, error) {
		rl := httprate.NewRateLimiter(int(e.q.rate), e.q.period, httprate.WithErrorHandler(recordHTTPError))
		return httprateInstance(e, rl, func() {}), nil
	}}
}

// httprateInstance calls RateLimiter.OnLimit, httprate's check (it sets
// the response headers too), with a reused request and writer.
func httprateInstance(e env, rl *httprate.RateLimiter, closeFn func()) *instance {
	ids := e.ids()
	return &instance{close: closeFn, newWorker: func() checkFunc {
		d := newHTTPDriver()
		return func(_ context.Context, k int) (bool, error) {
			d.w.reset()
			limited := rl.OnLimit(&d.w, d.base, ids[k])
			if d.w.err != nil {
				return false, d.w.err
			}
			return !limited, nil
		}
	}}
}

// recordHTTPError is httprate's error handler: it hands the error to the
// driver instead of writing a response.
func recordHTTPError(w http.ResponseWriter, _ *http.Request, err error) {
	if dw, ok := w.(*discardWriter); ok {
		dw.err = err
	}
}
