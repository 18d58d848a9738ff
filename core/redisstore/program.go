package redisstore

import (
	"context"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
)

// oneLimit describes the program of a take of one limit, by algorithm
// ([oneLimitSource]): clock.lua (test_clock.lua with a test clock),
// take_<algorithm>.lua, which reads its ARGV, then the algorithm's file,
// which runs that algorithm and nothing else. Its ARGV are rate, period
// (µs), the capacity if capacity is set, and the cost, the last two
// optional ([Store.appendOneArgs]); with a test clock, now follows them.
var oneLimit = [...]struct {
	name     string
	capacity bool
}{
	core.GCRA:          {"take_gcra", true},
	core.TokenBucket:   {"take_token_bucket", true},
	core.FixedWindow:   {"take_fixed_window", false},
	core.SlidingWindow: {"take_sliding_window", false},
	core.SlidingLog:    {"take_sliding_log", false},
}

// programs are the scripts a store runs. Redis runs the whole text of a
// script on every call, definitions included, so a take of one limit runs
// a program that holds only its algorithm's code; takes of several limits
// run the joined program, which defines every algorithm and evaluates them
// all before writing. Both are built from the same file per algorithm. A
// take of one calendar or concurrency limit, or of a limit with a lockout,
// runs the joined program too. Releases and renewals of leases run a
// program of their own.
type programs struct {
	one     [len(oneLimit)]program // by core.Algorithm
	many    program                // "take"
	lease   program                // "lease": Release and Renew
	control program                // "control": the methods of core.ControlStore
}

// A program is one script and its text (go-redis keeps only the hash).
type program struct {
	name   string
	src    string
	script *redis.Script
	sha    any // script.Hash(), boxed once for the EVALSHA of every call
}

func newProgram(name, src string) program {
	script := redis.NewScript(src)
	return program{name: name, src: src, script: script, sha: script.Hash()}
}

// evalSha returns the start of an EVALSHA of p on keys, as go-redis's
// EvalSha builds it (name, hash, key count, keys), with room for n
// arguments, which the caller appends before [newCall]. Building the
// command once serves both ways of sending it (alone and in a pipeline);
// each call gets a slice of its own, so that a pipeline holds nothing its
// caller may reuse after giving up.
func (p *program) evalSha(keys []string, n int) []any {
	a := make([]any, 0, 3+len(keys)+n)
	a = append(a, "evalsha", p.sha, len(keys))
	for _, k := range keys {
		a = append(a, k)
	}
	return a
}

// newCall returns the command of args, built by [program.evalSha]. Every
// program replies an array of integers, which the command reads as such:
// none is boxed as an any.
func newCall(ctx context.Context, args []any) *redis.IntSliceCmd {
	cmd := redis.NewIntSliceCmd(ctx, args...)
	cmd.SetFirstKeyPos(3)
	return cmd
}

// again returns a new command of the call cmd of p, to send it again: an
// EVAL of p's source if eval is set (which caches p on the server), else
// its EVALSHA.
func (p *program) again(ctx context.Context, cmd *redis.IntSliceCmd, eval bool) *redis.IntSliceCmd {
	a := slices.Clone(cmd.Args())
	if eval {
		a[0], a[1] = "eval", p.src
	} else {
		a[0], a[1] = "evalsha", p.sha
	}
	return newCall(ctx, a)
}

// firstKey returns the first key of a command built by [program.evalSha]:
// every call has one.
func firstKey(cmd *redis.IntSliceCmd) string { return cmd.Args()[3].(string) }

// evalShaParts returns the keys and arguments of a command built by
// [program.evalSha].
func evalShaParts(cmd *redis.IntSliceCmd) ([]string, []any) {
	a := cmd.Args()
	n := a[2].(int)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = a[3+i].(string)
	}
	return keys, a[3+n:]
}

// newPrograms builds the programs from the embedded files
// (docs/redis-protocol.md, "How the programs are built"), with the test
// clock's (now sent as an argument) if testClock is set.
func newPrograms(testClock bool) (programs, error) {
	clock := "clock.lua"
	if testClock {
		clock = "test_clock.lua"
	}
	var p programs
	for a, one := range oneLimit {
		src, err := oneLimitSource(clock, core.Algorithm(a))
		if err != nil {
			return programs{}, err
		}
		p.one[a] = newProgram(one.name, src)
	}
	src, err := joinedSource()
	if err != nil {
		return programs{}, err
	}
	p.many = newProgram("take", src)
	var lease strings.Builder
	if err := appendFiles(&lease, leaseFile); err != nil {
		return programs{}, err
	}
	p.lease = newProgram("lease", lease.String())
	var control strings.Builder
	if err := appendFiles(&control, controlFile); err != nil {
		return programs{}, err
	}
	p.control = newProgram("control", control.String())
	return p, nil
}

// choose returns the program of a take of limits: that of its algorithm
// for one limit that has one ([hasOwn]), else "take".
func (p *programs) choose(limits []core.Limit) *program {
	if hasOwn(limits) {
		return &p.one[limits[0].Algorithm]
	}
	return &p.many
}

// hasOwn reports whether a take of limits runs a program of its own
// algorithm: one limit of the five classic algorithms, without a
// [core.Lockout]. Calendar and concurrency limits, limits with a lockout,
// and several limits, run "take". choose and [Store.args] ask it both, so
// the program and its ARGV agree.
func hasOwn(limits []core.Limit) bool {
	return len(limits) == 1 && int(limits[0].Algorithm) < len(oneLimit) && limits[0].Lockout.After == 0
}

// list returns the programs as Scripts: the one-limit ones in the order of
// core.Algorithm, then "take", "lease" and "control".
func (p *programs) list() []Script {
	scripts := make([]Script, 0, len(p.one)+3)
	for _, one := range p.one {
		scripts = append(scripts, one.export())
	}
	return append(scripts, p.many.export(), p.lease.export(), p.control.export())
}

func (p program) export() Script {
	return Script{Name: p.name, Source: p.src, SHA1: p.script.Hash()}
}
