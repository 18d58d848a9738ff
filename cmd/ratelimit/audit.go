package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

const auditUsage = `usage: ratelimit audit [flags]

Scans every key under the prefix and its sub-prefixes (P:*: "rl" covers
rl:{...} and rl:api:{...}, rl:login:{...}) with SCAN (never KEYS; on a
Cluster, every master) and reports the key count, memory (MEMORY USAGE on a
sample), the TTL distribution, keys per prefix, limit and algorithm, the
control records (overrides, blocks, exemptions) per prefix, and
every key without a TTL or whose Redis type does not match its algorithm
tag. The limiter gives every key it writes a TTL, so a key without one was
written by something else or by a bug: the exit status is 1 when there is
any. No key at all is a warning, with exit status 3: a wrong server,
prefix or db looks exactly like that. --top N lists the N clients with the
most keys. On a Cluster it warns when a master requires full coverage
(cluster-require-full-coverage yes, Redis's default: one dead master then
stops every client) or cannot be asked (CONFIG disabled or renamed).

Flags:
`

type auditFlags struct {
	sample int
	list   int
	top    int
	count  int64
}

func runAudit(ctx context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var conn connFlags
	conn.register(fs)
	var af auditFlags
	fs.IntVar(&af.sample, "sample", 100, "run MEMORY USAGE on the first `N` keys of each node (0: skip memory)")
	fs.IntVar(&af.list, "list", 100, "list at most `N` keys of each finding")
	fs.IntVar(&af.top, "top", 0, "list the `N` clients (prefix and hash tag) with the most keys, then the longest TTL")
	fs.Int64Var(&af.count, "count", scanCount, "SCAN COUNT hint: keys examined per `call`")
	fs.Usage = func() { fmt.Fprint(stderr, auditUsage); fs.PrintDefaults() }
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 0 || af.sample < 0 || af.list < 0 || af.top < 0 || af.count <= 0 {
		fmt.Fprintln(stderr, "ratelimit: audit takes no arguments; --sample, --list and --top must not be negative, --count must be positive")
		fs.Usage()
		return exitError
	}
	if conn.pg.url != "" {
		return pgAudit(ctx, conn, af, e)
	}
	t, err := conn.open(ctx, e)
	if err != nil {
		return fail(stderr, err)
	}
	defer t.Close()

	rep, err := t.audit(ctx, af)
	if err != nil {
		return fail(stderr, fmt.Errorf("ratelimit: audit (%s): %w", t.desc, err))
	}
	rep.countControls(ctx, t)
	rep.print(stdout, t, af)
	t.warnCoverage(ctx, stderr)
	if n := rep.noTTL.n + rep.wrongType.n; n > 0 {
		fmt.Fprintf(stderr, "ratelimit: audit found %d keys without TTL and %d of the wrong type under prefix %q and its sub-prefixes\n",
			rep.noTTL.n, rep.wrongType.n, t.prefix)
		return exitFindings
	}
	if rep.keys == 0 {
		t.warnNoKeys(ctx, stderr)
		return exitNoKeys
	}
	return exitOK
}

// warnCoverage warns on stderr when the target is a cluster whose masters
// require full coverage, or could not be asked: one dead master would
// then stop every client (docs/operations.md, "Cluster, hash tags and
// Sentinel"). A warning does not change the exit status.
func (t *target) warnCoverage(ctx context.Context, stderr io.Writer) {
	cc, ok := t.client.(*redis.ClusterClient)
	if !ok {
		return
	}
	cov, err := redisstore.CheckCoverage(ctx, cc)
	if err != nil {
		fmt.Fprintf(stderr, "ratelimit: warning: cluster-require-full-coverage could not be checked: %v\n", err)
	} else if w := cov.Warning(); w != "" {
		fmt.Fprintf(stderr, "ratelimit: warning: %s\n", w)
	}
}

// ttlBuckets are the upper bounds of the TTL distribution.
var ttlBuckets = []time.Duration{time.Second, 10 * time.Second, time.Minute, 10 * time.Minute, time.Hour, 24 * time.Hour}

// A report is what audit found, on one node or all of them.
type report struct {
	nodes        []nodeCount
	keys         int64
	vanished     int64 // expired between SCAN and the look at them
	noTTLKeys    int64
	ttl          []int64 // per ttlBuckets, then one more for longer
	byPrefix     map[string]*prefixCount
	untagged     int64                   // keys without a <prefix>:{<tag>} head
	clients      map[string]*clientCount // by "<prefix>:{<tag>}", for --top
	controls     map[string]int64        // control records (HLEN of <prefix>:{~ctl}:r), by prefix
	inForce      map[string]controlCount // the controls in force, by prefix ([report.countControls])
	sampled      int64
	sampledBytes int64
	noTTL        finding
	wrongType    finding
}

// A controlCount counts the controls in force of one prefix.
type controlCount struct {
	overrides, blocks, exemptions int
	err                           error
}

// countControls reads the controls in force of every prefix that has
// control keys.
func (r *report) countControls(ctx context.Context, t *target) {
	r.inForce = map[string]controlCount{}
	store, err := redisstore.New(t.client, redisstore.WithLogger(nil))
	for p := range r.controls {
		var cc controlCount
		var ctl *core.Controls
		var list []core.ClientControls
		if err == nil {
			ctl, err = core.NewControls(store, p)
		}
		if err == nil {
			list, err = ctl.List(ctx)
		}
		for _, c := range list {
			cc.overrides += btoi(c.Override != nil)
			cc.blocks += btoi(c.Block != nil)
			cc.exemptions += btoi(c.Exempt != nil)
		}
		cc.err = err
		r.inForce[p] = cc
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// String writes the counts, or why they could not be read.
func (c controlCount) String() string {
	if c.err != nil {
		return "in force: unreadable: " + c.err.Error()
	}
	return fmt.Sprintf("in force: %s, %s, %s", plural(c.overrides, "override"), plural(c.blocks, "block"),
		plural(c.exemptions, "exemption"))
}

type nodeCount struct {
	addr string
	keys int64
}

// A prefixCount counts the keys of one prefix.
type prefixCount struct {
	keys         int64
	byLimit      map[string]int64 // "<limit name> <algorithm>"
	unrecognised int64            // a tag, but not a limit name and algorithm tag after it
}

// A clientCount counts the keys of one client of one limiter, for --top.
type clientCount struct {
	prefix string
	tag    string
	keys   int64
	maxTTL time.Duration // -1: a key without TTL
	limits map[string]bool
}

// A finding counts keys with a problem and keeps the first few.
type finding struct {
	n    int64
	keys []string
}

func (f *finding) add(key string, max int) {
	f.n++
	if len(f.keys) < max {
		f.keys = append(f.keys, key)
	}
}

func newReport() *report {
	return &report{ttl: make([]int64, len(ttlBuckets)+1), byPrefix: map[string]*prefixCount{}, clients: map[string]*clientCount{},
		controls: map[string]int64{}}
}

// audit scans every node and merges the reports.
func (t *target) audit(ctx context.Context, af auditFlags) (*report, error) {
	var mu sync.Mutex
	total := newReport()
	err := t.forEachNode(ctx, func(ctx context.Context, node *redis.Client) error {
		rep, err := t.auditNode(ctx, node, af)
		if err != nil {
			return fmt.Errorf("node %s: %w", node.Options().Addr, err)
		}
		mu.Lock()
		defer mu.Unlock()
		total.merge(rep, af.list)
		return nil
	})
	slices.SortFunc(total.nodes, func(a, b nodeCount) int { return strings.Compare(a.addr, b.addr) })
	return total, err
}

// auditNode scans one node, looking at each batch of keys in one pipeline.
func (t *target) auditNode(ctx context.Context, node *redis.Client, af auditFlags) (*report, error) {
	rep := newReport()
	rep.nodes = []nodeCount{{addr: node.Options().Addr}}
	err := scan(ctx, node, t.familyPattern(), af.count, func(keys []string) error {
		return auditBatch(ctx, node, keys, rep, af)
	})
	rep.nodes[0].keys = rep.keys
	return rep, err
}

func auditBatch(ctx context.Context, node *redis.Client, keys []string, rep *report, af auditFlags) error {
	pipe := node.Pipeline()
	ttls := make([]*redis.Cmd, len(keys))
	types := make([]*redis.StatusCmd, len(keys))
	mems := make([]*redis.IntCmd, len(keys))
	for i, k := range keys {
		ttls[i] = pipe.Do(ctx, "PTTL", k)
		types[i] = pipe.Type(ctx, k)
		if rep.sampled+int64(i) < int64(af.sample) {
			mems[i] = pipe.MemoryUsage(ctx, k)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !isNil(err) {
		return err
	}
	for i, k := range keys {
		ttl, err := ttls[i].Int64()
		if err != nil {
			return err
		}
		if ttl == -2 {
			rep.vanished++
			continue
		}
		rep.count(k, types[i].Val(), ttl, af)
		if mems[i] != nil && mems[i].Err() == nil {
			rep.sampled++
			rep.sampledBytes += mems[i].Val()
		}
		if err := rep.countRecords(ctx, node, k, types[i].Val()); err != nil {
			return err
		}
	}
	return nil
}

// countRecords adds the records of key, when it is the hash of a prefix's
// control records (one per prefix: a call of its own is no burden).
func (r *report) countRecords(ctx context.Context, node *redis.Client, key, typ string) error {
	n := parseKey(key)
	if !n.control || n.part != keylayout.ControlRecords || typ != "hash" {
		return nil
	}
	records, err := node.HLen(ctx, key).Result()
	r.controls[n.prefix] += records
	return err
}

// count adds one key of Redis type typ and PTTL ttl (ms, -1 for none).
func (r *report) count(key, typ string, ttl int64, af auditFlags) {
	r.keys++
	d := time.Duration(ttl) * time.Millisecond
	if ttl == -1 {
		r.noTTLKeys++
		r.noTTL.add(key, af.list)
		d = -1
	} else {
		r.ttl[ttlBucket(d)]++
	}
	name := parseKey(key)
	switch {
	case !name.hasTag:
		r.untagged++
		return
	case name.control: // no client's: counted apart, as records
		if _, ok := r.controls[name.prefix]; !ok {
			r.controls[name.prefix] = 0
		}
		if typ != controlTypes[name.part] {
			r.wrongType.add(key+" ("+typ+")", af.list)
		}
		return
	}
	pc := r.prefix(name.prefix)
	pc.keys++
	limit := "(not a limiter key)"
	if name.lockout {
		limit = name.limit + " lockout state"
		pc.byLimit[limit]++
		if typ != "hash" {
			r.wrongType.add(key+" ("+typ+")", af.list)
		}
	} else if name.ok {
		limit = name.limit + " " + name.algorithm.String()
		pc.byLimit[limit]++
		if typ != redisType(name.algorithm) {
			r.wrongType.add(key+" ("+typ+")", af.list)
		}
	} else {
		pc.unrecognised++
	}
	if af.top > 0 {
		r.client(name.prefix, name.tag).add(1, d, limit)
	}
}

func (r *report) prefix(p string) *prefixCount {
	pc := r.byPrefix[p]
	if pc == nil {
		pc = &prefixCount{byLimit: map[string]int64{}}
		r.byPrefix[p] = pc
	}
	return pc
}

// client returns the counts of the client with keys <prefix>:{<tag>}:*.
func (r *report) client(prefix, tag string) *clientCount {
	head := keylayout.Client(prefix, tag)
	cc := r.clients[head]
	if cc == nil {
		cc = &clientCount{prefix: prefix, tag: tag, limits: map[string]bool{}}
		r.clients[head] = cc
	}
	return cc
}

// add counts n keys of the client whose longest TTL is ttl (-1: none).
func (c *clientCount) add(n int64, ttl time.Duration, limits ...string) {
	if c.keys == 0 || longerTTL(ttl, c.maxTTL) {
		c.maxTTL = ttl
	}
	c.keys += n
	for _, l := range limits {
		c.limits[l] = true
	}
}

func ttlBucket(ttl time.Duration) int {
	for i, max := range ttlBuckets {
		if ttl <= max {
			return i
		}
	}
	return len(ttlBuckets)
}

// merge adds the node report o to r.
func (r *report) merge(o *report, list int) {
	r.nodes = append(r.nodes, o.nodes...)
	r.keys += o.keys
	r.vanished += o.vanished
	r.noTTLKeys += o.noTTLKeys
	for i, n := range o.ttl {
		r.ttl[i] += n
	}
	for p, opc := range o.byPrefix {
		pc := r.prefix(p)
		pc.keys += opc.keys
		pc.unrecognised += opc.unrecognised
		for k, n := range opc.byLimit {
			pc.byLimit[k] += n
		}
	}
	r.untagged += o.untagged
	for p, n := range o.controls {
		r.controls[p] += n
	}
	for _, occ := range o.clients {
		r.client(occ.prefix, occ.tag).add(occ.keys, occ.maxTTL, slices.Collect(maps.Keys(occ.limits))...)
	}
	r.sampled += o.sampled
	r.sampledBytes += o.sampledBytes
	r.noTTL.merge(o.noTTL, list)
	r.wrongType.merge(o.wrongType, list)
}

func (f *finding) merge(o finding, list int) {
	f.n += o.n
	f.keys = append(f.keys, o.keys[:min(len(o.keys), list-len(f.keys))]...)
}

// print writes the report for people.
func (r *report) print(w io.Writer, t *target, af auditFlags) {
	fmt.Fprintf(w, "audit of prefix %q and its sub-prefixes (%s:*) on %s\n", t.prefix, t.prefix, t.desc)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(r.nodes) > 1 {
		for _, n := range r.nodes {
			fmt.Fprintf(tw, "node %s\t%d keys\n", n.addr, n.keys)
		}
	}
	fmt.Fprintf(tw, "keys\t%d\n", r.keys)
	if r.vanished > 0 {
		fmt.Fprintf(tw, "expired during the scan\t%d\n", r.vanished)
	}
	fmt.Fprintf(tw, "memory\t%s\n", r.memory(af))
	fmt.Fprintln(tw, "TTL\t")
	fmt.Fprintf(tw, "  none\t%d\n", r.noTTLKeys)
	for i, max := range ttlBuckets {
		fmt.Fprintf(tw, "  <= %s\t%d\n", fmtDuration(max), r.ttl[i])
	}
	fmt.Fprintf(tw, "  > %s\t%d\n", fmtDuration(ttlBuckets[len(ttlBuckets)-1]), r.ttl[len(ttlBuckets)])
	fmt.Fprintln(tw, "keys by prefix, limit and algorithm\t")
	for _, p := range slices.Sorted(maps.Keys(r.byPrefix)) {
		pc := r.byPrefix[p]
		fmt.Fprintf(tw, "  %s\t%d\n", p, pc.keys)
		for _, k := range slices.Sorted(maps.Keys(pc.byLimit)) {
			fmt.Fprintf(tw, "    %s\t%d\n", k, pc.byLimit[k])
		}
		if pc.unrecognised > 0 {
			fmt.Fprintf(tw, "    (not a limiter key)\t%d\n", pc.unrecognised)
		}
	}
	if r.untagged > 0 {
		fmt.Fprintf(tw, "  (not a limiter key)\t%d\n", r.untagged)
	}
	if len(r.controls) > 0 {
		fmt.Fprintln(tw, "controls (overrides, blocks, exemptions) by prefix, PREFIX:{~ctl}:*\t")
		for _, p := range slices.Sorted(maps.Keys(r.controls)) {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", p, plural(int(r.controls[p]), "record"), r.inForce[p])
		}
	}
	_ = tw.Flush()
	if af.top > 0 {
		r.printTop(w, af.top)
	}
	r.noTTL.print(w, "keys without TTL")
	r.wrongType.print(w, "keys whose Redis type does not match their algorithm tag")
}

func (r *report) memory(af auditFlags) string {
	switch {
	case af.sample == 0:
		return "not sampled (--sample 0)"
	case r.sampled == 0:
		return "no keys sampled"
	}
	mean := float64(r.sampledBytes) / float64(r.sampled)
	return fmt.Sprintf("about %s (mean %s per key, MEMORY USAGE of %d keys)",
		fmtBytes(mean*float64(r.keys)), fmtBytes(mean), r.sampled)
}

func (f finding) print(w io.Writer, title string) {
	fmt.Fprintf(w, "%s: %d\n", title, f.n)
	for _, k := range f.keys {
		fmt.Fprintln(w, "  "+k)
	}
	if more := f.n - int64(len(f.keys)); more > 0 {
		fmt.Fprintf(w, "  ... and %d more (--list)\n", more)
	}
}
