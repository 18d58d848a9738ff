package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
)

// unavailableReplies are the prefixes of Redis error replies that mean the
// server cannot run the script now but will again soon: a cluster without
// quorum or mid-failover, a server loading its dataset, a replica that lost
// its master, a write sent to a node that just became a replica, a server
// busy with another script, out of memory or refusing writes after a failed
// save, too many clients. HasErrorPrefix strips a leading "ERR ".
var unavailableReplies = [...]string{
	"CLUSTERDOWN ", "TRYAGAIN ", "LOADING ", "MASTERDOWN ", "READONLY ", "NOREPLICAS ",
	"BUSY ", "OOM ", "MISCONF ", "max number of clients reached",
}

// ErrCalendarSkew is wrapped by the error of a take of a
// [core.CalendarWindow] limit when Redis's clock falls outside the window
// boundaries the app computed around its own clock: the two clocks
// disagree by more than [core.CalendarSpan] windows (at least 46 hours for
// a day quota). The take charges nothing. It is not
// [core.ErrStoreUnavailable]: a clock that far off is a fault to fix, not
// an outage to fail open through: a [core.Limiter] returns the error to
// its caller (the middleware's error handler) instead of applying its
// failure mode.
var ErrCalendarSkew = errors.New("ratelimit: redisstore: redis clock outside the calendar boundaries")

// calendarSkewReply marks the script's error for [ErrCalendarSkew].
const calendarSkewReply = "ratelimit: calendar: "

// classify wraps err, an error of a take, with [core.ErrStoreUnavailable]
// when it means Redis cannot answer now (see unavailable), or with
// [ErrCalendarSkew]; any other error is returned as is, to be surfaced as
// a bug.
func classify(err error) error {
	if unavailable(err) {
		return fmt.Errorf("%w: %w", core.ErrStoreUnavailable, err)
	}
	var rerr redis.Error
	if errors.As(err, &rerr) && strings.Contains(rerr.Error(), calendarSkewReply) {
		return fmt.Errorf("%w: %w", ErrCalendarSkew, err)
	}
	return err
}

// connNotAvailable starts the plain errors go-redis returns for a pooled
// connection whose socket is gone (closed under it, or being handed off to
// a new endpoint): "redis: connection not available" and "... for write
// operation". They are transport failures, unexported by go-redis, so
// matched by text.
const connNotAvailable = "redis: connection not available"

// unavailable reports whether err means the store cannot answer now, as
// opposed to a bug: transport failures (timeouts, refused, reset or closed
// connections, EOF, a pool with no free connection, a closed client) and
// the replies of [unavailableReplies]. Script errors, WRONGTYPE, CROSSSLOT,
// NOSCRIPT (the store already fell back to EVAL), MOVED after the client's
// redirects, authentication and permission errors are bugs or
// misconfiguration: they must be seen, not failed open.
func unavailable(err error) bool {
	var rerr redis.Error
	switch {
	case err == nil:
		return false
	case errors.As(err, &rerr):
		return unavailableReply(rerr)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return true
	case errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrPoolExhausted), errors.Is(err, redis.ErrClosed):
		return true
	case strings.HasPrefix(err.Error(), connNotAvailable):
		return true
	}
	var nerr net.Error
	return errors.As(err, &nerr)
}

func unavailableReply(err redis.Error) bool {
	for _, prefix := range unavailableReplies {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	return false
}
