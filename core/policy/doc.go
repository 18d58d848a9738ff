// Package policy keeps limiters' tiers in a file: a document, YAML or
// JSON, that [Parse] reads strictly (every mistake an [*Error] naming the
// file, the line and the field's path), [Apply] gives to running
// limiters all at once, [Watch] applies again whenever the file changes
// or the process gets SIGHUP, and [Diff] compares with another, saying
// which counters each change restarts. The ratelimit command's `policy
// check FILE` and `policy diff OLD NEW` run Parse and Diff.
//
// # Where to start
//
// A service builds its limiters in code as usual, then hands them to a
// watcher, which applies the file at once and on every change:
//
//	limiters := map[string]*core.Limiter{"api": api, "login": login}
//	w, err := policy.Watch(os.Getenv("POLICY_FILE"), func(p *policy.Policy) error {
//		return policy.Apply(p, limiters)
//	}, policy.WithReport(countReload))
//	defer w.Close()
//
// # The document
//
//	version: 1                  # required
//	limiters:                   # by the names the application gives them
//	  api:
//	    default_tier: free      # optional: the first tier
//	    tiers:                  # by name, in order; each a list of limits
//	      free:
//	        - name: per-second  # optional: derived from rate and period
//	          rate: 10          # required: requests per period (in flight, for concurrency)
//	          period: 1s        # a Go duration; optional for calendar_window and concurrency
//	          burst: 100        # optional: the rate; gcra and token_bucket only
//	          algorithm: gcra   # gcra (default), token_bucket, fixed_window, sliding_window,
//	                            # sliding_log, calendar_window, concurrency
//	        - name: daily
//	          rate: 1000
//	          calendar: day     # day, week or month: a calendar_window limit
//	          zone: Europe/Madrid
//	  login:
//	    tiers:
//	      default:
//	        - name: attempts
//	          rate: 5
//	          period: 1m
//	          lockout: {after: 10, within: 15m, for: 15m, multiplier: 2, max: 24h, cooldown: 24h}
//
// A document for one limiter may leave limiters out and give default_tier
// and tiers at the top; that limiter's name is "". The fields are those of
// [core.Limit], validated by [core.Limit.Validate] and
// [core.ValidateTiers]; docs/policy.md describes each one.
//
// # Counters across a reload
//
// A client's usage of a limit is stored under the limit's name and
// algorithm, in every tier alike: a limit that keeps both keeps every
// client's usage, read with its new numbers; one renamed or given another
// algorithm starts afresh, and one removed is no longer read. A fixed or
// sliding window whose period changes keeps a client's count where its
// stored window started in the current window of the new period, and
// starts afresh otherwise (docs/algorithms.md, "When the period changes");
// two tiers may give a limit of one name windows of different lengths.
// [Changes] say all this per limit.
package policy
