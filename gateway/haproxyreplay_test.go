package gateway

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/traffic"
)

// hpLogged is a frontend limited by key (src or req.hdr(X-Client)), with
// X-Client captured second (capture 1), that logs with format (the
// log-format line is line 8; its argument at column 16).
func hpLogged(key, format string) string {
	return hpFront + // lines 1-2
		"    stick-table type string len 32 size 1k store http_req_rate(1s)\n" +
		"    http-request capture req.hdr(Host) len 32\n" +
		"    http-request capture req.hdr(X-Client) len 32\n" +
		"    http-request track-sc0 " + key + "\n" +
		"    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 10 }\n" +
		"    log-format \"" + format + "\"\n"
}

// TestHAProxyAccessLogs: haproxyTemplate's translation of a log-format
// into the nginx log_format text the replay reads, item by item as its
// doc comment lists them (HAProxy's items from sess_build_logline,
// src/log.c).
func TestHAProxyAccessLogs(t *testing.T) {
	for _, tc := range []struct {
		key, format  string
		text, tf, tu string
		err          string
	}{
		// the oracle's: the date in µs read with time-unit us, capture 1
		// is X-Client, the rate a variable the replay skips
		{key: "req.hdr(X-Client)", format: "%[date(0,us)] %[capture.req.hdr(1)] %ST %[sc_http_req_rate(0)]",
			text: "${date_us} ${http_x_client} ${status} ${haproxy_1}", tf: "date_us", tu: "us"},
		// %Ts.%ms is nginx's $msec (seconds, a dot, three digits); {+Q}
		// quotes become text; %ci the address
		{key: "src", format: "%Ts.%ms %{+Q}ci %ST %Tt", text: `${msec} "${remote_addr}" ${status} ${haproxy_Tt}`},
		// the finer time wins: date(0,ms) over %Ts alone; %[src] is the
		// address too
		{key: "src", format: "%Ts %[src] %[date(0,ms)] %ST", text: "${Ts} ${remote_addr} ${date_ms} ${status}", tf: "date_ms", tu: "ms"},
		{key: "src", format: "[%[date]] %ci %ST", text: "[${date}] ${remote_addr} ${status}", tf: "date", tu: "s"},
		// errors at the log-format's argument, saying what to add
		{key: "src", format: "%ci %ST", err: `h.cfg:8:16: log-format: no time: replay needs the time of each request: add %[date(0,ms)] (or %Ts.%ms) to it`},
		{key: "src", format: "%[date(0,ms)] %ci", err: `h.cfg:8:16: log-format: no status: replay --check-field status compares it: add %ST to it`},
		{key: "req.hdr(X-Client)", format: "%[date(0,ms)] %[capture.req.hdr(0)] %ST",
			err: `h.cfg:8:16: log-format: the limit counts by the header x-client (h.cfg:6:28) and the log-format does not log it: add %[capture.req.hdr(1)] to it`},
		{key: "req.hdr(X-User)", format: "%[date(0,ms)] %ci %ST",
			err: `h.cfg:8:16: log-format: the limit counts by the header x-user (h.cfg:6:28) and the log-format does not log it: add %[capture.req.hdr(N)], N being a capture of the header (http-request capture req.hdr(x-user) len 64 in frontend f) to it`},
		{key: "src", format: "%[date(0,ms)]%ci %ST", err: `h.cfg:8:16: log-format: "%[date(0,ms)]%ci %ST": %ci follows %[date(0,ms)] with no text between: a line could not be split`},
		{key: "src", format: "%[date(0,ms)] $%ci %ST", err: `h.cfg:8:16: log-format: a $ in its text (" $"): replay reads the log through an nginx log_format, where $ starts a variable; leave it out`},
	} {
		h, err := ReadHAProxy("h.cfg", []byte(hpLogged(tc.key, tc.format)))
		require.NoError(t, err, tc.format)
		logs, err := h.AccessLogs(Options{})
		if tc.err != "" {
			requireGatewayError(t, err, tc.err, tc.format)
			continue
		}
		require.NoError(t, err, tc.format)
		require.Len(t, logs, 1)
		f := logs[0].Format
		require.Equal(t, tc.text, f.Text, tc.format)
		require.Equal(t, tc.tf, f.TimeField, tc.format)
		require.Equal(t, tc.tu, f.TimeUnit, tc.format)
		require.Equal(t, "none", f.Escape)
		_, err = traffic.ParseLogTemplate(f.Text, f.Escape)
		require.NoError(t, err, tc.format)
		st, err := h.RejectStatuses(Options{})
		require.NoError(t, err)
		require.Equal(t, []int{429}, st)
	}
}

func TestHAProxyNoLogFormat(t *testing.T) {
	src := hpFront + "    stick-table type ip size 1k store http_req_rate(10s)\n" +
		"    http-request track-sc0 src\n    http-request deny if { sc_http_req_rate(0) gt 5 }\n"
	h, err := ReadHAProxy("h.cfg", []byte(src))
	require.NoError(t, err)
	_, err = h.AccessLogs(Options{})
	require.EqualError(t, err, `h.cfg:1:1: frontend f has no log-format: replay reads a log written with one (with `+"`log ... format raw`"+`); add, for example, log-format "%[date(0,ms)] %ci %ST"`)
	st, err := h.RejectStatuses(Options{})
	require.NoError(t, err)
	require.Equal(t, []int{403}, st, "deny_status defaults to 403")
}

// FuzzHAProxyAccessLogs: any log-format gives an nginx log_format text
// the replay compiles, whose time-field is one of its variables, or an
// *Error; never a panic.
func FuzzHAProxyAccessLogs(f *testing.F) {
	f.Add("src", "%Ts.%ms %{+Q}ci %ST %Tt")
	f.Add("req.hdr(X-Client)", "%[date(0,us)] %[capture.req.hdr(1)] %ST %[sc_http_req_rate(0)]")
	f.Add("src", "%Ts.%{+Q}ms %ci %ST x%%y\\$")
	f.Add("src", "%{+Q [date] %ci %ST")
	f.Fuzz(func(t *testing.T, key, format string) {
		h, err := ReadHAProxy("h.cfg", []byte(hpLogged(key, format)))
		if err != nil {
			return
		}
		logs, err := h.AccessLogs(Options{})
		if !readOK(t, err) {
			return
		}
		for _, l := range logs {
			tm, err := traffic.ParseLogTemplate(l.Format.Text, l.Format.Escape)
			if err != nil {
				t.Fatalf("%q gives %q, which does not compile: %v", format, l.Format.Text, err)
			}
			if l.Format.TimeField != "" && tm.Index(l.Format.TimeField) < 0 {
				t.Fatal(fmt.Sprintf("time-field %s is not in %q", l.Format.TimeField, l.Format.Text))
			}
		}
	})
}
