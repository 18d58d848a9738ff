package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// A client sends one kind of request at a steady rate, or atOnce
// requests together at the start.
type client struct {
	ip, apiKey string
	method     string
	path, body string
	perSecond  int
	atOnce     int
}

// A group is one row of the report: one or more clients counted together,
// and the responses shown as samples.
type group struct {
	name    string
	clients []client
	samples []shown
	// action, when set, runs at the time at into the run: an operator's
	// change made while the clients keep sending.
	action *action
}

// An action is a change made during the run; the report says when.
type action struct {
	at   time.Duration
	what string
	do   func(ctx context.Context) error
}

// shown is a sample the report prints: the group's first response of
// status, and of problem type kind ("locked-out") when kind is set.
type shown struct {
	status int
	kind   string
	what   string
}

// key is the tally's key of the sample.
func (s shown) key() string { return sampleKey(s.status, s.kind) }

func sampleKey(status int, kind string) string { return fmt.Sprintf("%d%s", status, kind) }

// problemKind returns the fragment of the problem type of a denial's body
// ("locked-out", "blocked"), or "".
func problemKind(body string) string {
	var p struct {
		Type string `json:"type"`
	}
	if json.Unmarshal([]byte(body), &p) != nil {
		return ""
	}
	_, frag, _ := strings.Cut(p.Type, "#")
	return frag
}

func scenario() []group {
	hello := func(ip, key string, perSecond int) client {
		return client{ip: ip, apiKey: key, method: http.MethodGet, path: "/api/hello", perSecond: perSecond}
	}
	nat := func(withKeys bool) []client {
		var cs []client
		for i := 1; i <= 3; i++ {
			key := ""
			if withKeys {
				key = "free-demo-key-" + string(rune('0'+i))
			}
			cs = append(cs, hello("203.0.113.50", key, 20))
		}
		return cs
	}
	guess := `{"account": "alice", "password": "letmein"}`
	return []group{
		{name: "free user, no key, 8/s", clients: []client{hello("198.51.100.10", "", 8)},
			samples: []shown{{200, "", "free user, allowed"}}},
		{name: "pro user (pro-demo-key), 150/s", clients: []client{hello("198.51.100.20", "pro-demo-key", 150)}},
		{name: "scraper, no key, 200/s", clients: []client{hello("198.51.100.66", "", 200)},
			samples: []shown{{429, "", "scraper, first 429"}}},
		{name: "brute-forcer on alice, 4/s", clients: []client{{ip: "198.51.100.99", method: http.MethodPost, path: "/login", body: guess, perSecond: 4}},
			samples: []shown{{429, "", "brute-forcer, first 429 (5 failed logins per minute per account and IP)"},
				{429, "locked-out", "brute-forcer, locked out (10 denials within a minute: 30s, doubling)"}}},
		{name: "3 users behind one NAT, no keys, 3x20/s", clients: nat(false)},
		{name: "3 users behind one NAT, own keys, 3x20/s", clients: nat(true)},
		{name: "webhook sender github, 60/s", clients: []client{{ip: "192.0.2.77", method: http.MethodPost, path: "/webhooks/github", perSecond: 60}},
			samples: []shown{{429, "", "webhook sender, first 429 (sliding window)"}}},
		exporter(),
	}
}

// withLive adds to groups the rows whose scenario changes during a run of
// d: a client whose limit an operator raises halfway, through api.
func withLive(groups []group, d time.Duration, api overrider, identity func(ip string) string) []group {
	return append(groups, raised(d/2, api, identity))
}

// An overrider sets a client's own limits: the API's core.Limiter.
type overrider interface {
	SetOverride(ctx context.Context, identity string, o core.Override) error
}

// raisedIP is the client whose limit is raised during the run.
const raisedIP = "198.51.100.30"

// raised is the group of one free client sending 80/s, past its tier's
// 10/s (burst 100), whose burst limit an operator raises to 100/s at at,
// with SetOverride: it is denied, then admitted at its full rate.
func raised(at time.Duration, api overrider, identity func(ip string) string) group {
	o := core.Override{Limits: []core.Limit{core.PerSecond(100).WithBurst(1000).WithName("burst")},
		Until: time.Now().Add(10 * time.Minute), Reason: "demo: a customer's limit raised live"}
	return group{name: fmt.Sprintf("free user, no key, 80/s, raised to 100/s at %s", at),
		clients: []client{{ip: raisedIP, method: http.MethodGet, path: "/api/hello", perSecond: 80}},
		action: &action{at: at, what: "override: burst 100/s (burst 1000) for " + raisedIP + ", by Limiter.SetOverride",
			do: func(ctx context.Context) error { return api.SetOverride(ctx, identity(raisedIP), o) }},
		samples: []shown{{429, "", "raised user, first 429 (before the override)"}}}
}

// exporter is the group of one client asking for 5 exports at once, of
// which 2 may run together: 2 pass, 3 get 429 (each export takes 300 ms,
// far longer than sending the 5).
func exporter() group {
	return group{name: "exporter, 5 exports at once (2 in flight)",
		clients: []client{{ip: "192.0.2.88", method: http.MethodGet, path: "/api/export", atOnce: 5}},
		samples: []shown{{429, "", "exporter, first 429 (at most 2 exports in flight per client)"}}}
}

// tally counts the responses of one group.
type tally struct {
	mu      sync.Mutex
	allowed []int // per second
	limited []int
	samples map[string]sample // first response per status, and per status and problem type
	did     string            // what the group's action did, or its error
}

type sample struct {
	status  int
	headers http.Header
	body    string
}

func (t *tally) add(sec int, resp *http.Response, body string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if sec >= len(t.allowed) {
		return
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		t.limited[sec]++
	} else {
		t.allowed[sec]++
	}
	sm := sample{status: resp.StatusCode, headers: resp.Header, body: body}
	for _, key := range []string{sampleKey(resp.StatusCode, ""), sampleKey(resp.StatusCode, problemKind(body))} {
		if _, ok := t.samples[key]; !ok {
			t.samples[key] = sm
		}
	}
}

// run runs a at its time into the run that started at start.
func (a *action) run(ctx context.Context, start time.Time, t *tally) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Until(start.Add(a.at))):
	}
	did := fmt.Sprintf("at %s: %s", a.at, a.what)
	if err := a.do(ctx); err != nil {
		did += ": failed: " + err.Error()
	}
	t.mu.Lock()
	t.did = did
	t.mu.Unlock()
}

// drive runs every client of every group for d and returns one tally per
// group.
func drive(ctx context.Context, base string, d time.Duration, groups []group) []*tally {
	secs := int(d / time.Second)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer hc.CloseIdleConnections()
	tallies := make([]*tally, len(groups))
	start := time.Now()
	var wg sync.WaitGroup
	for i, g := range groups {
		tallies[i] = &tally{allowed: make([]int, secs), limited: make([]int, secs), samples: map[string]sample{}}
		if g.action != nil {
			wg.Go(func() { g.action.run(ctx, start, tallies[i]) })
		}
		for _, c := range g.clients {
			if c.atOnce > 0 {
				for range c.atOnce {
					wg.Go(func() { c.once(ctx, hc, base, tallies[i]) })
				}
				continue
			}
			wg.Go(func() { c.run(ctx, hc, base, start, d, tallies[i]) })
		}
	}
	wg.Wait()
	return tallies
}

// run sends c's requests on a fixed schedule (not back to back), so the
// rates are those of the scenario whatever the latency.
func (c client) run(ctx context.Context, hc *http.Client, base string, start time.Time, d time.Duration, t *tally) {
	interval := time.Second / time.Duration(c.perSecond)
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * interval)
		if at.Sub(start) >= d {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(at)):
		}
		resp, body, err := c.send(ctx, hc, base)
		if err != nil {
			continue
		}
		t.add(int(at.Sub(start)/time.Second), resp, body)
	}
}

// once sends one request of c at once, counted in the first second.
func (c client) once(ctx context.Context, hc *http.Client, base string, t *tally) {
	if resp, body, err := c.send(ctx, hc, base); err == nil {
		t.add(0, resp, body)
	}
}

func (c client) send(ctx context.Context, hc *http.Client, base string) (*http.Response, string, error) {
	req, err := http.NewRequestWithContext(ctx, c.method, base+c.path, strings.NewReader(c.body))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("X-Forwarded-For", c.ip)
	if c.apiKey != "" {
		req.Header.Set("X-API-Key", c.apiKey)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp, strings.TrimSpace(string(body)), nil
}
