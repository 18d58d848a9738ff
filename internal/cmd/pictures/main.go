// Command pictures draws the pictures of docs/algorithms.md: for each
// algorithm, the requests the memory store admits under one traffic
// pattern (a burst just before a window boundary, then three times the
// limit), as SVG. Every number drawn comes from a real run of
// core/memstore on an injected clock, so the pictures are deterministic
// and a test regenerates them to check the committed ones.
//
// Usage (or make pictures):
//
//	go run ./internal/cmd/pictures -out docs/pictures
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ratelimitkit/ratelimit/core"
)

// algorithms are drawn in the order docs/algorithms.md shows them.
var algorithms = []core.Algorithm{core.GCRA, core.TokenBucket, core.FixedWindow, core.SlidingWindow, core.SlidingLog}

func main() {
	out := flag.String("out", "docs/pictures", "directory to write the SVG files to")
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "pictures:", err)
		os.Exit(1)
	}
}

// write runs every algorithm and writes its picture into dir.
func write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, alg := range algorithms {
		r, err := simulate(alg)
		if err != nil {
			return fmt.Errorf("%v: %w", alg, err)
		}
		if err := os.WriteFile(filepath.Join(dir, styles[alg].file), []byte(svg(r)), 0o644); err != nil {
			return err
		}
	}
	return nil
}
