package redisstore

import (
	"embed"
	"strings"

	"github.com/ratelimitkit/ratelimit/core"
)

// scriptFS holds the Lua sources; see [newPrograms] for how they combine
// into programs.
//
//go:embed scripts/*.lua
var scriptFS embed.FS

// joinedAlgorithms are the algorithms of the program "take", in the order
// of their functions: all of them. The file of algorithm a is
// scripts/<a>.lua (a.String()), the body of a take of one limit of it,
// written once (scripts/common.lua): the programs "take" and
// "take_<a>" are both built from it.
var joinedAlgorithms = []core.Algorithm{
	core.GCRA, core.TokenBucket, core.FixedWindow, core.SlidingWindow, core.SlidingLog,
	core.CalendarWindow, core.Concurrency,
}

// A Script is one of the Lua programs a [Store] runs, exactly as the store
// sends it to Redis: a service in another language that runs the same
// program with the same keys and arguments shares the store's limits
// (docs/redis-protocol.md). `ratelimit script` prints them.
type Script struct {
	// Name is "take_<algorithm>" (take_gcra, take_token_bucket,
	// take_fixed_window, take_sliding_window, take_sliding_log) for a
	// take of one limit, "take" for a take of several (and of one
	// calendar or concurrency limit, or limit with a lockout), "lease" for
	// the release and renewal of a concurrency limit's lease, and "control"
	// for the controls of a key prefix ([Store.SetControl], [Store.Controls]).
	Name string
	// Source is the program's text, byte for byte what EVAL sends.
	Source string
	// SHA1 is the lowercase hex SHA-1 of Source, what EVALSHA names.
	SHA1 string
}

// Scripts returns the programs that a [Store] built by [New] without
// [WithClock] loads, each on first use: one per algorithm for a take of
// one limit, then "take", for several limits, "lease", for
// [Store.Release] and [Store.Renew], and "control", for the methods of
// [core.ControlStore].
func Scripts() []Script {
	p, err := newPrograms(false)
	if err != nil { // the files are embedded: a broken build
		panic("ratelimit: redisstore: " + err.Error())
	}
	return p.list()
}

// joinedSource returns the text of the program "take", for takes of
// several limits: common.lua (shared helpers), the functions of every
// algorithm of joinedAlgorithms ([algorithm.functions]), then take.lua,
// the entry point that dispatches to them, then lockout.lua, where a take
// with a lockout goes on (a take without one returns before it).
func joinedSource() (string, error) {
	var src strings.Builder
	if err := appendFiles(&src, "common.lua"); err != nil {
		return "", err
	}
	for _, a := range joinedAlgorithms {
		alg, err := readAlgorithm(a)
		if err != nil {
			return "", err
		}
		src.WriteString(alg.functions(a.String()))
		src.WriteByte('\n')
	}
	if err := appendFiles(&src, "take.lua", "lockout.lua"); err != nil {
		return "", err
	}
	return src.String(), nil
}

// oneLimitSource returns the text of the program of a take of one limit of
// a (take_<a>): clock, the file take_<a>.lua, which reads its ARGV, then the
// algorithm's file as it is. It runs from top to bottom and defines no
// function: Redis would build each one anew on every call.
func oneLimitSource(clock string, a core.Algorithm) (string, error) {
	var src strings.Builder
	err := appendFiles(&src, clock, "take_"+a.String()+".lua", a.String()+".lua")
	return src.String(), err
}

// leaseFile is the program "lease" (lease.lua), which releases and renews
// a lease: a program of its own, not part of "take".
const leaseFile = "lease.lua"

// controlFile is the program "control" (control.lua), which sets, deletes,
// touches and reads the controls of a key prefix ([Store.SetControl]).
const controlFile = "control.lua"

// appendFiles appends the embedded files to src, each followed by a
// newline.
func appendFiles(src *strings.Builder, files ...string) error {
	for _, name := range files {
		b, err := scriptFS.ReadFile("scripts/" + name)
		if err != nil {
			return err
		}
		src.Write(b)
		src.WriteByte('\n')
	}
	return nil
}
