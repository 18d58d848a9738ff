package redisstore

import (
	"fmt"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// replyPerLimit is how many integers the script replies per limit:
// allowed, reason, remaining, reset_after (µs), retry_after (µs).
const replyPerLimit = 5

// appendDecisions appends the decision of every limit in reply to dst.
func appendDecisions(dst []core.Decision, limits []core.Limit, reply []any) ([]core.Decision, error) {
	if len(reply) != replyPerLimit*len(limits) {
		return dst, fmt.Errorf("script replied %d values for %d limits", len(reply), len(limits))
	}
	start := len(dst)
	var v [replyPerLimit]int64
	for i, l := range limits {
		for j := range v {
			n, ok := reply[replyPerLimit*i+j].(int64)
			if !ok {
				return dst[:start], fmt.Errorf("script reply %d is %T, not an integer", replyPerLimit*i+j, reply[replyPerLimit*i+j])
			}
			v[j] = n
		}
		dst = append(dst, core.Decision{
			Limit:      l,
			Allowed:    v[0] == 1,
			Reason:     core.Reason(v[1]),
			Remaining:  v[2],
			ResetAfter: time.Duration(v[3]) * time.Microsecond,
			RetryAfter: time.Duration(v[4]) * time.Microsecond,
		})
	}
	return dst, nil
}
