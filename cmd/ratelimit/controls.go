package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
)

const controlsUsage = `usage: ratelimit override set <client> [--tier T] [--limit SPEC]... [--for D | --until TIME] --reason TEXT [flags]
       ratelimit override get <client> [flags]
       ratelimit override list [flags]
       ratelimit override rm <client> [flags]
       ratelimit block <client> --for D --reason TEXT [flags]
       ratelimit unblock <client> [flags]
       ratelimit blocks [flags]
       ratelimit exempt <client> [--for D] --reason TEXT [flags]
       ratelimit unexempt <client> [flags]
       ratelimit controls [flags]

Sets, lifts and lists the controls of the clients of the limiters under
--prefix: overrides (a client's own limits), blocks (every request denied,
reason "blocked") and exemptions (every request admitted, no store call).
They are kept in Redis beside the keys (PREFIX:{~ctl}:*) and every node
of the limiter reads them: a change applies on every node within
core.ControlSyncEvery (1s) plus one store round trip, and each node drops
its cached denials of the client when it reads the change. The client is
named as for inspect and reset (an identity, --part, --api-key-stdin, --tag);
lists name clients by the hash tag of their keys. The reason is kept, logged
and listed, never sent to the client. --by names the operator (default $USER).

Flags:
`

// propagation says when every node sees a change of the client's controls.
const propagation = "every node of the limiter applies it within 1s (core.ControlSyncEvery) plus one store round trip;\n" +
	"each node drops its cached denials of this client when it reads the change, so no 429 cached before it is answered after that"

// A controlCmd is what every control command shares: its flags, the
// client it names (when it names one) and the operator.
type controlCmd struct {
	fs   *flag.FlagSet
	conn connFlags
	who  clientFlags
	by   string
	e    env
}

// newControlCmd returns the flag set of the command name, with the
// connection flags, the client flags when client is set, and --by.
func newControlCmd(name string, e env, client bool) *controlCmd {
	c := &controlCmd{fs: flag.NewFlagSet(name, flag.ContinueOnError), e: e}
	c.fs.SetOutput(e.stderr)
	c.conn.register(c.fs)
	if client {
		c.who.register(c.fs)
	}
	c.fs.StringVar(&c.by, "by", e.getenv("USER"), "the operator's `name`, kept in the record and logged (default $USER)")
	c.fs.Usage = func() { fmt.Fprint(e.stderr, controlsUsage); c.fs.PrintDefaults() }
	return c
}

// parseClient parses args naming one client.
func (c *controlCmd) parseClient(args []string) (client, int, bool) {
	return c.who.parse(c.fs, args, c.e.stdin, c.e.stderr)
}

// parseNone parses args that name no client.
func (c *controlCmd) parseNone(args []string) (int, bool) {
	pos, code, ok := parseArgs(c.fs, args)
	if !ok {
		return code, false
	}
	if len(pos) > 0 {
		fmt.Fprintf(c.e.stderr, "ratelimit: %s takes no arguments\n", c.fs.Name())
		c.fs.Usage()
		return exitError, false
	}
	return exitOK, true
}

// open connects and returns the target and the controls of its prefix.
func (c *controlCmd) open(ctx context.Context) (*target, *core.Controls, error) {
	if c.conn.pg.url != "" {
		return nil, nil, errors.New("ratelimit: " + c.fs.Name() + ": the PostgreSQL store keeps no controls (overrides, blocks, exemptions): use Redis")
	}
	t, err := c.conn.open(ctx, c.e)
	if err != nil {
		return nil, nil, err
	}
	ctl, err := t.controls()
	if err != nil {
		t.Close()
		return nil, nil, err
	}
	return t, ctl, nil
}

// controls returns the controls of the target's prefix.
func (t *target) controls() (*core.Controls, error) {
	store, err := redisstore.New(t.client, redisstore.WithLogger(nil))
	if err != nil {
		return nil, err
	}
	return core.NewControls(store, t.prefix)
}

// do runs a change of the controls of one client and reports it, or the
// error (exit 2).
func (c *controlCmd) do(ctx context.Context, args []string, check func() error, change func(ctx context.Context, t *target, ctl *core.Controls, cl client) (string, error)) int {
	cl, code, ok := c.parseClient(args)
	if !ok {
		return code
	}
	if err := check(); err != nil {
		return fail(c.e.stderr, err)
	}
	t, ctl, err := c.open(ctx)
	if err != nil {
		return fail(c.e.stderr, err)
	}
	defer t.Close()
	fmt.Fprintln(c.e.stdout, t.describeClient(cl))
	did, err := change(core.WithOperator(ctx, c.by), t, ctl, cl)
	if err != nil {
		return fail(c.e.stderr, fmt.Errorf("ratelimit: %s (%s): %w", c.fs.Name(), t.desc, err))
	}
	fmt.Fprintln(c.e.stdout, did)
	fmt.Fprintln(c.e.stdout, propagation)
	return exitOK
}

// runOverride runs "override set|get|list|rm".
func runOverride(ctx context.Context, args []string, e env) int {
	subs := map[string]command{"set": runOverrideSet, "get": runOverrideGet, "list": runOverrideList, "rm": runOverrideRm}
	if len(args) == 0 || subs[args[0]] == nil {
		fmt.Fprint(e.stderr, "ratelimit: override takes set, get, list or rm\n\n"+controlsUsage)
		return exitError
	}
	return subs[args[0]](ctx, args[1:], e)
}

// reasonFlag registers --reason, required by the command.
func reasonFlag(fs *flag.FlagSet) *string {
	return fs.String("reason", "", "why (required): kept, logged and listed, never sent to the client; at most 256 bytes")
}

// needReason reports a missing --reason.
func needReason(cmd, reason string) error {
	if strings.TrimSpace(reason) == "" {
		return fmt.Errorf("ratelimit: %s: --reason is required: say why, for the next operator (it is never sent to the client)", cmd)
	}
	return nil
}

// runOverrideSet runs "override set".
func runOverrideSet(ctx context.Context, args []string, e env) int {
	c := newControlCmd("override set", e, true)
	var limits limitFlag
	c.fs.Var(&limits, "limit", "a limit of the override, repeatable: it replaces the limit of the same name of the client's tier;\n`spec` is [name=]RATE/PERIOD[,burst=N][,alg=ALGORITHM] as for inspect")
	tier := c.fs.String("tier", "", "the `tier` whose limits the client gets (not checked here: the command does not know the limiters' tiers)")
	d := c.fs.Duration("for", 0, "how long the override lasts (default: until removed)")
	until := c.fs.String("until", "", "when the override ends, RFC 3339 `time` (2025-01-31T00:00:00Z); not with --for")
	reason := reasonFlag(c.fs)
	var o core.Override
	check := func() (err error) {
		o.Tier, o.Limits, o.Reason, o.By = *tier, limits, *reason, c.by
		o.Until, err = endOf("override set", *d, *until, c.fs)
		if err == nil && o.Tier == "" && len(o.Limits) == 0 {
			err = errors.New("ratelimit: override set: give --tier or --limit (or both): what the client gets")
		}
		if err == nil {
			err = needReason("override set", *reason)
		}
		return err
	}
	return c.do(ctx, args, check, func(ctx context.Context, _ *target, ctl *core.Controls, cl client) (string, error) {
		if err := ctl.SetOverride(ctx, cl.tag, o); err != nil {
			return "", err
		}
		return "override set: " + describeOverride(o) + tierNote(o), nil
	})
}

// endOf returns the end --for d or --until until give (zero: none),
// refusing both at once, a duration not positive and a time not RFC 3339.
func endOf(cmd string, d time.Duration, until string, fs *flag.FlagSet) (time.Time, error) {
	switch {
	case isSet(fs, "for") && until != "":
		return time.Time{}, fmt.Errorf("ratelimit: %s: --for and --until exclude each other: give one end", cmd)
	case isSet(fs, "for") && d <= 0:
		return time.Time{}, fmt.Errorf("ratelimit: %s: --for %s: want a positive duration (90m, 24h)", cmd, d)
	case isSet(fs, "for"):
		return time.Now().Add(d), nil
	case until == "":
		return time.Time{}, nil
	}
	end, err := time.Parse(time.RFC3339, until)
	if err != nil {
		return time.Time{}, fmt.Errorf("ratelimit: %s: --until %q: want an RFC 3339 time, e.g. 2025-01-31T00:00:00Z", cmd, until)
	}
	return end, nil
}

// tierNote says, for an override naming a tier, that it was not checked.
func tierNote(o core.Override) string {
	if o.Tier == "" {
		return ""
	}
	return fmt.Sprintf("\nnote: tier %q is not checked here (the command does not know the limiters' tiers): a limiter without it keeps the client's own tier", o.Tier)
}

// describeOverride writes o for people.
func describeOverride(o core.Override) string {
	var parts []string
	if o.Tier != "" {
		parts = append(parts, "tier "+o.Tier)
	}
	for _, l := range o.Limits {
		parts = append(parts, fmt.Sprintf("%s %s %s", l.EffectiveName(), l.Algorithm, describeLimit(l)))
	}
	return strings.Join(parts, ", ") + "; " + describeNote(o.Until, o.Reason, o.By)
}

// describeNote writes the end, reason and operator of a control.
func describeNote(until time.Time, reason, by string) string {
	end := "until removed"
	if !until.IsZero() {
		end = fmt.Sprintf("until %s (in %s)", until.UTC().Format(time.RFC3339), fmtDuration(time.Until(until).Round(time.Second)))
	}
	s := fmt.Sprintf("%s; reason %q", end, reason)
	if by != "" {
		s += "; by " + by
	}
	return s
}

// runOverrideGet runs "override get".
func runOverrideGet(ctx context.Context, args []string, e env) int {
	c := newControlCmd("override get", e, true)
	cl, code, ok := c.parseClient(args)
	if !ok {
		return code
	}
	t, ctl, err := c.open(ctx)
	if err != nil {
		return fail(e.stderr, err)
	}
	defer t.Close()
	fmt.Fprintln(e.stdout, t.describeClient(cl))
	o, found, err := ctl.Override(ctx, cl.tag)
	switch {
	case err != nil:
		return fail(e.stderr, fmt.Errorf("ratelimit: override get (%s): %w", t.desc, err))
	case !found:
		fmt.Fprintln(e.stdout, "no override: the client has its tier's limits")
	default:
		fmt.Fprintln(e.stdout, "override: "+describeOverride(o))
	}
	return exitOK
}

// runOverrideRm runs "override rm".
func runOverrideRm(ctx context.Context, args []string, e env) int {
	c := newControlCmd("override rm", e, true)
	return c.do(ctx, args, noCheck, func(ctx context.Context, _ *target, ctl *core.Controls, cl client) (string, error) {
		if err := ctl.RemoveOverride(ctx, cl.tag); err != nil {
			return "", err
		}
		return "override removed: the client has its tier's limits again", nil
	})
}

func noCheck() error { return nil }

// runBlock runs "block".
func runBlock(ctx context.Context, args []string, e env) int {
	c := newControlCmd("block", e, true)
	d := c.fs.Duration("for", 0, "how long the block lasts (required: a block always ends; at most 366 days)")
	reason := reasonFlag(c.fs)
	check := func() error {
		if *d <= 0 {
			return errors.New("ratelimit: block: --for is required, a positive duration (15m, 24h): a block always ends")
		}
		return needReason("block", *reason)
	}
	return c.do(ctx, args, check, func(ctx context.Context, _ *target, ctl *core.Controls, cl client) (string, error) {
		if err := ctl.Block(ctx, cl.tag, *d, *reason); err != nil {
			return "", err
		}
		return fmt.Sprintf("blocked: every request is denied (429, reason blocked, Retry-After until the end), %s",
			describeNote(time.Now().Add(*d), *reason, c.by)), nil
	})
}

// runUnblock runs "unblock": it lifts the block and deletes the client's
// lockout state, so that a locked-out client is let in too.
func runUnblock(ctx context.Context, args []string, e env) int {
	c := newControlCmd("unblock", e, true)
	return c.do(ctx, args, noCheck, func(ctx context.Context, t *target, ctl *core.Controls, cl client) (string, error) {
		n, err := t.deleteLockouts(ctx, ctl, cl)
		if err != nil {
			return "", err
		}
		if err := ctl.Unblock(ctx, cl.tag); err != nil {
			return "", err
		}
		return fmt.Sprintf("unblocked; %s of lockout state deleted", plural(int(n), "key")), nil
	})
}

// deleteLockouts deletes the lockout state keys of cl under the prefix
// (<prefix>:{<tag>}:<limit>:x) and returns how many it deleted.
func (t *target) deleteLockouts(ctx context.Context, ctl *core.Controls, cl client) (int64, error) {
	ck, err := t.clientKeys(ctx, cl)
	if err != nil {
		return 0, err
	}
	var keys []string
	for _, k := range ck.keys {
		if parseKey(k).lockout {
			keys = append(keys, k)
		}
	}
	return ctl.DeleteKeys(ctx, keys)
}

// runExempt runs "exempt".
func runExempt(ctx context.Context, args []string, e env) int {
	c := newControlCmd("exempt", e, true)
	d := c.fs.Duration("for", 0, "how long the exemption lasts (default: until removed)")
	reason := reasonFlag(c.fs)
	check := func() error {
		if isSet(c.fs, "for") && *d <= 0 {
			return fmt.Errorf("ratelimit: exempt: --for %s: want a positive duration (omit it for no end)", *d)
		}
		return needReason("exempt", *reason)
	}
	return c.do(ctx, args, check, func(ctx context.Context, _ *target, ctl *core.Controls, cl client) (string, error) {
		if err := ctl.Exempt(ctx, cl.tag, *d, *reason); err != nil {
			return "", err
		}
		var until time.Time
		if *d > 0 {
			until = time.Now().Add(*d)
		}
		return "exempt: every request is admitted without a store call, " + describeNote(until, *reason, c.by), nil
	})
}

// runUnexempt runs "unexempt".
func runUnexempt(ctx context.Context, args []string, e env) int {
	c := newControlCmd("unexempt", e, true)
	return c.do(ctx, args, noCheck, func(ctx context.Context, _ *target, ctl *core.Controls, cl client) (string, error) {
		if err := ctl.Unexempt(ctx, cl.tag); err != nil {
			return "", err
		}
		return "exemption ended: the client is limited again", nil
	})
}

// runOverrideList, runBlocks and runControls list the clients with an
// override, a block, or any control.
func runOverrideList(ctx context.Context, args []string, e env) int {
	return listControls(ctx, args, e, "override list", func(cc core.ClientControls) bool { return cc.Override != nil })
}

func runBlocks(ctx context.Context, args []string, e env) int {
	return listControls(ctx, args, e, "blocks", func(cc core.ClientControls) bool { return cc.Block != nil })
}

func runControls(ctx context.Context, args []string, e env) int {
	return listControls(ctx, args, e, "controls", func(core.ClientControls) bool { return true })
}

// listControls prints the controls in force of the clients keep selects.
func listControls(ctx context.Context, args []string, e env, name string, keep func(core.ClientControls) bool) int {
	c := newControlCmd(name, e, false)
	if code, ok := c.parseNone(args); !ok {
		return code
	}
	t, ctl, err := c.open(ctx)
	if err != nil {
		return fail(e.stderr, err)
	}
	defer t.Close()
	all, err := ctl.List(ctx)
	if err != nil {
		return fail(e.stderr, fmt.Errorf("ratelimit: %s (%s): %w", name, t.desc, err))
	}
	var rows int
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT (TAG)\tCONTROL\tWHAT\tUNTIL\tREASON\tBY")
	for _, cc := range all {
		if keep(cc) {
			rows += printControls(tw, cc, name)
		}
	}
	_ = tw.Flush()
	fmt.Fprintf(e.stdout, "%s under prefix %q\n", plural(rows, "control"), t.prefix)
	return exitOK
}

// printControls writes one row per part of cc that the listing name
// shows, and returns how many.
func printControls(w io.Writer, cc core.ClientControls, name string) int {
	n := 0
	row := func(kind, what string, until time.Time, reason, by string) {
		end := "until removed"
		if !until.IsZero() {
			end = until.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%q\t%s\n", cc.ID, kind, what, end, reason, by)
		n++
	}
	if o := cc.Override; o != nil && name != "blocks" {
		row("override", strings.SplitN(describeOverride(*o), ";", 2)[0], o.Until, o.Reason, o.By)
	}
	if b := cc.Block; b != nil && name != "override list" {
		row("block", "denied, reason blocked", b.Until, b.Reason, b.By)
	}
	if x := cc.Exempt; x != nil && name == "controls" {
		row("exempt", "admitted, no store call", x.Until, x.Reason, x.By)
	}
	return n
}
