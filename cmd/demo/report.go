package main

import (
	"fmt"
	"os"
	"text/tabwriter"
)

// report prints the per-second table and sample responses.
func report(tallies []*tally, secs int) {
	groups := scenario()
	fmt.Println("Each cell: allowed/limited (429) requests in that second.")
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(w, "client\t")
	for s := 1; s <= secs; s++ {
		fmt.Fprintf(w, "%ds\t", s)
	}
	fmt.Fprintln(w, "total\t")
	for i, t := range tallies {
		fmt.Fprintf(w, "%s\t", groups[i].name)
		allowed, limited := 0, 0
		for s := range secs {
			fmt.Fprintf(w, "%d/%d\t", t.allowed[s], t.limited[s])
			allowed += t.allowed[s]
			limited += t.limited[s]
		}
		fmt.Fprintf(w, "%d/%d\t\n", allowed, limited)
	}
	_ = w.Flush()

	fmt.Println("\nSample responses:")
	show := []struct {
		group  int
		status int
		what   string
	}{
		{0, 200, "free user, allowed"},
		{2, 429, "scraper, first 429"},
		{3, 429, "brute-forcer, first 429 (5 failed logins per minute per account and IP)"},
		{6, 429, "webhook sender, first 429 (sliding window)"},
	}
	for _, s := range show {
		sm, ok := tallies[s.group].samples[s.status]
		if !ok {
			continue
		}
		fmt.Printf("\n  %s: HTTP %d\n", s.what, sm.status)
		for _, h := range []string{"RateLimit-Policy", "RateLimit", "Retry-After", "Content-Type"} {
			if v := sm.headers.Get(h); v != "" {
				fmt.Printf("    %s: %s\n", h, v)
			}
		}
		if s.status != 200 {
			fmt.Printf("    %s\n", sm.body)
		}
	}
}
