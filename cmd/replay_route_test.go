package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/sim"
)

// Two locations with their own limits, one without, and a path no
// location takes: each row is fed only its location's requests.
const routeConf = `http {
    log_format route '$msec $http_x_client "$request" $status';
    access_log route.log route;
    limit_req_zone $http_x_client zone=a:1m rate=1r/s;
    limit_req_zone $http_x_client zone=b:1m rate=1r/s;
    server {
        location /a/ { limit_req zone=a nodelay; }
        location /b/ { limit_req zone=b burst=2 nodelay; }
        location /static/ { }
    }
}
`

// Hand-computed: client c sends, within 300 ms, 3 requests to /a/ and 4
// to /b/, 2 to /static/ and 1 to /x. /a/ (burst 0) admits the first of
// its 3 and rejects 2; /b/ (burst 2, nodelay) admits 3 of its 4. Fed
// every line, as before routing, /a/ would have seen 10 requests.
const routeLog = `1700000000.000 c "GET /a/1 HTTP/1.1" 200
1700000000.010 c "GET /b/1 HTTP/1.1" 200
1700000000.020 c "GET /static/x.css HTTP/1.1" 200
1700000000.030 c "GET /a/2?q=1 HTTP/1.1" 503
1700000000.040 c "POST /b/2 HTTP/1.1" 200
1700000000.050 c "GET /x HTTP/1.1" 404
1700000000.060 c "GET /b//3 HTTP/1.1" 200
1700000000.070 c "GET /static/y.css HTTP/1.1" 200
1700000000.080 c "GET /%61/3 HTTP/1.1" 503
1700000000.090 c "GET /b/4 HTTP/1.1" 503
`

func TestReplayGatewayRoutes(t *testing.T) {
	conf, log := gatewayFiles(t, routeConf, routeLog)
	status, out, errOut := run(t, "replay", log, "--gateway", conf, "--format", "json")
	require.Equal(t, 0, status, errOut)
	var rep struct {
		Results []struct {
			Label    string `json:"label"`
			Offered  int64  `json:"offered"`
			Accepted int64  `json:"accepted"`
			Rejected int64  `json:"rejected"`
		} `json:"results"`
		Traces []struct {
			Routing json.RawMessage `json:"routing"`
		} `json:"traces"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, 2)
	for i, want := range []struct {
		label                       string
		offered, accepted, rejected int64
	}{{"/a/", 3, 1, 2}, {"/b/", 4, 3, 1}} {
		r := rep.Results[i]
		require.Equal(t, want.label, r.Label)
		require.Equal(t, []int64{want.offered, want.accepted, want.rejected}, []int64{r.Offered, r.Accepted, r.Rejected}, r.Label)
	}
	require.JSONEq(t, `{"routes": [{"route": "/a/", "limited": true, "requests": 3}, {"route": "/b/", "limited": true, "requests": 4},
		{"route": "/static/", "limited": false, "requests": 2}], "unrouted": 1}`, string(rep.Traces[0].Routing))

	status, out, errOut = run(t, "replay", log, "--gateway", conf)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "  not limited: 2 requests to routes without a row (/static/ 2), 1 to no route\n")

	// the decisions end with the route of each request, each row's own
	csv := filepath.Join(t.TempDir(), "d.csv")
	status, _, errOut = run(t, "replay", log, "--gateway", conf, "--decisions", csv)
	require.Equal(t, 0, status, errOut)
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	require.Equal(t, `algorithm,label,time_ns,key,cost,attempt,verdict,delay_ns,retry_after_ns,route
nginx,/a/,1700000000000000000,c,1,1,accept,0,,/a/
nginx,/a/,1700000000030000000,c,1,1,reject,0,970000000,/a/
nginx,/a/,1700000000080000000,c,1,1,reject,0,920000000,/a/
nginx,/b/,1700000000010000000,c,1,1,accept,0,,/b/
nginx,/b/,1700000000040000000,c,1,1,accept,0,,/b/
nginx,/b/,1700000000060000000,c,1,1,accept,0,,/b/
nginx,/b/,1700000000090000000,c,1,1,reject,0,920000000,/b/
`, string(data))
}

// A log without the request's path cannot be routed among several rows.
func TestReplayGatewayRoutesNeedPath(t *testing.T) {
	conf, log := gatewayFiles(t, strings.Replace(routeConf, `"$request" `, "", 1), "1700000000.000 c 200\n")
	status, _, errOut := run(t, "replay", log, "--gateway", conf)
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "its requests go to 2 rows by their path (/a/, /b/), and log_format route (")
	require.Contains(t, errOut, "add $request")
	// one scope: every request goes to its row, as said
	status, _, errOut = run(t, "replay", log, "--gateway", conf, "--scope", "/a/")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, errOut, "every request goes to /a/, the one row")
}

// One zone named by two locations, each with its own burst: nginx keeps
// one state per key (excess, last) in the zone and checks each request
// with its location's burst (ngx_http_limit_req_lookup).
const sharedZoneConf = `http {
    log_format route '$msec $http_x_client "$request" $limit_req_status';
    access_log route.log route;
    limit_req_zone $http_x_client zone=z:1m rate=10r/s;
    server {
        location /a/ { limit_req zone=z burst=5 nodelay; }
        location /b/ { limit_req zone=z nodelay; }
    }
}
`

// Hand-computed, in nginx's units: rate 10r/s leaks 10 milli-requests a
// ms; a request adds 1000 to the excess left, /a/ admits up to 5000,
// /b/ (burst 0) only 0.
//
//	t=0    /a/ fresh node: passed, excess 0, last 0
//	t=10   /b/ 0-100+1000 = 900 > 0: rejected (alone, /b/'s node would be fresh: passed)
//	t=20   /a/ 0-200+1000 = 800 <= 5000: passed, last 20
//	t=30   /a/ 800-100+1000 = 1700: passed
//	t=40   /a/ 1700-100+1000 = 2600: passed
//	t=250  /b/ 2600-2100+1000 = 1500 > 0: rejected (alone: 0, passed)
//	t=500  /b/ max(0, 2600-4600+1000) = 0: passed, last 500
//	t=510  /a/ 0-100+1000 = 900: passed
//	t=520  /b/ 900-100+1000 = 1800 > 0: rejected (alone: 800 > 0, rejected too)
//
// So /b/ passes 1 of 4 where two rows apart would pass 3.
const sharedZoneLog = `1700000000.000 c "GET /a/1 HTTP/1.1" PASSED
1700000000.010 c "GET /b/1 HTTP/1.1" REJECTED
1700000000.020 c "GET /a/2 HTTP/1.1" PASSED
1700000000.030 c "GET /a/3 HTTP/1.1" PASSED
1700000000.040 c "GET /a/4 HTTP/1.1" PASSED
1700000000.250 c "GET /b/2 HTTP/1.1" REJECTED
1700000000.500 c "GET /b/3 HTTP/1.1" PASSED
1700000000.510 c "GET /a/5 HTTP/1.1" PASSED
1700000000.520 c "GET /b/4 HTTP/1.1" REJECTED
`

func TestReplayGatewaySharedZone(t *testing.T) {
	conf, log := gatewayFiles(t, sharedZoneConf, sharedZoneLog)
	csv := filepath.Join(t.TempDir(), "d.csv")
	status, out, errOut := run(t, "replay", log, "--gateway", conf, "--check-field", "limit_req_status", "--decisions", csv, "--format", "json")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, errOut, "ratesim: zone=z (nginx.conf:4) is used by /a/, /b/: one row, /a/ + /b/, takes their requests, with one state per key as nginx keeps it")
	require.NotContains(t, errOut, "the rows count apart")
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	// the route column names each request's location
	require.Equal(t, `algorithm,label,time_ns,key,cost,attempt,verdict,delay_ns,retry_after_ns,route
nginx,/a/ + /b/,1700000000000000000,c,1,1,accept,0,,/a/
nginx,/a/ + /b/,1700000000010000000,c,1,1,reject,0,90000000,/b/
nginx,/a/ + /b/,1700000000020000000,c,1,1,accept,0,,/a/
nginx,/a/ + /b/,1700000000030000000,c,1,1,accept,0,,/a/
nginx,/a/ + /b/,1700000000040000000,c,1,1,accept,0,,/a/
nginx,/a/ + /b/,1700000000250000000,c,1,1,reject,0,150000000,/b/
nginx,/a/ + /b/,1700000000500000000,c,1,1,accept,0,,/b/
nginx,/a/ + /b/,1700000000510000000,c,1,1,accept,0,,/a/
nginx,/a/ + /b/,1700000000520000000,c,1,1,reject,0,180000000,/b/
`, string(data))
	var rep struct {
		Results []struct {
			Label    string          `json:"label"`
			Offered  int64           `json:"offered"`
			Accepted int64           `json:"accepted"`
			Rejected int64           `json:"rejected"`
			Params   map[string]any  `json:"params"`
			Check    json.RawMessage `json:"check"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, 1)
	r := rep.Results[0]
	require.Equal(t, []any{"/a/ + /b/", int64(9), int64(6), int64(3)}, []any{r.Label, r.Offered, r.Accepted, r.Rejected})
	require.Equal(t, "/a/ burst=5 nodelay, /b/ burst=0 nodelay", r.Params["routes"])
	// every line's $limit_req_status, from the hand computation above
	require.JSONEq(t, `{"field": "limit_req_status", "compared": 9, "agree": 9, "ratio": 1, "first": []}`, string(r.Check))
}

// A zone named by a location that also names another zone (an all-of
// row) beside a plain one: one row cannot hold them, and apart they would
// admit more than nginx, so replay refuses, naming the zone, its
// locations and the way out.
func TestReplayGatewaySharedZoneApart(t *testing.T) {
	conf := strings.Replace(sharedZoneConf, "location /a/ { limit_req zone=z burst=5 nodelay; }",
		"location /a/ { limit_req zone=z burst=5 nodelay; limit_req zone=y; }", 1)
	conf = strings.Replace(conf, "limit_req_zone $http_x_client zone=z:1m rate=10r/s;",
		"limit_req_zone $http_x_client zone=z:1m rate=10r/s;\n    limit_req_zone $http_x_client zone=y:1m rate=100r/s;", 1)
	conf, log := gatewayFiles(t, conf, sharedZoneLog)
	status, _, errOut := run(t, "replay", log, "--gateway", conf, "--format", "json")
	require.Equal(t, 2, status, errOut)
	require.Contains(t, errOut, "--gateway: zone=z (nginx.conf:4) is used by /a/ (burst=5), /b/ (burst=0): nginx keeps one state per key in a zone for every location that names it, which ratesim makes one row of, but /a/ also names other zones (an all-of row, which takes one location's requests): its rows would count apart and admit more than nginx; keep one location with --scope, or give each location a zone of its own")
	// one location alone replays
	status, _, errOut = run(t, "replay", log, "--gateway", conf, "--scope", "/b/", "--format", "json")
	require.Equal(t, 0, status, errOut)
}

// --baseline compares only rows of the baseline's route: a row of another
// location saw other requests.
func TestReplayGatewayRoutesBaseline(t *testing.T) {
	conf, log := gatewayFiles(t, routeConf, routeLog)
	status, out, errOut := run(t, "replay", log, "--gateway", conf, "--baseline", "/a/", "--format", "json")
	require.Equal(t, 0, status, errOut)
	var rep struct {
		Results []struct {
			Label    string          `json:"label"`
			Baseline json.RawMessage `json:"baseline"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, 2)
	require.Equal(t, "/b/", rep.Results[1].Label)
	require.Empty(t, rep.Results[1].Baseline, "a row of another route is not compared")
}

// A location regex that Go's RE2 cannot read is an error at its
// file:line:col, exit 2.
func TestReplayGatewayBadRegex(t *testing.T) {
	conf, log := gatewayFiles(t, strings.Replace(routeConf, "location /static/ { }", `location ~ ^/(?!api) { }`, 1), routeLog)
	status, _, errOut := run(t, "replay", log, "--gateway", conf)
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "nginx.conf:9:9: location: \"^/(?!api)\": a regular expression ratesim cannot read")
}

// Traefik's JSON access log, replayed through its dynamic config: each
// router's row takes the requests its rule matches (by RequestHost and
// RequestPath), the longer rule first.
func TestReplayGatewayTraefikRoutes(t *testing.T) {
	out, _ := replayTraefikRoutes(t, "{average: 1, burst: 1}")
	var rep struct {
		Results []struct {
			Label    string `json:"label"`
			Offered  int64  `json:"offered"`
			Accepted int64  `json:"accepted"`
		} `json:"results"`
		Traces []struct {
			Routing struct {
				Unrouted int64 `json:"unrouted"`
			} `json:"routing"`
		} `json:"traces"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, 2)
	// api: /a, /b, /c within 500ms at 1/s, burst 1: the first passes
	require.Equal(t, "api", rep.Results[0].Label)
	require.Equal(t, []int64{3, 1}, []int64{rep.Results[0].Offered, rep.Results[0].Accepted})
	require.Equal(t, "admin", rep.Results[1].Label)
	require.Equal(t, []int64{2, 1}, []int64{rep.Results[1].Offered, rep.Results[1].Accepted})
	require.Equal(t, int64(1), rep.Traces[0].Routing.Unrouted)
}

// A Traefik middleware with redis used by two routers keeps one bucket
// per client in Redis for both (Traefik #13706): one row takes the
// requests of both routers. The lines of TestReplayGatewayTraefikRoutes,
// at 1/s with burst 1 within 500 ms: the first of the five routed lines
// passes, the rest find the one bucket empty; rows apart would pass the
// first of each router (2).
func TestReplayGatewayTraefikRedisShared(t *testing.T) {
	out, errOut := replayTraefikRoutes(t, `{average: 1, burst: 1, redis: {endpoints: ["redis:6379"]}}`)
	require.Contains(t, errOut, "one row, api + admin, takes their requests, with one bucket per key, as Traefik keeps the middleware's in Redis")
	var rep struct {
		Results []struct {
			Label    string `json:"label"`
			Offered  int64  `json:"offered"`
			Accepted int64  `json:"accepted"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, 1)
	require.Equal(t, "api + admin", rep.Results[0].Label)
	require.Equal(t, []int64{5, 1}, []int64{rep.Results[0].Offered, rep.Results[0].Accepted})
}

// replayTraefikRoutes replays six lines of a Traefik JSON access log, one
// client within 600ms (/a, /admin/x, /b, /admin/y, /c on api.example.com,
// /d on another host), through routers api (the host) and admin (the host
// and /admin) sharing one middleware whose rateLimit is rateLimit; it
// returns replay's JSON and its stderr.
func replayTraefikRoutes(t *testing.T, rateLimit string) (out, errOut string) {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "dynamic.yml")
	require.NoError(t, os.WriteFile(conf, []byte("http:\n  routers:\n    api:\n      rule: \"Host(`api.example.com`)\"\n      middlewares: [limit]\n"+
		"    admin:\n      rule: \"Host(`api.example.com`) && PathPrefix(`/admin`)\"\n      middlewares: [limit]\n"+
		"  middlewares:\n    limit:\n      rateLimit: "+rateLimit+"\n"), 0o644))
	log := filepath.Join(dir, "access.json")
	var lines []string
	for i, path := range []string{"/a", "/admin/x", "/b", "/admin/y", "/c", "/d"} {
		host := "api.example.com"
		if i == 5 {
			host = "other.example.com"
		}
		lines = append(lines, fmt.Sprintf(`{"StartUTC": "2024-01-01T00:00:00.%d00Z", "ClientHost": "10.0.0.1", "RequestHost": %q, "RequestPath": %q, "RequestMethod": "GET", "time": "2024-01-01T00:00:0%d.500Z"}`, i, host, path, i))
	}
	require.NoError(t, os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	// Traefik's JSON access log: the address is ClientHost and the
	// arrival StartUTC; time is when the line was written (here i s
	// later: by it, every request at 1/s would pass): no flag
	status, out, errOut := run(t, "replay", log, "--gateway", conf, "--format", "json")
	require.Equal(t, 0, status, errOut)
	return out, errOut
}

// A Traefik middleware by a header (sourceCriterion.requestHeaderName)
// reads it from Traefik's JSON access log, where accessLog.fields.headers
// keeps it as request_X-Client. At 1/s with burst 1, within 300 ms: c1's
// first passes and its second is rejected; c2's one passes. A line without
// the header is malformed (missing field), naming it (--strict: exit 2).
func TestReplayGatewayTraefikHeaderKey(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "dynamic.yml")
	require.NoError(t, os.WriteFile(conf, []byte("http:\n  routers:\n    api:\n      rule: \"PathPrefix(`/`)\"\n      middlewares: [limit]\n"+
		"  middlewares:\n    limit:\n      rateLimit:\n        average: 1\n        burst: 1\n"+
		"        sourceCriterion: {requestHeaderName: X-Client}\n"), 0o644))
	log := filepath.Join(dir, "access.json")
	require.NoError(t, os.WriteFile(log, []byte(`{"StartUTC": "2024-01-01T00:00:00.000Z", "ClientHost": "10.0.0.1", "RequestPath": "/a", "request_X-Client": "c1"}
{"StartUTC": "2024-01-01T00:00:00.100Z", "ClientHost": "10.0.0.1", "RequestPath": "/a", "request_X-Client": "c2"}
{"StartUTC": "2024-01-01T00:00:00.200Z", "ClientHost": "10.0.0.2", "RequestPath": "/a", "request_X-Client": "c1"}
{"StartUTC": "2024-01-01T00:00:00.300Z", "ClientHost": "10.0.0.2", "RequestPath": "/a"}
`), 0o644))
	status, out, errOut := run(t, "replay", log, "--gateway", conf, "--format", "json")
	require.Equal(t, 0, status, errOut)
	var rep sim.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, 1)
	require.Equal(t, []int64{3, 2, 1}, []int64{rep.Results[0].Offered, rep.Results[0].Accepted, rep.Results[0].Rejected})
	require.Contains(t, errOut, "access.json: 1 of 4 lines malformed")
	// without StartUTC (dropped by accessLog.fields.names), time serves
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	noStart := filepath.Join(dir, "nostart.json")
	require.NoError(t, os.WriteFile(noStart, []byte(strings.ReplaceAll(string(data), `"StartUTC"`, `"time"`)), 0o644))
	status, out, errOut = run(t, "replay", noStart, "--gateway", conf, "--format", "json")
	require.Equal(t, 0, status, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, []int64{3, 2, 1}, []int64{rep.Results[0].Offered, rep.Results[0].Accepted, rep.Results[0].Rejected})
	status, _, errOut = run(t, "replay", log, "--gateway", conf, "--strict")
	require.Equal(t, 2, status, errOut)
	require.Contains(t, errOut, `access.json: line 4, column 1: missing field: no field "request_X-Client" (the key of the limits of `+conf+` by the header x-client (`+conf+`:7:5)) (strict stops there)`)
}

// --scope on one location of a shared zone keeps its row, and says that
// the other location's requests, which nginx charges to the same zone,
// were left out: on stderr, under the table and in JSON.
func TestReplayGatewaySharedZoneScope(t *testing.T) {
	conf, log := gatewayFiles(t, sharedZoneConf, sharedZoneLog)
	status, out, errOut := run(t, "replay", log, "--gateway", conf, "--scope", "/a/", "--check-field", "limit_req_status")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, errOut, "ratesim: --scope /a/: zone=z (nginx.conf:4) is also named by /b/ (burst=0): nginx charges its one state per key with their requests too, which the row /a/ does not see")
	require.Contains(t, out, "  left out by --scope: 4 requests to /b/, which charge zone=z (nginx.conf:4) with /a/ in the gateway; the row did not see them\n")
	require.NotContains(t, out, "not limited:")
	// /a/'s five requests, each passed alone as with /b/'s beside them
	require.Contains(t, out, "100% of 5")

	status, out, errOut = run(t, "replay", log, "--gateway", conf, "--scope", "/a/", "--format", "json")
	require.Equal(t, 0, status, errOut)
	var rep struct {
		Traces []struct {
			Routing json.RawMessage `json:"routing"`
		} `json:"traces"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.JSONEq(t, `{"routes": [{"route": "/a/", "limited": true, "requests": 5},
		{"route": "/b/", "limited": false, "shares": "zone=z (nginx.conf:4) with /a/", "requests": 4}], "unrouted": 0}`, string(rep.Traces[0].Routing))
}
