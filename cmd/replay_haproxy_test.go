package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/sim"
)

// haproxyFiles writes an haproxy.cfg whose frontend logs with logFormat,
// and a log, into a temporary folder.
func haproxyFiles(t *testing.T, logFormat, log string) (string, string) {
	return haproxyConfAndLog(t, "frontend f\n"+
		"    bind :80\n"+
		"    stick-table type string len 32 size 1k store http_req_rate(1s)\n"+
		"    http-request capture req.hdr(X-Client) len 32\n"+
		"    http-request track-sc0 req.hdr(X-Client)\n"+
		"    http-request deny deny_status 503 if { sc_http_req_rate(0) gt 2 }\n"+
		"    log-format \""+logFormat+"\"\n", log)
}

// TestReplayHAProxyCheck: a log written with the frontend's log-format is
// read without other flags, and --check-field status holds the row
// against %ST, the deny_status 503 being a reject. By HAProxy's
// http_req_rate(1s) with gt 2 (the haproxy row: every request counted,
// denied when the rate including it is > 2): a's requests at .000, .100
// and .200 read rates 1, 2, 3: the third is denied; the log says 503 for
// it (agree) and 200 for the fourth at .300 (rate 4: ratesim denies;
// disagree). b's one request is under. %Ts.%ms is read as seconds and
// ms, and the {+Q} quotes around the client come off.
func TestReplayHAProxyCheck(t *testing.T) {
	c, l := haproxyFiles(t, `%Ts.%ms %{+Q}[capture.req.hdr(0)] %ST %Tt`,
		"1700000000.000 \"a\" 200 0\n1700000000.100 \"a\" 200 0\n1700000000.200 \"a\" 503 0\n1700000000.300 \"a\" 200 1\n1700000000.300 \"b\" 200 0\n")
	rep := jsonReport(t, "replay", l, "--gateway", c, "--from", "haproxy", "--check-field", "status")
	require.Len(t, rep.Results, 1)
	ck := rep.Results[0].Check
	require.Equal(t, int64(5), ck.Compared)
	require.Equal(t, int64(4), ck.Agree)
	require.Len(t, ck.First, 1)
	require.Equal(t, sim.CheckDisagreement{TimeNs: 1700000000300000000, Key: "a", Gateway: "200", Ratesim: "reject"}, ck.First[0])
}

func TestReplayHAProxyErrors(t *testing.T) {
	for _, tc := range []struct{ format, want string }{
		{`%[date(0,ms)] %ci %ST`, `haproxy.cfg:7:16: log-format: the limit counts by the header x-client (` /* its where */},
		{`%ci %[capture.req.hdr(0)] %ST`, `haproxy.cfg:7:16: log-format: no time: replay needs the time of each request: add %[date(0,ms)] (or %Ts.%ms) to it`},
	} {
		c, l := haproxyFiles(t, tc.format, "1700000000000 a 200\n")
		status, _, errOut := run(t, "replay", l, "--gateway", c, "--from", "haproxy", "--check-field", "status")
		require.Equal(t, 2, status, tc.format)
		require.Contains(t, errOut, filepath.Dir(c)+"/"+tc.want, tc.format)
		require.True(t, strings.Count(errOut, "\n") == 1, errOut)
	}
}

// haproxyTwoKeys writes an haproxy.cfg whose frontend tracks the address
// (sc0, its own table, gt 2 per 1s) and the header X-Key (sc1, table keys,
// gt 3 per 1s), both tracks before the denies, logging with logFormat,
// and a log.
func haproxyTwoKeys(t *testing.T, logFormat, log string) (string, string) {
	return haproxyConfAndLog(t, "frontend f\n"+
		"    bind :80\n"+
		"    stick-table type ip size 1k store http_req_rate(1s)\n"+
		"    http-request capture req.hdr(X-Key) len 32\n"+
		"    http-request track-sc0 src\n"+
		"    http-request track-sc1 req.hdr(X-Key) table keys\n"+
		"    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 2 }\n"+
		"    http-request deny deny_status 429 if { sc_http_req_rate(1) gt 3 }\n"+
		"    log-format \""+logFormat+"\"\n"+
		"backend keys\n"+
		"    stick-table type string len 32 size 1k store http_req_rate(1s)\n", log)
}

// TestReplayHAProxyTwoKeys: each tracked counter counts by its own key,
// the address from %ci and the header from its capture; every track comes
// before the denies, so a request denied by sc0 is still counted in sc1
// (every-hit). Hand-computed, all in one second from each key's first
// hit (the rate is the count): ip1 A, ip1 A pass (ip1 2, A 2); ip1 A is
// denied by sc0 (ip1 3 > 2; A 3); ip2 A by sc1 (A 4 > 3); ip2 B passes
// (ip2 2, B 1); ip3 A by sc1 (A 5). The log says the same: 6 agree; sc0
// fired once, sc1 twice.
func TestReplayHAProxyTwoKeys(t *testing.T) {
	c, l := haproxyTwoKeys(t, `%Ts.%ms %ci %[capture.req.hdr(0)] %ST`,
		"1700000000.000 10.0.0.1 A 200\n1700000000.100 10.0.0.1 A 200\n1700000000.200 10.0.0.1 A 429\n"+
			"1700000000.300 10.0.0.2 A 429\n1700000000.400 10.0.0.2 B 200\n1700000000.500 10.0.0.3 A 429\n")
	rep := jsonReport(t, "replay", l, "--gateway", c, "--from", "haproxy", "--check-field", "status")
	require.Len(t, rep.Results, 1)
	r := rep.Results[0]
	require.Equal(t, int64(6), r.Check.Compared)
	require.Equal(t, int64(6), r.Check.Agree)
	require.Equal(t, []sim.LimitFired{
		{Limit: "sc0 src (haproxy.cfg:7)", Rejected: 1},
		{Limit: "sc1 req.hdr(X-Key) (haproxy.cfg:8)", Rejected: 2},
	}, r.Fired)
}

// A log-format that logs one of the keys but not the other is exit 2 at
// the log-format, naming the track and what to add.
func TestReplayHAProxyTwoKeysMissing(t *testing.T) {
	for _, tc := range []struct{ format, want string }{
		{`%Ts.%ms %ci %ST`, `haproxy.cfg:9:16: log-format: the limit counts by the header x-key (`},
		{`%Ts.%ms %[capture.req.hdr(0)] %ST`, `haproxy.cfg:9:16: log-format: the limit counts by the client address (`},
	} {
		c, l := haproxyTwoKeys(t, tc.format, "1700000000.000 A 200\n")
		status, _, errOut := run(t, "replay", l, "--gateway", c, "--from", "haproxy", "--check-field", "status")
		require.Equal(t, 2, status, tc.format)
		require.Contains(t, errOut, filepath.Dir(c)+"/"+tc.want, tc.format)
		require.Contains(t, errOut, "haproxy.cfg:", tc.format)
	}
}

// With track-sc1 after sc0's deny, a request sc0 denies runs no later rule
// and is not counted in sc1 (in-order): the same log as above, where the
// fourth request (ip2 A) now finds A at 3 (not 4: the third was denied
// before its track) and passes; ip3 A then makes A 4 > 3. Hand-computed
// statuses: 200 200 429 200 200 429, all agree; sc0 and sc1 fired once.
func TestReplayHAProxyTwoKeysInOrder(t *testing.T) {
	dir := t.TempDir()
	c, l := filepath.Join(dir, "haproxy.cfg"), filepath.Join(dir, "h.log")
	conf := "frontend f\n" +
		"    bind :80\n" +
		"    stick-table type ip size 1k store http_req_rate(1s)\n" +
		"    http-request capture req.hdr(X-Key) len 32\n" +
		"    http-request track-sc0 src\n" +
		"    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 2 }\n" +
		"    http-request track-sc1 req.hdr(X-Key) table keys\n" +
		"    http-request deny deny_status 429 if { sc_http_req_rate(1) gt 3 }\n" +
		"    log-format \"%Ts.%ms %ci %[capture.req.hdr(0)] %ST\"\n" +
		"backend keys\n" +
		"    stick-table type string len 32 size 1k store http_req_rate(1s)\n"
	log := "1700000000.000 10.0.0.1 A 200\n1700000000.100 10.0.0.1 A 200\n1700000000.200 10.0.0.1 A 429\n" +
		"1700000000.300 10.0.0.2 A 200\n1700000000.400 10.0.0.2 B 200\n1700000000.500 10.0.0.3 A 429\n"
	require.NoError(t, os.WriteFile(c, []byte(conf), 0o644))
	require.NoError(t, os.WriteFile(l, []byte(log), 0o644))
	rep := jsonReport(t, "replay", l, "--gateway", c, "--from", "haproxy", "--check-field", "status")
	r := rep.Results[0]
	require.Equal(t, int64(6), r.Check.Agree)
	require.Equal(t, int64(6), r.Check.Compared)
	require.Equal(t, []sim.LimitFired{
		{Limit: "sc0 src (haproxy.cfg:6)", Rejected: 1},
		{Limit: "sc1 req.hdr(X-Key) (haproxy.cfg:8)", Rejected: 1},
	}, r.Fired)
}

// haproxyConfAndLog writes conf as an haproxy.cfg and log beside it, into
// a temporary folder, and returns their paths.
func haproxyConfAndLog(t *testing.T, conf, log string) (string, string) {
	dir := t.TempDir()
	c, l := filepath.Join(dir, "haproxy.cfg"), filepath.Join(dir, "h.log")
	require.NoError(t, os.WriteFile(c, []byte(conf), 0o644))
	require.NoError(t, os.WriteFile(l, []byte(log), 0o644))
	return c, l
}

// haproxyFrontends is two frontends with their own limits, per client
// address in 1s (api: gt 2; web: gt 1), and a third without a limit, all
// logging with the defaults' log-format logFormat.
func haproxyFrontends(logFormat string) string {
	return "defaults\n" +
		"    mode http\n" +
		"    log-format \"" + logFormat + "\"\n" +
		"frontend api\n" +
		"    bind :80\n" +
		"    stick-table type ip size 1k expire 10s store http_req_rate(1s)\n" +
		"    http-request track-sc0 src\n" +
		"    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 2 }\n" +
		"frontend web\n" +
		"    bind :81\n" +
		"    stick-table type ip size 1k expire 10s store http_req_rate(1s)\n" +
		"    http-request track-sc0 src\n" +
		"    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 1 }\n" +
		"frontend static\n" +
		"    bind :82\n"
}

// TestReplayHAProxyFrontends: one log of three frontends, each line
// naming its frontend (%f). Hand-computed, one client within one second
// (each rate is its count): api sees .000, .020 and .040, the third over
// 2; web .010, .030 and .070, the second and third over 1; static's line
// goes to no row; "admin" is no frontend of the config and is counted
// unrouted. Fed every line, as without routing, api would see 8.
func TestReplayHAProxyFrontends(t *testing.T) {
	log := "1700000000.000 api 10.0.0.1 200\n1700000000.010 web 10.0.0.1 200\n1700000000.020 api 10.0.0.1 200\n" +
		"1700000000.030 web 10.0.0.1 429\n1700000000.040 api 10.0.0.1 429\n1700000000.050 static 10.0.0.1 200\n" +
		"1700000000.060 admin 10.0.0.1 200\n1700000000.070 web 10.0.0.1 429\n"
	t.Run("%f", func(t *testing.T) { replayHAProxyFrontends(t, "%f", log) })
	// %ft writes ~ after the name of a TLS frontend
	t.Run("%ft", func(t *testing.T) { replayHAProxyFrontends(t, "%ft", strings.ReplaceAll(log, " api ", " api~ ")) })
}

func replayHAProxyFrontends(t *testing.T, item, log string) {
	c, l := haproxyConfAndLog(t, haproxyFrontends("%Ts.%ms "+item+" %ci %ST"), log)
	rep := jsonReport(t, "replay", l, "--gateway", c, "--from", "haproxy", "--check-field", "status")
	require.Len(t, rep.Results, 2)
	for i, want := range []struct {
		label             string
		offered, rejected int64
	}{{"api", 3, 1}, {"web", 3, 2}} {
		r := rep.Results[i]
		require.Equal(t, want.label, r.Label)
		require.Equal(t, want.offered, r.Offered, r.Label)
		require.Equal(t, want.rejected, r.Rejected, r.Label)
		require.Equal(t, want.offered, r.Check.Agree, r.Label)
		require.Equal(t, want.offered, r.Check.Compared, r.Label)
	}
	g := rep.Traces[0].Routing
	require.NotNil(t, g)
	require.Equal(t, int64(1), g.Unrouted)
	require.Equal(t, []sim.RouteCount{{Route: "api", Limited: true, Requests: 3}, {Route: "web", Limited: true, Requests: 3}, {Route: "static", Requests: 1}}, g.Routes)
}

// TestReplayHAProxyFrontendsScope: --scope api on the log of three
// frontends above keeps api's row, which still takes only the lines that
// name api (3, the third over 2, as above); web's 3 lines, which a row
// left out by --scope would limit, are a route without a row, static's
// too, and admin's is unrouted. Before, the row took all 8 lines and
// rejected 6 (its rate 3 to 8 after .020).
func TestReplayHAProxyFrontendsScope(t *testing.T) {
	log := "1700000000.000 api 10.0.0.1 200\n1700000000.010 web 10.0.0.1 200\n1700000000.020 api 10.0.0.1 200\n" +
		"1700000000.030 web 10.0.0.1 429\n1700000000.040 api 10.0.0.1 429\n1700000000.050 static 10.0.0.1 200\n" +
		"1700000000.060 admin 10.0.0.1 200\n1700000000.070 web 10.0.0.1 429\n"
	c, l := haproxyConfAndLog(t, haproxyFrontends("%Ts.%ms %f %ci %ST"), log)
	status, out, errOut := run(t, "replay", l, "--gateway", c, "--from", "haproxy", "--check-field", "status", "--scope", "api", "--format", "json")
	require.Equal(t, 0, status, errOut)
	var rep sim.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, 1)
	r := rep.Results[0]
	require.Equal(t, "api", r.Label)
	require.Equal(t, int64(3), r.Offered)
	require.Equal(t, int64(1), r.Rejected)
	require.Equal(t, int64(3), r.Check.Agree)
	g := rep.Traces[0].Routing
	require.NotNil(t, g)
	require.Equal(t, int64(1), g.Unrouted)
	require.Equal(t, []sim.RouteCount{{Route: "api", Limited: true, Requests: 3}, {Route: "web", Requests: 3}, {Route: "static", Requests: 1}}, g.Routes)
	// the table says so under it
	status, out, errOut = run(t, "replay", l, "--gateway", c, "--from", "haproxy", "--scope", "api")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "  not limited: 4 requests to routes without a row (web 3, static 1), 1 to no route\n")
}

// A log-format without %f cannot say which frontend took a request: exit 2
// naming the rows and what to log; --scope keeps one frontend (and its
// row then takes every line).
func TestReplayHAProxyFrontendsNoName(t *testing.T) {
	c, l := haproxyConfAndLog(t, haproxyFrontends("%Ts.%ms %ci %ST"), "1700000000.000 10.0.0.1 200\n")
	status, _, errOut := run(t, "replay", l, "--gateway", c, "--from", "haproxy", "--check-field", "status")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "its requests go to 2 rows by their frontend (or listener) (api, web), and the log-format of frontend api (")
	require.Contains(t, errOut, "add %f (the frontend's name) to the log-format, or keep one scope with --scope")
	status, _, errOut = run(t, "replay", l, "--gateway", c, "--from", "haproxy", "--check-field", "status", "--scope", "web")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, errOut, "does not log each request's frontend (or listener): frontend web, the one section --scope kept, takes every line")
}

// TestReplayHAProxySplit: sc0 counts every request of the frontend
// (gt 4), sc1 only POST /login, in a table of its own (gt 1), both tracks
// before the denies. The section is one all-of row, every-hit: sc0 by the
// address, sc1 by the address where its track's condition holds, read
// from each line's method and path. Hand-computed, one client within one
// second: GET /a (sc0 1); POST /login (sc0 2, sc1 1); POST /login (sc0 3,
// sc1 2 > 1: denied by sc1); GET /login (sc0 4: sc1's track does not hold
// for a GET, which sc1 neither counts nor denies); GET /b (sc0 5 > 4:
// denied by sc0). HAProxy's log says 429 for the third and the fifth: the
// row agrees on all 5, and names sc1 and sc0 for them.
func TestReplayHAProxySplit(t *testing.T) {
	c, l := haproxyConfAndLog(t, "frontend www\n"+
		"    bind :80\n"+
		"    stick-table type ip size 1k expire 10s store http_req_rate(1s)\n"+
		"    acl post method POST\n"+
		"    http-request track-sc0 src\n"+
		"    http-request track-sc1 src table t_login if { path /login } post\n"+
		"    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 4 }\n"+
		"    http-request deny deny_status 429 if { sc_http_req_rate(1) gt 1 }\n"+
		"    log-format \"%Ts.%ms %ci %HM %HP %ST\"\n"+
		"backend t_login\n"+
		"    stick-table type ip size 1k expire 10s store http_req_rate(1s)\n",
		"1700000000.000 10.0.0.1 GET /a 200\n1700000000.010 10.0.0.1 POST /login 200\n1700000000.020 10.0.0.1 POST /login 429\n"+
			"1700000000.030 10.0.0.1 GET /login 200\n1700000000.040 10.0.0.1 GET /b 429\n")
	status, out, errOut := run(t, "replay", l, "--gateway", c, "--from", "haproxy", "--check-field", "status", "--format", "json")
	require.Equal(t, 0, status, errOut)
	var rep sim.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, 1)
	r := rep.Results[0]
	require.Equal(t, "www", r.Label)
	require.Equal(t, []int64{5, 2, 5, 5}, []int64{r.Offered, r.Rejected, r.Check.Agree, r.Check.Compared})
	require.Equal(t, []sim.LimitFired{
		{Limit: "sc0 src (haproxy.cfg:7)", Rejected: 1},
		{Limit: "sc1 src (haproxy.cfg:8)", Rejected: 1},
	}, r.Fired)
	require.Nil(t, rep.Traces[0].Routing, "one section: no routes")
	// a log-format without the path cannot say where sc1's track holds
	c2, l2 := haproxyConfAndLog(t, strings.Replace(mustRead(t, c), "%HM %HP ", "%HM ", 1), "1700000000.000 10.0.0.1 GET 200\n")
	status, _, errOut = run(t, "replay", l2, "--gateway", c2, "--from", "haproxy")
	require.Equal(t, 2, status, errOut)
	require.Contains(t, errOut, "count by the client address ("+c2+":6:5) where its track's condition holds, which reads each request's path, and the log-format of frontend www ("+c2+":9:16) does not log it: add %HP to it")
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
