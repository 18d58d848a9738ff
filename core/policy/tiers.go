package policy

import (
	"go.yaml.in/yaml/v3"

	"github.com/ratelimitkit/ratelimit/core"
)

// maxLimitsPerTier is core's bound on the limits of one tier (one store
// call takes them all).
const maxLimitsPerTier = 16

// A limiterPolicy is the tiers of one limiter, validated.
type limiterPolicy struct {
	name  string
	def   string // the default tier, always named
	tiers []core.Tier
	line  int  // where the document describes it
	path  path // "limiters.api", or "" for a document of one limiter
}

// limiter reads the fields of one limiter (node n, at path p).
func (w *walker) limiter(name string, n *yaml.Node, fields []pair, p path) (*limiterPolicy, *Error) {
	lp := &limiterPolicy{name: name, line: n.Line, path: p}
	var def, tiers *pair
	for i, kv := range fields {
		switch kv.key.Value {
		case "default_tier":
			def = &fields[i]
		case "tiers":
			tiers = &fields[i]
		default:
			return nil, w.unknown(kv.key, p.key(kv.key.Value), "a limiter", limiterFields)
		}
	}
	if tiers == nil {
		return nil, w.errAt(n, p.key("tiers"), "missing: a limiter has tiers")
	}
	var err *Error
	if lp.tiers, err = w.tiers(tiers.val, p.key("tiers")); err != nil {
		return nil, err
	}
	lp.def = lp.tiers[0].Name
	if def != nil {
		if lp.def, err = w.defaultTier(def.val, p.key("default_tier"), lp.tiers); err != nil {
			return nil, err
		}
	}
	if err := core.ValidateTiers(lp.tiers, lp.def); err != nil {
		// The walk checked what core checks; this is the backstop.
		return nil, w.errAt(n, p, "%s", trimCore(err))
	}
	return lp, nil
}

// defaultTier reads default_tier, which must name one of tiers.
func (w *walker) defaultTier(n *yaml.Node, p path, tiers []core.Tier) (string, *Error) {
	def, err := w.scalar(n, p, "a tier name")
	if err != nil {
		return "", err
	}
	names := make([]string, len(tiers))
	for i, t := range tiers {
		if t.Name == def {
			return def, nil
		}
		names[i] = t.Name
	}
	return "", w.errAt(n, p, "no tier %q among the tiers (%s)", def, joinNames(names))
}

// tiers reads the mapping of tiers by name, in document order.
func (w *walker) tiers(n *yaml.Node, p path) ([]core.Tier, *Error) {
	pairs, err := w.mapping(n, p, "the tiers by name")
	if err != nil {
		return nil, err
	}
	if len(pairs) == 0 {
		return nil, w.errAt(n, p, "empty: a limiter has at least one tier")
	}
	tiers := make([]core.Tier, 0, len(pairs))
	for _, kv := range pairs {
		t, err := w.tier(kv.key, kv.val, p.key(kv.key.Value))
		if err != nil {
			return nil, err
		}
		tiers = append(tiers, t)
	}
	return tiers, nil
}

// tier reads one tier: the list of its limits (the node list), named by
// the key k.
func (w *walker) tier(k, list *yaml.Node, p path) (core.Tier, *Error) {
	t := core.Tier{Name: k.Value}
	items, err := w.list(list, p, "the limits of the tier")
	if err != nil {
		return t, err
	}
	if len(items) == 0 {
		return t, w.errAt(list, p, "empty: a tier has at least one limit")
	}
	names := make(map[string]int, len(items))
	for i, item := range items {
		ip := p.index(i)
		if i == maxLimitsPerTier {
			return t, w.errAt(item, ip, "a tier has at most %d limits, all taken in one store call", maxLimitsPerTier)
		}
		l, err := w.limit(item, ip)
		if err != nil {
			return t, err
		}
		name := l.EffectiveName()
		if line, dup := names[name]; dup {
			return t, w.errAt(item, ip, "a second limit named %q in the tier (first at line %d)", name, line)
		}
		names[name] = item.Line
		t.Limits = append(t.Limits, l)
	}
	if err := core.ValidateTiers([]core.Tier{t}, ""); err != nil {
		// Each limit is valid and no name is taken twice: the name of
		// the tier is what core refuses.
		return t, w.errAt(k, p, "%s", trimCore(err))
	}
	return t, nil
}
