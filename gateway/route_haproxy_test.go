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
