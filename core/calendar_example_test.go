package core_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// 10,000 requests per calendar month, resetting at midnight in Madrid. At
// 23:00 CEST on 31 March an hour of the month is left: the RateLimit
// header's t counts to that real boundary, while RateLimit-Policy reports
// the nominal month of 30 days (w=2592000).
func ExamplePerCalendarMonth() {
	madrid, err := time.LoadLocation("Europe/Madrid")
	if err != nil {
		panic(err)
	}
	now := time.Date(2025, time.March, 31, 21, 0, 0, 0, time.UTC)
	store, err := memstore.New(memstore.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	limiter := core.MustNewLimiter(store, core.WithLimits(core.PerCalendarMonth(10_000, madrid)))
	res, err := limiter.Allow(context.Background(), "customer-42")
	if err != nil {
		panic(err)
	}
	h := make(http.Header)
	httplimit.SetHeaders(h, res, httplimit.HeadersIETF, now)
	fmt.Println("RateLimit-Policy:", h.Get("RateLimit-Policy"))
	fmt.Println("RateLimit:", h.Get("RateLimit"))
	// Output:
	// RateLimit-Policy: "10000-per-month-Europe.Madrid";q=10000;w=2592000
	// RateLimit: "10000-per-month-Europe.Madrid";r=9999;t=3600
}

// A day quota in New York: the window of 2 November 2025 lasts 25 hours,
// as the clocks go back at 02:00 EDT.
func ExampleCalendar_Window() {
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	day := core.PerCalendarDay(100, newYork)
	start, end := day.Calendar.Window(time.Date(2025, time.November, 2, 12, 0, 0, 0, time.UTC))
	fmt.Println(start.In(newYork), "to", end.In(newYork), "=", end.Sub(start))
	// Output:
	// 2025-11-02 00:00:00 -0400 EDT to 2025-11-03 00:00:00 -0500 EST = 25h0m0s
}
