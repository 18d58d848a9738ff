package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// A keyState is the raw state of one key, read without the limit's
// configuration.
type keyState struct {
	key   string
	typ   string        // Redis type; "none" when the key is gone
	ttl   time.Duration // -1: no TTL
	state string        // the decoded value, for people
}

// serverMicros returns the node's clock in µs since the stores' epoch, as
// the scripts compute now.
func serverMicros(ctx context.Context, node *redis.Client) (int64, error) {
	t, err := node.Time(ctx).Result()
	if err != nil {
		return 0, err
	}
	return keylayout.EpochMicros(t), nil
}

// readState reads key from node and decodes it along the layout of its
// algorithm tag; now is the node's clock (µs since the epoch).
func readState(ctx context.Context, node *redis.Client, key string, now int64) (keyState, error) {
	st := keyState{key: key}
	var err error
	if st.typ, err = node.Type(ctx, key).Result(); err != nil {
		return st, err
	}
	ttl, err := node.Do(ctx, "PTTL", key).Int64()
	if err != nil {
		return st, err
	}
	st.ttl = time.Duration(ttl) * time.Millisecond
	if ttl < 0 {
		st.ttl = -1
	}
	name := parseKey(key)
	switch {
	case st.typ == "none":
		st.state = "(gone)"
	case !name.ok || st.typ != redisType(name.algorithm):
		st.state, err = rawValue(ctx, node, key, st.typ)
		st.state = "unexpected for this key name: " + st.state
	case name.algorithm == core.GCRA:
		st.state, err = gcraState(ctx, node, key, now)
	case name.algorithm == core.SlidingLog:
		st.state, err = logState(ctx, node, key, now)
	case name.algorithm == core.Concurrency:
		st.state, err = leaseState(ctx, node, key, now)
	default:
		st.state, err = hashState(ctx, node, key, name.algorithm, now)
	}
	return st, err
}

func gcraState(ctx context.Context, node *redis.Client, key string, now int64) (string, error) {
	v, err := node.Get(ctx, key).Result()
	if err != nil {
		return "", err
	}
	tat, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return "tat=" + strconv.Quote(v) + " (not a number)", nil
	}
	return fmt.Sprintf("tat=%s µs: full again in %s", v, fmtDuration(micros(tat-float64(now)))), nil
}

func hashState(ctx context.Context, node *redis.Client, key string, a core.Algorithm, now int64) (string, error) {
	fields, err := node.HGetAll(ctx, key).Result()
	if err != nil {
		return "", err
	}
	s := sortedFields(fields)
	tk, tkErr := strconv.ParseFloat(fields["tk"], 64)
	ts, tsErr := strconv.ParseFloat(fields["ts"], 64)
	if a == core.TokenBucket && tkErr == nil && tsErr == nil {
		s += fmt.Sprintf(": %.2f tokens %s ago", tk, fmtDuration(micros(float64(now)-ts)))
	}
	if start, err := strconv.ParseInt(fields["s"], 10, 64); a == core.CalendarWindow && err == nil {
		s += ": window from " + keylayout.FromEpochMicros(start).UTC().Format(time.RFC3339)
	}
	return s, nil
}

func logState(ctx context.Context, node *redis.Client, key string, now int64) (string, error) {
	n, err := node.ZCard(ctx, key).Result()
	if err != nil || n == 0 {
		return fmt.Sprintf("%d units", n), err
	}
	oldest, err := node.ZRangeWithScores(ctx, key, 0, 0).Result()
	if err != nil {
		return "", err
	}
	newest, err := node.ZRangeWithScores(ctx, key, -1, -1).Result()
	if err != nil || len(oldest) == 0 || len(newest) == 0 {
		return fmt.Sprintf("%d runs", n), err
	}
	return fmt.Sprintf("%d units in %d runs, oldest %s ago, newest %s ago", logUnits(n, oldest[0], newest[0]), n,
		fmtDuration(micros(float64(now)-oldest[0].Score)), fmtDuration(micros(float64(now)-newest[0].Score))), nil
}

// leaseState describes the leases of a concurrency key: a sorted set of
// lease ids scored by expiry (µs); those at or before now have expired
// and are dropped by the next take. Tombstones (releases that ran before
// their take, scored below -2^51, docs/redis-protocol.md) are counted
// apart.
func leaseState(ctx context.Context, node *redis.Client, key string, now int64) (string, error) {
	live, err := node.ZRangeByScoreWithScores(ctx, key, &redis.ZRangeBy{Min: "(" + strconv.FormatInt(now, 10), Max: "+inf"}).Result()
	if err != nil {
		return "", err
	}
	total, err := node.ZCard(ctx, key).Result()
	if err != nil {
		return "", err
	}
	tombs, err := node.ZCount(ctx, key, "-inf", "(-2251799813685248").Result()
	if err != nil {
		return "", err
	}
	s := fmt.Sprintf("%d leases in flight", len(live))
	if n := len(live); n > 0 {
		s += fmt.Sprintf(", oldest expires in %s, newest in %s", fmtDuration(micros(live[0].Score-float64(now))),
			fmtDuration(micros(live[n-1].Score-float64(now))))
	}
	if expired := total - int64(len(live)) - tombs; expired > 0 {
		s += fmt.Sprintf(" (%d expired, dropped by the next take)", expired)
	}
	if tombs > 0 {
		s += fmt.Sprintf(" (%d released before their take ran)", tombs)
	}
	return s, nil
}

// logUnits counts the request units of a sliding log of n members from its
// two ends (docs/redis-protocol.md): a run "r<u>:<c>" holds c units, the
// last being unit number u of the key. A member of the layout before runs
// is one unit, so such a log counts its members.
func logUnits(n int64, oldest, newest redis.Z) int64 {
	uOld, cOld, ok1 := parseRun(oldest.Member)
	uNew, _, ok2 := parseRun(newest.Member)
	if !ok1 || !ok2 {
		return n
	}
	return uNew - uOld + cOld
}

func parseRun(member any) (u, c int64, ok bool) {
	s, _ := member.(string)
	rest, found := strings.CutPrefix(s, "r")
	if !found {
		return 0, 0, false
	}
	us, cs, found := strings.Cut(rest, ":")
	if !found {
		return 0, 0, false
	}
	u, err1 := strconv.ParseInt(us, 10, 64)
	c, err2 := strconv.ParseInt(cs, 10, 64)
	return u, c, err1 == nil && err2 == nil
}

// rawValue summarises a key of any type.
func rawValue(ctx context.Context, node *redis.Client, key, typ string) (string, error) {
	switch typ {
	case "string":
		v, err := node.GetRange(ctx, key, 0, 63).Result()
		return "string " + strconv.Quote(v), err
	case "hash":
		fields, err := node.HGetAll(ctx, key).Result()
		return "hash " + sortedFields(fields), err
	case "zset":
		n, err := node.ZCard(ctx, key).Result()
		return fmt.Sprintf("zset of %d entries", n), err
	}
	return typ, nil
}

func sortedFields(fields map[string]string) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + fields[k]
	}
	return strings.Join(parts, " ")
}

func micros(us float64) time.Duration {
	return time.Duration(us * float64(time.Microsecond))
}

// fmtTTL writes a PTTL for tables.
func fmtTTL(ttl time.Duration) string {
	if ttl < 0 {
		return "none"
	}
	return fmtDuration(ttl)
}

// isNil reports a nil reply (a key that vanished between two commands).
func isNil(err error) bool { return errors.Is(err, redis.Nil) }
