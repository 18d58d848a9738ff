// Package storetest is the conformance suite of [core.Store]: one set of
// tests that any store must pass, the way testing/slogtest checks any
// slog.Handler. core/memstore and core/redisstore run it; so should any
// other store.
//
// A store's tests call [Run] with a constructor that hands the store the
// suite's clock, [RunConcurrency] with one that returns several stores
// sharing one state, and [RunDifferential] with a reference store
// (core/memstore) beside their own:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, now func() time.Time) core.Store {
//			s, err := memstore.New(memstore.WithClock(now))
//			require.NoError(t, err)
//			return s
//		})
//	}
//
//	func TestConformanceConcurrency(t *testing.T) {
//		storetest.RunConcurrency(t, func(t *testing.T, now func() time.Time, n int) []core.Store {
//			s, err := memstore.New(memstore.WithClock(now))
//			require.NoError(t, err)
//			return slices.Repeat([]core.Store{s}, n) // one state, n handles
//		})
//	}
//
//	func TestConformanceDifferential(t *testing.T) {
//		storetest.RunDifferential(t, newMemstore, newMyStore) // same takes, same answers
//	}
//
// Stores may share a server: every subtest uses keys of its own prefix
// ([UniqueKeyBuilder]), so the suite runs in any order (go test
// -shuffle=on). Time comes only from the clock handed to the constructor,
// a [Clock] starting at [Start], so no test sleeps.
//
// # What Run checks
//
// Tables of takes for every algorithm, each decision (Allowed, Reason,
// Remaining, ResetAfter, RetryAfter, and the Limit it belongs to) worked
// out by hand from docs/algorithms.md, with the arithmetic beside the
// rows: burst exhaustion; refill, including fractional intervals (3 per
// second, one every 3 minutes, 0.5 per second) and the 0.5µs tolerance;
// window edges exactly on a boundary and 1µs before; the fixed window's
// 2 × Rate across a boundary and its alignment to midnight UTC; the
// sliding counter's weighted estimate and both of its RetryAfter cases;
// the sliding log's RetryAfter from the k-th oldest entry; costs above 1,
// peeks (cost 0) and costs above the capacity (CostTooHigh, nothing
// charged); calendar windows (days of 23 and 25 hours across DST in
// Madrid and New York, month ends in leap and common years, ISO weeks
// across a year end, a clock going back across local midnight, a calendar
// day beside a bucket); multi-limit takes, which are all-or-nothing; and
// lockouts ([core.Lockout]): the After-th denial within Within locks the
// client out and reports LockedOut, denials while locked out, peeks,
// costs above the capacity and another limit's denials are not counted,
// each lockout within the cool-down lasts Multiplier times longer up to
// Max, the end of the cool-down brings the level back to 1, and a lockout
// beside other limits (a calendar day among them) leaves them peeked.
// Calendar cases need the system's time zone database. After every
// step the suite also checks that a denied take changed nothing (the same
// take again gets the same decision) and that a peek at the same instant
// reports the same quota.
//
// Beyond the tables: GCRA and the token bucket give identical decisions
// on random sequences of 2,000 takes (the seed is printed on failure and
// replayed with [SeedEnv]); a clock stepped back, within a window or
// across a boundary, brings no quota back, and tables pin every field of
// the decisions after a step back (each key computes at its own time, the
// waits are measured from the reading); a clock in 1970, before the
// stores' epoch, runs like any other; hostile identities (braces, control
// bytes, unicode, 10 KB, composite identities) are independent clients;
// and Take appends to its dst argument.
//
// For a store that holds leases (a [core.Leaser] whose
// [core.Capabilities] state Leases), tables of [core.Concurrency] limits:
// acquire up to N, N+1 denied, release, release twice, release of
// a lease never taken, an abandoned lease expiring at exactly its TTL,
// renew (and no renewal of an expired lease), any cost taking one lease,
// and a concurrency limit beside a rate limit, all or nothing both ways;
// [core.Store.Take] refusing a concurrency limit with a cost above zero. A
// store that holds no leases skips them, saying so. [RunConcurrency] then runs
// requests through a [core.Limiter] per store and checks that no client is
// ever seen with more than N in flight.
//
// For a store that keeps controls (a [core.ControlStore]), cases with the
// suite's clock: records set and read back in full and incrementally (only
// the clients changed since, each once, with its record now), deleted,
// touched; one generation per write, starting at the store's clock in µs
// for a new space; expiry at exactly the record's instant, and the purge of
// expired records by the next write, logged under its generation; an
// expiry cut to [core.MaxControlAge]; a full read when since is 0, when the
// log of [core.ControlLogLen] changes no longer reaches since, and when
// since is above the store's generation (the store lost its data);
// independent spaces; bad spaces, ids and values refused with an error
// naming them; [core.ControlStore.DeleteKeys] deleting one client's keys of
// three algorithms, counting those that held state, and refusing keys of
// several clients. [RunConcurrency] then has 32 goroutines on two stores
// set, delete and touch controls while a reader per store follows the
// changes: every write gets a generation of its own, none skipped, the
// full read holds each client's last write, and each reader's copy equals
// it. A store that keeps no controls skips them, saying so.
//
// # What RunCalendarSkew checks
//
// [RunCalendarSkew] runs the calendar tables on stores whose app clock
// (from which a Redis store computes the boundaries it sends) is off the
// deciding clock by 90 seconds to 45 hours, ahead and behind: every
// decision must be the table's, since only the store's clock picks the
// window.
//
// # What RunDifferential checks
//
// [RunDifferential] sends random takes to two stores side by side and
// requires identical decisions: random limits over the whole valid range
// (the bounds of [core.Limit.Validate] included), all six algorithms, one
// to three limits per take, costs from 0 to far above the capacity, and
// instants from 1970 to 2060 with clock steps back. It also rejects any
// decision no store may give (a negative or overlong wait, a Remaining
// beyond the capacity). When both stores hold leases, 150 more
// cases compare [core.Concurrency] limits (alone or beside a rate limit)
// on random acquires, peeks, releases (once, twice, of ids never taken)
// and renewals, with the clock moving by parts of the lease TTL, to the
// last RetryAfter, and back.
//
// # Where the tables go beyond the text of docs/algorithms.md
//
// The suite holds stores to the guarantees the document states, in three
// places where a literal reading of its formulas would break them:
//
//   - The token bucket keeps the debt of a take admitted within the
//     tolerance (tokens − c, at least −0.5/T, not clamped to 0), as GCRA
//     keeps it in tat; otherwise the two differ and the bucket admits more
//     than Rate at short intervals.
//   - The sliding window counter's RetryAfter is the exact ceiling of the
//     wait, since its admission test has no tolerance: a wait rounded to
//     the nearest µs can be denied again, with a RetryAfter of 0.
//   - A clock that goes back brings no quota back (see above).
package storetest
