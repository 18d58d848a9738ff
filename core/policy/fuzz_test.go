package policy_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/policy"
)

// FuzzParse checks that Parse never panics, that what it accepts is valid
// for core, and that what it refuses is an *Error naming the file and a
// line of the document (or saying why there is none: an empty or too
// large file, or a syntax error the YAML parser placed nowhere).
//
//	go test -fuzz FuzzParse -fuzztime 60s ./core/policy
func FuzzParse(f *testing.F) {
	for _, tt := range badDocuments {
		f.Add([]byte(tt.doc))
	}
	seeds, err := filepath.Glob("testdata/*.*")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range seeds {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(diffOld))
	f.Add([]byte(diffNew))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := policy.Parse("f.yaml", data)
		if err != nil {
			checkRefusal(t, data, p, err)
			return
		}
		checkAccepted(t, p)
	})
}

// checkRefusal checks the error of a refused document.
func checkRefusal(t *testing.T, data []byte, p *policy.Policy, err error) {
	if p != nil {
		t.Fatalf("a policy with an error: %v", err)
	}
	var perr *policy.Error
	if !errors.As(err, &perr) {
		t.Fatalf("not an *Error: %T %v", err, err)
	}
	if perr.File != "f.yaml" || perr.Err == nil {
		t.Fatalf("file %q, cause %v", perr.File, perr.Err)
	}
	lines := 1 // an upper bound: every byte sequence that may break a line
	for _, br := range []string{"\n", "\r", "\u0085", "\u2028", "\u2029"} {
		lines += bytes.Count(data, []byte(br))
	}
	switch {
	case perr.Line == 0 && (errors.Is(err, policy.ErrEmpty) || errors.Is(err, policy.ErrTooLarge)):
	case perr.Line == 0 && strings.HasSuffix(err.Error(), "(the YAML parser named no line)"):
	case perr.Line < 1:
		t.Fatalf("no line: %v", err)
	case perr.Line > lines+1:
		t.Fatalf("line %d of a document of %d lines: %v", perr.Line, lines, err)
	}
}

// checkAccepted checks that core takes every limiter of p.
func checkAccepted(t *testing.T, p *policy.Policy) {
	if len(p.Limiters()) == 0 {
		t.Fatal("a policy of no limiter")
	}
	for _, name := range p.Limiters() {
		tiers, def, ok := p.Limiter(name)
		if !ok {
			t.Fatalf("limiter %q listed, not found", name)
		}
		if err := core.ValidateTiers(tiers, def); err != nil {
			t.Fatalf("limiter %q: core refuses what Parse took: %v", name, err)
		}
	}
	_ = policy.Diff(p, p).String()
	_ = p.Summary()
}
