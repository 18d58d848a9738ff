package main

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// BenchmarkMemoryPath puts our memory path beside golang.org/x/time/rate
// kept per key in a sync.Map, in one run, so the ratios of issue 10's
// memory targets can be read off one benchstat table: one client that has
// state, from one goroutine (serial) and from GOMAXPROCS goroutines on 1,000
// clients (parallel). The quota never denies within a run: the admitted
// path is the one measured. The cells:
//
//   - xrate: sync.Map Load + (*rate.Limiter).Allow.
//   - limiter-1, limiter-2: core.Limiter.Allow on memstore, one GCRA limit and
//     two (a second, daily, quota), defaults otherwise (deny cache on).
//   - middleware: ratelimithttp.New around a handler that does nothing,
//     driven as the suite's middleware cell drives it (a shallow copy of
//     one request per check, a reused response writer).
func BenchmarkMemoryPath(b *testing.B) {
	const perSecond, burst = 1e6, 1e11 // a burst no run exhausts
	perSec := core.PerSecond(perSecond).WithBurst(burst).WithName("s")
	perDay := core.PerDay(8e10).WithName("day")
	cells := []struct {
		name string
		open func(b *testing.B) func(k int)
	}{
		{"xrate", func(b *testing.B) func(int) {
			var limiters sync.Map
			ids := benchIDs()
			for _, id := range ids {
				limiters.Store(id, rate.NewLimiter(rate.Limit(perSecond), burst))
			}
			return func(k int) {
				v, _ := limiters.Load(ids[k])
				if !v.(*rate.Limiter).Allow() {
					b.Fatal("x/time/rate denied")
				}
			}
		}},
		{"limiter-1", func(b *testing.B) func(int) {
			return limiterCell(b, perSec)
		}},
		{"limiter-2", func(b *testing.B) func(int) {
			return limiterCell(b, perSec, perDay)
		}},
		{"middleware", func(b *testing.B) func(int) {
			l := benchLimiter(b, perSec)
			h := ratelimithttp.New(l)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			addrs := clientAddrs(benchClients)
			var drivers sync.Pool
			return func(k int) {
				d, _ := drivers.Get().(*httpDriver)
				if d == nil {
					d = newHTTPDriver()
				}
				if ok, err := d.serve(h, addrs[k]); !ok || err != nil {
					b.Fatal("middleware denied", err)
				}
				drivers.Put(d)
			}
		}},
	}
	for _, c := range cells {
		b.Run(c.name+"/serial", func(b *testing.B) {
			check := c.open(b)
			check(0)
			b.ReportAllocs()
			for b.Loop() {
				check(0)
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			check := c.open(b)
			for k := range benchClients {
				check(k)
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				k := 0
				for pb.Next() {
					check(k % benchClients)
					k += 7
				}
			})
		})
	}
}

const benchClients = 1000

func benchIDs() []string {
	addrs := clientAddrs(benchClients)
	ids := make([]string, len(addrs))
	for i, a := range addrs {
		ids[i] = a[:strings.LastIndexByte(a, ':')]
	}
	return ids
}

func benchLimiter(b *testing.B, limits ...core.Limit) *core.Limiter {
	store, err := memstore.New()
	if err != nil {
		b.Fatal(err)
	}
	l, err := core.NewLimiter(store, core.WithLimits(limits...), core.WithTimeout(time.Second))
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func limiterCell(b *testing.B, limits ...core.Limit) func(int) {
	l := benchLimiter(b, limits...)
	ids := benchIDs()
	ctx := context.Background()
	return func(k int) {
		res, err := l.Allow(ctx, ids[k])
		if err != nil || !res.Allowed {
			b.Fatal("limiter denied", err)
		}
	}
}
