package main

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// report prints to out the per-second table of groups, whose tallies
// drive returned, and their sample responses.
func report(out io.Writer, groups []group, tallies []*tally, secs int) {
	fmt.Fprintln(out, "Each cell: allowed/limited (429) requests in that second.")
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
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
	for _, t := range tallies {
		if t.did != "" {
			fmt.Fprintln(out, "  "+t.did)
		}
	}

	fmt.Fprintln(out, "\nSample responses:")
	for i, g := range groups {
		for _, s := range g.samples {
			if sm, ok := tallies[i].samples[s.key()]; ok {
				printSample(out, s.what, sm)
			}
		}
	}
}

func printSample(out io.Writer, what string, sm sample) {
	fmt.Fprintf(out, "\n  %s: HTTP %d\n", what, sm.status)
	for _, h := range []string{"RateLimit-Policy", "RateLimit", "Retry-After", "Content-Type"} {
		if v := sm.headers.Get(h); v != "" {
			fmt.Fprintf(out, "    %s: %s\n", h, v)
		}
	}
	if sm.status != 200 {
		fmt.Fprintf(out, "    %s\n", sm.body)
	}
}
