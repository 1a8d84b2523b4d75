package gateway

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/scenarios"
)

// testdata/envoy-ratelimit.yaml, read by hand: seven descriptors have a
// rate_limit, in file order with parents before their children; the unit
// is read whatever its case (loadDescriptors upper-cases it); the value-less
// remote_address has a sibling with the value 10.0.0.1; the api_per_client
// limit replaces api_total.
func TestReadEnvoy(t *testing.T) {
	e := readWith(t, "testdata/envoy-ratelimit.yaml", ReadEnvoy)
	require.Equal(t, "edge", e.Domain)
	type want struct {
		path      string
		unlimited bool
		rate      int64
		per       time.Duration
		line      int
	}
	wants := []want{
		{"remote_address", false, 60, time.Minute, 5},
		{"remote_address=10.0.0.1", true, 0, 0, 10},
		{"header_match=api", false, 20000, 24 * time.Hour, 15},
		{"header_match=api/remote_address", false, 1000, time.Hour, 22},
		{"client_id", false, 500, 7 * 24 * time.Hour, 30},
		{"path=/export/*", false, 800, 30 * 24 * time.Hour, 36},
		{"path=/archive*", false, 50, 365 * 24 * time.Hour, 41},
		{"generic_key=default", false, 500, time.Second, 48},
	}
	require.Len(t, e.Descriptors, len(wants))
	for i, w := range wants {
		d := e.Descriptors[i]
		require.Equal(t, w, want{d.Path(), d.Unlimited, d.Rate, d.Per, d.Where.Line}, i)
	}
	require.Equal(t, []string{"10.0.0.1"}, e.Descriptors[0].Siblings)
	require.Equal(t, "api_total", e.Descriptors[2].LimitName)
	require.Equal(t, []string{"api_total"}, e.Descriptors[3].Replaces)
	require.True(t, e.Descriptors[4].ShadowMode)
	require.True(t, e.Descriptors[6].ShareThreshold)
}

// The units are src/utils/utilities.go UnitToDivider's seconds: a month is
// 30 days and a year 365, whatever the calendar says.
func TestEnvoyUnits(t *testing.T) {
	for _, tc := range []struct {
		unit string
		per  string // the row's per, as durationText writes it
	}{
		{"SECOND", "1s"},  // 1
		{"MINUTE", "1m"},  // 60
		{"HOUR", "1h"},    // 60*60
		{"DAY", "24h"},    // 60*60*24
		{"WEEK", "168h"},  // 60*60*24*7
		{"MONTH", "720h"}, // 60*60*24*30: 30 days, whatever the calendar month
		{"YEAR", "8760h"}, // 60*60*24*365: 365 days, leap years or not
		{"second", "1s"},  // loadDescriptors upper-cases the unit first
		{"Month", "720h"}, // likewise
	} {
		per, ok := envoyUnit(tc.unit)
		require.True(t, ok, tc.unit)
		require.Equal(t, tc.per, scenarios.DurationText(per), tc.unit)
	}
	// a large limit on a long unit loads: fixed-window forms no product
	// of the rate with per
	e, err := ReadEnvoy("y.yaml", []byte("domain: d\ndescriptors:\n  - {key: k, rate_limit: {unit: YEAR, requests_per_unit: 1000000}}\n"))
	require.NoError(t, err)
	out, err := text(e.Scenario(Options{}))
	require.NoError(t, err)
	_, err = scenarios.Parse("y.yaml", []byte(out))
	require.NoError(t, err, out)
	_, ok := envoyUnit("UNKNOWN")
	require.False(t, ok, "UNKNOWN is the proto's zero value, refused as invalid")
}

// decideOne decides a request of cost 1 whose every key (its own and its
// attributes', for a limit by a descriptor of its own key) is the first.
func decideOne(l algorithms.Limiter, at time.Duration) algorithms.Decision {
	if a, ok := l.(algorithms.Attributed); ok && a.ByAttributes() {
		return a.DecideAttrs(at, []algorithms.Key{0, 0, 0}, 1)
	}
	return l.Decide(at, 0, 1)
}

// The rows decide as envoy's service does, on the Unix epoch: a WEEK
// window is [k*7d, (k+1)*7d) from 1970-01-01, a Thursday, so weeks start on
// Thursday at 00:00 UTC; a MONTH window is 30 days from the epoch, not a
// calendar month. Each decision below is GenerateCacheKey's window
// ((now/divider)*divider) and DoLimit's INCRBY-then-compare.
func TestEnvoyWindowsAlign(t *testing.T) {
	src := "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: WEEK, requests_per_unit: 1}\n  - key: m\n    rate_limit: {unit: MONTH, requests_per_unit: 1}\n"
	e, err := ReadEnvoy("w.yaml", []byte(src))
	require.NoError(t, err)
	out, err := text(e.Scenario(Options{}))
	require.NoError(t, err)
	sc, err := scenarios.Parse("w.yaml", []byte(out))
	require.NoError(t, err, out)
	at := func(s string) time.Duration {
		tm, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return time.Duration(tm.UnixNano())
	}
	require.Equal(t, time.Thursday, time.Unix(0, 0).UTC().Weekday())
	week, err := algorithms.New(sc.Algorithms[0].Name, sc.Algorithms[0].Params)
	require.NoError(t, err)
	for _, step := range []struct {
		at   string
		want algorithms.Verdict
	}{
		{"2026-11-25T23:59:59Z", algorithms.Accept}, // Wednesday: the week of Thursday 2026-11-19, count 1
		{"2026-11-26T00:00:00Z", algorithms.Accept}, // Thursday 00:00 UTC: a new week, count 1
		{"2026-11-26T00:00:01Z", algorithms.Reject}, // count 2 > 1
		{"2026-11-30T12:00:00Z", algorithms.Reject}, // Monday: still the week of Thursday 26th, count 3
		{"2026-12-03T00:00:00Z", algorithms.Accept}, // the next Thursday
	} {
		require.Equal(t, step.want, decideOne(week, at(step.at)).Verdict, step.at)
	}
	month, err := algorithms.New(sc.Algorithms[1].Name, sc.Algorithms[1].Params)
	require.NoError(t, err)
	// 2026-11-30T00:00:00Z is 20,787 days after the epoch = 692*30 + 27:
	// its 30-day window began 2026-11-03 and the next begins 2026-12-03,
	// not on the 1st of a calendar month.
	for _, step := range []struct {
		at   string
		want algorithms.Verdict
	}{
		{"2026-11-03T00:00:00Z", algorithms.Accept}, // window 692 starts
		{"2026-11-30T00:00:00Z", algorithms.Reject}, // same window, count 2
		{"2026-12-01T00:00:00Z", algorithms.Reject}, // a calendar month would be new; envoy's is not
		{"2026-12-03T00:00:00Z", algorithms.Accept}, // window 693
	} {
		require.Equal(t, step.want, decideOne(month, at(step.at)).Verdict, step.at)
	}
}

// A request carrying several descriptors is one all-of row with commit
// every-hit: service/ratelimit.go asks the cache for every descriptor's
// limit, and fixed_cache_impl.go DoLimit increments each counter by the
// hit before comparing, so a limit that passes is charged even when
// another is over, and one that is over still counts (count-rejected).
// remote_address: 60 a minute; generic_key=default: 500 a second. Here
// scaled down by hand to 1 a second and 3 a minute.
func TestEnvoyEveryHit(t *testing.T) {
	src := "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: SECOND, requests_per_unit: 1}\n  - key: b\n    rate_limit: {unit: MINUTE, requests_per_unit: 3}\n"
	e, err := ReadEnvoy("h.yaml", []byte(src))
	require.NoError(t, err)
	out, err := text(e.Scenario(Options{Scope: "a + b"}))
	require.NoError(t, err)
	sc, err := scenarios.Parse("h.yaml", []byte(out))
	require.NoError(t, err, out)
	require.Len(t, sc.Algorithms, 1)
	row := sc.Algorithms[0]
	require.Equal(t, "all-of", row.Name)
	require.Equal(t, "a + b", row.Label)
	require.Equal(t, algorithms.EveryHit, row.Params.Commit)
	for _, m := range row.Params.Members {
		require.Equal(t, "fixed-window", m.Name)
		require.True(t, m.Params.CountRejected)
	}
	l, err := algorithms.New(row.Name, row.Params)
	require.NoError(t, err)
	ms := time.Millisecond
	for _, step := range []struct {
		at   time.Duration
		want algorithms.Verdict
	}{
		{0, algorithms.Accept},          // a: 1 <= 1, b: 1 <= 3
		{500 * ms, algorithms.Reject},   // a: 2 > 1 (counted); b: 2 <= 3, charged all the same
		{1000 * ms, algorithms.Accept},  // a: new second, 1; b: 3 <= 3
		{1500 * ms, algorithms.Reject},  // a: 2 > 1; b: 4 > 3
		{2000 * ms, algorithms.Reject},  // a: new second, 1 <= 1, but b: 5 > 3 (the rejected hits filled it)
		{60000 * ms, algorithms.Accept}, // a new minute and second
	} {
		require.Equal(t, step.want, decideOne(l, step.at).Verdict, step.at)
	}
}

// --split-limits: after the all-of row of --scope "a + b", one
// fixed-window row per descriptor, with exactly the member's fields (rate,
// per, count-rejected: fixed_cache_impl.go counts every hit), labelled by
// the scope and the descriptor. Alone, a still rejects the hit at 500ms
// (2 > 1 a second) but b does not (2 <= 3 a minute), where the all-of
// rejects both.
func TestEnvoySplitLimits(t *testing.T) {
	src := "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: SECOND, requests_per_unit: 1}\n  - key: b\n    rate_limit: {unit: MINUTE, requests_per_unit: 3}\n"
	e, err := ReadEnvoy("h.yaml", []byte(src))
	require.NoError(t, err)
	plain, err := text(e.Scenario(Options{Scope: "a + b"}))
	require.NoError(t, err)
	out, err := text(e.Scenario(Options{Scope: "a + b", SplitLimits: true}))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out, strings.TrimSuffix(plain, plain[strings.Index(plain, "traffic:\n"):])), "the all-of row is unchanged, first")
	require.Contains(t, out, "  # h.yaml:3: descriptor a: 1 per SECOND, a counter per value of a\n"+
		"  - {name: fixed-window, label: \"a + b (a alone)\", rate: 1, per: 1s, count-rejected: true}\n"+
		"  # h.yaml:5: descriptor b: 3 per MINUTE, a counter per value of b\n"+
		"  - name: all-of\n"+
		"    label: \"a + b (b alone)\"\n"+
		"    limits:\n"+
		"      - {name: fixed-window, by: b, rate: 3, per: 1m, count-rejected: true}\n")
	sc, err := scenarios.Parse("h.yaml", []byte(out))
	require.NoError(t, err, out)
	require.Len(t, sc.Algorithms, 3)
	all := sc.Algorithms[0]
	for i, a := range sc.Algorithms[1:] {
		if a.Name == "all-of" { // b, by its own key: an all-of of one
			require.Equal(t, all.Params.Members[i], a.Params.Members[0])
			continue
		}
		require.Equal(t, "fixed-window", a.Name)
		require.Equal(t, all.Params.Members[i].Params, a.Params)
	}
	for i, want := range []algorithms.Verdict{algorithms.Reject, algorithms.Reject, algorithms.Accept} {
		l, err := algorithms.New(sc.Algorithms[i].Name, sc.Algorithms[i].Params)
		require.NoError(t, err)
		require.Equal(t, algorithms.Accept, decideOne(l, 0).Verdict)
		require.Equal(t, want, decideOne(l, 500*time.Millisecond).Verdict, sc.Algorithms[i].Label)
	}

	// the golden's config, a request with a descriptor in shadow_mode: the
	// all-of leaves it out, and so do the split rows
	e = readWith(t, "testdata/envoy-ratelimit.yaml", ReadEnvoy)
	out, err = text(e.Scenario(Options{Scope: "remote_address + client_id + generic_key=default", SplitLimits: true}))
	require.NoError(t, err)
	sc, err = scenarios.Parse("s.yaml", []byte(out))
	require.NoError(t, err, out)
	var labels []string
	for _, a := range sc.Algorithms {
		labels = append(labels, a.Label)
	}
	require.Equal(t, []string{"remote_address + client_id + generic_key=default",
		"remote_address + client_id + generic_key=default (remote_address alone)",
		"remote_address + client_id + generic_key=default (generic_key=default alone)"}, labels)
	require.Equal(t, int64(60), sc.Algorithms[1].Params.Rate)
	require.Equal(t, time.Minute, sc.Algorithms[1].Params.Per)
	// generic_key=default, one counter for every request: an all-of of one
	// by: global
	global := sc.Algorithms[2].Params.Members[0]
	require.Equal(t, algorithms.ByAll, global.By)
	require.Equal(t, int64(500), global.Params.Rate)
	require.Equal(t, time.Second, global.Params.Per)

	// no all-of row, no split rows: the whole file's import is the golden's
	plain, err = text(e.Scenario(Options{}))
	require.NoError(t, err)
	out, err = text(e.Scenario(Options{SplitLimits: true}))
	require.NoError(t, err)
	require.Equal(t, plain, out)
	want, err := os.ReadFile("testdata/envoy-ratelimit.golden.yaml")
	require.NoError(t, err)
	require.Equal(t, string(want), plain)
}

// The imported scenario is a golden file, and it loads.
func TestEnvoyScenario(t *testing.T) {
	e := readWith(t, "testdata/envoy-ratelimit.yaml", ReadEnvoy)
	out, err := text(e.Scenario(Options{}))
	require.NoError(t, err)
	golden := "testdata/envoy-ratelimit.golden.yaml"
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), out)
	sc, err := scenarios.Parse(golden, []byte(out))
	require.NoError(t, err, out)
	require.Len(t, sc.Algorithms, 7, "one row per limited descriptor, none for the unlimited one")
	for _, a := range sc.Algorithms {
		if a.Name == "all-of" { // a limit by its own key, alone
			require.Len(t, a.Params.Members, 1, a.Label)
			require.NotEqual(t, algorithms.ByKey, a.Params.Members[0].By, a.Label)
			a = scenarios.Algorithm{Name: a.Params.Members[0].Name, Label: a.Label, Params: a.Params.Members[0].Params}
		}
		require.Equal(t, "fixed-window", a.Name)
		require.True(t, a.Params.CountRejected, a.Label)
	}
}

// --scope: replaces, unlimited and shadow_mode as the service applies them
// to one request.
func TestEnvoyScope(t *testing.T) {
	e := readWith(t, "testdata/envoy-ratelimit.yaml", ReadEnvoy)
	// header_match=api/remote_address's limit replaces api_total, the
	// limit of header_match=api: only the first is checked.
	out, err := text(e.Scenario(Options{Scope: "header_match=api + header_match=api/remote_address"}))
	require.NoError(t, err)
	require.Contains(t, out, "# not checked: header_match=api (named api_total) is replaced by header_match=api/remote_address\n")
	require.Contains(t, out, "  - {name: fixed-window, label: \"header_match=api + header_match=api/remote_address\", rate: 1000, per: 1h, count-rejected: true}\n")
	keys, err := e.Keys(Options{Scope: "header_match=api + header_match=api/remote_address"})
	require.NoError(t, err)
	require.Equal(t, []Key{{Kind: KeyAddr, Where: Pos{"testdata/envoy-ratelimit.yaml", 22, 9}}}, keys)

	// client_id is in shadow mode: it never rejects, so the row leaves it
	// out; the two others count by their own keys: the address, and one
	// counter for every request.
	out, err = text(e.Scenario(Options{Scope: "remote_address + client_id + generic_key=default"}))
	require.NoError(t, err)
	require.Contains(t, out, "# left out: client_id is in shadow_mode")
	require.Contains(t, out, "      - {name: fixed-window, rate: 60, per: 1m, count-rejected: true}\n")
	require.Contains(t, out, "      - {name: fixed-window, by: global, rate: 500, per: 1s, count-rejected: true}\n")
	sc, err := scenarios.Parse("s.yaml", []byte(out))
	require.NoError(t, err, out)
	require.Len(t, sc.Algorithms[0].Params.Members, 2)

	// a path with a + in it is one descriptor, not two
	plus, err := ReadEnvoy("p.yaml", []byte("domain: d\ndescriptors:\n  - {key: k, value: a+b, rate_limit: {unit: SECOND, requests_per_unit: 1}}\n"))
	require.NoError(t, err)
	out, err = text(plus.Scenario(Options{Scope: "k=a+b"}))
	require.NoError(t, err)
	require.Contains(t, out, "  - {name: fixed-window, label: \"k=a+b\", rate: 1, per: 1s, count-rejected: true}\n")

	_, err = text(e.Scenario(Options{Scope: "remote_address=10.0.0.1"}))
	require.EqualError(t, err, `--scope "remote_address=10.0.0.1": envoy's ratelimit checks no limit for such a request (remote_address=10.0.0.1 is unlimited)`)
	_, err = text(e.Scenario(Options{Scope: "remote_address + remote_address"}))
	require.EqualError(t, err, `--scope "remote_address + remote_address": "remote_address" is named twice`)
	_, err = text(e.Scenario(Options{Scope: "nope"}))
	require.ErrorContains(t, err, `--scope "nope": no descriptor of testdata/envoy-ratelimit.yaml with a rate_limit is "nope" (its descriptors: "remote_address", "remote_address=10.0.0.1",`)
}

// Keys: remote_address without a value is the client address; a
// descriptor whose every entry has a value is one counter; any other key
// is set by envoy's route config, which this file does not show.
func TestEnvoyKeys(t *testing.T) {
	e := readWith(t, "testdata/envoy-ratelimit.yaml", ReadEnvoy)
	keys, err := e.Keys(Options{})
	require.NoError(t, err)
	var got []string
	for _, k := range keys {
		got = append(got, k.Kind+" "+k.short())
	}
	require.Equal(t, []string{"addr client address", "global one key for every request", "other value of client_id", "other value of path"}, got)
}

var invalidEnvoy = []struct {
	name, src, want string
}{
	{"unknown field", "domain: d\ndescriptors:\n  - key: a\n    rate_limt: {unit: SECOND, requests_per_unit: 1}\n",
		`e.yaml:4:5: descriptors[0].rate_limt: unknown field (want one of key, value, rate_limit, descriptors, shadow_mode, quota_mode, detailed_metric, value_to_metric, share_threshold, metadata)`},
	{"field at the wrong level", "domain: d\ndescriptors:\n  - key: a\n    unit: SECOND\n",
		`e.yaml:4:5: descriptors[0].unit: unknown field (want one of key, value, rate_limit, descriptors, shadow_mode, quota_mode, detailed_metric, value_to_metric, share_threshold, metadata); envoy's ratelimit accepts the name at any level but ignores it at this one`},
	{"bad unit", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: FORTNIGHT, requests_per_unit: 1}\n",
		`e.yaml:4:24: descriptors[0].rate_limit.unit: invalid rate limit unit "FORTNIGHT" (want one of SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, YEAR)`},
	{"no unit", "domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      requests_per_unit: 1\n",
		`e.yaml:5:7: descriptors[0].rate_limit.unit: missing (want unit: one of SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, YEAR)`},
	{"missing requests_per_unit", "domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n",
		`e.yaml:5:7: descriptors[0].rate_limit.requests_per_unit: missing (want requests_per_unit: N, N >= 1; envoy's ratelimit reads it as 0 and rejects every request)`},
	{"zero requests_per_unit", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 0}\n",
		`e.yaml:4:51: descriptors[0].rate_limit.requests_per_unit: 0: envoy's ratelimit would reject every request of this descriptor (want at least 1; to never limit it, write unlimited: true)`},
	{"requests_per_unit a string", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: ten}\n",
		`e.yaml:4:51: descriptors[0].rate_limit.requests_per_unit: found string "ten", want a whole number of requests per unit, at least 1`},
	{"requests_per_unit too big", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 4294967296}\n",
		`e.yaml:4:51: descriptors[0].rate_limit.requests_per_unit: 4294967296: want a whole number of requests per unit, at least 1`},
	{"duplicate descriptor", "domain: d\ndescriptors:\n  - key: a\n    value: x\n  - key: a\n    value: x\n",
		`e.yaml:5:10: descriptors[1].key: duplicate descriptor a=x (first at 3:10)`},
	{"unit with unlimited", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unlimited: true, unit: SECOND}\n",
		`e.yaml:4:41: descriptors[0].rate_limit.unit: should not specify rate limit unit when unlimited (remove unit, or unlimited)`},
	{"empty key", "domain: d\ndescriptors:\n  - value: x\n",
		`e.yaml:3:5: descriptors[0].key: descriptor has empty key (want key: NAME)`},
	{"empty domain", "descriptors:\n  - key: a\n",
		`e.yaml:1:1: domain: config file cannot have empty domain (want domain: NAME)`},
	{"replaces itself", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: SECOND, requests_per_unit: 1, name: n, replaces: [{name: n}]}\n",
		`e.yaml:4:81: descriptors[0].rate_limit.replaces[0].name: replaces should not contain name of same descriptor ("n")`},
	{"empty replaces", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: SECOND, requests_per_unit: 1, replaces: [{name: \"\"}]}\n",
		`e.yaml:4:72: descriptors[0].rate_limit.replaces[0].name: should not have an empty replaces entry (want name: NAME)`},
	{"share_threshold without wildcard", "domain: d\ndescriptors:\n  - key: a\n    value: x\n    share_threshold: true\n",
		`e.yaml:5:22: descriptors[0].share_threshold: share_threshold can only be used with wildcard values (containing '*'), but found a=x`},
	{"descriptors not a list", "domain: d\ndescriptors: 3\n",
		`e.yaml:2:14: descriptors: found integer 3, want a list of descriptors`},
	{"list of strings", "domain: d\ndescriptors: [a]\n",
		`e.yaml:2:15: descriptors[0]: found string "a", want a descriptor (a mapping with key, value, rate_limit, descriptors)`},
	{"duplicate key", "domain: d\ndomain: e\n",
		`e.yaml:2:1: domain: duplicate key (first at 1:1)`},
	{"no limits", "domain: d\ndescriptors:\n  - key: a\n    descriptors:\n      - key: b\n",
		`e.yaml: no limits at all: no descriptor of domain "d" has a rate_limit`},
	{"only unlimited", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unlimited: true}\n",
		`e.yaml: no limits at all: every rate_limit of domain "d" is unlimited`},
	{"syntax", "domain: [d\n", `e.yaml:1:9: YAML syntax error: sequence end token ']' not found`},
	{"alias", "domain: &x d\ndescriptors:\n  - key: *x\n",
		`e.yaml:3:10: descriptors[0].key: YAML aliases (*name) are not supported: write the value out`},
	{"empty", "# nothing\n", `e.yaml:1:1: the file is empty or only comments`},
}

func TestReadEnvoyErrors(t *testing.T) {
	for _, tc := range invalidEnvoy {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadEnvoy("e.yaml", []byte(tc.src))
			requireGatewayError(t, err, tc.want)
		})
	}
}

func TestGuessEnvoy(t *testing.T) {
	for _, tc := range []struct {
		file, want string
	}{
		{"testdata/envoy-ratelimit.yaml", "envoy"},
		{"testdata/envoy-local.yaml", "envoy-local"},
		{"testdata/envoy-local-filter.yaml", "envoy-local"},
		{"testdata/nginx.conf", "nginx"},
	} {
		data, err := os.ReadFile(tc.file)
		require.NoError(t, err)
		require.Equal(t, tc.want, Guess(tc.file, data), tc.file)
	}
	require.Contains(t, Supported(), "envoy")
	require.Contains(t, Supported(), "envoy-local")
}

// FuzzReadEnvoy: any input gives limits that make a loadable scenario, or
// an *Error; never a panic.
func FuzzReadEnvoy(f *testing.F) {
	data, err := os.ReadFile("testdata/envoy-ratelimit.yaml")
	require.NoError(f, err)
	f.Add(data, "")
	f.Add(data, "remote_address + generic_key=default")
	for _, tc := range invalidEnvoy {
		f.Add([]byte(tc.src), "")
	}
	f.Add([]byte("domain: d\ndescriptors:\n  - {key: \"a\\nb\", value: \"#x\", rate_limit: {unit: Year, requests_per_unit: 73, name: \"\\n\"}}\n"), "")
	f.Add([]byte("domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 1, name: x}\n  - key: b\n    rate_limit: {unit: second, requests_per_unit: 1, replaces: [{name: x}]}\n"), "a+b")
	f.Fuzz(func(t *testing.T, data []byte, scope string) {
		e, err := ReadEnvoy("f.yaml", data)
		if !readOK(t, err) {
			return
		}
		out, err := text(e.Scenario(Options{Scope: scope}))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--scope") {
				t.Fatal(err)
			}
			return
		}
		if _, err := e.Keys(Options{Scope: scope}); err != nil {
			t.Fatal(err)
		}
		if _, err := scenarios.Parse("f.yaml", []byte(out)); err != nil {
			t.Fatalf("imported scenario does not load: %v\n%s", err, out)
		}
		split, err := text(e.Scenario(Options{Scope: scope, SplitLimits: true}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scenarios.Parse("f.yaml", []byte(split)); err != nil && !strings.Contains(err.Error(), "want at most") {
			t.Fatalf("imported scenario does not load: %v\n%s", err, split)
		}
	})
}
