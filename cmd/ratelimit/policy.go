package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/ratelimitkit/ratelimit/core/policy"
)

const policyUsage = `usage: ratelimit policy check FILE
       ratelimit policy diff OLD NEW

Reads policy files, the limiters' tiers as YAML or JSON (core/policy,
docs/policy.md). It does not connect to Redis.

  check FILE     validates FILE as the limiters would: prints a summary of its
                 limiters, tiers and limits, or the first error as
                 FILE:LINE: field.path: what is wrong (exit status 1)
  diff OLD NEW   says what changes from OLD to NEW, per limiter and tier (+ added,
                 - removed, ~ changed: field old -> new), and what becomes of the
                 clients' counters (kept, new, restart, dropped)

  ratelimit policy check policy.yaml && ratelimit policy diff live.yaml policy.yaml
`

// runPolicy runs "policy check" and "policy diff".
func runPolicy(_ context.Context, args []string, e env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, policyUsage)
		return exitError
	}
	switch args[0] {
	case "check":
		return runPolicyCheck(args[1:], e)
	case "diff":
		return runPolicyDiff(args[1:], e)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(e.stdout, policyUsage)
		return exitOK
	}
	fmt.Fprintf(e.stderr, "ratelimit: policy: unknown command %q\n\n%s", args[0], policyUsage)
	return exitError
}

// policyFiles parses the arguments of a policy command: n file names.
func policyFiles(name string, n int, args []string, e env) ([]string, int, bool) {
	fs := flag.NewFlagSet("policy "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() { fmt.Fprint(e.stderr, policyUsage) }
	files, code, ok := parseArgs(fs, args)
	if !ok {
		return nil, code, false
	}
	if len(files) != n {
		return nil, fail(e.stderr, fmt.Errorf("ratelimit: policy %s takes %s, got %d arguments", name, [...]string{1: "one file", 2: "two files, OLD and NEW"}[n], len(files))), false
	}
	return files, 0, true
}

func runPolicyCheck(args []string, e env) int {
	files, code, ok := policyFiles("check", 1, args, e)
	if !ok {
		return code
	}
	p, err := policy.Load(files[0])
	if err != nil {
		return policyFailure(err, e)
	}
	fmt.Fprint(e.stdout, p.Summary())
	return exitOK
}

func runPolicyDiff(args []string, e env) int {
	files, code, ok := policyFiles("diff", 2, args, e)
	if !ok {
		return code
	}
	old, err := policy.Load(files[0])
	if err != nil {
		return fail(e.stderr, err) // no diff of a file that is not a policy
	}
	new, err := policy.Load(files[1])
	if err != nil {
		return fail(e.stderr, err)
	}
	fmt.Fprint(e.stdout, policy.Diff(old, new).String())
	return exitOK
}

// policyFailure reports err, from loading a policy file, and returns
// [exitFindings] when the file is not a valid policy, [exitError] when it
// could not be read.
func policyFailure(err error, e env) int {
	fmt.Fprintln(e.stderr, err)
	var perr *policy.Error
	if errors.As(err, &perr) {
		return exitFindings
	}
	return exitError
}
