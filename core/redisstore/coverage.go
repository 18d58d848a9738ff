package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// A Coverage is what the masters of a Redis Cluster say of their setting
// cluster-require-full-coverage, read by [CheckCoverage]. With yes (Redis's
// default) a master refuses every command while any slot of the cluster
// is unserved, so one dead master stops every client, not only its own,
// until a replica takes over; with no, the other masters keep serving
// their slots. Rate limiting wants no (docs/operations.md, "Cluster,
// hash tags and Sentinel").
type Coverage struct {
	// Required lists the masters that answer yes, sorted.
	Required []string
	// Unchecked lists the masters that could not be asked, each as
	// "address (why)": CONFIG disabled or renamed, an ACL user without
	// it, a master that did not answer. Sorted.
	Unchecked []string
}

// Warning returns what to tell an operator about c, or "" when every
// master answered no.
func (c Coverage) Warning() string {
	var parts []string
	if len(c.Required) > 0 {
		parts = append(parts, fmt.Sprintf("cluster-require-full-coverage is yes on %s: one dead master stops every client "+
			"of the cluster until a replica takes over; set it to no (CONFIG SET cluster-require-full-coverage no on every "+
			"node, and in its redis.conf)", strings.Join(c.Required, ", ")))
	}
	if len(c.Unchecked) > 0 {
		parts = append(parts, fmt.Sprintf("cluster-require-full-coverage could not be checked on %s: "+
			"if it is yes (the default), one dead master stops every client of the cluster",
			strings.Join(c.Unchecked, ", ")))
	}
	return strings.Join(parts, "; ")
}

// CheckCoverage asks every master of the cluster c for
// cluster-require-full-coverage (CONFIG GET) and reports which require
// full coverage and which could not be asked. The error is c's failure to
// list the masters; a master that fails to answer is in
// [Coverage.Unchecked].
func CheckCoverage(ctx context.Context, c *redis.ClusterClient) (Coverage, error) {
	var mu sync.Mutex
	var cov Coverage
	err := c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		required, err := requiresFullCoverage(ctx, node)
		addr := node.Options().Addr
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			cov.Unchecked = append(cov.Unchecked, fmt.Sprintf("%s (%v)", addr, err))
		case required:
			cov.Required = append(cov.Required, addr)
		}
		return nil
	})
	slices.Sort(cov.Required)
	slices.Sort(cov.Unchecked)
	return cov, err
}

// requiresFullCoverage reads one node's cluster-require-full-coverage.
func requiresFullCoverage(ctx context.Context, node *redis.Client) (bool, error) {
	const name = "cluster-require-full-coverage"
	got, err := node.ConfigGet(ctx, name).Result()
	if err != nil {
		return false, err
	}
	v, ok := got[name]
	if !ok {
		return false, fmt.Errorf("CONFIG GET %s: no such setting", name)
	}
	return v == "yes", nil
}
