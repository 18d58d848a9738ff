package storetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// A controlFixture is one control case: a [core.ControlStore] on the
// case's clock and a space (key prefix) no other test uses.
type controlFixture struct {
	t     *testing.T
	store core.ControlStore
	takes core.Store // the same store
	clock *Clock
	space string
}

// A controlCase is one named check of [core.ControlStore].
type controlCase struct {
	name string
	run  func(f *controlFixture)
}

// runControlCases runs every control case on a fresh store and clock, or
// skips them, saying so, when the store keeps no controls.
func runControlCases(t *testing.T, newStore NewStore) {
	if _, ok := newStore(t, NewClock().Now).(core.ControlStore); !ok {
		t.Skip("the store keeps no controls (it is no core.ControlStore): control cases skipped")
	}
	for _, tt := range controlCases() {
		t.Run(tt.name, func(t *testing.T) {
			clock := NewClock()
			store := newStore(t, clock.Now)
			tt.run(&controlFixture{t: t, store: store.(core.ControlStore), takes: store, clock: clock, space: uniquePrefix()})
		})
	}
}

func controlCases() []controlCase {
	return []controlCase{
		{"set, then a full read returns every record", testControlSet},
		{"an empty space reads full, at generation 0", testControlEmpty},
		{"a new space starts at the store's clock in µs", testControlFirstGen},
		{"an incremental read names only the clients changed since", testControlIncremental},
		{"delete: logged, gone from the full read", testControlDelete},
		{"touch: logged, the record kept", testControlTouch},
		{"records expire by the store's clock", testControlExpiry},
		{"a write purges expired records and logs them", testControlPurge},
		{"an expiry further than MaxControlAge is cut to it", testControlMaxAge},
		{"a record set already expired is logged and never read", testControlSetExpired},
		{"a generation above the store's reads full (data lost)", testControlAhead},
		{"a log trimmed past since reads full", testControlTrim},
		{"spaces are independent", testControlSpaces},
		{"bad input: an error naming the field, nothing logged", testControlBadInput},
		{"a done context: an error, nothing logged", testControlDoneContext},
		{"DeleteKeys deletes one client's keys and counts them", testDeleteKeys},
		{"DeleteKeys refuses keys of several clients", testDeleteKeysOneClient},
	}
}

// set stores value for id until expires and returns the new generation.
func (f *controlFixture) set(id, value string, expires time.Time) uint64 {
	f.t.Helper()
	var v []byte
	if value != "" {
		v = []byte(value)
	}
	g, err := f.store.SetControl(context.Background(), f.space, id, v, expires)
	require.NoError(f.t, err, "SetControl(%q, %q)", id, value)
	return g
}

// remove deletes the record of id and returns the new generation.
func (f *controlFixture) remove(id string) uint64 {
	f.t.Helper()
	return f.set(id, "", time.Time{})
}

func (f *controlFixture) touch(id string) uint64 {
	f.t.Helper()
	g, err := f.store.TouchControl(context.Background(), f.space, id)
	require.NoError(f.t, err, "TouchControl(%q)", id)
	return g
}

func (f *controlFixture) read(since uint64) core.ControlChanges {
	f.t.Helper()
	ch, err := f.store.Controls(context.Background(), f.space, since)
	require.NoError(f.t, err, "Controls(since %d)", since)
	assert.True(f.t, f.clock.Now().Equal(ch.Now), "Controls(since %d): Now %v is the store's clock %v", since, ch.Now, f.clock.Now())
	return ch
}

// at returns the clock's instant plus d.
func (f *controlFixture) at(d time.Duration) time.Time { return f.clock.Now().Add(d) }

// rec is a record as a case expects it: "" for none (a nil Value).
type rec struct {
	value   string
	expires time.Time
}

// records returns the entries of ch by id, failing on an id given twice.
func records(t *testing.T, ch core.ControlChanges) map[string]rec {
	t.Helper()
	out := map[string]rec{}
	for _, e := range ch.Records {
		_, dup := out[e.ID]
		require.False(t, dup, "client %q named twice", e.ID)
		if e.Value == nil {
			assert.True(t, e.Expires.IsZero(), "client %q without a record has no expiry, got %v", e.ID, e.Expires)
			out[e.ID] = rec{}
			continue
		}
		out[e.ID] = rec{string(e.Value), e.Expires.UTC()}
	}
	return out
}

// assertChanges checks a read: its generation, whether it is full, and
// every record it holds.
func (f *controlFixture) assertChanges(ch core.ControlChanges, gen uint64, full bool, want map[string]rec) {
	f.t.Helper()
	assert.Equal(f.t, gen, ch.Gen, "Gen")
	assert.Equal(f.t, full, ch.Full, "Full")
	for id, r := range want {
		if !r.expires.IsZero() {
			want[id] = rec{r.value, r.expires.UTC()}
		}
	}
	assert.Equal(f.t, want, records(f.t, ch), "Records")
}

func testControlSet(f *controlFixture) {
	g1 := f.set("alice", "A", f.at(time.Hour))
	g2 := f.set("~bob-hashed-identity-xx", "B", time.Time{})
	assert.Equal(f.t, g1+1, g2, "each write raises the generation by one")
	f.assertChanges(f.read(0), g2, true, map[string]rec{
		"alice":                   {"A", f.at(time.Hour)},
		"~bob-hashed-identity-xx": {"B", f.at(core.MaxControlAge)},
	})
	g3 := f.set("alice", "A2", f.at(2*time.Hour))
	f.assertChanges(f.read(0), g3, true, map[string]rec{
		"alice":                   {"A2", f.at(2 * time.Hour)},
		"~bob-hashed-identity-xx": {"B", f.at(core.MaxControlAge)},
	})
}

func testControlEmpty(f *controlFixture) {
	f.assertChanges(f.read(0), 0, true, map[string]rec{})
	f.assertChanges(f.read(12345), 0, true, map[string]rec{})
}

func testControlFirstGen(f *controlFixture) {
	start := uint64(keylayout.EpochMicros(f.clock.Now()))
	assert.Equal(f.t, start+1, f.touch("alice"), "the first write of a space")
	f.clock.Advance(time.Hour)
	assert.Equal(f.t, start+2, f.touch("alice"), "the next write, whatever the clock")
}

func testControlIncremental(f *controlFixture) {
	f.set("a", "A", time.Time{})
	g := f.set("b", "B", f.at(time.Hour))
	f.set("c", "C", f.at(time.Minute))
	f.set("a", "A2", f.at(time.Hour))
	f.assertChanges(f.read(g), g+2, false, map[string]rec{
		"c": {"C", f.at(time.Minute)},
		"a": {"A2", f.at(time.Hour)},
	})
	f.assertChanges(f.read(g+1), g+2, false, map[string]rec{"a": {"A2", f.at(time.Hour)}})
	f.assertChanges(f.read(g+2), g+2, false, map[string]rec{})
}

func testControlDelete(f *controlFixture) {
	f.set("a", "A", time.Time{})
	g := f.set("b", "B", time.Time{})
	gd := f.remove("a")
	assert.Equal(f.t, g+1, gd, "a delete is a change")
	f.assertChanges(f.read(g), gd, false, map[string]rec{"a": {}})
	f.assertChanges(f.read(0), gd, true, map[string]rec{"b": {"B", f.at(core.MaxControlAge)}})
	f.assertChanges(f.read(gd-2), gd, false, map[string]rec{"a": {}, "b": {"B", f.at(core.MaxControlAge)}})
	assert.Equal(f.t, gd+1, f.remove("never-set"), "deleting no record is a change too")
}

func testControlTouch(f *controlFixture) {
	g := f.set("a", "A", f.at(time.Hour))
	f.touch("a")
	gt := f.touch("nobody")
	assert.Equal(f.t, g+2, gt)
	f.assertChanges(f.read(g), gt, false, map[string]rec{"a": {"A", f.at(time.Hour)}, "nobody": {}})
	f.assertChanges(f.read(0), gt, true, map[string]rec{"a": {"A", f.at(time.Hour)}})
}

func testControlExpiry(f *controlFixture) {
	g0 := f.touch("x")
	a, b := rec{"A", f.at(10 * time.Second)}, rec{"B", f.at(time.Hour)}
	f.set("a", a.value, a.expires)
	g := f.set("b", b.value, b.expires)
	f.clock.Advance(10*time.Second - time.Microsecond)
	f.assertChanges(f.read(0), g, true, map[string]rec{"a": a, "b": b})
	f.clock.Advance(time.Microsecond) // now == a's expiry: a record lives while now < its expiry
	f.assertChanges(f.read(0), g, true, map[string]rec{"b": b})
	f.assertChanges(f.read(g0), g, false, map[string]rec{"a": {}, "b": b})
	f.assertChanges(f.read(g), g, false, map[string]rec{})
}

func testControlPurge(f *controlFixture) {
	f.set("a", "A", f.at(10*time.Second))
	f.set("b", "B", f.at(20*time.Second))
	f.set("edge", "X", f.at(15*time.Second))
	c := rec{"C", f.at(time.Hour)}
	g := f.set("c", c.value, c.expires)
	f.clock.Advance(15 * time.Second) // edge expires now: purged too
	assert.Equal(f.t, g, f.read(0).Gen, "an expiry alone changes no generation")
	gd := f.touch("d")
	assert.Equal(f.t, g+1, gd, "the purge is part of the write's generation")
	f.assertChanges(f.read(g), gd, false, map[string]rec{"a": {}, "edge": {}, "d": {}})
	f.clock.Advance(10 * time.Second)
	e := rec{"E", f.at(time.Minute)}
	ge := f.set("e", e.value, e.expires)
	f.assertChanges(f.read(gd), ge, false, map[string]rec{"b": {}, "e": e})
	f.assertChanges(f.read(0), ge, true, map[string]rec{"c": c, "e": e})
}

func testControlMaxAge(f *controlFixture) {
	f.set("far", "F", f.at(2*core.MaxControlAge))
	g := f.set("near", "N", f.at(core.MaxControlAge-time.Second))
	f.assertChanges(f.read(0), g, true, map[string]rec{
		"far":  {"F", f.at(core.MaxControlAge)},
		"near": {"N", f.at(core.MaxControlAge - time.Second)},
	})
}

func testControlSetExpired(f *controlFixture) {
	g0 := f.set("live", "L", time.Time{})
	g := f.set("past", "P", f.at(-time.Second))
	f.set("now", "N", f.at(0))
	assert.Equal(f.t, g0+1, g)
	f.assertChanges(f.read(0), g+1, true, map[string]rec{"live": {"L", f.at(core.MaxControlAge)}})
	f.assertChanges(f.read(g0), g+1, false, map[string]rec{"past": {}, "now": {}})
}

func testControlAhead(f *controlFixture) {
	f.set("a", "A", time.Time{})
	g := f.set("b", "B", f.at(time.Hour))
	want := map[string]rec{"a": {"A", f.at(core.MaxControlAge)}, "b": {"B", f.at(time.Hour)}}
	f.assertChanges(f.read(g+1), g, true, want)
	f.assertChanges(f.read(g+1_000_000), g, true, want)
	f.assertChanges(f.read(g), g, false, map[string]rec{})
}

// testControlTrim logs ControlLogLen + 4 more clients after a record: the
// log keeps the newest ControlLogLen, and a reader whose generation the
// log no longer reaches reads everything.
func testControlTrim(f *controlFixture) {
	g0 := f.set("kept", "K", time.Time{})
	n := core.ControlLogLen + 4
	var last uint64
	for i := range n {
		last = f.touch(fmt.Sprintf("t%d", i))
	}
	require.Equal(f.t, g0+uint64(n), last, "one generation per write")
	// Logged: t4 … t4099 (generations g0+5 … g0+4100); dropped: kept, t0 … t3.
	trimmed := g0 + 4
	full := map[string]rec{"kept": {"K", f.at(core.MaxControlAge)}}
	f.assertChanges(f.read(g0), last, true, full)
	f.assertChanges(f.read(trimmed-1), last, true, full)
	ch := f.read(trimmed)
	assert.False(f.t, ch.Full, "since the newest generation dropped: the log holds everything after it")
	assert.Len(f.t, ch.Records, core.ControlLogLen)
	assert.NotContains(f.t, records(f.t, ch), "kept")
	assert.Contains(f.t, records(f.t, ch), "t4")
	assert.Len(f.t, f.read(trimmed+1).Records, core.ControlLogLen-1)
}

func testControlSpaces(f *controlFixture) {
	other := *f
	other.space = f.space + ":other"
	ga := f.set("a", "A", time.Time{})
	gb := other.set("b", "B", time.Time{})
	assert.Equal(f.t, ga, gb, "two new spaces at one instant start alike")
	f.assertChanges(f.read(0), ga, true, map[string]rec{"a": {"A", f.at(core.MaxControlAge)}})
	other.assertChanges(other.read(0), gb, true, map[string]rec{"b": {"B", f.at(core.MaxControlAge)}})
	f.assertChanges(f.read(ga), ga, false, map[string]rec{})
}

func testControlBadInput(f *controlFixture) {
	ctx := context.Background()
	g := f.touch("a")
	ok := []byte("v")
	tests := []struct {
		name  string
		space string
		id    string
		value []byte
		field string
	}{
		{"empty space", "", "a", ok, "space"},
		{"space with a brace", "rl{x", "a", ok, "space"},
		{"space of 65 bytes", strings.Repeat("s", 65), "a", ok, "space"},
		{"empty id", f.space, "", ok, "id"},
		{"id with a space", f.space, "a b", ok, "id"},
		{"id with a brace", f.space, "a}", ok, "id"},
		{"id of 65 bytes", f.space, strings.Repeat("i", 65), ok, "id"},
		{"value over MaxControlSize", f.space, "a", make([]byte, core.MaxControlSize+1), "value"},
		{"empty value (nil deletes)", f.space, "a", []byte{}, "value"},
	}
	for _, tt := range tests {
		_, err := f.store.SetControl(ctx, tt.space, tt.id, tt.value, time.Time{})
		if assert.Error(f.t, err, "SetControl: %s", tt.name) {
			assert.Contains(f.t, err.Error(), tt.field, "SetControl: %s: the error names the field", tt.name)
		}
		if tt.field != "value" {
			_, err = f.store.TouchControl(ctx, tt.space, tt.id)
			assert.Error(f.t, err, "TouchControl: %s", tt.name)
		}
	}
	_, err := f.store.Controls(ctx, "a b", 0)
	assert.ErrorContains(f.t, err, "space", "Controls of a bad space")
	f.assertChanges(f.read(g), g, false, map[string]rec{})
	big := f.set("a", strings.Repeat("x", core.MaxControlSize), time.Time{})
	assert.Equal(f.t, g+1, big, "a value of exactly MaxControlSize is kept")
	assert.Len(f.t, records(f.t, f.read(0))["a"].value, core.MaxControlSize)
}

func testControlDoneContext(f *controlFixture) {
	g := f.touch("a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.store.SetControl(ctx, f.space, "b", []byte("B"), time.Time{})
	assert.ErrorIs(f.t, err, context.Canceled, "SetControl")
	_, err = f.store.TouchControl(ctx, f.space, "b")
	assert.ErrorIs(f.t, err, context.Canceled, "TouchControl")
	_, err = f.store.Controls(ctx, f.space, 0)
	assert.ErrorIs(f.t, err, context.Canceled, "Controls")
	_, err = f.store.DeleteKeys(ctx, []string{"x:{a}:y:g"})
	assert.ErrorIs(f.t, err, context.Canceled, "DeleteKeys")
	f.assertChanges(f.read(g), g, false, map[string]rec{})
}

// deleteLimits are limits of three algorithms, whose keys are a string, a
// hash and a sorted set on Redis.
func deleteLimits() []core.Limit {
	return []core.Limit{
		core.PerMinute(10).WithName("burst"),
		core.PerHour(100).WithName("hourly").WithAlgorithm(core.FixedWindow),
		core.PerDay(1000).WithName("daily").WithAlgorithm(core.SlidingLog),
	}
}

func testDeleteKeys(f *controlFixture) {
	store := f.takes
	kb, err := core.NewKeyBuilder(f.space)
	require.NoError(f.t, err)
	limits := deleteLimits()
	alice := newClient(store, kb, "alice", limits)
	bob := newClient(store, kb, "bob", limits)
	alice.take(f.t, 3)
	bob.take(f.t, 2)
	never := kb.Key("alice", core.PerSecond(1).WithName("never"))

	n, err := f.store.DeleteKeys(context.Background(), append(slices.Clone(alice.keys), never))
	require.NoError(f.t, err)
	assert.Equal(f.t, int64(len(limits)), n, "the keys that held state")
	for i, d := range alice.take(f.t, 0) {
		assert.Equal(f.t, limits[i].Capacity(), d.Remaining, "alice's %s starts again from full", limits[i].Name)
	}
	for i, d := range bob.take(f.t, 0) {
		assert.Equal(f.t, limits[i].Capacity()-2, d.Remaining, "bob's %s is untouched", limits[i].Name)
	}
	n, err = f.store.DeleteKeys(context.Background(), alice.keys)
	require.NoError(f.t, err)
	assert.Zero(f.t, n, "deleted already")
	n, err = f.store.DeleteKeys(context.Background(), nil)
	require.NoError(f.t, err)
	assert.Zero(f.t, n, "no keys")
}

func testDeleteKeysOneClient(f *controlFixture) {
	store := f.takes
	kb, err := core.NewKeyBuilder(f.space)
	require.NoError(f.t, err)
	limits := deleteLimits()[:1]
	alice := newClient(store, kb, "alice", limits)
	alice.take(f.t, 1)
	tests := map[string][]string{
		"two clients":        {alice.keys[0], kb.Key("bob", limits[0])},
		"a key of no client": {alice.keys[0], f.space + ":plain"},
		"a key of controls":  {f.space + ":{~ctl}:r"},
	}
	for _, name := range slices.Sorted(maps.Keys(tests)) {
		_, err := f.store.DeleteKeys(context.Background(), tests[name])
		assert.ErrorContains(f.t, err, "keys[", "%s: the error names the key", name)
	}
	assert.Equal(f.t, limits[0].Capacity()-1, alice.take(f.t, 0)[0].Remaining, "nothing was deleted")
}
