package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every gateway's replay refuses, with exit 2, a config it cannot read (at
// its file:line:col) and a log that lacks the field a limit counts by
// (naming the field and the limit's file:line): a log of the gateway's
// own kind for each, and, where the fields are named (JSON lines), the
// line that lacks it. CONF stands for the config's path.
func TestReplayGatewayBadEveryGateway(t *testing.T) {
	combined := `1.1.1.1 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" 200 1` + "\n"
	jsonl := `{"ts": 1700000000.0, "remote_addr": "10.0.0.1", "ip": "10.0.0.1", "path": "/a"}` + "\n"
	for _, tc := range []struct {
		name, from, conf, file, log, logFile string
		want                                 string
	}{
		// bad configs
		{"nginx config", "nginx", "limit_req_zone $binary_remote_addr zone=one:1m rate=10r/x;\n", "nginx.conf", combined, "a.log",
			`CONF:1:1: limit_req_zone: invalid rate "rate=10r/x"`},
		{"kong config", "kong", "_format_version: \"3.0\"\nplugins:\n  - name: rate-limiting\n    config: {second: 0}\n", "kong.yaml", jsonl, "a.jsonl",
			`CONF:4:22: plugins[0].config.second: value must be greater than 0`},
		{"envoy config", "envoy", "domain: edge\ndescriptors:\n  - key: k\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n", "rl.yaml", jsonl, "a.jsonl",
			`CONF:4:24: descriptors[0].rate_limit.unit: invalid rate limit unit "fortnight"`},
		{"envoy-local config", "envoy-local", "stat_prefix: s\ntoken_bucket: {max_tokens: 1, fill_interval: 0.01s}\n", "local.yaml", jsonl, "a.jsonl",
			`CONF:2:46: token_bucket.fill_interval: 10ms: local rate limit token bucket fill timer must be >= 50ms`},
		{"traefik config", "traefik", "http:\n  middlewares:\n    m:\n      rateLimit: {average: ten}\n", "dynamic.yml", jsonl, "a.jsonl",
			`CONF:4:28: http.middlewares.m.rateLimit.average: found string "ten", want an integer`},
		{"haproxy config", "haproxy", "frontend f\n    stick-table type ip size 1k expire 10s store http_req_rate(10s)\n    http-request track-sc0 src\n    http-request deny if { sc_http_req_rate(0) gt 5 }\n", "haproxy.cfg", combined, "a.log",
			`CONF:2:5: stick-table: expire 10s is shorter than twice the http_req_rate period 10s`},
		// logs that lack a key field
		{"nginx log", "nginx", "limit_req_zone $http_x_client zone=one:1m rate=1r/s;\nserver { location / { limit_req zone=one; } }\n", "nginx.conf", combined, "a.log",
			`the limits of CONF count by the header x-client (CONF:1:1), and log_format combined (nginx's predefined format) does not log it: add $http_x_client to that log_format`},
		{"kong log", "kong", "_format_version: \"3.0\"\nservices:\n  - name: s\n    url: http://s\n    plugins:\n      - name: rate-limiting\n        config: {second: 5, limit_by: consumer}\n", "kong.yaml", jsonl, "a.jsonl",
			`LOG: none of the first 1 lines can be read as jsonl: line 1, column 1: missing field: no field "consumer" (the key of the limits of CONF by consumer (CONF:6:9))`},
		{"envoy log", "envoy", "domain: edge\ndescriptors:\n  - key: user_id\n    rate_limit: {unit: second, requests_per_unit: 1}\n", "rl.yaml", jsonl, "a.jsonl",
			`LOG: none of the first 1 lines can be read as jsonl: line 1, column 1: missing field: no field "user_id" (the key of the limits of CONF by value of user_id (CONF:3:5))`},
		{"envoy-local log", "envoy-local", "stat_prefix: s\nfilter_enabled: {default_value: {numerator: 100}}\ntoken_bucket: {max_tokens: 3, tokens_per_fill: 3, fill_interval: 10s}\ndescriptors:\n  - {entries: [{key: client}], token_bucket: {max_tokens: 1, tokens_per_fill: 1, fill_interval: 1s}}\n", "local.yaml", combined, "a.log",
			`the limits of CONF count by descriptor entry client (its value comes from envoy's rate_limits actions, e.g. request_headers with its header, in envoy's route config, not in this file) (CONF:5:5), which a combined or common log does not carry: log it in a field named client`},
		{"traefik log", "traefik", "http:\n  middlewares:\n    m:\n      rateLimit:\n        average: 1\n        sourceCriterion: {requestHeaderName: X-Client}\n", "dynamic.yml", combined, "a.log",
			`the limits of CONF count by the header x-client (CONF:3:5), which a combined or common log does not carry`},
		{"haproxy log", "haproxy", "frontend f\n    stick-table type string len 32 size 1k store http_req_rate(1s)\n    http-request capture req.hdr(X-Client) len 32\n    http-request track-sc0 req.hdr(X-Client)\n    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 2 }\n    log-format \"%Ts.%ms %ci %ST\"\n", "haproxy.cfg", "1700000000.000 10.0.0.1 200\n", "h.log",
			`CONF:6:16: log-format: the limit counts by the header x-client (`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			conf, log := filepath.Join(dir, tc.file), filepath.Join(dir, tc.logFile)
			require.NoError(t, os.WriteFile(conf, []byte(tc.conf), 0o644))
			require.NoError(t, os.WriteFile(log, []byte(tc.log), 0o644))
			args := []string{"replay", log, "--gateway", conf, "--from", tc.from}
			if tc.from == "envoy-local" && strings.Contains(tc.conf, "descriptors") {
				args = append(args, "--scope", "s client")
			}
			status, _, errOut := run(t, args...)
			require.Equal(t, 2, status, errOut)
			want := strings.ReplaceAll(strings.ReplaceAll(tc.want, "CONF", conf), "LOG", log)
			require.Contains(t, errOut, want)
		})
	}
}

// A JSON lines or CSV trace names the client address as it was written:
// remote_addr, ip (as a combined log), client_ip (Kong's log serializer)
// or, in Traefik's JSON access log, ClientHost; replay finds whichever
// the trace's first line has, without --key-field. envoy's ratelimit
// service at 1 a second per address: of 10.0.0.1's two requests within
// the second, the second is rejected; 10.0.0.2's one passes.
func TestReplayGatewayAddressField(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "rl.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: second, requests_per_unit: 1}\n"), 0o644))
	for _, tc := range []struct{ name, text string }{
		{"a.jsonl", `{"ts": 1700000000.0, "remote_addr": "10.0.0.1"}` + "\n" + `{"ts": 1700000000.1, "remote_addr": "10.0.0.2"}` + "\n" + `{"ts": 1700000000.2, "remote_addr": "10.0.0.1"}` + "\n"},
		{"b.jsonl", `{"ts": 1700000000.0, "ip": "10.0.0.1"}` + "\n" + `{"ts": 1700000000.1, "ip": "10.0.0.2"}` + "\n" + `{"ts": 1700000000.2, "ip": "10.0.0.1"}` + "\n"},
		{"c.jsonl", `{"started_at": 1700000000000, "client_ip": "10.0.0.1"}` + "\n" + `{"started_at": 1700000000100, "client_ip": "10.0.0.2"}` + "\n" + `{"started_at": 1700000000200, "client_ip": "10.0.0.1"}` + "\n"},
		{"d.csv", "ts,ip\n1700000000.0,10.0.0.1\n1700000000.1,10.0.0.2\n1700000000.2,10.0.0.1\n"},
	} {
		log := filepath.Join(dir, tc.name)
		require.NoError(t, os.WriteFile(log, []byte(tc.text), 0o644))
		args := []string{"replay", log, "--gateway", conf, "--from", "envoy", "--format", "json"}
		if strings.Contains(tc.text, "started_at") {
			args = append(args, "--time-field", "started_at")
		}
		status, out, errOut := run(t, args...)
		require.Equal(t, 0, status, tc.name+": "+errOut)
		var rep struct {
			Results []struct {
				Accepted int64 `json:"accepted"`
				Rejected int64 `json:"rejected"`
			} `json:"results"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &rep), tc.name)
		require.Len(t, rep.Results, 1, tc.name)
		require.Equal(t, []int64{2, 1}, []int64{rep.Results[0].Accepted, rep.Results[0].Rejected}, tc.name)
	}
}
