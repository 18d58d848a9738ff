package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// clientFlags name one client: an identity as the limiter sees it, built
// from parts for a composite one, or, with --tag, the hash tag of its keys
// as audit lists them.
type clientFlags struct {
	route       string
	tag         bool
	parts       []string // --part and --form-part, in order
	apiKeyStdin bool     // --api-key-stdin: the identity (or last part) is an API key read from stdin
}

// register registers the flags of inspect and reset: those of
// [clientFlags.registerIdentity] and --tag.
func (c *clientFlags) register(fs *flag.FlagSet) {
	c.registerIdentity(fs)
	fs.BoolVar(&c.tag, "tag", false, "the argument is the hash tag of the client's keys (what is between { and } in the keys audit lists), not an identity")
}

// registerIdentity registers the flags that build an identity: --route,
// --part and --form-part.
func (c *clientFlags) registerIdentity(fs *flag.FlagSet) {
	fs.StringVar(&c.route, "route", "", "the route `template` of a limiter with route scope (WithRouteScope): the keys are those of Identity(route, identity)")
	fs.Var(partFlag{parts: &c.parts}, "part", "a `part` of a composite identity as its key function returned it (\"203.0.113.7\", \"path:github\");\nrepeatable, in the key functions' order: the identity is core.Identity(parts...), as keyfunc.Composite builds it")
	fs.Var(partFlag{parts: &c.parts, form: true}, "form-part", "a part keyfunc.FormValue(FIELD) read, as `FIELD=VALUE` (account=alice): hashed as FormValue hashes it;\nrepeatable, in order with --part")
	fs.BoolVar(&c.apiKeyStdin, "api-key-stdin", false, "name the client by its API key (or bearer token), read from standard input (one line), hashed as keyfunc.Header,\nByAPIKeyOrIP and BearerToken hash it: the secret is never on the command line nor in the output.\nWith --part flags it is the last part")
}

// A client is the client whose keys a command works on.
type client struct {
	identity string   // as given or built from parts, before any route scope
	parts    []string // the parts identity was built from, if any
	tag      string   // what is between the braces of its keys
	hasID    bool     // identity is a limiter identity (not a tag)
	id       string   // the limiter identity, with the route when scoped
}

// parse parses the flags and the identity argument of a command about one
// client (inspect, reset, tag): one identity, or none when parts are given.
// When ok is false the command exits with code, the problem already
// reported on stderr.
func (c *clientFlags) parse(fs *flag.FlagSet, args []string, stdin io.Reader, stderr io.Writer) (cl client, code int, ok bool) {
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return client{}, code, false
	}
	if c.apiKeyStdin {
		if len(pos) > 0 || c.tag {
			fmt.Fprintf(stderr, "ratelimit: %s: --api-key-stdin names the client: give no identity argument nor --tag\n", fs.Name())
			return client{}, exitError, false
		}
		id, err := apiKeyIdentity(stdin)
		if err != nil {
			return client{}, fail(stderr, err), false
		}
		if len(c.parts) == 0 {
			pos = []string{id}
		} else {
			c.parts = append(c.parts, id)
		}
	}
	switch {
	case len(c.parts) > 0 && len(pos) > 0:
		fmt.Fprintf(stderr, "ratelimit: %s takes an identity or --part/--form-part flags, not both\n", fs.Name())
		fs.Usage()
		return client{}, exitError, false
	case len(c.parts) == 0 && len(pos) != 1:
		fmt.Fprintf(stderr, "ratelimit: %s takes one identity (or --part/--form-part flags for a composite one)\n", fs.Name())
		fs.Usage()
		return client{}, exitError, false
	case len(c.parts) > 0:
		pos = []string{core.Identity(c.parts...)}
	}
	cl, err := c.client(pos[0], isSet(fs, "route"))
	if err != nil {
		return client{}, fail(stderr, err), false
	}
	return cl, exitOK, true
}

// client returns the client named by arg, an identity or a tag (--tag).
// routeSet says whether --route was given (an empty route is a route too:
// requests that matched none).
func (c *clientFlags) client(arg string, routeSet bool) (client, error) {
	if c.tag {
		switch {
		case routeSet:
			return client{}, errors.New("ratelimit: --route and --tag exclude each other: a tag already includes the route")
		case len(c.parts) > 0:
			return client{}, errors.New("ratelimit: --part and --tag exclude each other: a tag is computed from the parts")
		case !keylayout.ValidTag(arg):
			return client{}, fmt.Errorf("ratelimit: --tag %q: a tag is non-empty and has no braces, spaces or control bytes", arg)
		case arg == keylayout.ControlTag:
			return client{}, fmt.Errorf("ratelimit: --tag %q: that is the tag of the limiters' controls (overrides, blocks, exemptions), not of a client", arg)
		}
		return client{identity: arg, tag: arg}, nil
	}
	id := arg
	if routeSet {
		id = core.Identity(c.route, arg)
	}
	return client{identity: arg, parts: c.parts, tag: core.SafeIdentity(id), hasID: true, id: id}, nil
}

// A partFlag appends the parts of repeated --part (or, with form,
// --form-part) flags to one list, in command-line order.
type partFlag struct {
	parts *[]string
	form  bool
}

func (f partFlag) String() string { return "" }

func (f partFlag) Set(v string) error {
	if f.form {
		p, err := formPart(v)
		if err != nil {
			return err
		}
		v = p
	}
	*f.parts = append(*f.parts, v)
	return nil
}

// formPart returns the identity keyfunc.FormValue(FIELD) gives a request
// whose form has FIELD=VALUE (spec), computed by keyfunc itself so that it
// stays the limiter's: "form:" and a hash of the trimmed, lower-cased value.
// A [keyfunc.FormValueFunc] with its own normalisation is not covered.
func formPart(spec string) (string, error) {
	field, value, ok := strings.Cut(spec, "=")
	if !ok || field == "" {
		return "", errors.New("want FIELD=VALUE, the form field the key function reads and its value, e.g. account=alice")
	}
	fn, err := keyfunc.FormValue(field)
	if err != nil {
		return "", err
	}
	r := &http.Request{Method: http.MethodGet, Header: http.Header{},
		URL: &url.URL{Path: "/", RawQuery: url.Values{field: {value}}.Encode()}}
	return fn(r)
}

// apiKeyIdentity reads an API key from r (its first line, without the line
// end) and returns the identity the key functions give a request bearing
// it, computed by keyfunc itself so that it stays theirs.
func apiKeyIdentity(r io.Reader) (string, error) {
	if r == nil {
		return "", errors.New("ratelimit: --api-key-stdin: no standard input")
	}
	line, err := bufio.NewReader(io.LimitReader(r, keyfunc.MaxSecretBytes+2)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("ratelimit: --api-key-stdin: %w", err)
	}
	secret := strings.TrimRight(line, "\r\n")
	fn := keyfunc.ByHeader("X-API-Key")
	req := &http.Request{Method: http.MethodGet, Header: http.Header{"X-Api-Key": {secret}}, URL: &url.URL{Path: "/"}}
	id, err := fn(req)
	if err != nil {
		return "", fmt.Errorf("ratelimit: --api-key-stdin: the key read is empty or longer than %d bytes", keyfunc.MaxSecretBytes)
	}
	return id, nil
}

// keysOf returns the keys of limits for cl, as the limiter builds them.
func (t *target) keysOf(cl client, limits []core.Limit) []string {
	if cl.hasID {
		return t.keys.AppendKeys(nil, cl.id, limits)
	}
	keys := make([]string, len(limits))
	for i, l := range limits {
		keys[i] = keylayout.Key(t.prefix, cl.tag, l.EffectiveName(), l.Algorithm.Tag())
	}
	return keys
}

// clientPattern is the SCAN pattern of every key of cl under the prefix
// and its sub-prefixes: P:*{tag}:*. It also matches keys that are not cl's
// ("P:{x}:{tag}:..."); [parseKey] sorts them out.
func (t *target) clientPattern(cl client) string {
	return globEscape(t.prefix+":") + "*" + globEscape("{"+cl.tag+"}:") + "*"
}

// familyPattern is the SCAN pattern of every key under the prefix and its
// sub-prefixes (P:<sub>, as "rl:api" for "rl"): P:*.
func (t *target) familyPattern() string {
	return globEscape(t.prefix+":") + "*"
}

// inFamily reports whether the key prefix p is the prefix or one of its
// sub-prefixes.
func (t *target) inFamily(p string) bool {
	return p == t.prefix || strings.HasPrefix(p, t.prefix+":")
}

// globEscape escapes the characters special to Redis glob patterns.
func globEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[]\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// A keyName is a key split along the layout
// <prefix>:{<tag>}:<limit name>:<algorithm tag> ([keylayout.Parse]), with
// the algorithm its tag names.
type keyName struct {
	prefix    string
	tag       string
	limit     string
	algorithm core.Algorithm
	hasTag    bool // the key has a prefix and a hash tag
	ok        bool // the key follows the whole layout, with a known algorithm tag
	// control is set for a key of the prefix's controls,
	// <prefix>:{~ctl}:<part> (overrides, blocks, exemptions): no client's.
	control bool
	part    string // of a control key: r, e, l, g or t
	// lockout is set for the lockout state of a limit of a client,
	// <prefix>:{<tag>}:<limit>:x (limit is set, algorithm and ok are not).
	lockout bool
}

// lockoutTag is the last part of a lockout state key, reserved beside the
// algorithm tags.
const lockoutTag = "x"

// parseKey splits key along the layout; ok also needs a known algorithm
// tag.
func parseKey(key string) keyName {
	p := keylayout.Parse(key)
	if !p.HasTag {
		return keyName{}
	}
	n := keyName{prefix: p.Prefix, tag: p.Tag, hasTag: true}
	if p.IsControl() {
		n.control, n.part = true, strings.TrimPrefix(key, keylayout.ClientHead(p.Prefix, p.Tag))
		return n
	}
	if p.OK && p.Algorithm == lockoutTag {
		n.limit, n.lockout = p.Limit, true
		return n
	}
	if a, ok := algorithmByTag(p.Algorithm); p.OK && ok {
		n.limit, n.algorithm, n.ok = p.Limit, a, true
	}
	return n
}

// algorithms returns every algorithm the core knows.
func algorithms() []core.Algorithm {
	var all []core.Algorithm
	for a := core.Algorithm(0); a.Tag() != "?"; a++ {
		all = append(all, a)
	}
	return all
}

func algorithmByTag(tag string) (core.Algorithm, bool) {
	for _, a := range algorithms() {
		if a.Tag() == tag {
			return a, true
		}
	}
	return 0, false
}

// controlTypes are the Redis types of the control keys, by part
// (docs/redis-protocol.md, "Controls").
var controlTypes = map[string]string{
	keylayout.ControlRecords: "hash", keylayout.ControlExpiries: "zset", keylayout.ControlLog: "zset",
	keylayout.ControlGeneration: "string", keylayout.ControlTrimmed: "string",
}

// redisType is the Redis type of the state of each algorithm
// (docs/algorithms.md).
func redisType(a core.Algorithm) string {
	switch a {
	case core.GCRA:
		return "string"
	case core.SlidingLog, core.Concurrency:
		return "zset"
	}
	return "hash"
}
