package main

import (
	"fmt"
	"html"
	"slices"
	"strings"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// Layout in pixels. Everything is drawn in a fixed viewBox, so GitHub's
// markdown scales the picture to the page width and the text stays
// proportionate.
const (
	width  = 760
	height = 452
	left   = 64 // y-axis labels
	right  = 24
	plotW  = width - left - right

	barsTop    = 76 // panel 1: admitted per bucket
	barsBottom = 206
	moveTop    = 240 // panel 2: admitted in the moving window
	moveBottom = 350

	yMax = 2 * limitRate // both panels: twice the limit fits everything drawn

	bucket = 100 * time.Millisecond
	xFrom  = 500 * time.Millisecond
	xTo    = steadyTo
)

const (
	grey     = "#adb5bd"
	ink      = "#212529"
	faint    = "#868e96"
	limitRed = "#c92a2a"
)

// style is what distinguishes one algorithm's picture.
type style struct {
	file, title, colour string
	caption             [2]string // what to look at, in two lines
}

var styles = map[core.Algorithm]style{
	core.GCRA: {"gcra.svg", "GCRA", "#1f5fbf", [2]string{
		"Look at: after the burst, one request every 100 ms, evenly spaced: the rate, smoothly.",
		"The burst (capacity 10) rides on top, so a moving second may hold up to Burst + Rate."}},
	core.TokenBucket: {"token-bucket.svg", "Token bucket", "#2b8a3e", [2]string{
		"Look at: the same admissions as GCRA, request for request: one machine, stored as",
		"tokens and a refill time instead of a theoretical arrival time."}},
	core.FixedWindow: {"fixed-window.svg", "Fixed window", "#e8590c", [2]string{
		"Look at: 10 admitted just before the 1 s boundary and 10 more right after it, then",
		"nothing until the next window: twice the limit in one moving second, in bursts."}},
	core.SlidingWindow: {"sliding-window.svg", "Sliding window counter", "#7048e8", [2]string{
		"Look at: after 1 s it assumes the burst was spread evenly over the previous window, so",
		"it admits while the burst is still in the moving second (compare the sliding log)."}},
	core.SlidingLog: {"sliding-log.svg", "Sliding window log", "#c2255c", [2]string{
		"Look at: the moving-second count never passes 10, exactly; the room freed when the",
		"burst leaves the window (at 1.9 s) is taken at once, so admissions come in bursts."}},
}

// x maps an offset to a horizontal pixel.
func x(t time.Duration) float64 {
	return left + float64(t-xFrom)/float64(xTo-xFrom)*plotW
}

// y maps a count to a vertical pixel in the panel from top to bottom.
func y(v float64, top, bottom int) float64 {
	return float64(bottom) - v/yMax*float64(bottom-top)
}

// svg draws r: offered and admitted requests per 100 ms, then the number
// admitted in the moving window (t − 1 s, t] against the limit.
func svg(r run) string {
	st := styles[r.alg]
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="12" fill="%s">`+"\n",
		width, height, width, height, ink)
	fmt.Fprintf(&b, `<title>%s: admitted requests over time, 10 per second limit, client offering 3x after a burst</title>`+"\n", html.EscapeString(st.title))
	b.WriteString(`<rect width="100%" height="100%" fill="#ffffff"/>` + "\n")
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="16" font-weight="bold">%s <tspan font-weight="normal" font-size="13">· limit 10 per second (algorithm %s)</tspan></text>`+"\n",
		left, html.EscapeString(st.title), r.alg)
	fmt.Fprintf(&b, `<text x="%d" y="44" font-size="12" fill="%s">Offered: %d requests at 0.90 s, then %d per second from 1 s to 4 s. A real run of core/memstore.</text>`+"\n",
		left, faint, burstSize, steadyRate)

	windows(&b)
	bars(&b, r, st.colour)
	moving(&b, r, st.colour)
	timeAxis(&b)

	for i, line := range st.caption {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="13">%s</text>`+"\n", left, 404+18*i, html.EscapeString(line))
	}
	fmt.Fprintf(&b, `<text x="%d" y="442" font-size="12" fill="%s">Admitted %d of %d requests; the most admitted in any moving second: %d (limit %d).</text>`+"\n",
		left, faint, len(r.admitted), len(r.offered), maxMoving(r.admitted), limitRate)
	b.WriteString("</svg>\n")
	return b.String()
}

// windows draws the 1 s window boundaries across both panels.
func windows(b *strings.Builder) {
	for t := time.Second; t <= xTo; t += time.Second {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-dasharray="2 3"/>`+"\n",
			x(t), barsTop-6, x(t), moveBottom, faint)
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="11" fill="%s" text-anchor="middle">window boundary</text>`+"\n",
		x(time.Second), barsTop-10, faint)
}

// bars draws panel 1: per 100 ms bucket, the offered requests (grey) and
// the admitted ones (colour) in front.
func bars(b *strings.Builder, r run, colour string) {
	yAxis(b, barsTop, barsBottom, "per 100 ms")
	w := x(bucket) - x(0)
	for from := xFrom; from < xTo; from += bucket {
		offered := countIn(r.offered, from-1, from+bucket-1) // [from, from+bucket)
		admitted := countIn(r.admitted, from-1, from+bucket-1)
		bar(b, x(from)+1, w-2, offered, grey)
		bar(b, x(from)+3, w-6, admitted, colour)
	}
	legend(b, barsTop, []legendItem{{grey, "offered", false}, {colour, "admitted", false}})
}

func bar(b *strings.Builder, x0, w float64, n int, colour string) {
	if n == 0 {
		return
	}
	top := y(float64(n), barsTop, barsBottom)
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n",
		x0, top, w, barsBottom-top, colour)
}

// moving draws panel 2: the number admitted in (t − 1 s, t] as an exact
// step function (it changes only when a request is admitted or leaves the
// window), and the limit.
func moving(b *strings.Builder, r run, colour string) {
	yAxis(b, moveTop, moveBottom, "in the last 1 s")
	ly := y(limitRate, moveTop, moveBottom)
	fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="6 4"/>`+"\n",
		left, ly, left+plotW, ly, limitRed)

	var steps []time.Duration
	for _, t := range r.admitted {
		steps = append(steps, t, t+limitPeriod)
	}
	steps = append(steps, xFrom, xTo)
	slices.Sort(steps)
	steps = slices.Compact(steps)

	var path strings.Builder
	prev := -1.0
	for _, t := range steps {
		if t < xFrom || t > xTo {
			continue
		}
		v := y(float64(countIn(r.admitted, t-limitPeriod, t)), moveTop, moveBottom)
		switch {
		case prev < 0:
			fmt.Fprintf(&path, "M%.1f %.1f", x(t), v)
		default:
			fmt.Fprintf(&path, "H%.1f", x(t))
			if v != prev {
				fmt.Fprintf(&path, "V%.1f", v)
			}
		}
		prev = v
	}
	fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", path.String(), colour)
	legend(b, moveTop, []legendItem{{colour, "admitted in the moving second (t − 1 s, t]", true}, {limitRed, "limit: 10", true}})
}

// yAxis draws a panel's frame, its ticks every 5 requests and its label.
func yAxis(b *strings.Builder, top, bottom int, label string) {
	for v := 0; v <= yMax; v += 5 {
		py := y(float64(v), top, bottom)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e9ecef"/>`+"\n", left, py, left+plotW, py)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" font-size="11" fill="%s">%d</text>`+"\n", left-6, py+4, faint, v)
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s"/>`+"\n", left, top, left, bottom, ink)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s"/>`+"\n", left, bottom, left+plotW, bottom, ink)
	mid := (top + bottom) / 2
	fmt.Fprintf(b, `<text x="16" y="%d" text-anchor="middle" font-size="11" transform="rotate(-90 16 %d)">%s</text>`+"\n",
		mid, mid, html.EscapeString(label))
}

// timeAxis draws the shared time axis under panel 2.
func timeAxis(b *strings.Builder) {
	for t := xFrom; t <= xTo; t += 500 * time.Millisecond {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`+"\n", x(t), moveBottom, x(t), moveBottom+4, ink)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" font-size="11">%.1f</text>`+"\n", x(t), moveBottom+17, t.Seconds())
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-size="12">time (s)</text>`+"\n", left+plotW/2, moveBottom+34)
}

type legendItem struct {
	colour, label string
	line          bool
}

// legend draws items right-aligned at the top of a panel.
func legend(b *strings.Builder, top int, items []legendItem) {
	px := float64(left + plotW - 8)
	for _, it := range slices.Backward(items) {
		textW := 6.2 * float64(len([]rune(it.label)))
		px -= textW
		fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="11">%s</text>`+"\n", px, top+4, html.EscapeString(it.label))
		px -= 18
		if it.line {
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", px, top, px+14, top, it.colour)
		} else {
			fmt.Fprintf(b, `<rect x="%.1f" y="%d" width="12" height="10" fill="%s"/>`+"\n", px, top-6, it.colour)
		}
		px -= 14
	}
}
