package gateway

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
)

// testdata/haproxy.cfg, read by hand: www tracks src in backend per_ip's
// table (http_req_rate(10s)) and denies gt 100 with the default 403; api
// tracks a header in its own table (1m) and denies ge 1000, i.e. gt 999,
// with 429, logging with its own log-format; admin reads the same per_ip
// entries through src_http_req_rate(per_ip) in a named acl, gt 5, 503;
// stats limits nothing, but its tcp-request tracking counts its requests
// in per_ip, as backend app's track-sc1 does: the notes of www and admin
// say so.
func TestReadHAProxy(t *testing.T) {
	h := readWith(t, "testdata/haproxy.cfg", ReadHAProxy)
	require.Len(t, h.Tables, 2)
	type row struct {
		name, kind string
		sc         int
		key        Key
		table      string
		period     time.Duration
		limit      int64
		status     int
		log        string
		shared     []string
	}
	want := []row{
		{"www", "frontend", 0, Key{Kind: KeyAddr, Name: "src"}, "per_ip", 10 * time.Second, 100, 403, "%[date(0,ms)] %ci %ST", []string{"listen admin", "frontend stats", "backend app"}},
		{"api", "frontend", 1, Key{Kind: KeyHeader, Name: "x-api-key"}, "api", time.Minute, 999, 429, `%Ts.%ms %[capture.req.hdr(0)] %ST`, nil},
		{"admin", "listen", 2, Key{Kind: KeyAddr, Name: "src"}, "per_ip", 10 * time.Second, 5, 503, "%[date(0,ms)] %ci %ST", []string{"frontend www", "frontend stats", "backend app"}},
	}
	require.Len(t, h.Limits, len(want))
	for i, w := range want {
		l := h.Limits[i]
		k := l.Track.Key
		k.Where = Pos{}
		require.Equal(t, w, row{l.Name, l.Kind, l.Track.SC, k, l.Track.Table.Name, l.Track.Table.Period, l.Limit, l.Status, l.Log, l.SharedWith})
	}
	require.Equal(t, Pos{"testdata/haproxy.cfg", 26, 17}, h.Limits[2].CondWhere) // the acl's fetch
	keys, err := h.Keys(Options{})
	require.NoError(t, err)
	require.Len(t, keys, 2)
	keys, err = h.Keys(Options{Scope: "api"})
	require.NoError(t, err)
	require.Equal(t, "the header x-api-key", keys[0].String())
	_, err = text(h.Scenario(Options{Scope: "nope"}))
	require.EqualError(t, err, `--scope "nope": no scope of testdata/haproxy.cfg has that name (its scopes: "www", "api", "admin")`)
}

// The imported scenario is a golden file, and it loads with one haproxy
// row per limit.
func TestHAProxyScenario(t *testing.T) {
	h := readWith(t, "testdata/haproxy.cfg", ReadHAProxy)
	out, err := text(h.Scenario(Options{}))
	require.NoError(t, err)
	const golden = "testdata/haproxy.yaml"
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), out)
	sc, err := scenarios.Parse(golden, []byte(out))
	require.NoError(t, err, out)
	require.Len(t, sc.Algorithms, 3)
	a := sc.Algorithms[1]
	require.Equal(t, "haproxy", a.Name)
	require.Equal(t, "api", a.Label)
	require.Equal(t, int64(999), a.Params.Rate)
	require.Equal(t, time.Minute, a.Params.Per)
}

const hpFront = "frontend f\n    bind :80\n"

var invalidHAProxy = []struct {
	name, src, want string
}{
	{"no limits", "global\n    daemon\n" + hpFront + "    http-request return status 200\n",
		`h.cfg: no limits at all: no frontend or listen section has an http-request deny on a tracked sc_http_req_rate`},
	{"outside a section", "bind :80\n", `h.cfg:1:1: bind: outside any section (want global, defaults, frontend, backend or listen first)`},
	{"unclosed quote", hpFront + "    log-format \"%ST\n", `h.cfg:3:16: unclosed " quote`},
	{"unknown fetch", hpFront + "    stick-table type ip size 1k store http_req_rate(10s)\n    http-request track-sc0 srcip\n",
		`h.cfg:4:28: http-request track-sc0: unknown sample fetch "srcip" (want src, req.hdr(NAME) or another fetch)`},
	{"converter", hpFront + "    stick-table type ip size 1k store http_req_rate(10s)\n    http-request track-sc0 src,ipmask(24)\n",
		`h.cfg:4:28: http-request track-sc0: converters on a track-sc key are not mapped (found "src,ipmask(24)")`},
	{"rate without tracking", hpFront + "    http-request deny if { sc_http_req_rate(0) gt 10 }\n",
		`h.cfg:3:18: http-request deny: sc0 is not tracked before this rule (HAProxy runs the rules in order: want an http-request track-sc0 before it)`},
	{"deny before track", hpFront + "    stick-table type ip size 1k store http_req_rate(10s)\n    http-request deny if { sc0_http_req_rate gt 10 }\n    http-request track-sc0 src\n",
		`h.cfg:4:18: http-request deny: sc0 is not tracked before this rule (HAProxy runs the rules in order: want an http-request track-sc0 before it)`},
	{"table without http_req_rate", hpFront + "    stick-table type ip size 1k store conn_rate(10s)\n    http-request track-sc0 src\n    http-request deny if { sc_http_req_rate(0) gt 10 }\n",
		`h.cfg:5:18: http-request deny: table f (at line 3) stores no http_req_rate(PERIOD) (its store: "conn_rate(10s)"): sc_http_req_rate reads nothing there`},
	{"no table", hpFront + "    http-request track-sc0 src\n",
		`h.cfg:3:18: http-request track-sc0: frontend f has no stick-table and the rule names none (want table NAME)`},
	{"unknown table", hpFront + "    http-request track-sc0 src table nope\n",
		`h.cfg:3:38: http-request track-sc0: no stick-table in a section named "nope"`},
	{"other operator", hpFront + "    stick-table type ip size 1k store http_req_rate(10s)\n    http-request track-sc0 src\n    http-request deny if { sc_http_req_rate(0) lt 10 }\n",
		`h.cfg:5:48: http-request deny: operator "lt" is not a limit (want gt or ge)`},
	{"combined condition", hpFront + "    stick-table type ip size 1k store http_req_rate(10s)\n    http-request track-sc0 src\n    http-request deny if { sc_http_req_rate(0) gt 10 } !{ src 10.0.0.1 }\n",
		`h.cfg:5:26: http-request deny: a condition that combines a rate test with anything else is not mapped (want if { sc_http_req_rate(N) gt L } or if ACL, alone)`},
	{"tarpit", hpFront + "    stick-table type ip size 1k store http_req_rate(10s)\n    http-request track-sc0 src\n    http-request tarpit if { sc_http_req_rate(0) gt 10 }\n",
		`h.cfg:5:18: http-request tarpit: only http-request deny is mapped on a rate test (found tarpit)`},
	{"short expire", hpFront + "    stick-table type ip size 1k expire 10s store http_req_rate(10s)\n    http-request track-sc0 src\n    http-request deny if { sc_http_req_rate(0) gt 10 }\n",
		`h.cfg:3:5: stick-table: expire 10s is shorter than twice the http_req_rate period 10s: an entry can expire while its counter still counts, which ratesim does not model (want expire >= 20s)`},
	{"peers", hpFront + "    stick-table type ip size 1k peers mine store http_req_rate(10s)\n",
		`h.cfg:3:33: stick-table: peers (the table synchronised with other HAProxy processes) is not modelled: each ratesim row counts on one node; remove it to import`},
	{"bad period", hpFront + "    stick-table type ip size 1k store http_req_rate(10x)\n",
		`h.cfg:3:39: stick-table: invalid http_req_rate period "10x" (want whole milliseconds from 1ms to 2147483647ms, e.g. 10s)`},
	{"conditional track", hpFront + "    stick-table type ip size 1k store http_req_rate(10s)\n    http-request track-sc0 src if { url_param(x) -m found }\n",
		`h.cfg:4:37: http-request track-sc0: url_param(x): a criterion replay cannot read from a log (it reads path, path_beg, path_end, path_sub, path_reg, method and hdr(host) and its hdr_* forms)`},
	{"tcp tracking", hpFront + "    stick-table type ip size 1k store http_req_rate(10s)\n    tcp-request connection track-sc0 src\n    http-request deny if { sc0_http_req_rate gt 10 }\n",
		`h.cfg:5:18: http-request deny: sc0 is tracked by tcp-request (line 4), whose counters count otherwise: not mapped (track with http-request track-sc0)`},
	{"denies all", hpFront + "    stick-table type ip size 1k store http_req_rate(10s)\n    http-request track-sc0 src\n    http-request deny if { sc_http_req_rate(0) ge 1 }\n",
		`h.cfg:5:28: http-request deny: the test denies every request (the rate read includes the request, so it is at least 1): want gt 1 or more (ge 2 or more)`},
	{"two limits", hpFront + "    stick-table type ip size 1k store http_req_rate(10s)\n    http-request track-sc0 src\n    http-request deny if { sc_http_req_rate(0) gt 10 }\n    http-request deny if { sc_http_req_rate(0) gt 5 }\n",
		`h.cfg:6:18: http-request deny: a second rate deny on sc0 in frontend f (the first at line 5): ratesim maps one deny per tracked counter`},
	{"interleaved", hpFront + "    stick-table type string len 64 size 1k store http_req_rate(10s)\n    http-request track-sc0 src\n    http-request deny if { sc_http_req_rate(0) gt 10 }\n" +
		"    http-request track-sc1 req.hdr(x-a)\n    http-request track-sc2 req.hdr(x-b)\n    http-request deny if { sc_http_req_rate(1) gt 5 }\n    http-request deny if { sc_http_req_rate(2) gt 5 }\n",
		`h.cfg:9:18: http-request deny: the tracks and rate denies of frontend f interleave otherwise than all tracks first, or each track after the previous deny: not mapped (which counters count a denied request depends on it)`},
	{"in a backend", "backend b\n    stick-table type ip size 1k store http_req_rate(10s)\n    http-request track-sc0 src\n    http-request deny if { sc0_http_req_rate gt 10 }\n",
		`h.cfg:4:18: http-request deny: in backend b: ratesim maps the limits of frontend and listen sections (a backend's rules run after its frontend's)`},
	{"bad deny_status", hpFront + "    stick-table type ip size 1k store http_req_rate(10s)\n    http-request track-sc0 src\n    http-request deny deny_status abc if { sc_http_req_rate(0) gt 10 }\n",
		`h.cfg:5:23: http-request deny: invalid deny_status "abc" (want an HTTP status from 200 to 599)`},
	{"limit in defaults", "defaults\n    http-request set-header X-A b\n    http-request track-sc0 src\n",
		`h.cfg:3:18: http-request track-sc0: in a defaults section: ratesim maps the limits of frontend and listen sections (write them there)`},
	{"table arg mismatch", hpFront + "    stick-table type ip size 1k store http_req_rate(10s)\n    http-request track-sc0 src\n    http-request deny if { sc_http_req_rate(0,other) gt 10 }\n",
		`h.cfg:5:28: http-request deny: reads table other, but sc0 tracks table f`},
	{"rate in another rule", hpFront + "    http-request set-var(txn.r) sc_http_req_rate(0)\n",
		`h.cfg:3:18: http-request set-var(txn.r): only http-request deny is mapped on a rate test (found set-var(txn.r))`},
}

func TestReadHAProxyErrors(t *testing.T) {
	for _, tc := range invalidHAProxy {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadHAProxy("h.cfg", []byte(tc.src))
			requireGatewayError(t, err, tc.want)
		})
	}
}

// FuzzReadHAProxy: any input gives limits that make a loadable scenario,
// or an *Error; never a panic.
func FuzzReadHAProxy(f *testing.F) {
	for _, p := range []string{"testdata/haproxy.cfg", "../examples/haproxy.cfg"} {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, tc := range invalidHAProxy {
		f.Add([]byte(tc.src))
	}
	f.Add([]byte(hpFront + "  stick-table type string len 8 size 9 store http_req_rate(3)\n  acl a sc0_http_req_rate(f) ge 2\n  http-request track-sc0 req.fhdr('X A')\n  http-request deny if a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadHAProxy("f.cfg", data)
		if !readOK(t, err) {
			return
		}
		out, err := text(h.Scenario(Options{}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scenarios.Parse("f.yaml", []byte(out)); err != nil {
			t.Fatalf("imported scenario does not load: %v\n%s", err, out)
		}
		for _, l := range h.Limits {
			if lf, err := l.LogFormat(); err == nil {
				_, _ = lf.Parse(l.Log)
			}
		}
	})
}

func TestHAProxyLogFormat(t *testing.T) {
	addr := Key{Kind: KeyAddr}
	hdr := Key{Kind: KeyHeader, Name: "x-client"}
	for _, tc := range []struct {
		format   string
		key      Key
		captures []string
		line     string
		want     HAProxyLogEntry
		err      string
	}{
		{format: "%[date(0,ms)] %ci %ST", key: addr, line: "1700000000123 10.0.0.1 429",
			want: HAProxyLogEntry{Time: 1700000000123 * time.Millisecond, Key: "10.0.0.1", Status: 429}},
		{format: "%[date(0,us)] %[capture.req.hdr(1)] %ST rate=%[sc0_http_req_rate]", key: hdr, captures: []string{"host", "x-client"},
			line: "1700000000123456 alice 200 rate=3",
			want: HAProxyLogEntry{Time: 1700000000123456 * time.Microsecond, Key: "alice", Status: 200}},
		{format: "%Ts.%ms %{+Q}[src] %ST", key: addr, line: "1700000000.007 \"10.0.0.1\" 200",
			want: HAProxyLogEntry{Time: 1700000000007 * time.Millisecond, Key: "\"10.0.0.1\"", Status: 200}},
		{format: "%ci %ST", key: addr, err: `log-format "%ci %ST": no time (want %[date(0,ms)], or %Ts with %ms)`},
		{format: "%[date(0,ms)] %ci", key: addr, err: `log-format "%[date(0,ms)] %ci": no status (want %ST)`},
		{format: "%[date(0,ms)] %ST %[capture.req.hdr(0)]", key: hdr, captures: []string{"host"},
			err: `log-format "%[date(0,ms)] %ST %[capture.req.hdr(0)]": no key (want %[capture.req.hdr(N)] with capture N http-request capture req.hdr(x-client) len L)`},
		{format: "%[date(0,ms)]%ci %ST", key: addr, err: `log-format "%[date(0,ms)]%ci %ST": %ci follows %[date(0,ms)] with no text between: a line could not be split`},
		{format: "%[date(0,ms)] %ci %ST", key: addr, line: "17x 10.0.0.1 200", err: `time: "17x" is not a whole number`},
		{format: "%[date(0,ms)] %ci %ST", key: addr, line: "17 10.0.0.1", err: `want " " after column 4`},
	} {
		f, err := ParseHAProxyLogFormat(tc.format, tc.key, tc.captures)
		if err == nil && tc.line != "" {
			var e HAProxyLogEntry
			e, err = f.Parse(tc.line)
			if err == nil {
				e.Fields = nil
				require.Equal(t, tc.want, e, tc.format)
			}
		}
		if tc.err != "" {
			require.EqualError(t, err, tc.err, tc.format)
		} else {
			require.NoError(t, err, tc.format)
		}
	}
}

func TestSplitHAProxy(t *testing.T) {
	lines, err := splitHAProxy("q.cfg", []byte("  a \"b c\" 'd\\e' f\\ g\\#h # comment\n\n\tone\r\n"))
	require.NoError(t, err)
	require.Len(t, lines, 2)
	var got []string
	for _, w := range lines[0].words {
		got = append(got, w.s)
	}
	require.Equal(t, []string{"a", "b c", `d\e`, "f g#h"}, got)
	require.Equal(t, 5, lines[0].words[1].col)
	require.Equal(t, 3, lines[1].line)
	require.Equal(t, "one", strings.Join([]string{lines[1].arg(0)}, ""))
}

// FuzzHAProxyLogFormat: any log-format and line give an entry or an
// error; never a panic.
func FuzzHAProxyLogFormat(f *testing.F) {
	f.Add("%[date(0,ms)] %ci %ST", "1700000000123 10.0.0.1 429")
	f.Add("%[date(0,us)] %[capture.req.hdr(0)] %ST %[sc_http_req_rate(0)]", "1796157716699908 client-3 429 6")
	f.Add("%Ts.%ms %{+Q}[src] %ST", "1700000000.007 \"10.0.0.1\" 200")
	f.Add("%{+Q [date(0,ms)]%% \\ %ci %ST", "99999999999999999999 x 1")
	f.Fuzz(func(t *testing.T, format, line string) {
		for _, k := range []Key{{Kind: KeyAddr}, {Kind: KeyHeader, Name: "x-client"}} {
			lf, err := ParseHAProxyLogFormat(format, k, []string{"x-client"})
			if err != nil {
				continue
			}
			if e, err := lf.Parse(line); err == nil && e.Time < 0 {
				t.Fatalf("negative time %v from %q", e.Time, line)
			}
		}
	})
}
