package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// A topClient is one line of audit --top.
type topClient struct {
	head string // "<prefix>:{<tag>}"
	*clientCount
}

// top returns the n clients with the most keys; of clients with as many,
// those whose state lives longest first (a client deep into a GCRA or token
// bucket quota has a long TTL: its keys expire when it is back at full
// quota), then by name.
func (r *report) top(n int) []topClient {
	all := make([]topClient, 0, len(r.clients))
	for head, cc := range r.clients {
		all = append(all, topClient{head, cc})
	}
	slices.SortFunc(all, func(a, b topClient) int {
		switch {
		case a.keys != b.keys:
			return cmp.Compare(b.keys, a.keys)
		case longerTTL(a.maxTTL, b.maxTTL):
			return -1
		case longerTTL(b.maxTTL, a.maxTTL):
			return 1
		}
		return strings.Compare(a.head, b.head)
	})
	return all[:min(n, len(all))]
}

// printTop writes the n busiest clients, with what inspect and reset need:
// the prefix and the tag.
func (r *report) printTop(w io.Writer, n int) {
	top := r.top(n)
	fmt.Fprintf(w, "top %d clients by keys, then longest TTL (of %d):\n", len(top), len(r.clients))
	if len(top) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  KEYS\tLONGEST TTL\tCLIENT\tLIMITS")
	for _, c := range top {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\n", c.keys, fmtTTL(c.maxTTL), c.head,
			strings.Join(slices.Sorted(maps.Keys(c.limits)), ", "))
	}
	_ = tw.Flush()
	// Prefixes and tags have no quotes or spaces: single quotes suffice.
	fmt.Fprintf(w, "  (CLIENT is PREFIX:{TAG}; inspect the first with: ratelimit inspect --prefix '%s' --tag '%s')\n", top[0].prefix, top[0].tag)
}

// longerTTL reports whether the TTL a is longer than b; -1 (no TTL) is the
// longest.
func longerTTL(a, b time.Duration) bool {
	switch {
	case b == -1:
		return false
	case a == -1:
		return true
	}
	return a > b
}
