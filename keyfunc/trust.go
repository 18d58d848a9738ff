package keyfunc

import (
	"fmt"
	"net/netip"
)

// trustSet is a validated list of trusted proxy prefixes.
type trustSet []netip.Prefix

// newTrustSet validates trusted for the constructor name. Each prefix must
// be valid, not IPv4-mapped (addresses are unmapped before the check, so it
// could never match) and not trust every address (/0 would hand the client
// the choice of its own address). Prefixes are masked ("10.1.2.3/8" becomes
// "10.0.0.0/8").
func newTrustSet(name string, trusted []netip.Prefix) (trustSet, error) {
	if len(trusted) == 0 {
		return nil, fmt.Errorf("ratelimit: keyfunc: %s: trusted: no proxy prefix given; use PeerIP when no proxy is trusted", name)
	}
	ts := make(trustSet, len(trusted))
	for i, p := range trusted {
		switch {
		case !p.IsValid():
			return nil, fmt.Errorf("ratelimit: keyfunc: %s: trusted[%d]: invalid prefix %q", name, i, p)
		case p.Addr().Is4In6():
			return nil, fmt.Errorf("ratelimit: keyfunc: %s: trusted[%d]: IPv4-mapped prefix %s; write it as IPv4", name, i, p)
		case p.Bits() == 0:
			return nil, fmt.Errorf("ratelimit: keyfunc: %s: trusted[%d]: %s trusts every address", name, i, p)
		}
		ts[i] = p.Masked()
	}
	return ts, nil
}

// contains reports whether a (already cleaned) is a trusted proxy.
func (ts trustSet) contains(a netip.Addr) bool {
	for _, p := range ts {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
