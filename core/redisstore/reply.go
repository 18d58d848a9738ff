package redisstore

import (
	"fmt"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// replyPerLimit is how many integers the script replies per limit:
// allowed, reason, remaining, reset_after (µs), retry_after (µs).
const replyPerLimit = 5

// reasons are the [core.Reason] of each reason code of a reply
// (docs/redis-protocol.md): 0 not denied, 1 exhausted, 2 cost too high, 3
// locked out.
var reasons = [...]core.Reason{core.NotDenied, core.Exhausted, core.CostTooHigh, core.LockedOut}

// appendDecisions appends the decision of every limit in reply to dst.
func appendDecisions(dst []core.Decision, limits []core.Limit, reply []int64) ([]core.Decision, error) {
	if len(reply) != replyPerLimit*len(limits) {
		return dst, fmt.Errorf("script replied %d values for %d limits", len(reply), len(limits))
	}
	for i, l := range limits {
		v := reply[replyPerLimit*i : replyPerLimit*(i+1)]
		if uint64(v[1]) >= uint64(len(reasons)) {
			return dst, fmt.Errorf("script replied reason %d for limit %d", v[1], i)
		}
		dst = append(dst, core.Decision{
			Limit:      l,
			Allowed:    v[0] == 1,
			Reason:     reasons[v[1]],
			Remaining:  v[2],
			ResetAfter: time.Duration(v[3]) * time.Microsecond,
			RetryAfter: time.Duration(v[4]) * time.Microsecond,
		})
	}
	return dst, nil
}
