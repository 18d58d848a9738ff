package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// A barChart is a horizontal grouped bar chart, written as plain SVG so
// the suite needs no plotting dependency: one group per load shape (or a
// single group), one bar per contender, the value printed at its end.
type barChart struct {
	title  string
	series []string        // bar order within a group, and colour
	ours   map[string]bool // drawn with bold labels
	groups []barGroup
	format func(float64) string
	ref    float64 // draws a dashed line at this value when > 0 (100% for accuracy)
}

type barGroup struct {
	label  string
	values map[string]float64 // NaN or missing: no bar
}

// Layout in pixels.
const (
	svgWidth   = 860
	labelWidth = 300
	barArea    = 440
	barHeight  = 14
	barGap     = 3
	groupHead  = 22
	groupGap   = 10
	titleSpace = 34
)

// palette: distinguishable colours, ours first.
var palette = []string{"#1f5fbf", "#4f9be8", "#8fc1f2", "#2b8a3e", "#e8590c", "#c2255c",
	"#7048e8", "#a0732b", "#495057", "#f08c00", "#0c8599", "#868e96", "#5c940d", "#d6336c", "#364fc7", "#e67700"}

func (c barChart) svg() string {
	var b strings.Builder
	height := titleSpace
	for _, g := range c.groups {
		height += groupHead + c.barsIn(g)*(barHeight+barGap) + groupGap
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n",
		svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="8" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", html.EscapeString(c.title))
	scale := c.scale()
	y := titleSpace
	for _, g := range c.groups {
		y = c.group(&b, g, y, scale)
	}
	if c.ref > 0 {
		x := labelWidth + c.ref*scale
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c92a2a" stroke-dasharray="4 3"/>`+"\n",
			x, titleSpace-6, x, height-4)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// barsIn counts the bars group g draws.
func (c barChart) barsIn(g barGroup) int {
	n := 0
	for _, s := range c.series {
		if v, ok := g.values[s]; ok && !math.IsNaN(v) {
			n++
		}
	}
	return n
}

// scale is pixels per unit: the longest bar (or the reference line) fills
// the bar area.
func (c barChart) scale() float64 {
	top := c.ref
	for _, g := range c.groups {
		for _, v := range g.values {
			if !math.IsNaN(v) {
				top = math.Max(top, v)
			}
		}
	}
	if top <= 0 {
		return 0
	}
	return barArea / top
}

// group draws one group's heading and bars from y down and returns the y
// after it.
func (c barChart) group(b *strings.Builder, g barGroup, y int, scale float64) int {
	fmt.Fprintf(b, `<text x="8" y="%d" font-weight="bold" fill="#343a40">%s</text>`+"\n", y+14, html.EscapeString(g.label))
	y += groupHead
	for i, s := range c.series {
		v, ok := g.values[s]
		if !ok || math.IsNaN(v) {
			continue
		}
		weight := "normal"
		if c.ours[s] {
			weight = "bold"
		}
		w := math.Max(v*scale, 1)
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end" font-weight="%s">%s</text>`+"\n",
			labelWidth-6, y+barHeight-3, weight, html.EscapeString(s))
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n",
			labelWidth, y, w, barHeight, palette[i%len(palette)])
		fmt.Fprintf(b, `<text x="%.1f" y="%d" fill="#212529">%s</text>`+"\n",
			float64(labelWidth)+w+4, y+barHeight-3, html.EscapeString(c.format(v)))
		y += barHeight + barGap
	}
	return y + groupGap
}
