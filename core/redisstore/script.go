package redisstore

import (
	"embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

// scriptFS holds the Lua sources; see scriptFiles for how they combine.
//
//go:embed scripts/*.lua
var scriptFS embed.FS

// scriptFiles lists the Lua files in the order they are concatenated into
// the one script: shared helpers, one local function per algorithm (with
// the fast path for one GCRA limit right after GCRA), then take.lua, the
// entry point that dispatches to them.
var scriptFiles = [...]string{
	"common.lua",
	"gcra.lua",
	"fast_path.lua",
	"token_bucket.lua",
	"fixed_window.lua",
	"sliding_window.lua",
	"sliding_log.lua",
	"calendar_window.lua",
	"concurrency.lua",
	"take.lua",
}

// leaseFile is the script that releases and renews a lease (lease.lua): a
// script of its own, not part of the take script.
const leaseFile = "lease.lua"

// newScript builds the take script from the embedded files.
func newScript() (*redis.Script, error) {
	src, err := scriptSource()
	if err != nil {
		return nil, err
	}
	return redis.NewScript(src), nil
}

// newLeaseScript builds the lease script from the embedded file.
func newLeaseScript() (*redis.Script, error) {
	b, err := scriptFS.ReadFile("scripts/" + leaseFile)
	if err != nil {
		return nil, err
	}
	return redis.NewScript(string(b)), nil
}

// scriptSource returns the text of the take script: the files of
// scriptFiles, each followed by a newline.
func scriptSource() (string, error) {
	var src strings.Builder
	for _, name := range scriptFiles {
		b, err := scriptFS.ReadFile("scripts/" + name)
		if err != nil {
			return "", err
		}
		src.Write(b)
		src.WriteByte('\n')
	}
	return src.String(), nil
}
