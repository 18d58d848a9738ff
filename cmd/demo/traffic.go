package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// A client sends one kind of request at a steady rate.
type client struct {
	ip, apiKey string
	method     string
	path, body string
	perSecond  int
}

// A group is one row of the report: one or more clients counted together.
type group struct {
	name    string
	clients []client
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
	guess := url.Values{"account": {"alice"}, "password": {"letmein"}}.Encode()
	return []group{
		{"free user, no key, 8/s", []client{hello("198.51.100.10", "", 8)}},
		{"pro user (pro-demo-key), 150/s", []client{hello("198.51.100.20", "pro-demo-key", 150)}},
		{"scraper, no key, 200/s", []client{hello("198.51.100.66", "", 200)}},
		{"brute-forcer on alice, 4/s", []client{{ip: "198.51.100.99", method: http.MethodPost, path: "/login", body: guess, perSecond: 4}}},
		{"3 users behind one NAT, no keys, 3x20/s", nat(false)},
		{"3 users behind one NAT, own keys, 3x20/s", nat(true)},
		{"webhook sender github, 60/s", []client{{ip: "192.0.2.77", method: http.MethodPost, path: "/webhooks/github", perSecond: 60}}},
	}
}

// tally counts the responses of one group.
type tally struct {
	mu      sync.Mutex
	allowed []int // per second
	limited []int
	samples map[int]sample // first response per status
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
	if _, ok := t.samples[resp.StatusCode]; !ok {
		t.samples[resp.StatusCode] = sample{status: resp.StatusCode, headers: resp.Header, body: body}
	}
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
		tallies[i] = &tally{allowed: make([]int, secs), limited: make([]int, secs), samples: map[int]sample{}}
		for _, c := range g.clients {
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
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp, strings.TrimSpace(string(body)), nil
}
