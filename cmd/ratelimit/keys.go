package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ratelimitkit/ratelimit/core"
)

// clientFlags name one client: an identity as the limiter sees it, or,
// with --tag, the hash tag of its keys as audit lists them.
type clientFlags struct {
	route string
	tag   bool
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.route, "route", "", "the route `template` of a limiter with route scope (WithRouteScope): the keys are those of Identity(route, identity)")
	fs.BoolVar(&c.tag, "tag", false, "the argument is the hash tag of the client's keys (what is between { and } in the keys audit lists), not an identity")
}

// A client is the client whose keys a command works on.
type client struct {
	identity string // as given, for messages
	tag      string // what is between the braces of its keys
	hasID    bool   // identity is a limiter identity (not a tag)
	id       string // the limiter identity, with the route when scoped
}

// client returns the client named by arg. routeSet says whether --route was
// given (an empty route is a route too: requests that matched none).
// parse parses the flags and the one identity argument of a command about
// one client (inspect, reset). When ok is false the command exits with code,
// the problem already reported on stderr.
func (c *clientFlags) parse(fs *flag.FlagSet, args []string, stderr io.Writer) (cl client, code int, ok bool) {
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return client{}, code, false
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "ratelimit: %s takes one identity\n", fs.Name())
		fs.Usage()
		return client{}, exitError, false
	}
	cl, err := c.client(pos[0], isSet(fs, "route"))
	if err != nil {
		return client{}, fail(stderr, err), false
	}
	return cl, exitOK, true
}

func (c *clientFlags) client(arg string, routeSet bool) (client, error) {
	if c.tag {
		if routeSet {
			return client{}, errors.New("ratelimit: --route and --tag exclude each other: a tag already includes the route")
		}
		if !validTag(arg) {
			return client{}, fmt.Errorf("ratelimit: --tag %q: a tag is non-empty and has no braces, spaces or control bytes", arg)
		}
		return client{identity: arg, tag: arg}, nil
	}
	id := arg
	if routeSet {
		id = core.Identity(c.route, arg)
	}
	return client{identity: arg, tag: core.SafeIdentity(id), hasID: true, id: id}, nil
}

// keysOf returns the keys of limits for cl, as the limiter builds them.
func (t *target) keysOf(cl client, limits []core.Limit) []string {
	if cl.hasID {
		return t.keys.AppendKeys(nil, cl.id, limits)
	}
	keys := make([]string, len(limits))
	for i, l := range limits {
		keys[i] = t.prefix + ":{" + cl.tag + "}:" + l.EffectiveName() + ":" + l.Algorithm.Tag()
	}
	return keys
}

// clientPattern is the SCAN pattern of every key of cl.
func (t *target) clientPattern(cl client) string {
	return globEscape(t.prefix+":{"+cl.tag+"}:") + "*"
}

// prefixPattern is the SCAN pattern of every key under the prefix.
func (t *target) prefixPattern() string {
	return globEscape(t.prefix+":{") + "*"
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

func validTag(tag string) bool {
	if tag == "" {
		return false
	}
	for i := 0; i < len(tag); i++ {
		if c := tag[i]; c <= ' ' || c == 0x7f || c == '{' || c == '}' {
			return false
		}
	}
	return true
}

// A keyName is a key split along the layout
// <prefix>:{<tag>}:<limit name>:<algorithm tag>.
type keyName struct {
	tag       string
	limit     string
	algorithm core.Algorithm
	ok        bool // the key follows the layout, with a known algorithm tag
}

// parseKey splits key, which starts with prefix + ":{".
func (t *target) parseKey(key string) keyName {
	rest, ok := strings.CutPrefix(key, t.prefix+":{")
	if !ok {
		return keyName{}
	}
	tag, rest, ok := strings.Cut(rest, "}:")
	if !ok {
		return keyName{}
	}
	name, algTag, ok := strings.Cut(rest, ":")
	if !ok || name == "" || strings.Contains(algTag, ":") {
		return keyName{tag: tag}
	}
	a, ok := algorithmByTag(algTag)
	return keyName{tag: tag, limit: name, algorithm: a, ok: ok}
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

// redisType is the Redis type of the state of each algorithm
// (docs/algorithms.md).
func redisType(a core.Algorithm) string {
	switch a {
	case core.GCRA:
		return "string"
	case core.SlidingLog:
		return "zset"
	}
	return "hash"
}
