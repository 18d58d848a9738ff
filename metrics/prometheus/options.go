package ratelimitprom

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// An Option configures a [Collector] at construction ([New]).
type Option func(*config) error

// Defaults of [New].
const (
	// DefaultMaxRoutes is how many distinct routes get a label value of
	// their own ([WithMaxRoutes]).
	DefaultMaxRoutes = 200
)

// DefaultBuckets are the upper bounds, in seconds, of the store latency
// histogram: 0.1 ms to 100 ms, the range between a local Redis and twice
// the default store timeout ([core.DefaultTimeout]).
var DefaultBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1}

type config struct {
	maxRoutes   int
	buckets     []float64
	constLabels prometheus.Labels
}

// WithMaxRoutes caps the distinct values of the route label at n (default
// [DefaultMaxRoutes]): the first n routes seen keep their name, later ones
// are counted under [OverflowRoute]. The cap guards the metrics against a
// route label fed with raw paths instead of route templates.
func WithMaxRoutes(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("ratelimit: prometheus: WithMaxRoutes must be positive, got %d", n)
		}
		c.maxRoutes = n
		return nil
	}
}

// WithBuckets sets the upper bounds, in seconds, of the store latency
// histogram (default [DefaultBuckets]); they must be increasing.
func WithBuckets(bounds ...float64) Option {
	return func(c *config) error {
		if len(bounds) == 0 {
			return fmt.Errorf("ratelimit: prometheus: WithBuckets needs at least one bound")
		}
		for i := 1; i < len(bounds); i++ {
			if bounds[i] <= bounds[i-1] {
				return fmt.Errorf("ratelimit: prometheus: WithBuckets bounds must increase, got %v", bounds)
			}
		}
		c.buckets = append([]float64(nil), bounds...)
		return nil
	}
}

// WithConstLabels adds labels with fixed values to every metric, to tell
// apart the collectors of several limiters registered together
// (for example {"limiter": "login"}).
func WithConstLabels(labels prometheus.Labels) Option {
	return func(c *config) error {
		c.constLabels = labels
		return nil
	}
}
