package policy_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/policy"
)

// The contract's example document gives exactly these tiers.
func TestParseTheContractExample(t *testing.T) {
	p, err := policy.Load("testdata/contract.yaml")
	require.NoError(t, err)
	assert.Equal(t, []string{"api", "login"}, p.Limiters())

	madrid, err := time.LoadLocation("Europe/Madrid")
	require.NoError(t, err)
	tiers, def, ok := p.Limiter("api")
	require.True(t, ok)
	assert.Equal(t, "free", def)
	assert.Equal(t, []core.Tier{{Name: "free", Limits: []core.Limit{
		core.PerSecond(10).WithBurst(100).WithName("per-second"),
		core.PerCalendarDay(1000, madrid).WithName("daily"),
	}}}, tiers)

	tiers, def, ok = p.Limiter("login")
	require.True(t, ok)
	assert.Equal(t, "default", def, "no default_tier: the first tier")
	assert.Equal(t, []core.Tier{{Name: "default", Limits: []core.Limit{
		core.PerMinute(5).WithName("attempts").WithLockout(core.Lockout{
			After: 10, Within: 15 * time.Minute, For: 15 * time.Minute, Multiplier: 2, Max: 24 * time.Hour, Cooldown: 24 * time.Hour}),
	}}}, tiers)

	_, _, ok = p.Limiter("nope")
	assert.False(t, ok)
}

// JSON is read by the same walker, with the same lines.
func TestParseJSON(t *testing.T) {
	doc := `{
	"version": 1,
	"tiers": {
		"free": [{"name": "s", "rate": 10, "period": "1s", "burst": 20}],
		"pro": [{"name": "s", "rate": 100, "period": "1s", "algorithm": "token_bucket"}]
	},
	"default_tier": "pro"
}`
	p, err := policy.Parse("p.json", []byte(doc))
	require.NoError(t, err)
	tiers, def, ok := p.Limiter("")
	require.True(t, ok)
	assert.Equal(t, "pro", def)
	assert.Equal(t, []core.Tier{
		{Name: "free", Limits: []core.Limit{core.PerSecond(10).WithBurst(20).WithName("s")}},
		{Name: "pro", Limits: []core.Limit{core.PerSecond(100).WithName("s").WithAlgorithm(core.TokenBucket)}},
	}, tiers)

	_, err = policy.Parse("p.json", []byte(strings.Replace(doc, `"burst": 20`, `"burst": 20.5`, 1)))
	assert.EqualError(t, err, `p.json:4: tiers.free[0].burst: want a whole number in decimal, got 20.5`)
}

// Defaults a document may rely on: the algorithm of a calendar limit, the
// period of calendar and concurrency limits, derived names.
func TestParseDefaults(t *testing.T) {
	p, err := policy.Parse("d.yaml", []byte(`version: 1
tiers:
  t:
    - {rate: 10, period: 1m}
    - {rate: 100, calendar: month, zone: UTC}
    - {rate: 2, algorithm: concurrency}
    - {rate: 1_000, period: 1h, algorithm: sliding_log}
`))
	require.NoError(t, err)
	tiers, def, _ := p.Limiter("")
	assert.Equal(t, "t", def)
	assert.Equal(t, []core.Limit{
		core.PerMinute(10), core.PerCalendarMonth(100, time.UTC), core.Concurrent(2),
		core.PerHour(1000).WithAlgorithm(core.SlidingLog),
	}, tiers[0].Limits)
}

// head starts a document of one limiter, api, and its tier free.
const head = "version: 1\nlimiters:\n  api:\n    tiers:\n      free:\n"

// item is a document whose tier free has the limit fields (flow style).
func item(fields string) string { return head + "        - " + fields + "\n" }

// badDocuments are refused by Parse with the error want (the fuzz target's
// seeds too).
var badDocuments = []struct {
	name string
	doc  string
	want string // the whole error
}{
	{"empty", "", "p.yaml: the file is empty: no policy document in it"},
	{"only comments", "# nothing yet\n", "p.yaml: the file is empty: no policy document in it"},
	{"only a document start", "---\n", "p.yaml:2: the file is empty: no policy document in it"},
	{"half-written: cut within a line", head + "        - {name: a, rate: 10, period: 1", "p.yaml:6: the last line has no line break: the file may be half-written; a policy file ends with a line break"},
	{"half-written JSON", `{"version": 1, "tiers": {"free": [{"rate": 10, "period": "1s"}]`, "p.yaml:1: did not find expected ',' or '}'"},
	{"half-written: an open quote", "version: 1\ntiers:\n  free:\n    - name: 'per\n", "p.yaml:4: found unexpected end of stream"},
	{"syntax", "version: 1\nlimiters: [\n", "p.yaml:2: did not find expected node content"},
	{"syntax: a key out of line", "version: 1\ntiers:\n  - b\n c: 1\n", "p.yaml:4: did not find expected key"},
	{"syntax on the first line", `{"0`, "p.yaml:1: found unexpected end of stream"},
	{"syntax: a tab", "version: 1\ntiers:\n\tfree: []\n", "p.yaml:3: found character that cannot start any token"},
	{"not UTF-8", "version: 1\n# caf\xe9\n", "p.yaml:2: byte 0xe9 is not UTF-8: a policy is UTF-8 text"},
	{"control character", "version: 1\n\nname: a\x00b\n", "p.yaml:3: control character U+0000: a policy is text (tabs, line breaks and printable characters)"},
	{"two documents", "version: 1\ntiers: {t: [{rate: 1, period: 1s}]}\n---\nversion: 1\n", "p.yaml:3: a second document: a policy file holds one"},
	{"not a mapping", "- a\n", "p.yaml:1: want a policy (a mapping of fields), got a list"},
	{"no version", "limiters: {}\n", "p.yaml:1: version: missing: a policy starts with version: 1"},
	{"version 2", "version: 2\n", "p.yaml:1: version: version 2 is not known: this build reads version 1"},
	{"version as text", "version: \"1\"\n", `p.yaml:1: version: want a whole number in decimal, got "1"`},
	{"unknown top field", "version: 1\nlimitters: {}\n", `p.yaml:2: limitters: unknown field "limitters": a policy has version, and limiters (or, for one limiter, default_tier and tiers)`},
	{"both forms", "version: 1\nlimiters: {}\ntiers: {}\n", "p.yaml:3: tiers: beside limiters (line 2): describe each limiter under limiters, or one limiter alone without them"},
	{"no limiters", "version: 1\n", "p.yaml:1: limiters: missing: a policy has limiters (or, for one limiter, tiers)"},
	{"empty limiters", "version: 1\nlimiters: {}\n", "p.yaml:2: limiters: empty: a policy has at least one limiter"},
	{"bad limiter name", "version: 1\nlimiters:\n  a b: {}\n", `p.yaml:3: limiters.a b: limiter name "a b" has byte ' ' at 1; use letters, digits, '_', '-' and '.'`},
	{"duplicate limiter", "version: 1\nlimiters:\n  api: {tiers: {t: [{rate: 1, period: 1s}]}}\n  api: {}\n", "p.yaml:4: limiters.api: given twice (first at line 3)"},
	{"limiter without tiers", "version: 1\nlimiters:\n  api: {default_tier: free}\n", "p.yaml:3: limiters.api.tiers: missing: a limiter has tiers"},
	{"unknown limiter field", "version: 1\nlimiters:\n  api:\n    tier: {}\n", `p.yaml:4: limiters.api.tier: unknown field "tier": a limiter has default_tier and tiers`},
	{"duplicate tier", head + "        - {rate: 1, period: 1s}\n      free:\n        - {rate: 1, period: 1s}\n", "p.yaml:7: limiters.api.tiers.free: given twice (first at line 5)"},
	{"bad tier name", "version: 1\ntiers:\n  fr/ee:\n    - {rate: 1, period: 1s}\n", `p.yaml:3: tiers.fr/ee: tier Name "fr/ee" has byte '/' at 2; use letters, digits, '_', '-' and '.'`},
	{"empty tier", head + "        []\n", "p.yaml:6: limiters.api.tiers.free: empty: a tier has at least one limit"},
	{"tier not a list", "version: 1\ntiers:\n  free: {rate: 1}\n", "p.yaml:3: tiers.free: want the limits of the tier (a list), got a mapping"},
	{"unknown default tier", "version: 1\ndefault_tier: pro\ntiers:\n  free: [{rate: 1, period: 1s}]\n", `p.yaml:2: default_tier: no tier "pro" among the tiers (free)`},
	{"unknown limit field", item("{rate: 10, period: 1s, burts: 3}"), `p.yaml:6: limiters.api.tiers.free[0].burts: unknown field "burts": a limit has name, rate, period, burst, algorithm, calendar, zone and lockout`},
	{"duplicate field", item("{rate: 10, period: 1s, rate: 3}"), "p.yaml:6: limiters.api.tiers.free[0].rate: given twice (first at line 6)"},
	{"duplicate limit name", item("{name: a, rate: 10, period: 1s}\n        - {name: a, rate: 1, period: 1m}"), `p.yaml:7: limiters.api.tiers.free[1]: a second limit named "a" in the tier (first at line 6)`},
	{"duplicate derived name", item("{rate: 10, period: 1s}\n        - {rate: 10, period: 1s, burst: 20}"), `p.yaml:7: limiters.api.tiers.free[1]: a second limit named "10-per-1s" in the tier (first at line 6)`},
	{"no rate", item("{period: 1s}"), "p.yaml:6: limiters.api.tiers.free[0].rate: missing: a limit has a rate"},
	{"no period", item("{rate: 1}"), "p.yaml:6: limiters.api.tiers.free[0].period: missing: a gcra limit has a period (a Go duration: 1s, 1m, 24h)"},
	{"bad duration", item("{rate: 1, period: 1d}"), "p.yaml:6: limiters.api.tiers.free[0].period: want a Go duration such as 1s, 1m30s or 24h, got \"1d\""},
	{"duration without unit", item("{rate: 1, period: 60}"), "p.yaml:6: limiters.api.tiers.free[0].period: want a Go duration such as 1s, 1m30s or 24h, got 60"},
	{"rate as text", item("{rate: ten, period: 1s}"), `p.yaml:6: limiters.api.tiers.free[0].rate: want a whole number in decimal, got "ten"`},
	{"rate in octal", item("{rate: 010, period: 1s}"), "p.yaml:6: limiters.api.tiers.free[0].rate: want a whole number in decimal, got 010"},
	{"rate overflows", item("{rate: 99999999999999999999, period: 1s}"), "p.yaml:6: limiters.api.tiers.free[0].rate: 99999999999999999999 is out of range"},
	{"null rate", item("{rate: , period: 1s}"), "p.yaml:6: limiters.api.tiers.free[0].rate: want a whole number, got nothing"},
	{"zero rate", item("{rate: 0, period: 1s}"), "p.yaml:6: limiters.api.tiers.free[0].rate: Rate must be positive, got 0"},
	{"negative period", item("{rate: 1, period: -1s}"), "p.yaml:6: limiters.api.tiers.free[0].period: Period must be positive, got -1s"},
	{"burst 0", item("{rate: 1, period: 1s, burst: 0}"), "p.yaml:6: limiters.api.tiers.free[0].burst: 0: leave burst out for a burst equal to the rate"},
	{"overflowing burst × period", item("{rate: 10, period: 1s,\n            burst: 99999999999}"), "p.yaml:7: limiters.api.tiers.free[0].burst: Burst 99999999999 refills in Burst × Period / Rate = 99999999999 × 1s / 10, longer than 366 days; Burst must be at most 316224000 at this Rate and Period"},
	{"burst on a window", item("{rate: 10, period: 1s, burst: 20, algorithm: fixed_window}"), "p.yaml:6: limiters.api.tiers.free[0].burst: Burst 20 differs from Rate 10, but fixed_window counts Rate per Period and has no separate burst"},
	{"unknown algorithm", item("{rate: 10, period: 1s, algorithm: leaky}"), `p.yaml:6: limiters.api.tiers.free[0].algorithm: unknown algorithm "leaky": want gcra, token_bucket, fixed_window, sliding_window, sliding_log, calendar_window and concurrency`},
	{"bad limit name", item("{name: per second, rate: 10, period: 1s}"), `p.yaml:6: limiters.api.tiers.free[0].name: limit Name "per second" has byte ' ' at 3; use letters, digits, '_', '-' and '.'`},
	{"unknown zone", item("{rate: 10, calendar: day, zone: Europe/Madird}"), `p.yaml:6: limiters.api.tiers.free[0].zone: unknown time zone "Europe/Madird": want UTC or a name of the time zone database, such as Europe/Madrid`},
	{"Local zone", item("{rate: 10, calendar: day, zone: Local}"), "p.yaml:6: limiters.api.tiers.free[0].zone: Calendar.Location must not be time.Local, whose rules depend on each node's TZ; load the zone by name (time.LoadLocation)"},
	{"calendar without zone", item("{rate: 10, calendar: week}"), "p.yaml:6: limiters.api.tiers.free[0].zone: missing: a calendar_window limit has a zone (UTC, or a name such as Europe/Madrid)"},
	{"calendar_window without calendar", item("{rate: 10, algorithm: calendar_window, zone: UTC}"), "p.yaml:6: limiters.api.tiers.free[0].calendar: missing: a calendar_window limit has a calendar (day, week or month)"},
	{"unknown calendar", item("{rate: 10, calendar: year, zone: UTC}"), `p.yaml:6: limiters.api.tiers.free[0].calendar: unknown calendar "year": want day, week or month`},
	{"calendar on gcra", item("{rate: 10, period: 1s, algorithm: gcra, calendar: day}"), "p.yaml:6: limiters.api.tiers.free[0].calendar: only a calendar_window limit has a calendar; this one is gcra"},
	{"zone on fixed window", item("{rate: 10, period: 1s, algorithm: fixed_window, zone: UTC}"), "p.yaml:6: limiters.api.tiers.free[0].zone: only a calendar_window limit has a zone; this one is fixed_window"},
	{"calendar period not its unit's", item("{rate: 10, calendar: day, zone: UTC, period: 1h}"), "p.yaml:6: limiters.api.tiers.free[0].period: Period must be 24h0m0s, the nominal length of a calendar day, got 1h0m0s"},
	{"concurrency lease too long", item("{rate: 2, algorithm: concurrency, period: 48h}"), "p.yaml:6: limiters.api.tiers.free[0].period: Period (lease TTL) must be at most 24h0m0s, got 48h0m0s"},
	{"lockout missing for", item("{rate: 5, period: 1m, lockout: {after: 3, within: 1m}}"), "p.yaml:6: limiters.api.tiers.free[0].lockout.for: missing: a lockout has after, within and for"},
	{"lockout unknown field", item("{rate: 5, period: 1m, lockout: {after: 3, within: 1m, for: 1m, forever: true}}"), `p.yaml:6: limiters.api.tiers.free[0].lockout.forever: unknown field "forever": a lockout has after, within, for, multiplier, max and cooldown`},
	{"lockout bad duration", item("{rate: 5, period: 1m, lockout: {after: 3, within: soon, for: 1m}}"), `p.yaml:6: limiters.api.tiers.free[0].lockout.within: want a Go duration such as 1s, 1m30s or 24h, got "soon"`},
	{"limit not a mapping", item("10/s"), `p.yaml:6: limiters.api.tiers.free[0]: want a limit (a mapping of fields), got "10/s"`},
	{"anchor", item("&a {rate: 10, period: 1s}"), "p.yaml:6: limiters.api.tiers.free[0]: an anchor (&a): a policy spells every value out"},
	{"alias", "version: 1\nlimiters:\n  api:\n    tiers:\n      free: &l [{rate: 1, period: 1s}]\n      pro: *l\n", "p.yaml:5: limiters.api.tiers.free: an anchor (&l): a policy spells every value out"},
	{"merge key", item("{<<: {rate: 1}, period: 1s}"), `p.yaml:6: limiters.api.tiers.free[0].<<: unknown field "<<": a limit has name, rate, period, burst, algorithm, calendar, zone and lockout`},
	{"tagged value", item("{rate: !!int 10, period: 1s}"), "p.yaml:6: limiters.api.tiers.free[0].rate: an explicit tag (!!int): a policy's values are plain"},
	{"too many limits", item(manyLimits(17)), "p.yaml:22: limiters.api.tiers.free[16]: a tier has at most 16 limits, all taken in one store call"},
}

// Each bad document is refused with the file, the line and the field's
// path, and no policy.
func TestParseRefusesBadDocuments(t *testing.T) {
	for _, tt := range badDocuments {
		t.Run(tt.name, func(t *testing.T) {
			p, err := policy.Parse("p.yaml", []byte(tt.doc))
			require.Error(t, err)
			assert.Nil(t, p, "nothing half-loaded")
			assert.Equal(t, tt.want, err.Error())
			var perr *policy.Error
			require.True(t, errors.As(err, &perr), "an *Error")
			assert.Equal(t, "p.yaml", perr.File)
		})
	}
}

func TestParseRefusesALargeFile(t *testing.T) {
	_, err := policy.Parse("big.yaml", []byte("version: 1\n"+strings.Repeat("# padding\n", policy.MaxSize/10)))
	require.ErrorIs(t, err, policy.ErrTooLarge)
}

func TestLoadOfAMissingFile(t *testing.T) {
	_, err := policy.Load("testdata/none.yaml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "testdata/none.yaml")
}

// manyLimits returns n limit items of different names, as one item's text.
func manyLimits(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf("{rate: %d, period: 1h}", i+1)
	}
	return strings.Join(items, "\n        - ")
}
