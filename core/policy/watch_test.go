package policy_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/policy"
)

// reportWait bounds the wait for a reload: far above the debounce, for a
// loaded machine.
const reportWait = 10 * time.Second

// quietWait is how long a test waits to see that nothing is reported:
// ten debounce delays.
const quietWait = 10 * policy.DefaultDebounce

// oneLimit is a policy of one limiter with one fixed window of rate per
// minute, named m.
func oneLimit(rate int) string {
	return fmt.Sprintf("version: 1\ntiers:\n  free:\n    - {name: m, rate: %d, period: 1m, algorithm: fixed_window}\n", rate)
}

// writeAtomic replaces the file at path with data by a rename, as editors
// and deploy tools do.
func writeAtomic(t *testing.T, path, data string) {
	t.Helper()
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(data), 0o644))
	require.NoError(t, os.Rename(tmp, path))
}

// A syncBuffer is a log destination safe for the watcher's goroutine and
// the test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// watched is a limiter kept by a watcher of its policy file.
type watched struct {
	l       *core.Limiter
	w       *policy.Watcher
	path    string
	reports chan error
	log     *syncBuffer
}

// watch writes doc to a policy file and watches it for one limiter.
func watch(t *testing.T, doc string, opts ...policy.Option) *watched {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	return watchPath(t, path, opts...)
}

func watchPath(t *testing.T, path string, opts ...policy.Option) *watched {
	t.Helper()
	x := &watched{l: frozenLimiter(t, core.WithLimits(fw("m", 1, time.Minute))), path: path, reports: make(chan error, 64), log: &syncBuffer{}}
	opts = append([]policy.Option{
		policy.WithReport(func(err error) { x.reports <- err }),
		policy.WithLogger(slog.New(slog.NewTextHandler(x.log, nil))),
	}, opts...)
	w, err := policy.Watch(path, func(p *policy.Policy) error {
		return policy.Apply(p, map[string]*core.Limiter{"": x.l})
	}, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, w.Close()) })
	x.w = w
	require.NoError(t, x.next(t), "the first load")
	return x
}

// next waits for the next report.
func (x *watched) next(t *testing.T) error {
	t.Helper()
	select {
	case err := <-x.reports:
		return err
	case <-time.After(reportWait):
		t.Fatalf("no reload reported within %s", reportWait)
		return nil
	}
}

// quiet checks that nothing is reported for a while.
func (x *watched) quiet(t *testing.T) {
	t.Helper()
	select {
	case err := <-x.reports:
		t.Fatalf("a reload was reported: %v", err)
	case <-time.After(quietWait):
	}
}

// rate returns the rate of the limit in force.
func (x *watched) rate(t *testing.T) int64 {
	t.Helper()
	limits, ok := x.l.Tier("free")
	require.True(t, ok)
	return limits[0].Rate
}

// A changed file is applied; a bad one is refused and logged once, however
// often it is written again, while the policy in force keeps serving.
func TestWatchAppliesChangesAndRefusesBadOnes(t *testing.T) {
	x := watch(t, oneLimit(10), policy.WithSignals())
	assert.EqualValues(t, 10, x.rate(t))

	writeAtomic(t, x.path, oneLimit(20))
	require.NoError(t, x.next(t))
	assert.EqualValues(t, 20, x.rate(t))
	tiers, _, _ := x.w.Policy().Limiter("")
	assert.EqualValues(t, 20, tiers[0].Limits[0].Rate, "Policy is the policy in force")

	bad := strings.Replace(oneLimit(30), "rate: 30", "rate: 30, burts: 1", 1)
	writeAtomic(t, x.path, bad)
	err := x.next(t)
	require.Error(t, err)
	assert.Equal(t, x.path+`:4: tiers.free[0].burts: unknown field "burts": a limit has name, rate, period, burst, algorithm, calendar, zone and lockout`, err.Error())
	assert.EqualValues(t, 20, x.rate(t), "the policy in force keeps serving")

	writeAtomic(t, x.path, bad) // the same content again: not tried again
	require.NoError(t, os.WriteFile(x.path, []byte(bad), 0o644))
	x.quiet(t)
	assert.Equal(t, 1, strings.Count(x.log.String(), "policy refused"), "logged once:\n%s", x.log)

	writeAtomic(t, x.path, strings.Replace(bad, "burts", "brust", 1)) // another failure: reported
	require.ErrorContains(t, x.next(t), "brust")
	assert.Equal(t, 2, strings.Count(x.log.String(), "policy refused"))

	writeAtomic(t, x.path, oneLimit(40))
	require.NoError(t, x.next(t))
	assert.EqualValues(t, 40, x.rate(t))

	writeAtomic(t, x.path, oneLimit(40)) // the policy in force: nothing to do
	x.quiet(t)
}

// A file written in place, in pieces, is read once the directory is
// quiet: not a piece of it.
func TestWatchWaitsForTheWriterToFinish(t *testing.T) {
	// Pieces 50 ms apart, a debounce of 1 s: a margin of 20 for a
	// loaded machine.
	x := watch(t, oneLimit(10), policy.WithSignals(), policy.WithDebounce(time.Second))
	f, err := os.OpenFile(x.path, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	for _, line := range strings.SplitAfter(oneLimit(99), "\n") {
		_, err := f.WriteString(line)
		require.NoError(t, err)
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, f.Close())
	require.NoError(t, x.next(t), "the whole file, not a piece of it")
	assert.EqualValues(t, 99, x.rate(t))
}

// Kubernetes updates a ConfigMap's files by pointing a symlink at a new
// directory; the file's own name never changes.
func TestWatchFollowsAConfigMapSwap(t *testing.T) {
	dir := t.TempDir()
	version := func(name, doc string) {
		require.NoError(t, os.Mkdir(filepath.Join(dir, name), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name, "policy.yaml"), []byte(doc), 0o644))
		require.NoError(t, os.Symlink(name, filepath.Join(dir, "..data_tmp")))
		require.NoError(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	}
	version("..2025_01_01", oneLimit(10))
	require.NoError(t, os.Symlink("..data/policy.yaml", filepath.Join(dir, "policy.yaml")))
	x := watchPath(t, filepath.Join(dir, "policy.yaml"), policy.WithSignals())
	assert.EqualValues(t, 10, x.rate(t))

	version("..2025_01_02", oneLimit(11))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "..2025_01_01")))
	require.NoError(t, x.next(t))
	assert.EqualValues(t, 11, x.rate(t))
}

// SIGHUP reloads at once, and tells again about content that fails.
func TestWatchReloadsOnSIGHUP(t *testing.T) {
	// The directory's events wait an hour: only the signal reloads.
	x := watch(t, oneLimit(10), policy.WithDebounce(time.Hour))
	writeAtomic(t, x.path, oneLimit(12))
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	require.NoError(t, x.next(t))
	assert.EqualValues(t, 12, x.rate(t))

	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	require.Eventually(t, func() bool { return strings.Contains(x.log.String(), "policy unchanged") }, reportWait, 10*time.Millisecond)
	x.quiet(t)

	writeAtomic(t, x.path, "version: 1\n")
	for range 2 {
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
		require.ErrorContains(t, x.next(t), ":1: limiters: missing", "each signal tries and tells")
	}
	assert.EqualValues(t, 12, x.rate(t))
	require.Error(t, x.w.Reload(), "Reload does what the signal does")
}

// A service must not start on limits it was not given.
func TestWatchRefusesABadFileAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	apply := func(*policy.Policy) error { return nil }
	log := &syncBuffer{}
	opts := func() []policy.Option {
		return []policy.Option{policy.WithLogger(slog.New(slog.NewTextHandler(log, nil))),
			policy.WithReport(func(err error) { t.Errorf("reported: %v", err) })}
	}
	_, err := policy.Watch(path, apply, opts()...)
	require.ErrorContains(t, err, "no such file")

	require.NoError(t, os.WriteFile(path, []byte("version: 1\ntiers: {}\n"), 0o644))
	_, err = policy.Watch(path, apply, opts()...)
	require.EqualError(t, err, path+":2: tiers: empty: a limiter has at least one tier")
	assert.Empty(t, log.String(), "returned, not logged: no policy was in force")
}

func TestWatchOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	apply := func(*policy.Policy) error { return nil }
	tests := []struct {
		name string
		opts []policy.Option
		want string
	}{
		{"debounce twice", []policy.Option{policy.WithDebounce(time.Second), policy.WithDebounce(time.Second)}, "WithDebounce given twice"},
		{"zero debounce", []policy.Option{policy.WithDebounce(0)}, "WithDebounce(0s): must be positive"},
		{"nil report", []policy.Option{policy.WithReport(nil)}, "report must not be nil"},
		{"nil logger", []policy.Option{policy.WithLogger(nil)}, "logger must not be nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.Watch(path, apply, tt.opts...)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
