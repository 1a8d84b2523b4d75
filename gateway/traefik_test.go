package gateway

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testdata/traefik.yml, read by hand against Traefik's ratelimiter.New
// (pkg/middlewares/ratelimiter/rate_limiter.go): rtl = average*1e9/period;
// maxDelay 1s/(2*int(rtl)) when rtl >= 1, else 500ms; ttl 2s when rtl >= 1,
// else 1 + int(1/rtl) seconds; burst max(burst, 1), 1 by default.
//   - router api uses api-limit@file (the file provider's api-limit): 100
//     per 1s, rtl 100, 1s/200 = 5ms, burst 50, ttl 2s, the client address.
//   - router login uses the chain secured, which holds login-limit: 6 per
//     1m, rtl 0.1 < 1: 500ms; ttl 1 + int(1/0.1) = 11s; burst 1; its
//     ipStrategy depth 1 counts by X-Forwarded-For.
//   - router admin uses api-limit too: its own row (each router builds
//     its own limiter).
//   - by-key, used by no router: 3 per 1s, rtl 3, 1s/6 = 166666666ns
//     (time.Duration division truncates), burst 0 raised to 1, the header
//     X-API-Key.
//   - off: average 0 is no limit: no row.
func TestReadTraefik(t *testing.T) {
	tr := readWith(t, "testdata/traefik.yml", ReadTraefik)
	type row struct {
		name, mw string
		avg      int64
		period   time.Duration
		burst    int64
		maxDelay time.Duration
		ttl      time.Duration
		key      string
	}
	want := []row{
		{"api", "api-limit", 100, time.Second, 50, 5 * time.Millisecond, 2 * time.Second, ""},
		{"login", "login-limit", 6, time.Minute, 1, 500 * time.Millisecond, 11 * time.Second, "X-Forwarded-For (the address at depth 1 from the right)"},
		{"admin", "api-limit", 100, time.Second, 50, 5 * time.Millisecond, 2 * time.Second, ""},
		{"by-key", "by-key", 3, time.Second, 1, 166666666, 2 * time.Second, "header X-API-Key"},
	}
	var got []row
	for _, s := range tr.Scopes {
		l := s.Limit
		got = append(got, row{s.Name(), l.Middleware, l.Average, l.Period, l.Burst, l.MaxDelay, l.TTL, l.Key})
	}
	require.Equal(t, want, got)
	require.Len(t, tr.Unlimited, 1)
	require.Equal(t, "off", tr.Unlimited[0].Middleware)
	require.Same(t, tr.Scopes[0].Limit, tr.Scopes[2].Limit)
}

// Traefik's rules at their edges (rate_limiter.go, New): int(rtl)
// truncates, so 1.5/s waits up to 1s/2 = 500ms as 1/s does; 1 per 3s is
// rtl 1/3, whose 1/rtl is 3.0000000000000004 in float64: ttl 1 + 3 = 4s;
// a period of 0 is 1s; a bare integer period is seconds.
func TestTraefikRules(t *testing.T) {
	for _, tc := range []struct {
		src      string
		maxDelay time.Duration
		ttl      time.Duration
		period   time.Duration
	}{
		{"average: 3\nperiod: 2s", 500 * time.Millisecond, 2 * time.Second, 2 * time.Second},
		{"average: 1\nperiod: 3s", 500 * time.Millisecond, 4 * time.Second, 3 * time.Second},
		{"average: 7\nperiod: 0", time.Second / 14, 2 * time.Second, time.Second},
		{"average: 20\nperiod: 10", time.Second / 4, 2 * time.Second, 10 * time.Second},
		{"average: 1000000", 500, 2 * time.Second, time.Second},
	} {
		src := "http:\n  middlewares:\n    m:\n      rateLimit:\n" + indent(tc.src, "        ") + "\n"
		tr, err := ReadTraefik("t.yml", []byte(src))
		require.NoError(t, err, tc.src)
		l := tr.Scopes[0].Limit
		require.Equal(t, tc.maxDelay, l.MaxDelay, tc.src)
		require.Equal(t, tc.ttl, l.TTL, tc.src)
		require.Equal(t, tc.period, l.Period, tc.src)
	}
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(s, "\n", "\n"+by)
}

// The goldens, and the rows read back by the scenario parser (idle-reset
// aside until x-time-rate takes it).
func TestTraefikScenario(t *testing.T) {
	for _, name := range []string{"traefik.yml", "traefik.toml"} {
		tr := readWith(t, "testdata/"+name, ReadTraefik)
		out, err := text(tr.Scenario(Options{}))
		require.NoError(t, err)
		golden(t, strings.ReplaceAll(name, ".", "-")+".scenario.yaml", out)
		sc := parseImported(t, out)
		require.Len(t, sc.Algorithms, len(tr.Scopes))
		for i, a := range sc.Algorithms {
			l := tr.Scopes[i].Limit
			require.Equal(t, "x-time-rate", a.Name)
			require.Equal(t, l.Average, a.Params.Rate)
			require.Equal(t, l.Period, a.Params.Per)
			require.Equal(t, l.Burst, a.Params.Burst)
			require.Equal(t, l.MaxDelay, a.Params.MaxDelay, a.Label)
		}
	}
	tr := readWith(t, "testdata/traefik.yml", ReadTraefik)
	out, err := text(tr.Scenario(Options{}))
	require.NoError(t, err)
	require.Contains(t, out, "  - {name: x-time-rate, label: login, rate: 6, per: 1m, burst: 1, max-delay: 500ms, idle-reset: 11s}\n")
	require.Contains(t, out, "  # traefik.yml:36: middleware off: average 0: no limit (Traefik's rate is then infinite): no row\n")

	// TOML: the slow middleware, 1 per 10s, burst 2, by host
	tt := readWith(t, "testdata/traefik.toml", ReadTraefik)
	require.Equal(t, "slow", tt.Scopes[1].Name())
	require.Equal(t, Pos{"testdata/traefik.toml", 10, 19}, tt.Scopes[1].Limit.Where)
	require.Equal(t, 11*time.Second, tt.Scopes[1].Limit.TTL)
	require.Equal(t, "host", tt.Scopes[1].Limit.Key)
}

func TestTraefikScopeAndKeys(t *testing.T) {
	tr := readWith(t, "testdata/traefik.yml", ReadTraefik)
	out, err := text(tr.Scenario(Options{Scope: "api-limit"}))
	require.NoError(t, err)
	require.Len(t, parseImported(t, out).Algorithms, 2, "the routers api and admin use it")
	_, err = text(tr.Scenario(Options{Scope: "nope"}))
	require.EqualError(t, err, `--scope "nope": no scope, router or middleware of testdata/traefik.yml has that name (its scopes: "api", "login", "admin", "by-key")`)
	keys, err := tr.Keys(Options{})
	require.NoError(t, err)
	var got []string
	for _, k := range keys {
		got = append(got, k.Kind+" "+k.Name)
	}
	require.Equal(t, []string{"addr ", "other X-Forwarded-For (the address at depth 1 from the right)", "header x-api-key"}, got)
}

const trHead = "http:\n  middlewares:\n    m:\n      rateLimit:\n"

var invalidTraefik = []struct{ name, file, src, want string }{
	{"unknown field", "t.yml", trHead + "        average: 10\n        brust: 5\n",
		`t.yml:6:9: http.middlewares.m.rateLimit.brust: unknown field (want average, period, burst, sourceCriterion, redis)`},
	{"negative period", "t.yml", trHead + "        average: 10\n        period: -1s\n",
		`t.yml:6:17: http.middlewares.m.rateLimit.period: negative value not valid for period: -1s`},
	{"bad period", "t.yml", trHead + "        average: 10\n        period: soon\n",
		`t.yml:6:17: http.middlewares.m.rateLimit.period: "soon": not a duration (want e.g. 1s, 1m, 500ms, or a number of seconds)`},
	{"bad average", "t.yml", trHead + "        average: 1.5\n",
		`t.yml:5:18: http.middlewares.m.rateLimit.average: found number 1.5, want an integer`},
	{"two criteria", "t.yml", trHead + "        average: 10\n        sourceCriterion:\n          ipStrategy: {depth: 1}\n          requestHeaderName: X-Key\n",
		`t.yml:7:11: http.middlewares.m.rateLimit.sourceCriterion: iPStrategy and RequestHeaderName are mutually exclusive`},
	{"ipStrategy field", "t.yml", trHead + "        average: 10\n        sourceCriterion: {ipStrategy: {deep: 1}}\n",
		`t.yml:6:40: http.middlewares.m.rateLimit.sourceCriterion.ipStrategy.deep: unknown field (want depth, excludedIPs, ipv6Subnet)`},
	{"no limits", "t.yml", "http:\n  routers:\n    r: {rule: Path(`/`), service: s}\n",
		`t.yml: no rate limits at all: the config has no http.middlewares.NAME.rateLimit`},
	{"all zero", "t.yml", trHead + "        average: 0\n",
		`t.yml: no rate limits at all: every rateLimit's average is 0, which Traefik reads as no limit`},
	{"toml unknown", "t.toml", "[http.middlewares.m.rateLimit]\naverage = 10\nperiods = \"1s\"\n",
		`t.toml:3:1: http.middlewares.m.rateLimit.periods: unknown field (want average, period, burst, sourceCriterion, redis)`},
	{"toml syntax", "t.toml", "[http.middlewares.m.rateLimit]\naverage = \n",
		`t.toml:2:11: TOML syntax error: unexpected character U+000A at start of value`},
	{"toml duplicate", "t.toml", "[http.middlewares.m.rateLimit]\naverage = 10\naverage = 20\n",
		`t.toml:3:1: http.middlewares.m.rateLimit.average: duplicate key (also at 2:11)`},
	{"toml table twice", "t.toml", "[http.middlewares.m.rateLimit]\naverage = 10\n[http.middlewares.m.rateLimit]\nburst = 2\n",
		`t.toml:3:21: http.middlewares.m.rateLimit: table defined twice`},
	{"middlewares not a map", "t.yml", "http:\n  middlewares: [a]\n",
		`t.yml:2:16: http.middlewares: found a list, want a mapping of middlewares by name`},
}

func TestReadTraefikErrors(t *testing.T) {
	for _, tc := range invalidTraefik {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTraefik(tc.file, []byte(tc.src))
			requireGatewayError(t, err, tc.want)
		})
	}
}

// FuzzReadTraefik: any input, YAML or TOML, reads as limits whose scenario
// is written, or as an *Error; never a panic.
func FuzzReadTraefik(f *testing.F) {
	for _, p := range []string{"testdata/traefik.yml", "testdata/traefik.toml", "../examples/traefik.yml"} {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(strings.HasSuffix(p, ".toml"), data)
	}
	for _, tc := range invalidTraefik {
		f.Add(strings.HasSuffix(tc.file, ".toml"), []byte(tc.src))
	}
	f.Add(true, []byte("http.middlewares.a.rateLimit = {average = 9223372036, period = 1, burst = -3}\n[[http.routers.r]]\nmiddlewares = [\"a\"]\n"))
	f.Add(false, []byte("http:\n  routers: {r: {middlewares: [c@file, x@docker]}}\n  middlewares:\n    c: {chain: {middlewares: [c, a]}}\n    a: {rateLimit: {average: 1, period: 3s}}\n"))
	f.Fuzz(func(t *testing.T, toml bool, data []byte) {
		file := "f.yml"
		if toml {
			file = "f.toml"
		}
		tr, err := ReadTraefik(file, data)
		if !readOK(t, err) {
			return
		}
		if _, err := text(tr.Scenario(Options{})); err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Keys(Options{}); err != nil {
			t.Fatal(err)
		}
	})
}
