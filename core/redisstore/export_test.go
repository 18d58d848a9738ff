package redisstore

import (
	"context"
	_ "embed"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// testClockExpiry is the prelude of NewWithTestClockExpiry.
//
//go:embed testdata/test_clock_expiry.lua
var testClockExpiry string

// NewWithTestClockExpiry returns a Store like New(client, WithClock(now),
// opts...) whose programs expire state on the test clock now instead of
// the server's own clock (testdata/test_clock_expiry.lua before each), so
// that it can be compared take for take with a memory store on the same
// clock, clock steps back included (storetest.RunDifferential). Tests only.
func NewWithTestClockExpiry(client redis.Scripter, now func() time.Time, opts ...Option) (*Store, error) {
	s, err := New(client, append(opts, WithClock(now))...)
	if err != nil {
		return nil, err
	}
	// The prelude reads now from ARGV[1], where the program "take" has it;
	// the one-limit programs have it last.
	for a, one := range s.progs.one {
		prelude := strings.Replace(testClockExpiry, "tonumber(ARGV[1])", "tonumber(ARGV[#ARGV])", 1)
		s.progs.one[a] = newProgram(one.name, prelude+"\n"+one.src)
	}
	s.progs.many = newProgram("take", testClockExpiry+"\n"+s.progs.many.src)
	// "lease" has now in ARGV[1], as "take" does.
	s.progs.lease = newProgram("lease", testClockExpiry+"\n"+s.progs.lease.src)
	// "control" is left as it is: its records expire by the expiries it
	// keeps, compared with the test clock it is sent, and its keys live a
	// year, which no test waits for.
	return s, nil
}

// ProgramOf returns the name of the program a take of limits runs.
func ProgramOf(s *Store, limits []core.Limit) string {
	return s.progs.choose(limits).name
}

// TakeJoined is s.Take run through the program "take" whatever the number
// of limits, to compare it with the one-limit programs.
func TakeJoined(ctx context.Context, s *Store, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	args := []any{""}
	if s.now != nil {
		args[0] = keylayout.EpochMicros(s.now())
	}
	args = append(args, cost)
	for _, l := range limits {
		args = append(args, int64(l.Algorithm), l.Rate, l.Period.Microseconds(), l.Capacity())
	}
	reply, err := s.progs.many.script.Run(ctx, s.client, keys, args...).Int64Slice()
	if err != nil {
		return nil, err
	}
	return appendDecisions(nil, limits, reply)
}
