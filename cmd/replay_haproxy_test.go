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
	status, out, errOut := run(t, "replay", l, "--gateway", c, "--from", "haproxy", "--check-field", "status", "--format", "json")
	require.Equal(t, 0, status, errOut)
	var rep sim.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
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
	status, out, errOut := run(t, "replay", l, "--gateway", c, "--from", "haproxy", "--check-field", "status", "--format", "json")
	require.Equal(t, 0, status, errOut)
	var rep sim.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
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
	status, out, errOut := run(t, "replay", l, "--gateway", c, "--from", "haproxy", "--check-field", "status", "--format", "json")
	require.Equal(t, 0, status, errOut)
	var rep sim.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
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
