package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
)

// maxBatch is how many takes one pipeline carries at most, and
// maxInFlight how many calls (lone takes or pipelines) a batching store
// has in flight at once to one node ([WithoutBatching] describes
// batching). A take that just missed the calls in flight waits for one of
// them and then for its own: up to two round trips. With one call in
// flight the client and Redis take turns (one builds and parses a pipeline
// while the other waits); with two they overlap, which made batched GCRA
// faster at every concurrency measured, with a lower p99 (docs/benchmarks.md,
// "Two calls in flight per node"). Pipelines are smaller (fewer takes per
// round trip); the batcher works with any number.
const (
	maxBatch    = 128
	maxInFlight = 2
)

// WithBatching makes [New] log, once ([WithLogger]), when its client
// cannot batch takes (a client with retries, a *redis.Ring, a custom
// client; see [WithoutBatching]). That is all it does: batching is on by
// default, and without this option such a client is used one take at a
// time without a word. Giving it with WithoutBatching is an error.
func WithBatching() Option {
	return func(c *config) { c.batchOn = true }
}

// WithoutBatching makes a Store send every take alone, one round trip
// each, never in a pipeline. Use it to measure one check per round trip,
// or with a proxy in front of Redis that mishandles pipelines. Giving it
// with [WithBatching] is an error.
//
// By default a Store batches: concurrent takes of one Redis node share
// round trips.
// A take that finds no call of the store to its node in flight is sent at
// once, alone, exactly as without batching, so a lone caller waits no
// longer. Takes that arrive while a call is in flight queue; when it
// returns, one of their callers sends all of them (up to 128) as one
// pipeline, each take still one EVALSHA, and the next queue waits for that
// pipeline. The store has one call in flight per node at most, starts no
// goroutine and needs no Close: the callers themselves take turns sending.
// A take thus waits up to two round trips (the call in flight, then its
// own), so batching suits a Redis whose round trip is well under half the
// decision budget.
//
// Each take keeps its own context. A take whose context is done before its
// pipeline is written is never sent, so never charged. The pipeline is
// sent by the caller of its take with the latest deadline, which waits for
// it until that deadline (then the takes not yet answered fail, as an
// unbatched take cut short does); every other caller waits on its own
// context, so no caller waits past its deadline, and one caller about to
// give up does not cut the pipeline short for the others. A caller whose
// context ends after its take was written returns at once with the
// context's error, and its take may still run on the server, as an
// unbatched take cut short by its deadline may.
//
// Nothing that may have run is sent again: a pipeline is never retried,
// and only takes the server answered without running them are resent:
// NOSCRIPT (with the script, on the same node) and, on a cluster, MOVED
// or ASK (each alone, through the cluster client, which follows the
// redirection). A transport failure fails the takes not yet answered with
// errors wrapping [core.ErrStoreUnavailable], as for a single take; Redis
// error replies (READONLY from a demoted master included) fail only their
// own take.
//
// Batching applies to clients without retries (go-redis would retry a
// whole pipeline, takes that ran included), as [NewClient],
// [NewFailoverClient] and [NewClusterClient] build them (MaxRetries -1):
//   - a *redis.Client, standalone or Sentinel failover: one queue;
//   - a *redis.ClusterClient: one queue per master. A take goes to the
//     master of its key's slot (as the client's slot map has it); its
//     pipelines go on that master's node client, which the cluster client
//     builds with its own MaxRetries (a node client that retries anyway,
//     from a custom NewClient, gets no pipelines). Hooks added to the
//     cluster client with AddHook see lone takes only; add them to the
//     node clients too (OnNewNode), as redisotel does.
//
// On a client with retries, a *redis.Ring or any other client, takes are
// sent one by one, as with WithoutBatching ([WithBatching] makes [New]
// say so).
func WithoutBatching() Option {
	return func(c *config) { c.batchOff = true }
}

// A batcher is what a batching store sends its calls through: the queue
// of its one node (a *nodeBatcher), or the queues of a cluster's masters
// (a *masterBatchers).
type batcher interface {
	do(ctx context.Context, p *program, cmd *redis.IntSliceCmd) ([]int64, error)
}

// newBatcher returns the batcher of a store on client, or nil when takes
// are to be sent one by one: batching is off ([WithoutBatching]), client is neither a
// *redis.Client nor a *redis.ClusterClient, or it retries (go-redis
// resends a whole pipeline after a read timeout or a first reply such as
// LOADING or READONLY, takes that ran included; a cluster client's node
// clients get its MaxRetries).
func newBatcher(client redis.Scripter, c config) batcher {
	if c.batchOff {
		return nil
	}
	switch cl := client.(type) {
	case *redis.Client:
		if retries(c, cl) {
			return nil
		}
		return newNodeBatcher(cl, cl, c.batchAlone)
	case *redis.ClusterClient:
		if retries(c, cl) {
			return nil
		}
		return newMasterBatchers(cl, c)
	}
	if c.batchOn {
		c.logger.Info("ratelimit: redisstore: batching needs a *redis.Client (standalone or failover) or a *redis.ClusterClient; takes are sent one by one",
			"client", fmt.Sprintf("%T", client))
	}
	return nil
}

// retries reports whether client retries failed commands, and logs that it
// gets no pipelines if so and batching was asked for ([WithBatching]).
func retries(c config, client redis.Scripter) bool {
	s, _ := settingsOf(client)
	if s.maxRetries <= 0 {
		return false
	}
	if !c.batchOn {
		return true
	}
	c.logger.Warn("ratelimit: redisstore: batching needs a client without retries (MaxRetries -1); takes are sent one by one",
		"max_retries", s.maxRetries)
	return true
}

// run sends cmd, the EVALSHA of one call of p (a take's program, or
// "lease", built by [newCall]): through the batcher if the store has one,
// else alone ([runAlone]). Its reply is an array of integers. A call whose
// ctx is done already is not sent.
func (s *Store) run(ctx context.Context, p *program, cmd *redis.IntSliceCmd) ([]int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, notSent(err)
	}
	if s.batch == nil {
		return runAlone(ctx, s.client, p, cmd)
	}
	return s.batch.do(ctx, p, cmd)
}

// A processor runs a command: every go-redis client does.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// runAlone sends cmd, an EVALSHA of p built by [newCall], on client, and
// EVAL if the server answers NOSCRIPT, as Script.Run does (on a client
// that is no processor, it is Script.Run).
func runAlone(ctx context.Context, client redis.Scripter, p *program, cmd *redis.IntSliceCmd) ([]int64, error) {
	proc, ok := client.(processor)
	if !ok {
		keys, args := evalShaParts(cmd)
		return p.script.Run(ctx, client, keys, args...).Int64Slice()
	}
	_ = proc.Process(ctx, cmd)
	if isNoScript(cmd.Err()) {
		cmd = p.again(ctx, cmd, true)
		_ = proc.Process(ctx, cmd)
	}
	return cmd.Result()
}

// A nodeBatcher coalesces the takes of one node into pipelines, with no
// goroutine of its own (a leader/follower scheme): inFlight counts the
// calls in flight; takes arriving while there are maxInFlight join queue;
// whoever ends a call hands its slot to a take of the next batch, the
// leader, whose caller sends the batch and then hands the slot on. No live
// take waits while a slot is free.
type nodeBatcher struct {
	client *redis.Client  // the node: pipelines go here
	lone   redis.Scripter // lone takes, and takes redirected: client, or the cluster client
	alone  bool           // tests: a lone take also goes as a pipeline (of one)
	// redirected is called after a take was answered MOVED or ASK (nil:
	// not a cluster node).
	redirected func(context.Context)

	checks sync.Pool // *check, free
	pipes  sync.Pool // redis.Pipeliner of client, empty

	mu       sync.Mutex
	inFlight int      // calls in flight, and leaders promoted
	queue    []*check // waiting takes; entries no longer queued are skipped
}

// newNodeBatcher returns the batcher of the node client, whose lone takes
// go through lone.
func newNodeBatcher(client *redis.Client, lone redis.Scripter, alone bool) *nodeBatcher {
	return &nodeBatcher{client: client, lone: lone, alone: alone}
}

// A check is one queued take. ctx and wake never change while the check is
// in use; cmd is the sender's until the check is done, then its caller's;
// state and err are guarded by the batcher's mu. A check whose caller has
// its reply goes back to the batcher's pool, wake and all, unless someone
// may still hold it (a queue, a pipeline being sent).
type check struct {
	ctx  context.Context
	prog *program           // the call's: a pipeline may mix them
	cmd  *redis.IntSliceCmd // built by the caller; replaced by a resend
	wake chan struct{}      // one token: the check became leader, or done

	state checkState
	err   error // when done without being sent
}

type checkState uint8

const (
	queued  checkState = iota // in the queue
	leading                   // promoted: its caller sends the next pipeline
	sent                      // in a pipeline being sent
	done                      // answered in cmd, or failed with err
)

// newCheck returns a check of the take, from the pool if it has one: a
// pooled check's wake may hold a stale token, which its caller skips.
func (b *nodeBatcher) newCheck(ctx context.Context, p *program, cmd *redis.IntSliceCmd, state checkState) *check {
	c, _ := b.checks.Get().(*check)
	if c == nil {
		c = &check{wake: make(chan struct{}, 1)}
	}
	c.ctx, c.prog, c.cmd, c.state, c.err = ctx, p, cmd, state, nil
	return c
}

// free returns c, which nobody else holds any more, to the pool, and its
// command and error.
func (b *nodeBatcher) free(c *check) (*redis.IntSliceCmd, error) {
	cmd, err := c.cmd, c.err
	c.ctx, c.prog, c.cmd, c.err = nil, nil, nil, nil
	b.checks.Put(c)
	return cmd, err
}

// do runs one take, cmd, through the batcher and returns the script's
// reply.
func (b *nodeBatcher) do(ctx context.Context, p *program, cmd *redis.IntSliceCmd) ([]int64, error) {
	b.mu.Lock()
	if b.inFlight < maxInFlight {
		b.inFlight++
		b.mu.Unlock()
		return b.solo(ctx, p, cmd)
	}
	c := b.newCheck(ctx, p, cmd, queued)
	b.queue = append(b.queue, c)
	b.mu.Unlock()
	return b.wait(c, p)
}

// solo sends a take alone, as an unbatched store does, then hands its slot
// to the leader of the queue that formed meanwhile.
func (b *nodeBatcher) solo(ctx context.Context, p *program, cmd *redis.IntSliceCmd) ([]int64, error) {
	if !b.alone {
		defer b.release()
		return runAlone(ctx, b.lone, p, cmd)
	}
	c := b.newCheck(ctx, p, cmd, sent)
	b.send(c, []*check{c})
	b.release()
	cmd, _ = b.free(c)
	return b.reply(ctx, p, cmd)
}

// wait waits until c is answered, c is promoted to leader (then its caller
// sends the pipeline), or c's context is done.
func (b *nodeBatcher) wait(c *check, p *program) ([]int64, error) {
	ctx := c.ctx
	for {
		select {
		case <-c.wake:
		case <-ctx.Done():
		}
		b.mu.Lock()
		switch {
		case c.state == done: // out of the queue and of its pipeline
			b.mu.Unlock()
			cmd, err := b.free(c)
			if err != nil {
				return nil, err
			}
			return b.reply(ctx, p, cmd)
		case c.state == leading && ctx.Err() == nil:
			batch := b.collectLocked(c)
			b.mu.Unlock()
			b.lead(c, batch)
			cmd, _ := b.free(c)
			return b.reply(ctx, p, cmd)
		case ctx.Err() == nil:
			b.mu.Unlock() // a stale token: keep waiting
		case c.state == sent:
			// Written, maybe run: the leader still reads the reply (and
			// holds c).
			b.mu.Unlock()
			return nil, fmt.Errorf("reply not awaited: %w", ctx.Err())
		default: // queued or leading, never sent; c may stay queued
			led := c.state == leading
			c.finishLocked(notSent(ctx.Err()))
			if led { // the next pipeline is c's to send: hand it on
				b.promoteLocked()
			}
			b.mu.Unlock()
			return nil, c.err
		}
	}
}

// reply returns the reply of a take in cmd. A take a cluster node answered
// MOVED or ASK did not run: it is sent again, alone, through the cluster
// client, which follows the redirection (and reloads its slot map).
func (b *nodeBatcher) reply(ctx context.Context, p *program, cmd *redis.IntSliceCmd) ([]int64, error) {
	if b.redirected == nil || !redirection(cmd.Err()) {
		return cmd.Result()
	}
	b.redirected(ctx)
	return runAlone(ctx, b.lone, p, p.again(ctx, cmd, false))
}

// redirection reports whether err is a MOVED or ASK reply: the node does
// not serve the slot (now), and ran nothing. Only a Redis error reply
// counts: a transport error never means the take did not run.
func redirection(err error) bool {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return false
	}
	if _, ok := redis.IsMovedError(err); ok {
		return true
	}
	_, ok := redis.IsAskError(err)
	return ok
}

// lead sends batch, whose leader is leader, wakes its takes and promotes
// the next leader.
func (b *nodeBatcher) lead(leader *check, batch []*check) {
	defer func() {
		b.mu.Lock()
		for _, c := range batch {
			c.finishLocked(nil)
		}
		b.promoteLocked()
		b.mu.Unlock()
	}()
	b.send(leader, batch)
}

// release ends a call: it hands the call's slot to the next leader, or
// frees it.
func (b *nodeBatcher) release() {
	b.mu.Lock()
	b.promoteLocked()
	b.mu.Unlock()
}

// idle reports whether the batcher has no call in flight and no take
// waiting.
func (b *nodeBatcher) idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inFlight == 0 && len(b.queue) == 0
}

// promoteLocked makes the take with the latest deadline of the next batch
// (the first maxBatch live takes of the queue) its leader, after dropping
// the dead takes at the head of the queue, and hands it the slot of the
// call that ended; with none left, it frees the slot.
func (b *nodeBatcher) promoteLocked() {
	for len(b.queue) > 0 && b.queue[0].dead() {
		if c := b.queue[0]; c.state == queued {
			c.finishLocked(notSent(c.ctx.Err()))
		}
		b.queue[0] = nil
		b.queue = b.queue[1:]
	}
	if len(b.queue) == 0 {
		b.queue = b.queue[:0:0]
		b.inFlight--
		return
	}
	var leader *check
	var latest time.Time
	for i, n := 0, 0; i < len(b.queue) && n < maxBatch; i++ {
		c := b.queue[i]
		if !c.live() {
			continue
		}
		n++
		d, ok := c.ctx.Deadline()
		if !ok {
			leader = c
			break
		}
		if leader == nil || d.After(latest) {
			leader, latest = c, d
		}
	}
	if leader == nil { // only leaders wait: the slot is not needed
		b.inFlight--
		return
	}
	leader.state = leading
	leader.signal()
}

// live reports whether c waits in the queue for a batch, and its caller
// still wants it.
func (c *check) live() bool { return c.state == queued && c.ctx.Err() == nil }

// dead reports whether c stays in the queue only to be dropped: answered,
// or queued for a caller that gave up.
func (c *check) dead() bool { return c.state == done || (c.state == queued && c.ctx.Err() != nil) }

// collectLocked takes the batch of leader off the queue: leader and up to
// maxBatch-1 live takes, in queue order. Takes whose context is done fail
// unsent; the leaders of other batches stay.
func (b *nodeBatcher) collectLocked(leader *check) []*check {
	leader.state = sent
	batch := append(make([]*check, 0, min(len(b.queue), maxBatch)), leader)
	rest := b.queue[:0]
	for _, c := range b.queue {
		switch {
		case c == leader, c.state == done:
		case c.state == queued && c.ctx.Err() != nil:
			c.finishLocked(notSent(c.ctx.Err()))
		case c.state == queued && len(batch) < maxBatch:
			c.state = sent
			batch = append(batch, c)
		default:
			rest = append(rest, c)
		}
	}
	clear(b.queue[len(rest):])
	b.queue = rest
	return batch
}

// finishLocked marks c done (with err if it was not sent) and wakes its
// caller.
func (c *check) finishLocked(err error) {
	c.state, c.err = done, err
	c.signal()
}

// signal wakes c's caller; a token already pending is enough.
func (c *check) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// send writes the takes of batch as one pipeline, under a context that
// ends at the leader's deadline, and leaves each reply in its cmd. Takes
// the server answered NOSCRIPT did not run: they are sent again with the
// script (see resend). Nothing else is sent twice, but for takes a cluster
// node answered MOVED or ASK, which their callers send again (see reply).
// Each call runs its own program (a take's, or "lease"): one pipeline may
// mix programs.
func (b *nodeBatcher) send(leader *check, batch []*check) {
	ctx, cancel := batchContext(leader)
	defer cancel()
	pipe := b.pipeline()
	defer b.pipes.Put(pipe)
	cmds := make([]*redis.IntSliceCmd, len(batch))
	for i, c := range batch {
		cmds[i] = c.cmd
		_ = pipe.Process(ctx, c.cmd)
	}
	exec(ctx, pipe, cmds)
	for round := range 2 {
		again := noScript(cmds)
		if len(again) == 0 {
			break
		}
		b.resend(ctx, batch, cmds, again, round == 1)
	}
	for i, c := range batch {
		c.cmd = cmds[i]
	}
}

// resend sends cmds[i], the take of batch[i], for every i of again, which
// the server answered NOSCRIPT, again, each with its own program: the
// first take of each program as EVAL, which caches the program, and the
// others as EVALSHA behind it on the same connection; every one as EVAL if
// all is set (the cache was flushed again in between).
func (b *nodeBatcher) resend(ctx context.Context, batch []*check, cmds []*redis.IntSliceCmd, again []int, all bool) {
	pipe := b.pipeline()
	defer b.pipes.Put(pipe)
	resent := make([]*redis.IntSliceCmd, len(again))
	var loaded []*program // programs sent as EVAL: at most one per program
	for j, i := range again {
		p := batch[i].prog
		eval := all || !slices.Contains(loaded, p)
		if eval {
			loaded = append(loaded, p)
		}
		resent[j] = p.again(ctx, cmds[i], eval)
		_ = pipe.Process(ctx, resent[j])
		cmds[i] = resent[j]
	}
	exec(ctx, pipe, resent)
}

// pipeline returns an empty pipeline of the node, from the pool if it has
// one: Exec empties a pipeline, which can then carry the next batch.
func (b *nodeBatcher) pipeline() redis.Pipeliner {
	if pipe, ok := b.pipes.Get().(redis.Pipeliner); ok {
		return pipe
	}
	return b.client.Pipeline()
}

// exec runs pipe, which holds cmds, as one pipeline. go-redis sets each
// command's error (transport errors on every command not answered); should
// a hook fail the pipeline without running it, its error goes on the
// commands left without a reply.
func exec(ctx context.Context, pipe redis.Pipeliner, cmds []*redis.IntSliceCmd) {
	if _, err := pipe.Exec(ctx); err != nil {
		for _, cmd := range cmds {
			if cmd.Err() == nil && cmd.Val() == nil {
				cmd.SetErr(err)
			}
		}
	}
}

// batchContext returns the context of a pipeline: the values and the
// deadline of its leader's context, none of its cancellation. The leader's
// caller waits for the pipeline, so it must end by the leader's deadline; a
// written pipeline is not cut short because the leader's caller gave up
// otherwise: the others still want their replies.
func batchContext(leader *check) (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(leader.ctx)
	if d, ok := leader.ctx.Deadline(); ok {
		return context.WithDeadline(ctx, d)
	}
	return context.WithCancel(ctx)
}

// noScript returns the indexes of the commands answered NOSCRIPT.
func noScript(cmds []*redis.IntSliceCmd) []int {
	var again []int
	for i, cmd := range cmds {
		if isNoScript(cmd.Err()) {
			again = append(again, i)
		}
	}
	return again
}

// isNoScript reports whether err is a NOSCRIPT reply: the server does not
// have the script cached, and ran nothing. go-redis's own Eval wrappers
// turn it into redis.ErrNoScript; a command it did not build keeps the
// server's text.
func isNoScript(err error) bool {
	return err != nil && (errors.Is(err, redis.ErrNoScript) || redis.HasErrorPrefix(err, "NOSCRIPT"))
}

// notSent is the error of a take dropped from the queue because its
// context ended before it was sent: it was not charged, and holds no lease
// ([core.ErrNotRun]).
func notSent(err error) error {
	return fmt.Errorf("not sent: %w: %w", core.ErrNotRun, err)
}
