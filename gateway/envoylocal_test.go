package gateway

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/scenarios"
)

// testdata/envoy-local.yaml, read by hand: the ingress listener's filter
// (100 tokens, 50 a second, enabled and enforced at 100%); its /login
// route's own config (5 tokens, 1 every 12s, enforced at 50%); its
// reports route's (20 tokens, 10 a second, status 503, two descriptors);
// the admin listener's filter, which sets no filter_enabled and so is
// disabled (FilterConfig::enabled() is false without it).
func TestReadEnvoyLocal(t *testing.T) {
	l := readWith(t, "testdata/envoy-local.yaml", ReadEnvoyLocal)
	type want struct {
		name, status     string
		max, fill        int64
		every            time.Duration
		enabled, enforce bool // at 100%
		descs            int
	}
	wants := []want{
		{"ingress", "429", 100, 50, time.Second, true, true, 0},
		{"ingress/api/prefix /login", "429", 5, 1, 12 * time.Second, true, false, 0},
		{"ingress/api/reports", "503", 20, 10, time.Second, true, true, 2},
		{"admin", "429", 10, 1, time.Second, false, false, 0},
	}
	require.Len(t, l.Scopes, len(wants))
	for i, w := range wants {
		s := l.Scopes[i]
		require.Equal(t, w, want{s.Name, s.Status, s.Bucket.MaxTokens, s.Bucket.TokensPerFill, s.Bucket.FillInterval,
			s.Enabled.all(), s.Enforced.all(), len(s.Descriptors)}, i)
		require.True(t, s.AlwaysConsumeDefault, "the default of always_consume_default_token_bucket is true")
	}
	require.True(t, l.Scopes[3].Enabled.none())
	require.Equal(t, Percent{Set: true, Num: 50, Den: 100}, l.Scopes[1].Enforced)
	pro := l.Scopes[2].Descriptors[1]
	require.Equal(t, "plan=pro", pro.Path())
	require.Equal(t, LocalBucket{MaxTokens: 10, TokensPerFill: 30, FillInterval: 3 * time.Second, Where: Pos{"testdata/envoy-local.yaml", 69, 35}}, pro.Bucket)
}

// The imported scenarios are golden files, and those of envoy 1.31 and
// later load; those of 1.30 use the discrete refill's fields (fill-interval,
// tokens-per-fill), checked as text.
func TestEnvoyLocalScenario(t *testing.T) {
	for _, tc := range []struct {
		config, version, golden string
		rows                    int
	}{
		{"envoy-local", "", "envoy-local.golden.yaml", 5},
		{"envoy-local", "1.30", "envoy-local-1.30.golden.yaml", 5},
		{"envoy-local-filter", "", "envoy-local-filter.golden.yaml", 2},
	} {
		l := readWith(t, "testdata/"+tc.config+".yaml", ReadEnvoyLocal)
		out, err := text(l.Scenario(Options{EnvoyVersion: tc.version}))
		require.NoError(t, err)
		golden := "testdata/" + tc.golden
		if *update {
			require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err)
		require.Equal(t, string(want), out)
		require.Equal(t, tc.rows+1, strings.Count(out, "\n  - "), golden) // and the traffic source
		if tc.version == "" {
			sc, err := scenarios.Parse(golden, []byte(out))
			require.NoError(t, err, out)
			require.Len(t, sc.Algorithms, tc.rows)
		}
	}
}

// The rows, by hand. envoy 1.31+: rate tokens_per_fill per fill_interval,
// burst max_tokens, continuous; 1.30: burst max_tokens, fill-interval and
// tokens-per-fill. A descriptor's row takes from its bucket, then from the
// default bucket (always_consume_default_token_bucket, default true).
func TestEnvoyLocalRows(t *testing.T) {
	l := readWith(t, "testdata/envoy-local.yaml", ReadEnvoyLocal)
	out, err := text(l.Scenario(Options{Scope: "ingress/api/reports plan=free"}))
	require.NoError(t, err)
	require.Contains(t, out, "  - name: all-of\n    label: \"ingress/api/reports plan=free\"\n    commit: in-order\n    limits:\n")
	require.Contains(t, out, "      - {name: token-bucket, rate: 1, per: 2s, burst: 2}\n") // plan=free: 1 token per 2s, 2 at most
	require.Contains(t, out, "      - {name: token-bucket, rate: 10, per: 1s, burst: 20}\n")
	require.Contains(t, out, "# envoy-local.yaml:57: local_ratelimit of ingress/api/reports (stat_prefix reports); rejects with 503\n")

	out, err = text(l.Scenario(Options{Scope: "ingress/api/prefix /login", EnvoyVersion: "1.30.4"}))
	require.NoError(t, err)
	require.Contains(t, out, "  - {name: token-bucket, label: \"ingress/api/prefix /login\", burst: 5, fill-interval: 12s, tokens-per-fill: 1}\n")
	require.Contains(t, out, "filter_enforced 50%: envoy rejects only that share of the requests it limits; the rows reject all\n")

	// A request matching both descriptors: the slower-filling first.
	// plan=free fills 0.5 a second, plan=pro 10: free, then pro, then the
	// default bucket, whatever the order they are named in.
	out, err = text(l.Scenario(Options{Scope: "ingress/api/reports plan=pro + ingress/api/reports plan=free"}))
	require.NoError(t, err)
	sc, err := scenarios.Parse("s.yaml", []byte(out))
	require.NoError(t, err, out)
	var got []int64
	for _, m := range sc.Algorithms[0].Params.Members {
		got = append(got, m.Params.Burst)
	}
	require.Equal(t, []int64{2, 10, 20}, got)

	_, err = text(l.Scenario(Options{Scope: "ingress/api/reports plan=pro + ingress"}))
	require.EqualError(t, err, `--scope "ingress/api/reports plan=pro + ingress": "ingress" is not a descriptor's row (join descriptors of one scope with " + ")`)
	_, err = text(l.Scenario(Options{Scope: "admin"}))
	require.ErrorContains(t, err, `--scope "admin": no row of testdata/envoy-local.yaml is "admin" (its rows: "ingress", "ingress/api/prefix /login", `)
	_, err = text(l.Scenario(Options{EnvoyVersion: "one"}))
	require.EqualError(t, err, `--envoy-version "one": want an envoy version such as 1.30 or 1.31.2`)
}

// The order envoy takes from matched descriptors: from 1.31
// requestAllowed sorts them by fillRate() (tokens_per_fill /
// fill_interval, a double); 1.30's constructor sorted them by
// tokensFillPerSecond, whole tokens over whole seconds. a fills 3 per 2s
// (1.5/s; 3/2 = 1 in whole numbers), b 5 per 4s (1.25/s; 5/4 = 1): from
// 1.31 b comes first; in 1.30 they tie and keep the config's order.
func TestEnvoyLocalOrder(t *testing.T) {
	src := "stat_prefix: s\nfilter_enabled: {default_value: {numerator: 100}}\ntoken_bucket: {max_tokens: 9, tokens_per_fill: 9, fill_interval: 1s}\n" +
		"descriptors:\n  - {entries: [{key: k, value: a}], token_bucket: {max_tokens: 1, tokens_per_fill: 3, fill_interval: 2s}}\n" +
		"  - {entries: [{key: k, value: b}], token_bucket: {max_tokens: 2, tokens_per_fill: 5, fill_interval: 4s}}\n"
	l, err := ReadEnvoyLocal("o.yaml", []byte(src))
	require.NoError(t, err)
	for _, tc := range []struct {
		version string
		first   string
	}{
		{"", "max_tokens 2"},     // b
		{"1.31", "max_tokens 2"}, // b
		{"1.30", "max_tokens 1"}, // a, the config's first
	} {
		out, err := text(l.Scenario(Options{Scope: "s k=a + s k=b", EnvoyVersion: tc.version}))
		require.NoError(t, err)
		i := strings.Index(out, "descriptor k=")
		require.Contains(t, out[i:i+60], tc.first, tc.version)
	}
}

// in-order takes no token back: a descriptor's bucket that admitted a
// request the default bucket then refused stays charged
// (local_ratelimit_impl.cc requestAllowed: consume() on each matched
// bucket, return at the first false). The descriptor's bucket: 2 tokens, 1
// per 100s; the default: 1 token, 1 a second.
func TestEnvoyLocalInOrder(t *testing.T) {
	src := "stat_prefix: s\nfilter_enabled: {default_value: {numerator: 100}}\ntoken_bucket: {max_tokens: 1, tokens_per_fill: 1, fill_interval: 1s}\n" +
		"descriptors:\n  - {entries: [{key: k, value: v}], token_bucket: {max_tokens: 2, tokens_per_fill: 1, fill_interval: 100s}}\n"
	l, err := ReadEnvoyLocal("i.yaml", []byte(src))
	require.NoError(t, err)
	out, err := text(l.Scenario(Options{Scope: "s k=v"}))
	require.NoError(t, err)
	sc, err := scenarios.Parse("i.yaml", []byte(out))
	require.NoError(t, err, out)
	row := sc.Algorithms[0]
	require.Equal(t, algorithms.InOrder, row.Params.Commit)
	lim, err := algorithms.New(row.Name, row.Params)
	require.NoError(t, err)
	ms := time.Millisecond
	for _, step := range []struct {
		at   time.Duration
		want algorithms.Verdict
	}{
		{0, algorithms.Accept},         // descriptor 2 -> 1, default 1 -> 0
		{500 * ms, algorithms.Reject},  // descriptor 1.005 -> 0.005 (kept), default 0.5 < 1
		{1000 * ms, algorithms.Reject}, // descriptor 0.01 < 1: refused there, though the default has 1 again
	} {
		require.Equal(t, step.want, lim.Decide(step.at, 0, 1).Verdict, step.at)
	}
	// With the token of 500ms given back (all-or-nothing), 1000ms would pass.
	row.Params.Commit = algorithms.AllOrNothing
	refund, err := algorithms.New(row.Name, row.Params)
	require.NoError(t, err)
	for _, at := range []time.Duration{0, 500 * ms} {
		refund.Decide(at, 0, 1)
	}
	require.Equal(t, algorithms.Accept, refund.Decide(1000*ms, 0, 1).Verdict)
}

func TestParseEnvoyVersion(t *testing.T) {
	for _, tc := range []struct {
		v        string
		discrete bool
	}{
		{"", false}, {"1.31", false}, {"1.31.0", false}, {"v1.36.2", false}, {"2.0", false},
		{"1.30", true}, {"1.30.9", true}, {"1.9", true}, {"0.99", true},
	} {
		d, err := ParseEnvoyVersion(tc.v)
		require.NoError(t, err, tc.v)
		require.Equal(t, tc.discrete, d, tc.v)
	}
	for _, bad := range []string{"1", "1.x", "1.31.2.1", "latest", "1.-3"} {
		_, err := ParseEnvoyVersion(bad)
		require.Error(t, err, bad)
	}
}

// Keys: one bucket per envoy for every request, the connection with
// local_rate_limit_per_downstream_connection.
func TestEnvoyLocalKeys(t *testing.T) {
	keys, err := readWith(t, "testdata/envoy-local.yaml", ReadEnvoyLocal).Keys(Options{})
	require.NoError(t, err)
	require.Equal(t, []Key{{Kind: KeyGlobal, Where: Pos{"testdata/envoy-local.yaml", 16, 23}}}, keys)
	keys, err = readWith(t, "testdata/envoy-local-filter.yaml", ReadEnvoyLocal).Keys(Options{})
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.Equal(t, KeyOther, keys[0].Kind)
	require.Equal(t, "the downstream connection (local_rate_limit_per_downstream_connection)", keys[0].String())
}

const localHead = "stat_prefix: s\nfilter_enabled: {default_value: {numerator: 100}}\n"

var invalidLocal = []struct {
	name, src, version, want string
}{
	{"fast fill", localHead + "token_bucket: {max_tokens: 1, fill_interval: 0.049s}\n", "",
		`l.yaml:3:46: token_bucket.fill_interval: 49ms: local rate limit token bucket fill timer must be >= 50ms`},
	{"no max_tokens", localHead + "token_bucket: {fill_interval: 1s}\n", "",
		`l.yaml:3:15: token_bucket.max_tokens: missing (want max_tokens: N, N >= 1)`},
	{"zero max_tokens", localHead + "token_bucket: {max_tokens: 0, fill_interval: 1s}\n", "",
		`l.yaml:3:28: token_bucket.max_tokens: 0: want at least 1 (a bucket of 0 tokens rejects every request)`},
	{"no fill_interval", localHead + "token_bucket: {max_tokens: 1}\n", "",
		`l.yaml:3:15: token_bucket.fill_interval: missing (want fill_interval: a duration such as "1s")`},
	{"bad duration", localHead + "token_bucket: {max_tokens: 1, fill_interval: 1m}\n", "",
		`l.yaml:3:46: token_bucket.fill_interval: "1m": want a duration in seconds such as "1s" or "0.5s" (protobuf's JSON form)`},
	{"unknown field", localHead + "token_buckets: {max_tokens: 1}\n", "",
		`l.yaml:3:1: token_buckets: unknown field (want one of @type, stat_prefix, status, token_bucket, filter_enabled, filter_enforced, request_headers_to_add_when_not_enforced, response_headers_to_add, descriptors, stage, local_rate_limit_per_downstream_connection, local_cluster_rate_limit, enable_x_ratelimit_headers, vh_rate_limits, always_consume_default_token_bucket, rate_limited_as_resource_exhausted, rate_limits, max_dynamic_descriptors)`},
	{"no stat_prefix", "token_bucket: {max_tokens: 1, fill_interval: 1s}\n", "",
		`l.yaml:1:1: stat_prefix: missing or empty (want stat_prefix: NAME; envoy requires it)`},
	{"duplicate descriptor", localHead + "token_bucket: {max_tokens: 1, fill_interval: 1s}\ndescriptors:\n  - {entries: [{key: a, value: b}], token_bucket: {max_tokens: 1, fill_interval: 1s}}\n  - {entries: [{key: a, value: b}], token_bucket: {max_tokens: 2, fill_interval: 1s}}\n", "",
		`l.yaml:6:5: descriptors[1]: duplicate descriptor in the local rate descriptor: a=b (first at 5:5)`},
	{"descriptor without bucket", localHead + "descriptors:\n  - entries: [{key: a, value: b}]\n", "",
		`l.yaml:4:5: descriptors[0].token_bucket: missing (want token_bucket: {max_tokens, tokens_per_fill, fill_interval})`},
	{"descriptor without entries", localHead + "descriptors:\n  - token_bucket: {max_tokens: 1, fill_interval: 1s}\n", "",
		`l.yaml:4:5: descriptors[0].entries: missing or empty (want entries: [{key: K, value: V}])`},
	{"bad denominator", "stat_prefix: s\nfilter_enabled: {default_value: {numerator: 1, denominator: THOUSAND}}\n", "",
		`l.yaml:2:61: filter_enabled.default_value.denominator: "THOUSAND": want HUNDRED, TEN_THOUSAND or MILLION`},
	{"wrong type", "\"@type\": type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit\nstat_prefix: s\n", "",
		`l.yaml:1:10: @type: "type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit": not a local_ratelimit config (want type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit)`},
	{"disabled", "stat_prefix: s\ntoken_bucket: {max_tokens: 1, fill_interval: 1s}\n", "",
		`l.yaml: no limits at all: every local_ratelimit config is disabled (filter_enabled unset, envoy's default of 0%, or 0%) or has no token_bucket`},
	{"enabled 0%", "stat_prefix: s\nfilter_enabled: {default_value: {numerator: 0}}\ntoken_bucket: {max_tokens: 1, fill_interval: 1s}\n", "",
		`l.yaml: no limits at all: every local_ratelimit config is disabled (filter_enabled unset, envoy's default of 0%, or 0%) or has no token_bucket`},
	{"cluster and connection", localHead + "token_bucket: {max_tokens: 1, fill_interval: 1s}\nlocal_rate_limit_per_downstream_connection: true\nlocal_cluster_rate_limit: {}\n", "",
		`l.yaml:5:27: local_cluster_rate_limit: local_cluster_rate_limit with local_rate_limit_per_downstream_connection: envoy refuses both (a connection's bucket is not shared among instances)`},
	{"no filter", "static_resources:\n  listeners:\n    - name: l\n      filter_chains: [{filters: [{name: envoy.filters.network.tcp_proxy}]}]\n", "",
		`l.yaml: no limits at all: no http_connection_manager of the file has a local_ratelimit filter (envoy.filters.http.local_ratelimit)`},
	{"neither", "admin: {}\n", "",
		`l.yaml:1:1: found neither static_resources (an envoy bootstrap) nor a local_ratelimit typed_config (stat_prefix, token_bucket, ...)`},
	{"not a multiple before 1.31", localHead + "token_bucket: {max_tokens: 1, fill_interval: 1s}\ndescriptors:\n  - {entries: [{key: a, value: b}], token_bucket: {max_tokens: 1, fill_interval: 1.5s}}\n", "1.30",
		`l.yaml:5:37: token_bucket.fill_interval: 1500ms: local rate descriptor limit is not a multiple of token bucket fill timer (1s), which envoy before 1.31 refuses`},
}

func TestReadEnvoyLocalErrors(t *testing.T) {
	for _, tc := range invalidLocal {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ReadEnvoyLocal("l.yaml", []byte(tc.src))
			if err == nil {
				_, err = text(l.Scenario(Options{EnvoyVersion: tc.version}))
			}
			requireGatewayError(t, err, tc.want)
		})
	}
}

// FuzzReadEnvoyLocal: any input gives buckets that make a loadable
// scenario, or an *Error; never a panic.
func FuzzReadEnvoyLocal(f *testing.F) {
	for _, p := range []string{"testdata/envoy-local.yaml", "testdata/envoy-local-filter.yaml"} {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data, "", "")
		f.Add(data, "", "1.30")
	}
	for _, tc := range invalidLocal {
		f.Add([]byte(tc.src), "", tc.version)
	}
	f.Add([]byte(localHead+"token_bucket: {max_tokens: \"7\", tokens_per_fill: 3, fill_interval: 0.333333333s}\ndescriptors:\n  - {entries: [{key: a}, {key: b, value: c}], token_bucket: {max_tokens: 4294967295, fill_interval: 9999s}}\n"), "s a/b=c", "1.2.3")
	f.Fuzz(func(t *testing.T, data []byte, scope, version string) {
		l, err := ReadEnvoyLocal("f.yaml", data)
		if !readOK(t, err) {
			return
		}
		out, err := text(l.Scenario(Options{Scope: scope, EnvoyVersion: version}))
		if err != nil {
			var ge *Error
			if !errors.As(err, &ge) && !strings.HasPrefix(err.Error(), "--") {
				t.Fatal(err)
			}
			return
		}
		if _, err := l.Keys(Options{Scope: scope, EnvoyVersion: version}); err != nil {
			t.Fatal(err)
		}
		split, err := text(l.Scenario(Options{Scope: scope, EnvoyVersion: version, SplitLimits: true}))
		if err != nil {
			t.Fatal(err)
		}
		if d, _ := ParseEnvoyVersion(version); d {
			return // fill-interval rows: checked as text
		}
		for _, out := range []string{out, split} {
			if _, err := scenarios.Parse("f.yaml", []byte(out)); err != nil && !strings.Contains(err.Error(), "want at most") {
				t.Fatalf("imported scenario does not load: %v\n%s", err, out)
			}
		}
	})
}

// --split-limits: after each all-of in-order row, one token-bucket row per
// bucket, descriptor first and then the default bucket (the order of the
// all-of, LocalRateLimiterImpl's requestAllowed), each with exactly the
// member's fields; the other rows, and the output without the flag (the
// goldens), are unchanged. Before 1.31 the split rows keep the discrete
// fields (fill-interval, tokens-per-fill).
func TestEnvoyLocalSplitLimits(t *testing.T) {
	l := readWith(t, "testdata/envoy-local.yaml", ReadEnvoyLocal)
	for _, tc := range []struct{ version, golden, free, dflt string }{
		{"", "envoy-local.golden.yaml", "rate: 1, per: 2s, burst: 2", "rate: 10, per: 1s, burst: 20"},
		{"1.30", "envoy-local-1.30.golden.yaml", "burst: 2, fill-interval: 2s, tokens-per-fill: 1", "burst: 20, fill-interval: 1s, tokens-per-fill: 10"},
	} {
		plain, err := text(l.Scenario(Options{EnvoyVersion: tc.version}))
		require.NoError(t, err)
		want, err := os.ReadFile("testdata/" + tc.golden)
		require.NoError(t, err)
		require.Equal(t, string(want), plain)
		out, err := text(l.Scenario(Options{EnvoyVersion: tc.version, SplitLimits: true}))
		require.NoError(t, err)
		// envoy-local.yaml:67, plan=free: max_tokens 2, tokens_per_fill 1,
		// fill_interval 2s; :60, the default bucket: 20, 10, 1s
		require.Contains(t, out, "  # envoy-local.yaml:67: descriptor plan=free: max_tokens 2, tokens_per_fill 1, fill_interval 2s\n"+
			"  - {name: token-bucket, label: \"ingress/api/reports plan=free (plan=free alone)\", "+tc.free+"}\n"+
			"  # envoy-local.yaml:60: the default bucket: max_tokens 20, tokens_per_fill 10, fill_interval 1s\n"+
			"  - {name: token-bucket, label: \"ingress/api/reports plan=free (default bucket alone)\", "+tc.dflt+"}\n")
		sc, err := scenarios.Parse("s.yaml", []byte(out))
		require.NoError(t, err, out)
		var labels []string
		for _, a := range sc.Algorithms {
			labels = append(labels, a.Label)
		}
		require.Equal(t, []string{"ingress", "ingress/api/prefix /login", "ingress/api/reports",
			"ingress/api/reports plan=free", "ingress/api/reports plan=free (plan=free alone)", "ingress/api/reports plan=free (default bucket alone)",
			"ingress/api/reports plan=pro", "ingress/api/reports plan=pro (plan=pro alone)", "ingress/api/reports plan=pro (default bucket alone)",
		}, labels)
		for _, i := range []int{3, 6} {
			all := sc.Algorithms[i]
			require.Equal(t, algorithms.InOrder, all.Params.Commit)
			for j, m := range all.Params.Members {
				require.Equal(t, "token-bucket", sc.Algorithms[i+1+j].Name)
				require.Equal(t, m.Params, sc.Algorithms[i+1+j].Params, sc.Algorithms[i+1+j].Label)
			}
		}
		// the plain rows are the golden's, line for line
		for _, line := range strings.SplitAfter(plain, "\n") {
			require.Contains(t, out, line)
		}
	}

	// --scope "A + B": the request's row takes from plan=pro (30 per 3s, 10
	// a second, fills faster than plan=free's 1 per 2s) after plan=free,
	// then the default bucket: three split rows, in that order
	out, err := text(l.Scenario(Options{Scope: "ingress/api/reports plan=pro + ingress/api/reports plan=free", SplitLimits: true}))
	require.NoError(t, err)
	sc, err := scenarios.Parse("s.yaml", []byte(out))
	require.NoError(t, err, out)
	require.Len(t, sc.Algorithms, 4)
	scope := "ingress/api/reports plan=pro + ingress/api/reports plan=free"
	for i, c := range []struct {
		label       string
		rate, burst int64
		per         time.Duration
	}{
		{scope + " (plan=free alone)", 1, 2, 2 * time.Second},
		{scope + " (plan=pro alone)", 30, 10, 3 * time.Second},
		{scope + " (default bucket alone)", 10, 20, time.Second},
	} {
		a := sc.Algorithms[1+i]
		require.Equal(t, c.label, a.Label)
		require.Equal(t, c.rate, a.Params.Rate, c.label)
		require.Equal(t, c.per, a.Params.Per, c.label)
		require.Equal(t, c.burst, a.Params.Burst, c.label)
	}
}

// A descriptor entry without a value is a bucket per value of it (the
// request's key here), and the default bucket one for every request (by:
// global), checked in envoy's order: the descriptor's (1 a second) then
// the default (3 per 10s, refilled continuously), in-order. By hand, from
// full buckets: c1 .0, c2 .1 pass (default 2, then 2.03-1 = 1.03); c1 .2
// has 0.2 of its own token (the default is not asked); c3 .3 takes the
// default's (1.09-1 = 0.09); c4 .4 takes its own and the default has
// 0.12; at 4.0 c4 has one again and the default 1.2.
func TestEnvoyLocalOwnKeys(t *testing.T) {
	src := localHead + "token_bucket: {max_tokens: 3, tokens_per_fill: 3, fill_interval: 10s}\n" +
		"descriptors:\n  - {entries: [{key: client}], token_bucket: {max_tokens: 1, tokens_per_fill: 1, fill_interval: 1s}}\n"
	l, err := ReadEnvoyLocal("k.yaml", []byte(src))
	require.NoError(t, err)
	keys, err := l.Keys(Options{Scope: "s client"})
	require.NoError(t, err)
	require.Len(t, keys, 2)
	require.Equal(t, "client", keys[0].attr())
	require.Equal(t, KeyGlobal, keys[1].Kind)
	out, err := text(l.Scenario(Options{Scope: "s client"}))
	require.NoError(t, err)
	require.NotContains(t, out, "NOTE: these limits count by different keys")
	require.Contains(t, out, "by: global")
	sc, err := scenarios.Parse("k.yaml", []byte(out))
	require.NoError(t, err, out)
	row := sc.Algorithms[0]
	lim, err := algorithms.New(row.Name, row.Params)
	require.NoError(t, err)
	ms := time.Millisecond
	at := lim.(algorithms.Attributed)
	require.True(t, at.ByAttributes())
	for _, step := range []struct {
		at   time.Duration
		key  algorithms.Key
		want algorithms.Verdict
	}{
		{0, 1, algorithms.Accept},
		{100 * ms, 2, algorithms.Accept},
		{200 * ms, 1, algorithms.Reject},
		{300 * ms, 3, algorithms.Accept},
		{400 * ms, 4, algorithms.Reject},
		{4000 * ms, 4, algorithms.Accept},
	} {
		require.Equal(t, step.want, at.DecideAttrs(step.at, []algorithms.Key{step.key}, 1).Verdict, step.at)
	}
}
