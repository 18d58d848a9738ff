package redisstore

import (
	_ "embed"
	"time"

	"github.com/redis/go-redis/v9"
)

// testClockExpiry is the prelude of NewWithTestClockExpiry.
//
//go:embed testdata/test_clock_expiry.lua
var testClockExpiry string

// NewWithTestClockExpiry returns a Store like New(client, WithClock(now),
// opts...) whose script expires state on the test clock now instead of
// the server's own clock (testdata/test_clock_expiry.lua), so that it can
// be compared take for take with a memory store on the same clock, clock
// steps back included (storetest.RunDifferential). Tests only.
func NewWithTestClockExpiry(client redis.Scripter, now func() time.Time, opts ...Option) (*Store, error) {
	s, err := New(client, append(opts, WithClock(now))...)
	if err != nil {
		return nil, err
	}
	src, err := scriptSource()
	if err != nil {
		return nil, err
	}
	s.script = redis.NewScript(testClockExpiry + "\n" + src)
	lease, err := scriptFS.ReadFile("scripts/" + leaseFile)
	if err != nil {
		return nil, err
	}
	s.lease = redis.NewScript(testClockExpiry + "\n" + string(lease))
	return s, nil
}
