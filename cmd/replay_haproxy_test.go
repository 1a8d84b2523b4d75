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
	dir := t.TempDir()
	c, l := filepath.Join(dir, "haproxy.cfg"), filepath.Join(dir, "h.log")
	conf := "frontend f\n" +
		"    bind :80\n" +
		"    stick-table type string len 32 size 1k store http_req_rate(1s)\n" +
		"    http-request capture req.hdr(X-Client) len 32\n" +
		"    http-request track-sc0 req.hdr(X-Client)\n" +
		"    http-request deny deny_status 503 if { sc_http_req_rate(0) gt 2 }\n" +
		"    log-format \"" + logFormat + "\"\n"
	require.NoError(t, os.WriteFile(c, []byte(conf), 0o644))
	require.NoError(t, os.WriteFile(l, []byte(log), 0o644))
	return c, l
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
