package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ratelimitkit/ratelimit/core"
)

// ErrCalendarSkew is wrapped by the error of a take of a
// [core.CalendarWindow] limit when the database's clock falls outside the
// window boundaries the app computed around its own clock: the two clocks
// disagree by more than [core.CalendarSpan] windows. The take charges
// nothing. It is not [core.ErrStoreUnavailable]: a clock that far off is a
// fault to fix, not an outage to fail open through.
var ErrCalendarSkew = errors.New("ratelimit: pgstore: database clock outside the calendar boundaries")

// SQLSTATE codes the store tells apart.
const (
	codeCalendarSkew  = "RLCAL" // schema.sql raises it
	codeSerialization = "40001"
	codeDeadlock      = "40P01"
)

// unavailableCodes are SQLSTATE codes, or their two-character classes,
// that mean the database cannot answer now but will again: a connection
// exception (08), too many connections or out of memory or disk (53), an
// operator intervention such as a shutdown or a restart in progress or a
// statement cancelled by statement_timeout (57), a lock timeout (55P03), a
// failover that left the connection on a standby (25006, read-only
// transaction), and serialization failures and deadlocks (40) that
// persisted through the retries.
var unavailableCodes = map[string]bool{
	"08": true, "53": true, "57": true, "40": true, "55P03": true, "25006": true,
}

// classify wraps err, the error of a store call, with
// [core.ErrStoreUnavailable] when it means the database cannot answer now
// (see unavailable), or with [ErrCalendarSkew]; any other error (a
// missing function, a permission, a bug) is returned as is, to be seen
// rather than failed open.
func classify(err error) error {
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pgErr) && pgErr.Code == codeCalendarSkew:
		return fmt.Errorf("%w: %w", ErrCalendarSkew, err)
	case unavailable(err):
		return fmt.Errorf("%w: %w", core.ErrStoreUnavailable, err)
	}
	return err
}

// unavailable reports whether err means the database cannot answer now:
// a transport failure (refused, reset, timed out, EOF, a closed pool, a
// connection that could not be made), a context that ended (the
// limiter's deadline), or a server error of unavailableCodes.
func unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return unavailableCodes[pgErr.Code] || unavailableCodes[pgErr.Code[:2]]
	}
	var connErr *pgconn.ConnectError
	var nerr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return true
	case errors.As(err, &connErr), errors.As(err, &nerr), pgconn.Timeout(err):
		return true
	case err.Error() == "closed pool":
		return true
	}
	return false
}

// retryable reports whether a take that failed with err charged nothing
// for certain and may be sent again: the server rolled it back
// (serialization failure, deadlock), or it never reached the server
// (pgconn.SafeToRetry: a dead pooled connection after a restart). A
// transport failure after the call was sent is not: the server may have
// committed it, and a second call would charge twice.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == codeSerialization || pgErr.Code == codeDeadlock
	}
	return pgconn.SafeToRetry(err)
}
