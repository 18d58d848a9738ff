package main

import (
	"context"
	"net/http"
	"slices"
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
//   - store: memstore.Store.Take alone, keys built beforehand: the part of
//     limiter-1 that is the store's.
//   - limiter-1, limiter-2: core.Limiter.Allow on memstore, one GCRA limit and
//     two, defaults otherwise (deny cache on).
//   - middleware: ratelimithttp.New around a handler that does nothing,
//     driven as the suite's middleware cell drives it (a shallow copy of
//     one request per check, a reused response writer).
//   - handler: the same driver and handler without the middleware: what
//     the driver itself costs (its request copy is one allocation).
func BenchmarkMemoryPath(b *testing.B) {
	for _, c := range memoryCells() {
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

// BenchmarkMemoryRatio is each cell of BenchmarkMemoryPath against xrate,
// interleaved finely enough for a shared, loaded machine: batches of 1,000
// checks of the cell, each followed by 1,000 of x/time/rate (not counted in
// ns/op), from one goroutine on one client. x-xrate is the median over the
// batches of the cell's time over x/time/rate's.
func BenchmarkMemoryRatio(b *testing.B) {
	const batch = 1000
	cells := memoryCells()
	for _, c := range cells[1:] {
		b.Run(c.name, func(b *testing.B) {
			base, check := cells[0].open(b), c.open(b)
			base(0)
			check(0)
			var ratios []float64
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += batch {
				start := time.Now()
				for range batch {
					check(0)
				}
				ours := time.Since(start)
				b.StopTimer()
				start = time.Now()
				for range batch {
					base(0)
				}
				ratios = append(ratios, float64(ours)/float64(time.Since(start)))
				b.StartTimer()
			}
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "x-xrate")
		})
	}
}

// A burst no run exhausts, and an emission interval (10 ms) longer than
// the time between two checks of one client in the parallel cells (1,000
// clients), so every client keeps its state: a take that recreates an
// expired key is not the path measured.
const benchPerSecond, benchBurst = 100, 1e9

// A memoryCell opens one contender of BenchmarkMemoryPath and returns its
// check of client k.
type memoryCell struct {
	name string
	open func(b *testing.B) func(k int)
}

func memoryCells() []memoryCell {
	const perSecond, burst = benchPerSecond, benchBurst
	perSec := core.PerSecond(perSecond).WithBurst(burst).WithName("s")
	perMin := core.PerMinute(60 * perSecond).WithBurst(burst).WithName("m")
	return []memoryCell{
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
		{"store", func(b *testing.B) func(int) {
			store, err := memstore.New()
			if err != nil {
				b.Fatal(err)
			}
			limits := []core.Limit{perSec}
			keys := make([][]string, benchClients)
			for k, id := range benchIDs() {
				keys[k] = []string{"ratelimit:{" + id + "}:s:g"}
			}
			dsts := sync.Pool{New: func() any { return new([1]core.Decision) }} // as the limiter pools its own
			ctx := context.Background()
			return func(k int) {
				dst := dsts.Get().(*[1]core.Decision)
				ds, err := store.Take(ctx, dst[:0], keys[k], limits, 1)
				dsts.Put(dst)
				if err != nil || !ds[0].Allowed {
					b.Fatal("memstore denied", err)
				}
			}
		}},
		{"limiter-1", func(b *testing.B) func(int) {
			return limiterCell(b, perSec)
		}},
		{"limiter-2", func(b *testing.B) func(int) {
			return limiterCell(b, perSec, perMin)
		}},
		{"handler", func(b *testing.B) func(int) {
			return httpCell(b, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		}},
		{"middleware", func(b *testing.B) func(int) {
			l := benchLimiter(b, perSec)
			return httpCell(b, ratelimithttp.New(l)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
		}},
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

// httpCell drives h as the suite's middleware cell does, one request per
// check from the client's own address.
func httpCell(b *testing.B, h http.Handler) func(int) {
	addrs := clientAddrs(benchClients)
	var drivers sync.Pool
	return func(k int) {
		d, _ := drivers.Get().(*httpDriver)
		if d == nil {
			d = newHTTPDriver()
		}
		if ok, err := d.serve(h, addrs[k]); !ok || err != nil {
			b.Fatal("request denied", err)
		}
		drivers.Put(d)
	}
}
