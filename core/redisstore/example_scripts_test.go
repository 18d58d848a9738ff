package redisstore_test

import (
	"fmt"
	"strings"

	"github.com/ratelimitkit/ratelimit/core/redisstore"
)

// The programs a store loads, for a service in another language: save
// each Source (or print it with `ratelimit script NAME`) and run it with
// EVALSHA of its SHA1, EVAL on NOSCRIPT (docs/redis-protocol.md).
func ExampleScripts() {
	for _, s := range redisstore.Scripts() {
		// Each program has a header naming its file: print that line.
		_, rest, _ := strings.Cut("\n"+s.Source, "\n-- "+s.Name+".lua: ")
		what, _, _ := strings.Cut(rest, "\n")
		fmt.Printf("%-19s %d hex digits: %s\n", s.Name, len(s.SHA1), what)
	}
	// Output:
	// take_gcra           40 hex digits: take cost from one GCRA limit (docs/algorithms.md, "GCRA").
	// take_token_bucket   40 hex digits: take cost from one token bucket limit
	// take_fixed_window   40 hex digits: take cost from one fixed window limit
	// take_sliding_window 40 hex digits: take cost from one sliding window counter limit
	// take_sliding_log    40 hex digits: take cost from one sliding window log limit
	// take                40 hex digits: take cost from every limit of one client, all or nothing.
	// lease               40 hex digits: release or renew one lease of a concurrency limit.
	// control             40 hex digits: set, delete, touch or read the controls of one key prefix
}
