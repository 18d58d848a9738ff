package storetest

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// The shape of the load of [testControlWriters].
const (
	controlClients = 2  // stores (app nodes) sharing one state
	controlWriters = 32 // goroutines writing, spread over the stores
	controlWrites  = 25 // writes per writer
	controlIDs     = 24 // clients the writes pick from
)

// A controlWrite is one write of a writer and the generation it got.
type controlWrite struct {
	gen   uint64
	id    string
	value []byte // nil: deleted
	touch bool   // a touch: the record stays as it was
}

// testControlWriters has writers on two stores (two clients of one server,
// or one in-process store twice) set, delete and touch the controls of one
// space at once, while a reader per store follows the changes as a node
// does. Every write must get a generation of its own, the generations of
// all writes must be exactly the ones after the first (none skipped, none
// given twice), each writer's must increase, the full read at the end
// must hold, for every client, the value of its write of the highest
// generation, and each reader's copy, built from incremental reads, must
// equal that full read.
func testControlWriters(t *testing.T, stores []core.ControlStore) {
	space := uniquePrefix()
	g0, err := stores[0].TouchControl(context.Background(), space, "start")
	require.NoError(t, err)

	done := make(chan struct{})
	var readers sync.WaitGroup
	copies := make([]*controlCopy, len(stores)) // a reader per store
	for i := range copies {
		copies[i] = &controlCopy{store: stores[i%len(stores)], space: space, records: map[string][]byte{}}
		readers.Go(func() { copies[i].follow(t, done) })
	}
	writes := writeControls(t, stores, space)
	close(done)
	readers.Wait()

	checkGenerations(t, writes, g0)
	full, err := stores[1%len(stores)].Controls(context.Background(), space, 0)
	require.NoError(t, err)
	want := lastValues(writes)
	assert.Equal(t, want, valuesOf(full), "the full read holds the last write of every client")
	for i, c := range copies {
		c.read(t) // what it missed after the writers stopped
		assert.Equal(t, want, c.records, "reader %d: its copy built from the changes", i)
		assert.Equal(t, full.Gen, c.since, "reader %d: its generation", i)
	}
}

// writeControls runs the writers and returns every write.
func writeControls(t *testing.T, stores []core.ControlStore, space string) []controlWrite {
	var mu sync.Mutex
	var all []controlWrite
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range controlWriters {
		store := stores[w%len(stores)]
		wg.Go(func() {
			<-start
			mine := writer(t, store, space, w)
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return all
}

// writer makes one writer's writes, in order, and checks that its own
// generations increase.
func writer(t *testing.T, store core.ControlStore, space string, w int) []controlWrite {
	rng := rand.New(rand.NewPCG(uint64(w), 18))
	ctx := context.Background()
	var mine []controlWrite
	for i := range controlWrites {
		wr := controlWrite{id: fmt.Sprintf("c%d", rng.IntN(controlIDs))}
		var err error
		switch op := rng.IntN(10); {
		case op < 6:
			wr.value = fmt.Appendf(nil, "writer %d write %d", w, i)
			wr.gen, err = store.SetControl(ctx, space, wr.id, wr.value, time.Time{})
		case op < 8:
			wr.gen, err = store.SetControl(ctx, space, wr.id, nil, time.Time{})
		default:
			wr.touch = true
			wr.gen, err = store.TouchControl(ctx, space, wr.id)
		}
		if !assert.NoError(t, err, "writer %d, write %d", w, i) {
			return mine
		}
		if n := len(mine); n > 0 && wr.gen <= mine[n-1].gen {
			t.Errorf("writer %d: write %d got generation %d after %d", w, i, wr.gen, mine[n-1].gen)
		}
		mine = append(mine, wr)
	}
	return mine
}

// checkGenerations checks that the writes got the generations after g0,
// each once.
func checkGenerations(t *testing.T, writes []controlWrite, g0 uint64) {
	gens := make([]uint64, len(writes))
	for i, w := range writes {
		gens[i] = w.gen
	}
	slices.Sort(gens)
	want := make([]uint64, len(writes))
	for i := range want {
		want[i] = g0 + 1 + uint64(i)
	}
	assert.Equal(t, want, gens, "one generation per write, none skipped or shared")
}

// lastValues returns the value of each client's last set or delete: the
// write of the highest generation that is not a touch.
func lastValues(writes []controlWrite) map[string][]byte {
	slices.SortFunc(writes, func(a, b controlWrite) int { return cmp.Compare(a.gen, b.gen) })
	out := map[string][]byte{}
	for _, w := range writes {
		switch {
		case w.touch:
		case w.value == nil:
			delete(out, w.id)
		default:
			out[w.id] = w.value
		}
	}
	return out
}

func valuesOf(ch core.ControlChanges) map[string][]byte {
	out := map[string][]byte{}
	for _, e := range ch.Records {
		if e.Value != nil {
			out[e.ID] = e.Value
		}
	}
	return out
}

// A controlCopy is a node's copy of a space's records, kept up to date
// from the changes as a limiter keeps its snapshot.
type controlCopy struct {
	store   core.ControlStore
	space   string
	since   uint64
	records map[string][]byte
}

// follow reads the changes until done is closed.
func (c *controlCopy) follow(t *testing.T, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		default:
		}
		if !c.read(t) {
			return
		}
	}
}

// read applies one read of the changes, and reports whether it succeeded.
// A generation never goes back while the store keeps its data.
func (c *controlCopy) read(t *testing.T) bool {
	ch, err := c.store.Controls(context.Background(), c.space, c.since)
	if !assert.NoError(t, err) {
		return false
	}
	if !assert.GreaterOrEqual(t, ch.Gen, c.since, "the generation went back") {
		return false
	}
	if ch.Full {
		clear(c.records)
	}
	for _, e := range ch.Records {
		if e.Value == nil {
			delete(c.records, e.ID)
		} else {
			c.records[e.ID] = bytes.Clone(e.Value)
		}
	}
	c.since = ch.Gen
	return true
}

// runControlConcurrency runs [testControlWriters] on stores newStores
// returns, or skips it, saying so, when they keep no controls.
func runControlConcurrency(t *testing.T, newStores func(t *testing.T, now func() time.Time, n int) []core.Store) {
	stores := newStores(t, NewClock().Now, controlClients)
	require.Len(t, stores, controlClients, "newStores must return n stores")
	cs := make([]core.ControlStore, len(stores))
	for i, s := range stores {
		c, ok := s.(core.ControlStore)
		if !ok {
			t.Skip("the stores keep no controls (they are no core.ControlStore): skipped")
		}
		cs[i] = c
	}
	testControlWriters(t, cs)
}
