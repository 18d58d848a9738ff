package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// A Watcher keeps a policy file applied: it loads the file, hands each new
// valid content to its apply function, and refuses (logs, reports, and
// otherwise ignores) content that fails to parse or to apply, so that the
// policy in force keeps serving. Make one with [Watch]; it runs a
// goroutine until [Watcher.Close].
//
// It reloads when the file changes, watching the file's directory so that
// a file replaced by a rename (an editor's save, a Kubernetes ConfigMap's
// symlink swap) is seen, once the directory has been quiet for the
// debounce delay ([WithDebounce], 100 ms); and on SIGHUP ([WithSignals]).
// A reload whose content is the policy in force does nothing; content that
// failed before is not tried again until it changes, so a file that keeps
// failing is logged once per change, never in a loop. A signal always
// tries again, and reports what it found.
type Watcher struct {
	path  string
	apply func(*Policy) error
	opts  options

	fsw     *fsnotify.Watcher
	signals chan os.Signal
	done    chan struct{}
	stopped chan struct{}
	close   sync.Once

	mu      sync.Mutex // one reload at a time; guards what follows
	sum     [sha256.Size]byte
	failed  string // what failed last ("" none): a content's hash, or a read error
	lastErr error
	current atomic.Pointer[Policy]
}

// An Option configures [Watch].
type Option func(*options) error

type options struct {
	report   func(error)
	logger   *slog.Logger
	debounce time.Duration
	signals  []os.Signal
	given    map[string]bool
}

// WithReport has the watcher call report after every reload it attempts:
// with nil when a new policy was applied (the first load included), else
// with why the content was refused (each failing content once, unless a
// signal asks again; a first load that fails is [Watch]'s error). It is
// how metrics count reloads and their failures; it runs on the watcher's
// goroutine (or the caller's of [Watcher.Reload]) and must not block.
func WithReport(report func(err error)) Option {
	return func(o *options) error {
		if report == nil {
			return errors.New("ratelimit: policy: WithReport: report must not be nil")
		}
		o.report = report
		return once(o, "WithReport")
	}
}

// WithLogger sets where the watcher logs each reload and refusal (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return errors.New("ratelimit: policy: WithLogger: logger must not be nil")
		}
		o.logger = l
		return once(o, "WithLogger")
	}
}

// DefaultDebounce is how long the file's directory must be quiet before
// the watcher reads the file: long enough for a writer to finish, short
// enough that a change applies at once to a person.
const DefaultDebounce = 100 * time.Millisecond

// WithDebounce sets how long the directory must be quiet before the file
// is read (default [DefaultDebounce]).
func WithDebounce(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("ratelimit: policy: WithDebounce(%s): must be positive", d)
		}
		o.debounce = d
		return once(o, "WithDebounce")
	}
}

// WithSignals sets the signals that make the watcher reload (default
// SIGHUP); none turns reloading on a signal off.
func WithSignals(sig ...os.Signal) Option {
	return func(o *options) error {
		o.signals = sig
		return once(o, "WithSignals")
	}
}

func once(o *options, name string) error {
	if o.given[name] {
		return fmt.Errorf("ratelimit: policy: %s given twice", name)
	}
	o.given[name] = true
	return nil
}

// Watch loads the policy file at path, hands it to apply (typically
// func(p *Policy) error { return Apply(p, limiters) }) and keeps watching
// it: see [Watcher]. An error loading or applying the file the first time
// is returned, with nothing started: a service should not start on limits
// it was not given.
func Watch(path string, apply func(*Policy) error, opts ...Option) (*Watcher, error) {
	o := options{logger: slog.Default(), debounce: DefaultDebounce, signals: []os.Signal{syscall.SIGHUP}, given: map[string]bool{}}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	w := &Watcher{path: path, apply: apply, opts: o, done: make(chan struct{}), stopped: make(chan struct{})}
	if err := w.reload(true); err != nil {
		return nil, err
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("ratelimit: policy: watch %s: %w", path, err)
	}
	if err := fsw.Add(filepath.Dir(path)); err != nil {
		fsw.Close()
		return nil, fmt.Errorf("ratelimit: policy: watch %s: %w", path, err)
	}
	w.fsw = fsw
	w.signals = make(chan os.Signal, 1)
	if len(o.signals) > 0 {
		signal.Notify(w.signals, o.signals...)
	}
	go w.loop()
	return w, nil
}

// Policy returns the policy in force: the one last applied.
func (w *Watcher) Policy() *Policy { return w.current.Load() }

// Reload reads the file and applies it now, as a signal does, and returns
// why it was refused (nil when it was applied or is the policy in force).
func (w *Watcher) Reload() error { return w.reload(true) }

// Close stops watching. The policy in force stays in force.
func (w *Watcher) Close() error {
	var err error
	w.close.Do(func() {
		signal.Stop(w.signals)
		close(w.done)
		err = w.fsw.Close()
		<-w.stopped
	})
	return err
}

// loop reloads on the directory's changes, debounced, and on signals,
// until Close.
func (w *Watcher) loop() {
	defer close(w.stopped)
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	for {
		select {
		case <-w.done:
			quiet.Stop()
			return
		case _, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			quiet.Reset(w.opts.debounce)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			// Events may have been lost (an overflow): look again.
			w.opts.logger.Warn("ratelimit: policy: watching the file's directory", "file", w.path, "error", err)
			quiet.Reset(w.opts.debounce)
		case <-quiet.C:
			_ = w.reload(false) // logged and reported
		case <-w.signals:
			_ = w.reload(true)
		}
	}
}

// reload reads the file and applies it unless it is the policy in force,
// or (unless forced) content that failed before.
func (w *Watcher) reload(force bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	data, err := readFile(w.path)
	if err != nil {
		return w.refuse("read: "+err.Error(), err, force)
	}
	sum := sha256.Sum256(data)
	key := hex.EncodeToString(sum[:])
	switch {
	case w.current.Load() != nil && sum == w.sum:
		if force {
			w.opts.logger.Info("ratelimit: policy unchanged", "file", w.path, "sha256", key[:12])
		}
		return nil
	case !force && key == w.failed:
		return w.lastErr
	}
	p, err := Parse(w.path, data)
	if err == nil {
		err = w.apply(p)
	}
	if err != nil {
		return w.refuse(key, err, force)
	}
	w.applied(p, sum)
	return nil
}

// refuse records that what (a content's hash, or a read error) failed
// with err, logging and reporting it unless it is what failed last and
// the reload was not forced. A first load that fails is only returned:
// Watch returns it, and nothing runs.
func (w *Watcher) refuse(what string, err error, force bool) error {
	if w.current.Load() == nil {
		return err
	}
	if force || what != w.failed {
		w.opts.logger.Error("ratelimit: policy refused; the policy in force keeps serving", "file", w.path, "error", err)
		if w.opts.report != nil {
			w.opts.report(err)
		}
	}
	w.failed, w.lastErr = what, err
	return err
}

// applied records p, of content hash sum, as the policy in force.
func (w *Watcher) applied(p *Policy, sum [sha256.Size]byte) {
	old := w.current.Swap(p)
	w.sum, w.failed, w.lastErr = sum, "", nil
	attrs := []any{"file", w.path, "sha256", hex.EncodeToString(sum[:6])}
	if old != nil {
		c := Diff(old, p)
		attrs = append(attrs, "changed", changedLimiters(c), "counters_restart", restarts(c))
		w.opts.logger.Debug("ratelimit: policy changes", "file", w.path, "diff", c.String())
	}
	w.opts.logger.Info("ratelimit: policy applied", attrs...)
	if w.opts.report != nil {
		w.opts.report(nil)
	}
}

// changedLimiters names the limiters c changes.
func changedLimiters(c *Changes) []string {
	names := make([]string, len(c.Limiters))
	for i, l := range c.Limiters {
		names[i] = l.Name
	}
	return names
}

// restarts names the counters c restarts or drops, "limiter/limit".
func restarts(c *Changes) []string {
	var out []string
	for _, l := range c.Limiters {
		for _, cc := range l.Counters {
			if cc.Fate == CountersRestart || cc.Fate == CountersDropped {
				out = append(out, l.Name+"/"+cc.Limit)
			}
		}
	}
	return out
}
