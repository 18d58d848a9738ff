package redisstore

import (
	"embed"
	"strings"
)

// scriptFS holds the Lua sources; see joinedFiles and oneLimit for how they
// combine into programs.
//
//go:embed scripts/*.lua
var scriptFS embed.FS

// joinedFiles lists the Lua files in the order they are concatenated into
// the program "take", for takes of several limits: shared helpers, one
// local function per algorithm, then take.lua, the entry point that
// dispatches to them.
var joinedFiles = []string{
	"common.lua",
	"gcra.lua",
	"token_bucket.lua",
	"fixed_window.lua",
	"sliding_window.lua",
	"sliding_log.lua",
	"calendar_window.lua",
	"concurrency.lua",
	"take.lua",
}

// A Script is one of the Lua programs a [Store] runs, exactly as the store
// sends it to Redis: a service in another language that runs the same
// program with the same keys and arguments shares the store's limits
// (docs/redis-protocol.md). `ratelimit script` prints them.
type Script struct {
	// Name is "take_<algorithm>" (take_gcra, take_token_bucket,
	// take_fixed_window, take_sliding_window, take_sliding_log) for a
	// take of one limit, "take" for a take of several (and of one
	// calendar or concurrency limit), and "lease" for the release and
	// renewal of a concurrency limit's lease.
	Name string
	// Source is the program's text, byte for byte what EVAL sends.
	Source string
	// SHA1 is the lowercase hex SHA-1 of Source, what EVALSHA names.
	SHA1 string
}

// Scripts returns the programs that a [Store] built by [New] without
// [WithClock] loads, each on first use: one per algorithm for a take of
// one limit, then "take", for several limits, then "lease", for
// [Store.Release] and [Store.Renew].
func Scripts() []Script {
	p, err := newPrograms(false)
	if err != nil { // the files are embedded: a broken build
		panic("ratelimit: redisstore: " + err.Error())
	}
	return p.list()
}

// joinedSource returns the text of the program "take": the files of
// joinedFiles, each followed by a newline.
func joinedSource() (string, error) {
	return concat(joinedFiles...)
}

// leaseFile is the program "lease" (lease.lua), which releases and renews
// a lease: a program of its own, not part of "take".
const leaseFile = "lease.lua"

// concat returns the embedded files, each followed by a newline.
func concat(files ...string) (string, error) {
	var src strings.Builder
	for _, name := range files {
		b, err := scriptFS.ReadFile("scripts/" + name)
		if err != nil {
			return "", err
		}
		src.Write(b)
		src.WriteByte('\n')
	}
	return src.String(), nil
}
