package recipes

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// MaxWebhookBody is the largest delivery the handler accepts; the cost
// function reads no more.
const MaxWebhookBody = 1 << 20

// Webhooks returns the middleware of POST /webhooks/{source}: per sender,
// 10 events a second on average, with room for a backlog of 5,000 at once.
// A delivery costs the number of events it carries.
//
// Mount it behind the handler's signature check, so a forger cannot spend
// a real sender's quota: verify(limit(handler)).
func Webhooks(store core.Store) (func(http.Handler) http.Handler, error) {
	// GCRA: the burst (a sender flushing its queue after an outage) is set
	// apart from the sustained rate. A window algorithm caps both at Rate.
	events := core.PerSecond(10).WithBurst(5_000).WithName("events")
	limiter, err := core.NewLimiter(store, core.WithPrefix("rl:hook"), core.WithLimits(events))
	if err != nil {
		return nil, err
	}
	return ratelimithttp.New(limiter,
		httplimit.WithKey(keyfunc.PathValue("source")), // or keyfunc.Header("X-Sender-Id")
		httplimit.WithCostFunc(eventCount),
	), nil
}

// eventCount is the cost of a delivery whose body is a JSON array of events
// (SendGrid, Segment and others batch this way): its length, or 1 for any
// other body, which the handler rejects. It puts the body back for the
// handler.
func eventCount(r *http.Request) int64 {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxWebhookBody))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	var events []json.RawMessage
	if err != nil || json.Unmarshal(body, &events) != nil || len(events) == 0 {
		return 1
	}
	return int64(len(events))
}
