package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/traffic"
)

// routeOf routes one request through rt: the name of its route, or "" for
// none.
func routeOf(t *testing.T, rt traffic.Router, method, host, path string) string {
	t.Helper()
	req := traffic.Request{Method: []byte(method), Host: []byte(host), Path: []byte(path)}
	i := rt.Route(&req)
	if i < 0 {
		return ""
	}
	return rt.Routes()[i].Name
}

// An nginx config's routing, each request's location worked out by hand
// from ngx_http_core_module's rules: = ends the search; the longest prefix
// is remembered; ^~ on it skips the regexes; else the first regex in
// order wins; nested locations are searched inside the prefix found.
const nginxRouteConf = `http {
  limit_req_zone $binary_remote_addr zone=z:1m rate=10r/s;
  server {
    server_name api.example.com;
    location = /login { limit_req zone=z; }
    location / { limit_req zone=z burst=5; }
    location /static/ { }
    location ^~ /images/ { }
    location ~* \.(gif|jpg)$ { limit_req zone=z burst=1; }
    location ~ ^/api/v[0-9]+/ { limit_req zone=z burst=2; }
    location /api/ {
      limit_req zone=z burst=3;
      location /api/admin/ { limit_req zone=z burst=4; }
      location ~ \.json$ { }
    }
  }
  server {
    listen 80 default_server;
    server_name *.example.org;
    location /other/ { limit_req zone=z; }
  }
  server {
    server_name ~^www\d+\.example\.net$;
  }
}
`

func TestNginxRoutes(t *testing.T) {
	n, err := ReadNginx("nginx.conf", []byte(nginxRouteConf))
	require.NoError(t, err)
	rt, err := n.Routes(Options{})
	require.NoError(t, err)
	require.NotNil(t, rt)
	require.Equal(t, traffic.NeedPath|traffic.NeedHost, rt.Needs())
	const api = "api.example.com"
	for _, c := range []struct{ host, path, want string }{
		{api, "/login", "api.example.com = /login"},                  // exact
		{api, "/login/x", "api.example.com /"},                       // = is exact only
		{api, "/static/a.css", "api.example.com /static/"},           // longest prefix, no regex matches
		{api, "/static/a.gif", "api.example.com ~* \\.(gif|jpg)$"},   // a regex beats the prefix
		{api, "/STATIC/A.GIF", "api.example.com ~* \\.(gif|jpg)$"},   // ~* ignores case
		{api, "/images/a.gif", "api.example.com ^~ /images/"},        // ^~ skips the regexes
		{api, "/api/v2/users", "api.example.com ~ ^/api/v[0-9]+/"},   // the first regex in order
		{api, "/api/users", "api.example.com /api/"},                 // no regex matches
		{api, "/api/admin/x", "api.example.com /api/ > /api/admin/"}, // a nested prefix
		{api, "/api/a.json", "api.example.com /api/ > ~ \\.json$"},   // a nested regex
		{api, "/api/v1/a.gif", "api.example.com ~* \\.(gif|jpg)$"},   // regexes in order: ~* first
		{api, "/", "api.example.com /"},
		{"x.example.org", "/other/1", "*.example.org /other/"},    // wildcard name
		{"x.example.org", "/nope", ""},                            // its server has no such location
		{"unknown.host", "/other/1", "*.example.org /other/"},     // the default_server
		{"www12.example.net", "/x", "~^www\\d+\\.example\\.net$"}, // a regex name, no locations
	} {
		require.Equal(t, c.want, routeOf(t, rt, "GET", c.host, c.path), "%s %s", c.host, c.path)
	}
	limited := map[string]bool{}
	for _, r := range rt.Routes() {
		limited[r.Name] = r.Limited
	}
	require.False(t, limited["api.example.com /static/"])
	require.True(t, limited["api.example.com /api/ > /api/admin/"])
}

func TestNginxRoutesOneLocation(t *testing.T) {
	// one server, one location /: every request goes there, nothing to route
	n, err := ReadNginx("nginx.conf", []byte(`http { limit_req_zone $binary_remote_addr zone=z:1m rate=1r/s;
  server { location / { limit_req zone=z; } } }`))
	require.NoError(t, err)
	rt, err := n.Routes(Options{})
	require.NoError(t, err)
	require.Nil(t, rt)
}

func TestNginxRouteBadRegex(t *testing.T) {
	n, err := ReadNginx("nginx.conf", []byte("http { limit_req_zone $binary_remote_addr zone=z:1m rate=1r/s;\n  server {\n    location ~ ^/(?<=a)b { limit_req zone=z; } } }"))
	require.NoError(t, err)
	_, err = n.Routes(Options{})
	require.ErrorContains(t, err, "nginx.conf:3:5: location:")
	require.ErrorContains(t, err, "cannot read")
}
