package redisstore

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
)

// clientSettings are the settings of a go-redis client that decide whether
// a take keeps to its budget.
type clientSettings struct {
	contextTimeout bool
	maxRetries     int // after go-redis defaults: 0 means none
	readTimeout    time.Duration
	writeTimeout   time.Duration
	// redirects is how often a cluster client resends a command that
	// failed, whatever MaxRetries says (MaxRedirects); 0 otherwise.
	redirects int
}

// CheckClient reports, one sentence each, the settings of client that can
// make a [Store] call outlive budget (the limiter's timeout; 0 means
// [core.DefaultTimeout]) or charge a request twice; nil means none. It
// inspects *redis.Client (also failover clients), *redis.ClusterClient and
// *redis.Ring; other clients are not checked. [SafeOptions] and its
// siblings build clients it finds nothing wrong with for any budget up to
// [BackstopTimeout]. [New] logs what it finds for [core.DefaultTimeout],
// once; it never rejects a client for it. With a longer [core.WithTimeout],
// call CheckClient with it.
func CheckClient(client redis.Scripter, budget time.Duration) []string {
	s, ok := settingsOf(client)
	if !ok {
		return nil
	}
	if budget <= 0 {
		budget = core.DefaultTimeout
	}
	var problems []string
	if !s.contextTimeout {
		if longer(s.readTimeout, budget) || longer(s.writeTimeout, budget) {
			problems = append(problems, fmt.Sprintf(
				"ContextTimeoutEnabled is false: reads and writes ignore the %s decision deadline and a slow server holds each decision up to ReadTimeout %s / WriteTimeout %s",
				budget, timeout(s.readTimeout), timeout(s.writeTimeout)))
		}
	}
	if p := resendRisk(s, budget); p != "" {
		problems = append(problems, p)
	}
	if s.maxRetries > 0 {
		problems = append(problems, fmt.Sprintf(
			"MaxRetries is %d: go-redis may resend a script that already ran, charging a request twice; set MaxRetries to -1",
			s.maxRetries))
	}
	return problems
}

// settingsOf reads the settings of the clients go-redis ships, after their
// defaults were applied (a client's Options are normalized by its
// constructor: MaxRetries -1 reads as 0, 0 as 3).
func settingsOf(client redis.Scripter) (clientSettings, bool) {
	switch c := client.(type) {
	case *redis.Client:
		o := c.Options()
		return clientSettings{o.ContextTimeoutEnabled, o.MaxRetries, o.ReadTimeout, o.WriteTimeout, 0}, true
	case *redis.ClusterClient:
		o := c.Options()
		// Node clients get MaxRetries from these options; -1 means none.
		return clientSettings{o.ContextTimeoutEnabled, o.MaxRetries, o.ReadTimeout, o.WriteTimeout, o.MaxRedirects}, true
	case *redis.Ring:
		o := c.Options()
		return clientSettings{o.ContextTimeoutEnabled, o.MaxRetries, o.ReadTimeout, o.WriteTimeout, 0}, true
	}
	return clientSettings{}, false
}

// longer reports whether a socket timeout d (0 or negative: none) lets a
// call run past budget.
func longer(d, budget time.Duration) bool { return d <= 0 || d > budget }

func timeout(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return d.String()
}

// resendRisk describes how a cluster client with settings s may resend a
// script that ran, charging a request twice, under budget; "" when it
// cannot.
func resendRisk(s clientSettings, budget time.Duration) string {
	if s.redirects == 0 || s.readTimeout <= 0 || s.readTimeout >= budget {
		return ""
	}
	return fmt.Sprintf("ReadTimeout %s is shorter than the %s budget: a slow reply times out early and the cluster client resends the script (MaxRedirects %d), which can charge a request twice",
		s.readTimeout, budget, s.redirects)
}

// CheckTimeout is the CheckTimeout of the store's [core.Capabilities]: it
// fails when a decision
// budget of d could make the client charge a request twice (a cluster
// client whose ReadTimeout is shorter than d), so [core.NewLimiter] refuses
// a [core.WithTimeout] the client cannot keep. The safe clients
// ([NewClusterClient]) keep any budget up to [BackstopTimeout]. Risks that
// cost latency but not exactness are only logged, by [New].
func (s *Store) CheckTimeout(d time.Duration) error {
	settings, ok := settingsOf(s.client)
	if !ok {
		return nil
	}
	if p := resendRisk(settings, d); p != "" {
		return fmt.Errorf("redisstore: %s; build the client with longer socket timeouts", p)
	}
	return nil
}
