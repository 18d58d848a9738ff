package main

import (
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
)

// A contender is one rate limiter under test: ours in some configuration,
// or a peer. open sets it up for one cell; the same instance serves every
// round of the cell, so pools are warm and state carries over like in a
// running app.
type contender struct {
	name  string
	ours  bool
	redis bool      // checks go to Redis: the server-side metrics apply
	bound boundKind // what exact admission means for its algorithm (accuracy)
	open  func(e env) (*instance, error)
	// keysLike names the contender whose Redis keys this one writes (the
	// same store through another client), for the key memory column.
	keysLike string
}

// keysOf is the name the key memory of c is measured under.
func (c contender) keysOf() string {
	if c.keysLike != "" {
		return c.keysLike
	}
	return c.name
}

// A quota is the limit every contender of a cell is configured with:
// rate checks per period, burst = rate.
type quota struct {
	rate   int64
	period time.Duration
}

// limit is q as one of our limits.
func (q quota) limit(alg core.Algorithm) core.Limit {
	return core.Limit{Rate: q.rate, Period: q.period, Algorithm: alg}
}

// String reads "1,000,000 per second".
func (q quota) String() string {
	per := map[time.Duration]string{time.Second: "second", time.Minute: "minute", time.Hour: "hour"}[q.period]
	if per == "" {
		per = q.period.String()
	}
	return groupDigits(int(q.rate)) + " per " + per
}

// perSecond is q's sustained rate.
func (q quota) perSecond() float64 { return float64(q.rate) / q.period.Seconds() }

// env is what a contender is opened with.
type env struct {
	srv  *redisServer
	pool int    // connections per instance: one per goroutine it serves
	keys int    // clients
	ns   string // in every key the contender writes: unique per instance
	q    quota
}

// ids returns the identities of the clients, "c0" ... Contenders put them
// after their namespace, each in its own key syntax.
func (e env) ids() []string {
	ids := make([]string, e.keys)
	for i := range ids {
		ids[i] = "c" + strconv.Itoa(i)
	}
	return ids
}

// nsIDs returns ns:id for every client, for contenders whose only key
// parameter is the key itself.
func (e env) nsIDs() []string {
	ids := e.ids()
	for i, id := range ids {
		ids[i] = e.ns + ":" + id
	}
	return ids
}

// oursClient is the client our README tells users to build
// (redisstore.NewClient: context deadlines, no retries), with one
// connection per goroutine like every other contender's.
func (e env) oursClient() *redis.Client {
	o := e.srv.options()
	o.PoolSize = e.pool
	return redisstore.NewClient(o)
}

// peerClient is a plain go-redis client, as the peers' READMEs build it,
// with the same pool size as ours.
func (e env) peerClient() *redis.Client {
	o := e.srv.options()
	o.PoolSize = e.pool
	return redis.NewClient(o)
}
