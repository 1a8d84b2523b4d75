package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gatewayFiles writes an nginx config and a log into a temporary folder.
func gatewayFiles(t *testing.T, conf, log string) (string, string) {
	dir := t.TempDir()
	c, l := filepath.Join(dir, "nginx.conf"), filepath.Join(dir, "check.log")
	require.NoError(t, os.WriteFile(c, []byte(conf), 0o644))
	require.NoError(t, os.WriteFile(l, []byte(log), 0o644))
	return c, l
}

const checkConf = `http {
    log_format check '$msec $limit_req_status $http_x_client $status';
    access_log /var/log/nginx/check.log check;
    limit_req_zone $http_x_client zone=one:1m rate=1r/s;
    limit_req_status 429;
    server { location / { limit_req zone=one burst=1 nodelay; } }
}
`

// Hand-computed by nginx's rules (ngx_http_limit_req_lookup), rate 1r/s
// (1000 milli-requests a second), burst=1 (1000) nodelay: a's first
// request at .000 is admitted (a new node, excess 0); .100 adds 1000 less
// 100 drained: 900 <= 1000, admitted; .200: 900 - 100 + 1000 = 1800 >
// 1000, rejected; 1.000: 900 - 900 + 1000 = 1000, admitted. The log says
// nginx rejected the .100 one and passed the .200 one: two disagreements.
const checkLog = `1700000000.000 PASSED a 200
1700000000.100 REJECTED a 429
1700000000.200 PASSED a 200
1700000001.000 PASSED a 200
1700000001.000 - b 200
`

func TestReplayGatewayCheck(t *testing.T) {
	conf, log := gatewayFiles(t, checkConf, checkLog)
	status, out, errOut := run(t, "replay", log, "--gateway", conf, "--check-field", "limit_req_status", "--format", "json", "--check-first", "1")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, errOut, "reading "+conf+" with the nginx reader (--from nginx)")
	var rep struct {
		Results []struct {
			Label string          `json:"label"`
			Check json.RawMessage `json:"check"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, 1)
	require.Equal(t, "/", rep.Results[0].Label)
	// b's line logged "-" (no verdict): not compared
	require.JSONEq(t, `{"field": "limit_req_status", "compared": 4, "agree": 2, "ratio": 0.5,
		"first": [{"time_ns": 1700000000100000000, "key": "a", "gateway": "REJECTED", "ratesim": "accept"}]}`, string(rep.Results[0].Check))

	// the same on the status field: 429 is the config's reject status
	status, out, errOut = run(t, "replay", log, "--gateway", conf, "--check-field", "status", "--format", "csv")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "check_field,check_compared,check_agree,check_ratio\n")
	require.Contains(t, out, ",status,5,3,0.6\n")

	// the table: the agreement column and the first disagreements
	status, out, errOut = run(t, "replay", log, "--gateway", conf, "--check-field", "limit_req_status")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "agrees with limit_req_status")
	require.Contains(t, out, "50% of 4")
	require.Contains(t, out, `/ decided 2 of 4 requests otherwise than limit_req_status logged (50%); the first 2: `+
		`2023-11-14T22:13:20.1Z "a": the gateway logged REJECTED, ratesim accept; 2023-11-14T22:13:20.2Z "a": the gateway logged PASSED, ratesim reject.`)
}

func TestReplayGatewayErrors(t *testing.T) {
	for _, tc := range []struct {
		name, conf, log string
		args            []string
		want            string
	}{
		{"key not logged", `http {
    log_format main '$msec $status';
    access_log main.log main;
    limit_req_zone $http_x_client zone=one:1m rate=1r/s;
    server { location / { limit_req zone=one; } }
}`, "1700000000.000 200\n", nil,
			`the limits of NGINX count by the header x-client (NGINX:4:5), and log_format main (NGINX:2:5) does not log it: add $http_x_client to that log_format (or name the log field that holds it with --key-field)`},
		{"address not logged", `http {
    log_format main '$msec $status';
    access_log main.log main;
    limit_req_zone $binary_remote_addr zone=one:1m rate=1r/s;
    server { location / { limit_req zone=one; } }
}`, "1700000000.000 200\n", nil,
			`add $remote_addr to that log_format`},
		{"combined lacks the header", `limit_req_zone $http_x_client zone=one:1m rate=1r/s;
server { location / { limit_req zone=one; } }
`, "1.1.1.1 - - [10/Oct/2000:13:55:36 +0000] \"GET / HTTP/1.1\" 200 1\n", []string{"--trace-format", "combined"},
			`which a combined or common log does not carry: log it (nginx: $http_x_client in a log_format)`},
		{"a second key not logged", `limit_req_zone $binary_remote_addr zone=two:1m rate=1r/s;
limit_req_zone $http_x_client zone=one:1m rate=1r/s;
server { location /a { limit_req zone=one; } location /b { limit_req zone=two; } }
`, "1.1.1.1 - - [10/Oct/2000:13:55:36 +0000] \"GET / HTTP/1.1\" 200 1\n", nil,
			`the limits of NGINX count by the header x-client (NGINX:2:1), and log_format combined (nginx's predefined format) does not log it: add $http_x_client to that log_format`},
		{"a second variable key not logged", `http {
    log_format main '$msec $http_x_client $status';
    access_log main.log main;
    limit_req_zone $http_x_client zone=one:1m rate=1r/s;
    limit_req_zone $uri zone=two:1m rate=1r/s;
    server { location / { limit_req zone=one; limit_req zone=two; } }
}`, "1700000000.000 a 200\n", nil,
			`the limits of NGINX count by $uri (NGINX:5:5), and log_format main (NGINX:2:5) does not log it: add $uri to that log_format (or name the log field that holds it with --key-field)`},
		{"limit too", checkConf, checkLog, []string{"--limit", "1/s"}, "--limit: with --gateway the limits are the config's: leave --limit out"},
		{"check field absent", checkConf, checkLog, []string{"--check-field", "upstream_status"},
			`check.log: check-field "upstream_status": the log_format has no such variable`},
		{"scope without gateway", "", checkLog, []string{"--limit", "1/s", "--scope", "/"}, "--scope: applies to --gateway only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf, log := gatewayFiles(t, tc.conf, tc.log)
			args := []string{"replay", log}
			if tc.conf != "" {
				args = append(args, "--gateway", conf)
			}
			status, _, errOut := run(t, append(args, tc.args...)...)
			require.Equal(t, 2, status, errOut)
			require.Contains(t, errOut, strings.ReplaceAll(tc.want, "NGINX", conf))
		})
	}
	status, _, errOut := run(t, "replay", "x.log")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, `required flag(s) "limit" not set`)
}

// TestReplayGatewayCombined: a config without log_format logs in nginx's
// predefined combined, whose $remote_addr is the address its zones count
// by: the small combined log of the traffic package replays with no flag.
func TestReplayGatewayCombined(t *testing.T) {
	status, out, errOut := run(t, "replay", "../traffic/testdata/replay/combined.log", "--gateway", "../examples/nginx.conf",
		"--from", "nginx", "--scope", "/", "--check-field", "status", "--format", "csv")
	require.Equal(t, 0, status, errOut)
	// 4 lines, 3 keys (the hosts), statuses 200 and 404 (neither 429 nor
	// the config's limit_req_status 429): admitted, as the row admits them
	// at 10 r/s with a burst of 20
	require.Contains(t, out, ",status,4,4,1\n")
}

// The two zones: per client (1r/s, burst=1 nodelay) and per server
// ($server_name in one server block: every request together, 2r/s,
// burst=1 nodelay). Hand-computed by nginx's rules (excess in
// milli-requests, ngx_http_limit_req_lookup; a request charges neither
// zone unless both pass it): at .000 a and b pass (perclient new nodes;
// persrv 0, then 1000 <= 1000); c at .000 finds persrv at 2000 > 1000,
// rejected, charging nothing; a at .500: perclient 1000-500 = 500 <= 1000,
// persrv 1000-1000 (drained 2000/s) + 1000 = 1000: passes; c at .600:
// persrv 1000-200+1000 = 1800, rejected; a at .700: perclient
// 500-200+1000 = 1300 > 1000, rejected by perclient, which nginx checks
// first (persrv would reject it too: 1000-400+1000 = 1600). Counted by one
// key (the client) the per-server zone would pass c at .000. The decisions
// name the zone that rejected, and the JSON counts them.
const twoZoneConf = `http {
    log_format check '$msec $limit_req_status $http_x_client';
    access_log check.log check;
    limit_req_zone $http_x_client zone=perclient:1m rate=1r/s;
    limit_req_zone $server_name   zone=persrv:1m   rate=2r/s;
    limit_req_status 429;
    server {
        server_name api;
        location / {
            limit_req zone=perclient burst=1 nodelay;
            limit_req zone=persrv burst=1 nodelay;
        }
    }
}
`

const twoZoneLog = `1700000000.000 PASSED a
1700000000.000 PASSED b
1700000000.000 REJECTED c
1700000000.500 PASSED a
1700000000.600 REJECTED c
1700000000.700 REJECTED a
`

func TestReplayGatewayTwoZones(t *testing.T) {
	conf, log := gatewayFiles(t, twoZoneConf, twoZoneLog)
	status, out, errOut := run(t, "replay", log, "--gateway", conf, "--check-field", "limit_req_status", "--format", "csv")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, ",limit_req_status,6,6,1\n")

	csv := filepath.Join(t.TempDir(), "d.csv")
	status, out, errOut = run(t, "replay", log, "--gateway", conf, "--decisions", csv, "--format", "json")
	require.Equal(t, 0, status, errOut)
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	// each zone's key after the limit: the client's, and one key for
	// $server_name
	require.Equal(t, `algorithm,label,time_ns,key,cost,attempt,verdict,delay_ns,retry_after_ns,limit,key_1,key_2
all-of,api /,1700000000000000000,a,1,1,accept,0,,,a,global
all-of,api /,1700000000000000000,b,1,1,accept,0,,,b,global
all-of,api /,1700000000000000000,c,1,1,reject,0,500000000,zone=persrv (nginx.conf:11),c,global
all-of,api /,1700000000500000000,a,1,1,accept,0,,,a,global
all-of,api /,1700000000600000000,c,1,1,reject,0,400000000,zone=persrv (nginx.conf:11),c,global
all-of,api /,1700000000700000000,a,1,1,reject,0,300000000,zone=perclient (nginx.conf:10),a,global
`, string(data))
	var rep struct {
		Results []struct {
			Fired json.RawMessage `json:"fired"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.JSONEq(t, `[{"limit": "zone=perclient (nginx.conf:10)", "rejected": 1, "delayed": 0},
		{"limit": "zone=persrv (nginx.conf:11)", "rejected": 2, "delayed": 0}]`, string(rep.Results[0].Fired))

	// a log that says nginx passed c at .600: the disagreement names the
	// zone that rejected it here
	require.NoError(t, os.WriteFile(log, []byte(strings.Replace(twoZoneLog, "600 REJECTED c", "600 PASSED c", 1)), 0o644))
	status, out, errOut = run(t, "replay", log, "--gateway", conf, "--check-field", "limit_req_status")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, `"c": the gateway logged PASSED, ratesim reject by zone=persrv (nginx.conf:11).`)
}

// Two zones on two variables in one location: each zone counts by its own
// key, read from its own variable of the log. Hand-computed by nginx's
// rules (rate 1r/s, burst 0: a key's second request within 1s of its
// last accounted one is rejected; a request rejected by one zone charges
// neither; an empty key is not accounted): .100 10.0.0.1's second (by
// peraddr); .200 c1's second (by perclient; 10.0.0.2 not charged); .300
// passes both (neither 10.0.0.2 nor c2 was charged); 1.000 1s after both
// of its keys; 1.050 10.0.0.3 has no x-client: perclient does not look at
// it; 1.100 10.0.0.3's second, by peraddr. The log agrees with each.
func TestReplayGatewayTwoVariables(t *testing.T) {
	conf, log := gatewayFiles(t, `http {
    log_format check '$msec $remote_addr $http_x_client $limit_req_status';
    access_log /var/log/nginx/check.log check;
    limit_req_zone $binary_remote_addr zone=peraddr:1m rate=1r/s;
    limit_req_zone $http_x_client zone=perclient:1m rate=1r/s;
    server { location / {
        limit_req zone=peraddr;
        limit_req zone=perclient;
    } }
}
`, `1700000000.000 10.0.0.1 c1 PASSED
1700000000.100 10.0.0.1 c2 REJECTED
1700000000.200 10.0.0.2 c1 REJECTED
1700000000.300 10.0.0.2 c2 PASSED
1700000001.000 10.0.0.1 c1 PASSED
1700000001.050 10.0.0.3 - PASSED
1700000001.100 10.0.0.3 - REJECTED
`)
	csv := filepath.Join(t.TempDir(), "d.csv")
	status, out, errOut := run(t, "replay", log, "--gateway", conf, "--check-field", "limit_req_status", "--decisions", csv)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "100% of 7")
	require.Contains(t, out, "zone=peraddr (nginx.conf:7) 2 rejected; zone=perclient (nginx.conf:8) 1 rejected")
	// 10.0.0.3's two lines logged no X-Client
	require.Contains(t, out, "  lines without a value (a limit by it did not look at them): http_x_client 2\n")
	// no key of either zone was admitted twice in a second
	require.Contains(t, out, `zone=peraddr (nginx.conf:7): "10.0.0.1" 1 in 1s (1.0x); zone=perclient (nginx.conf:8): "c1" 1 in 1s (1.0x)`)
	got, err := os.ReadFile(csv)
	require.NoError(t, err)
	require.Equal(t, `algorithm,label,time_ns,key,cost,attempt,verdict,delay_ns,retry_after_ns,limit,key_1,key_2
all-of,/,1700000000000000000,10.0.0.1,1,1,accept,0,,,10.0.0.1,c1
all-of,/,1700000000100000000,10.0.0.1,1,1,reject,0,900000000,zone=peraddr (nginx.conf:7),10.0.0.1,c2
all-of,/,1700000000200000000,10.0.0.2,1,1,reject,0,800000000,zone=perclient (nginx.conf:8),10.0.0.2,c1
all-of,/,1700000000300000000,10.0.0.2,1,1,accept,0,,,10.0.0.2,c2
all-of,/,1700000001000000000,10.0.0.1,1,1,accept,0,,,10.0.0.1,c1
all-of,/,1700000001050000000,10.0.0.3,1,1,accept,0,,,10.0.0.3,
all-of,/,1700000001100000000,10.0.0.3,1,1,reject,0,950000000,zone=peraddr (nginx.conf:7),10.0.0.3,
`, string(got))
}

// An envoy ratelimit config with nested descriptors, replayed for a
// request that carries three: generic_key=api (3 a second, one counter),
// and under it remote_address (2 a second per address) and user_id (2 a
// minute per user), each from its own field of a JSON lines trace. envoy's
// service counts every hit on every counter and rejects when any is over
// (fixed_cache_impl.go DoLimit), by hand: .000 .100 .200 pass (api 1-3);
// .300 api 4 > 3 (and 10.0.0.2 2, u1 3, counted all the same); 1.000 a
// new second, u2 2 <= 2; 1.100 u1 4 > 2; 1.200 api 3, 10.0.0.1 2, u3 1;
// 1.300 api 4 > 3 (10.0.0.1 3 > 2 too: the first over, in order, fires).
func TestReplayGatewayEnvoyNested(t *testing.T) {
	dir := t.TempDir()
	conf, trace := filepath.Join(dir, "ratelimit.yaml"), filepath.Join(dir, "trace.jsonl")
	require.NoError(t, os.WriteFile(conf, []byte(`domain: edge
descriptors:
  - key: generic_key
    value: api
    rate_limit: {unit: second, requests_per_unit: 3}
    descriptors:
      - key: remote_address
        rate_limit: {unit: second, requests_per_unit: 2}
      - key: user_id
        rate_limit: {unit: minute, requests_per_unit: 2}
`), 0o644))
	require.NoError(t, os.WriteFile(trace, []byte(`{"ts": 1700000000.0, "remote_addr": "10.0.0.1", "user_id": "u1"}
{"ts": 1700000000.1, "remote_addr": "10.0.0.1", "user_id": "u2"}
{"ts": 1700000000.2, "remote_addr": "10.0.0.2", "user_id": "u1"}
{"ts": 1700000000.3, "remote_addr": "10.0.0.2", "user_id": "u1"}
{"ts": 1700000001.0, "remote_addr": "10.0.0.1", "user_id": "u2"}
{"ts": 1700000001.1, "remote_addr": "10.0.0.3", "user_id": "u1"}
{"ts": 1700000001.2, "remote_addr": "10.0.0.1", "user_id": "u3"}
{"ts": 1700000001.3, "remote_addr": "10.0.0.1", "user_id": "u4"}
`), 0o644))
	csv := filepath.Join(dir, "d.csv")
	scope := "generic_key=api + generic_key=api/remote_address + generic_key=api/user_id"
	// a CSV trace without the user_id column: exit 2 naming it and the
	// limit's line
	short := filepath.Join(dir, "short.csv")
	require.NoError(t, os.WriteFile(short, []byte("ts,remote_addr\n1700000000.0,10.0.0.1\n"), 0o644))
	for _, format := range []string{"csv", "auto"} {
		status, _, errOut := run(t, "replay", short, "--gateway", conf, "--scope", scope, "--trace-format", format)
		require.Equal(t, 2, status, errOut)
		require.Contains(t, errOut, short+`: attribute user_id (the limits of `+conf+` by value of user_id (`+conf+`:9:9)): field "user_id": no such column (columns: ts, remote_addr)`)
	}

	status, out, errOut := run(t, "replay", trace, "--gateway", conf, "--scope", scope, "--decisions", csv)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "descriptor generic_key=api (ratelimit.yaml:3) 2 rejected; descriptor generic_key=api/remote_address (ratelimit.yaml:7) 0 rejected; descriptor generic_key=api/user_id (ratelimit.yaml:9) 1 rejected")
	// each limit's busiest key in its own window, admitted requests: api 3
	// in [0, 1s) (.000 .100 .200); 10.0.0.1 2 (.000 .100, the earliest);
	// u1 2 in the minute (.000 .200, the earliest)
	require.Contains(t, out, "Busiest key of each limit:\n  "+scope+`  descriptor generic_key=api (ratelimit.yaml:3): "global" 3 in 1s (1.0x); `+
		`descriptor generic_key=api/remote_address (ratelimit.yaml:7): "10.0.0.1" 2 in 1s (1.0x); descriptor generic_key=api/user_id (ratelimit.yaml:9): "u1" 2 in 1m (1.0x)`)
	status, out, errOut = run(t, "replay", trace, "--gateway", conf, "--scope", scope, "--trace-format", "jsonl", "--format", "json")
	require.Equal(t, 0, status, errOut)
	var rep struct {
		Results []struct {
			LimitPeaks json.RawMessage `json:"limit_key_peaks"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.JSONEq(t, `[
		{"limit": "descriptor generic_key=api (ratelimit.yaml:3)", "window_ns": 1000000000, "count": 3, "key": "global", "start_ns": 1700000000000000000, "ratio": 1.0},
		{"limit": "descriptor generic_key=api/remote_address (ratelimit.yaml:7)", "window_ns": 1000000000, "count": 2, "key": "10.0.0.1", "start_ns": 1700000000000000000, "ratio": 1.0},
		{"limit": "descriptor generic_key=api/user_id (ratelimit.yaml:9)", "window_ns": 60000000000, "count": 2, "key": "u1", "start_ns": 1700000000000000000, "ratio": 1.0}]`, string(rep.Results[0].LimitPeaks))
	got, err := os.ReadFile(csv)
	require.NoError(t, err)
	// time_ns, verdict, the limit that fired, each limit's key
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n")[1:] {
		f := strings.Split(line, ",")
		rows = append(rows, strings.Join(append([]string{f[2], f[6], f[9]}, f[10:]...), " "))
	}
	require.Equal(t, []string{
		"1700000000000000000 accept  global 10.0.0.1 u1",
		"1700000000100000000 accept  global 10.0.0.1 u2",
		"1700000000200000000 accept  global 10.0.0.2 u1",
		"1700000000300000000 reject descriptor generic_key=api (ratelimit.yaml:3) global 10.0.0.2 u1",
		"1700000001000000000 accept  global 10.0.0.1 u2",
		"1700000001100000000 reject descriptor generic_key=api/user_id (ratelimit.yaml:9) global 10.0.0.3 u1",
		"1700000001200000000 accept  global 10.0.0.1 u3",
		"1700000001300000000 reject descriptor generic_key=api (ratelimit.yaml:3) global 10.0.0.1 u4",
	}, rows)
}

// A Kong declarative file with a route limit (2 a second per consumer on
// route orders) and a consumer limit (alice's own plugin, 1 a second),
// replayed from a JSON lines trace whose consumer field gives each
// request's consumer. Policy local on Kong's 3 placeholder nodes, behind a
// round-robin balancer (requests 1-8 on nodes 0 1 2 0 1 2 0 1): each node
// counts alone, admitted requests only. By hand: the route's row admits
// alice's first 6 (2 on each node) and rejects the 7th (node 0's third);
// alice's row admits her first 3 (1 on each node) and rejects the next 4;
// bob is admitted by both.
func TestReplayGatewayKongConsumer(t *testing.T) {
	dir := t.TempDir()
	conf, trace := filepath.Join(dir, "kong.yaml"), filepath.Join(dir, "trace.jsonl")
	require.NoError(t, os.WriteFile(conf, []byte(`_format_version: "3.0"
services:
  - name: shop
    url: http://shop.internal:8080
    routes:
      - name: orders
        paths: [/orders]
        plugins:
          - name: rate-limiting
            config: {second: 2, limit_by: consumer, policy: local}
consumers:
  - username: alice
    plugins:
      - name: rate-limiting
        config: {second: 1, limit_by: consumer, policy: local}
  - username: bob
`), 0o644))
	var lines []string
	for i := range 7 {
		lines = append(lines, fmt.Sprintf(`{"ts": 1700000000.%02d, "consumer": "alice", "path": "/orders"}`, 5*i))
	}
	lines = append(lines, `{"ts": 1700000000.35, "consumer": "bob", "path": "/orders"}`)
	require.NoError(t, os.WriteFile(trace, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	csv := filepath.Join(dir, "d.csv")
	// no --trace-format: the trace is recognised as JSON lines, whose
	// consumer field the limits read (a combined log has none)
	status, _, errOut := run(t, "replay", trace, "--gateway", conf, "--decisions", csv)
	require.Equal(t, 0, status, errOut)
	got, err := os.ReadFile(csv)
	require.NoError(t, err)
	verdicts := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n")[1:] {
		f := strings.Split(line, ",")
		verdicts[f[1]] = append(verdicts[f[1]], f[3]+" "+f[6])
	}
	a, b := "alice accept", "bob accept"
	r := "alice reject"
	require.Equal(t, map[string][]string{
		"orders":                  {a, a, a, a, a, a, r, b},
		"orders (consumer alice)": {a, a, a, r, r, r, r, b},
	}, verdicts)

	// a combined log has no consumer: exit 2, naming the plugin's line
	log := filepath.Join(dir, "access.log")
	require.NoError(t, os.WriteFile(log, []byte("1.1.1.1 - - [10/Oct/2000:13:55:36 +0000] \"GET / HTTP/1.1\" 200 1\n"), 0o644))
	for _, format := range []string{"combined", "auto"} {
		status, _, errOut = run(t, "replay", log, "--gateway", conf, "--trace-format", format)
		require.Equal(t, 2, status, errOut)
		require.Contains(t, errOut, "the limits of "+conf+" count by consumer ("+conf+":9:13), which a combined or common log does not carry: log it in a field named consumer")
	}
	// a JSON lines trace without it: exit 2 at the line, naming the field
	noConsumer := filepath.Join(dir, "ip.jsonl")
	require.NoError(t, os.WriteFile(noConsumer, []byte(`{"ts": 1700000000.0, "ip": "10.0.0.1", "path": "/orders"}`+"\n"), 0o644))
	status, _, errOut = run(t, "replay", noConsumer, "--gateway", conf)
	require.Equal(t, 2, status, errOut)
	require.Contains(t, errOut, noConsumer+`: none of the first 1 lines can be read as jsonl: line 1, column 1: missing field: no field "consumer" (the key of the limits of `+conf+` by consumer (`+conf+`:9:13))`)
}

// kongSharedDeck is a Kong service whose rate-limiting plugin (1 a
// second per consumer, policy local) serves its two routes, /a and /b.
const kongSharedDeck = `_format_version: "3.0"
services:
  - name: shop
    url: http://shop.internal:8080
    routes:
      - name: ra
        paths: [/a]
      - name: rb
        paths: [/b]
    plugins:
      - name: rate-limiting
        config: {second: 1, limit_by: consumer, policy: local}
consumers:
  - username: alice
`

// A Kong service's plugin counts the requests of all the service's routes
// together (get_local_key in kong/plugins/rate-limiting/policies/init.lua
// keys it by the plugin's own, empty, route): one row takes the requests
// of both routes. Policy local on Kong's 3 placeholder nodes, round-robin:
// alice's 6 requests, /a and /b in turn, go to nodes 0 1 2 0 1 2; at 1 a
// second per node the first 3 pass and the next 3 are rejected, where two
// rows apart (3 requests each, one per node) would pass all 6.
func TestReplayGatewayKongServiceShared(t *testing.T) {
	dir := t.TempDir()
	conf, trace := filepath.Join(dir, "kong.yaml"), filepath.Join(dir, "trace.jsonl")
	require.NoError(t, os.WriteFile(conf, []byte(kongSharedDeck), 0o644))
	var lines []string
	for i := range 6 {
		lines = append(lines, fmt.Sprintf(`{"ts": 1700000000.%02d, "consumer": "alice", "path": "/%c"}`, 5*i, "ab"[i%2]))
	}
	require.NoError(t, os.WriteFile(trace, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	csv := filepath.Join(dir, "d.csv")
	// no --trace-format: the trace is recognised as JSON lines, whose
	// consumer field the limits read (a combined log has none)
	status, _, errOut := run(t, "replay", trace, "--gateway", conf, "--decisions", csv)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, errOut, "is used by ra, rb: one row, ra + rb, takes their requests, with one counter per key")
	got, err := os.ReadFile(csv)
	require.NoError(t, err)
	verdicts := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n")[1:] {
		f := strings.Split(line, ",")
		verdicts[f[1]] = append(verdicts[f[1]], f[6])
	}
	require.Equal(t, map[string][]string{"ra + rb": {"accept", "accept", "accept", "reject", "reject", "reject"}}, verdicts)
}
