package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/traffic"
)

// A track-sc with a static condition: the row takes the requests it
// tracks, read by hand from HAProxy's rules (ACLs in a row all hold, ||
// between alternatives, ! negates, several lines of one ACL name are any
// of them, -i ignores case).
const haproxyRouteConf = `frontend www
    bind :80
    stick-table type ip size 100k expire 30s store http_req_rate(10s)
    acl api path_beg /api/
    acl login path /login
    acl login path /signin
    acl shop hdr(host) -i shop.example.com
    http-request track-sc0 src if api !{ method OPTIONS } || login shop
    http-request deny if { sc_http_req_rate(0) gt 10 }
    log-format "%[date(0,ms)] %ci %ST %HM %HP %[capture.req.hdr(0)]"
    http-request capture req.hdr(Host) len 64
`

func TestHAProxyRoutes(t *testing.T) {
	h, err := ReadHAProxy("haproxy.cfg", []byte(haproxyRouteConf))
	require.NoError(t, err)
	rt, err := h.Routes(Options{})
	require.NoError(t, err)
	require.Equal(t, traffic.NeedPath|traffic.NeedMethod|traffic.NeedHost, rt.Needs())
	for _, c := range []struct{ method, host, path, want string }{
		{"GET", "x", "/api/users", "www"},
		{"OPTIONS", "x", "/api/users", ""},            // !{ method OPTIONS }
		{"GET", "x", "/login", ""},                    // login without shop
		{"GET", "SHOP.example.com", "/signin", "www"}, // login (its second line) and shop, ignoring case
		{"GET", "shop.example.com", "/other", ""},
	} {
		require.Equal(t, c.want, routeOf(t, rt, c.method, c.host, c.path), "%s %s %s", c.method, c.host, c.path)
	}
	// the log-format's %HM, %HP and the captured host are the route's fields
	f, err := haproxyTemplate(h.Limits[0])
	require.NoError(t, err)
	tmpl, err := traffic.ParseLogTemplate(f.Text, f.Escape)
	require.NoError(t, err)
	require.Equal(t, traffic.NeedPath|traffic.NeedMethod|traffic.NeedHost, tmpl.Carries())
}

func TestHAProxyRouteBadCriterion(t *testing.T) {
	_, err := ReadHAProxy("haproxy.cfg", []byte(`frontend www
    bind :80
    stick-table type ip size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src if { url_param(x) -m found }
    http-request deny if { sc_http_req_rate(0) gt 10 }
`))
	require.ErrorContains(t, err, "haproxy.cfg:4:37: http-request track-sc0: url_param(x): a criterion replay cannot read from a log")
}

// frontendOf is the name of the route that takes a request of frontend
// fe, "" for none.
func frontendOf(t *testing.T, rt traffic.Router, fe, method, host, path string) string {
	t.Helper()
	req := traffic.Request{Frontend: []byte(fe), Method: []byte(method), Host: []byte(host), Path: []byte(path)}
	i := rt.Route(&req)
	if i < 0 {
		return ""
	}
	return rt.Routes()[i].Name
}

// Several frontends in one config and one log: a request goes to the
// section its %f names; a frontend without a limit is a route without a
// row; a name no frontend or listen section has (a backend's, a typo) is
// taken by no route.
const haproxyFrontendsConf = `defaults
    mode http
    log-format "%[date(0,ms)] %f %ci %[capture.req.hdr(0)] %ST"
frontend api
    bind :80
    stick-table type ip size 100k expire 30s store http_req_rate(10s)
    http-request capture req.hdr(X-Partner) len 64
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }
listen partners
    bind :81
    stick-table type string len 64 size 10k expire 5m store http_req_rate(1m)
    http-request capture req.hdr(X-Partner) len 64
    http-request track-sc1 req.hdr(X-Partner)
    http-request deny deny_status 429 if { sc1_http_req_rate gt 600 }
frontend static
    bind :82
    http-request capture req.hdr(X-Partner) len 64
    default_backend files
backend files
    server s 127.0.0.1:9000
`

func TestHAProxyFrontendRoutes(t *testing.T) {
	h, err := ReadHAProxy("haproxy.cfg", []byte(haproxyFrontendsConf))
	require.NoError(t, err)
	rt, err := h.Routes(Options{})
	require.NoError(t, err)
	require.Equal(t, traffic.NeedFrontend, rt.Needs())
	require.Equal(t, []traffic.Route{{Name: "api", Limited: true}, {Name: "partners", Limited: true}, {Name: "static"}}, rt.Routes())
	for fe, want := range map[string]string{"api": "api", "partners": "partners", "static": "static", "files": "", "API": ""} {
		require.Equal(t, want, frontendOf(t, rt, fe, "GET", "h", "/"), fe)
	}
	// both sections' log-formats (the defaults') read alike: one format,
	// whose %f is the frontend
	logs, err := h.AccessLogs(Options{})
	require.NoError(t, err)
	require.Len(t, logs, 1)
	tmpl, err := traffic.ParseLogTemplate(logs[0].Format.Text, logs[0].Format.Escape)
	require.NoError(t, err)
	require.Equal(t, traffic.NeedFrontend, tmpl.Carries())
	// --scope keeps one section: the other frontends' requests go to
	// routes without a row, api's too (its limit left out)
	rt, err = h.Routes(Options{Scope: "partners"})
	require.NoError(t, err)
	require.Equal(t, traffic.NeedFrontend, rt.Needs())
	require.Equal(t, []traffic.Route{{Name: "partners", Limited: true}, {Name: "api"}, {Name: "static"}}, rt.Routes())
	for fe, want := range map[string]string{"api": "api", "partners": "partners", "static": "static", "files": ""} {
		require.Equal(t, want, frontendOf(t, rt, fe, "GET", "h", "/"), fe)
	}
}

// One frontend whose tracks count, each in its own table, the requests of
// a path, a method and a host: one all-of row, whose counters each count
// by a key of their own (the address, where the track's condition holds),
// and no routing within the section. By hand, through the derivers: GET
// /api/x is counted by sc0 alone; POST /login on shop.example.com by sc1
// and sc2; GET /login on another host by none; GET /x on SHOP.example.com
// by sc2 (-i).
const haproxySplitConf = `frontend www
    bind :80
    acl post method POST
    http-request track-sc0 src table t_api if { path_beg /api/ }
    http-request track-sc1 src table t_login if { path /login } post
    http-request track-sc2 src table t_shop if { hdr(host) -i shop.example.com }
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }
    http-request deny deny_status 429 if { sc_http_req_rate(1) gt 3 }
    http-request deny deny_status 429 if { sc_http_req_rate(2) gt 50 }
backend t_api
    stick-table type ip size 100k expire 30s store http_req_rate(10s)
backend t_login
    stick-table type ip size 100k expire 2m store http_req_rate(1m)
backend t_shop
    stick-table type ip size 100k expire 30s store http_req_rate(10s)
`

func TestHAProxyConditionalCounters(t *testing.T) {
	h, err := ReadHAProxy("haproxy.cfg", []byte(haproxySplitConf))
	require.NoError(t, err)
	require.Len(t, h.Limits, 1)
	require.Equal(t, "www", h.Limits[0].Label)
	rt, err := h.Routes(Options{})
	require.NoError(t, err)
	require.Nil(t, rt, "one section, whose conditions give keys, not routes")
	keys, err := h.Keys(Options{})
	require.NoError(t, err)
	var attrs []string
	for _, k := range keys {
		attrs = append(attrs, k.attr())
	}
	// the address first: the request's key
	require.Equal(t, []string{"remote_addr", "remote_addr_sc0", "remote_addr_sc1", "remote_addr_sc2"}, attrs)
	tmpl, err := traffic.ParseLogTemplate("$msec $remote_addr $request_method $uri $host $status", "")
	require.NoError(t, err)
	for _, c := range []struct {
		method, host, path string
		want               []string // the value of sc0's, sc1's and sc2's key
	}{
		{"GET", "a.example.com", "/api/x", []string{"10.0.0.1", "", ""}},
		{"POST", "shop.example.com", "/login", []string{"", "10.0.0.1", "10.0.0.1"}},
		{"GET", "a.example.com", "/login", []string{"", "", ""}},
		{"GET", "SHOP.example.com", "/x", []string{"", "", "10.0.0.1"}},
	} {
		var got []string
		for _, k := range keys[1:] {
			d, missing, _ := haproxyDeriverOf(k.cond, "remote_addr", tmpl)
			require.Empty(t, missing)
			var vals []string
			for _, v := range d.Vars() {
				vals = append(vals, map[string]string{"remote_addr": "10.0.0.1", "request_method": c.method, "uri": c.path, "host": c.host}[v])
			}
			got = append(got, d.Derive(vals))
		}
		require.Equal(t, c.want, got, "%s %s %s", c.method, c.host, c.path)
	}
	// a log that does not write the path: the condition cannot be read
	tmpl, err = traffic.ParseLogTemplate("$msec $remote_addr $request_method $host $status", "")
	require.NoError(t, err)
	_, missing, how := haproxyDeriverOf(keys[1].cond, "remote_addr", tmpl)
	require.Equal(t, "path", missing)
	require.Equal(t, "%HP", how)
}

// A conditional track after a deny would not count what that deny stopped,
// which the all-of row's every-hit cannot say: refused at the track.
func TestHAProxySplitAfterDeny(t *testing.T) {
	_, err := ReadHAProxy("haproxy.cfg", []byte(`frontend www
    bind :80
    stick-table type ip size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src if { path_beg /api/ }
    http-request deny if { sc_http_req_rate(0) gt 20 }
    http-request track-sc1 src table t if { path /login }
    http-request deny if { sc_http_req_rate(1) gt 3 }
backend t
    stick-table type ip size 100k expire 30s store http_req_rate(10s)
`))
	require.ErrorContains(t, err, "haproxy.cfg:6:5: http-request track-sc1: frontend www has tracks with a condition, and this one comes after the deny at line 5")
}

// Frontends and conditions together: a line first goes to its frontend,
// then, there, to the counters whose tracks hold for it.
func TestHAProxyFrontendsAndConditions(t *testing.T) {
	h, err := ReadHAProxy("haproxy.cfg", []byte(`frontend api
    bind :80
    stick-table type ip size 1k expire 30s store http_req_rate(10s)
    http-request track-sc0 src if { path_beg /v1/ }
    http-request deny if { sc_http_req_rate(0) gt 10 }
frontend web
    bind :81
    stick-table type ip size 1k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny if { sc_http_req_rate(0) gt 50 }
`))
	require.NoError(t, err)
	rt, err := h.Routes(Options{})
	require.NoError(t, err)
	require.Equal(t, traffic.NeedFrontend|traffic.NeedPath, rt.Needs())
	for _, c := range []struct{ fe, path, want string }{
		{"api", "/v1/items", "api"},
		{"api", "/v2/items", ""}, // api's track does not hold
		{"web", "/v1/items", "web"},
		{"web", "/anything", "web"},
	} {
		require.Equal(t, c.want, frontendOf(t, rt, c.fe, "GET", "h", c.path), "%s %s", c.fe, c.path)
	}
}
