package main

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Number formats of the report: three significant digits are more than
// a shared machine's noise allows.

func fmtRate(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func fmtRatio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "—"
	}
	return fmt.Sprintf("%.2f×", x)
}

func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Microsecond:
		return fmt.Sprintf("%d ns", d.Nanoseconds())
	case d < time.Millisecond:
		return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// fmtNum prints small per-check costs (µs, commands, bytes).
func fmtNum(x float64) string {
	switch {
	case math.IsNaN(x):
		return "—"
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

func fmtPct(x float64) string {
	switch {
	case math.IsNaN(x):
		return "—"
	case x == 0:
		return "0"
	case x < 0.001:
		return "<0.1%"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// groupDigits writes n with thousands separators: 10,000.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// fmtSigned is fmtDur for a difference, with its sign.
func fmtSigned(d time.Duration) string {
	switch {
	case d < 0:
		return "−" + fmtDur(-d)
	case d == 0:
		return "0"
	}
	return "+" + fmtDur(d)
}

// fmtRateCell is a summary table cell: checks/s and the ratio.
func fmtRateCell(perSecond, x float64) string {
	if math.IsNaN(perSecond) {
		return "—"
	}
	return fmt.Sprintf("%s/s (%s)", fmtRate(perSecond), fmtRatio(x))
}
