package gateway

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/traffic"
)

// testdata/envoy-local.yaml's routes by hand: the first route in order
// whose prefix starts the path; /login and /reports have configs of their
// own, / meets the listener's filter.
func TestEnvoyLocalRoutes(t *testing.T) {
	data, err := os.ReadFile("testdata/envoy-local.yaml")
	require.NoError(t, err)
	l, err := ReadEnvoyLocal("envoy-local.yaml", data)
	require.NoError(t, err)
	rt, err := l.Routes(Options{})
	require.NoError(t, err)
	require.NotNil(t, rt)
	names := []string{"ingress/api/prefix /login", "ingress/api/reports", "ingress"}
	for i, r := range rt.Routes() {
		require.Equal(t, names[i], r.Name)
	}
	// the descriptors' rows take their scope's requests
	require.Equal(t, map[string]int{"ingress/api/prefix /login": 0, "ingress/api/reports": 1, "ingress/api/reports plan=free": 1,
		"ingress/api/reports plan=pro": 1, "ingress": 2}, rt.rows)
	require.Equal(t, traffic.NeedPath, rt.Needs())
	for path, want := range map[string]string{
		"/login":     names[0],
		"/login/x":   names[0],
		"/reports/q": names[1],
		"/other":     names[2],
		"/":          names[2],
	} {
		require.Equal(t, want, routeOf(t, rt, "GET", "h", path), path)
	}
}

const envoyRouteConf = `static_resources:
  listeners:
    - name: main
      filter_chains:
        - filters:
            - name: envoy.filters.network.http_connection_manager
              typed_config:
                "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
                stat_prefix: main
                http_filters:
                  - name: envoy.filters.http.local_ratelimit
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
                      stat_prefix: all
                      token_bucket: {max_tokens: 10, tokens_per_fill: 10, fill_interval: 1s}
                      filter_enabled: {default_value: {numerator: 100}}
                      filter_enforced: {default_value: {numerator: 100}}
                route_config:
                  virtual_hosts:
                    - name: api
                      domains: ["api.example.com", "api.example.com:8443"]
                      typed_per_filter_config:
                        envoy.filters.http.local_ratelimit:
                          "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
                          stat_prefix: api
                          token_bucket: {max_tokens: 5, tokens_per_fill: 5, fill_interval: 1s}
                          filter_enabled: {default_value: {numerator: 100}}
                          filter_enforced: {default_value: {numerator: 100}}
                      routes:
                        - name: write
                          match:
                            prefix: /v1/
                            headers: [{name: ":method", string_match: {exact: POST}}]
                          route: {cluster: backend}
                          typed_per_filter_config:
                            envoy.filters.http.local_ratelimit:
                              "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
                              stat_prefix: write
                              token_bucket: {max_tokens: 1, tokens_per_fill: 1, fill_interval: 1s}
                              filter_enabled: {default_value: {numerator: 100}}
                              filter_enforced: {default_value: {numerator: 100}}
                        - match: {safe_regex: {regex: "/v[0-9]+/items/[0-9]+"}}
                          route: {cluster: backend}
                        - match: {path_separated_prefix: /v1}
                          route: {cluster: backend}
                    - name: wild
                      domains: ["*.example.com"]
                      routes:
                        - match: {prefix: /, case_sensitive: false}
                          route: {cluster: backend}
`

// envoy's virtual hosts and routes by hand: exact domain before a
// wildcard; routes in order; safe_regex matches the whole path;
// path_separated_prefix needs / or the end after the prefix; :method.
func TestEnvoyRouteMatches(t *testing.T) {
	l, err := ReadEnvoyLocal("envoy.yaml", []byte(envoyRouteConf))
	require.NoError(t, err)
	rt, err := l.Routes(Options{})
	require.NoError(t, err)
	require.Equal(t, traffic.NeedPath|traffic.NeedHost|traffic.NeedMethod, rt.Needs())
	for _, c := range []struct{ method, host, path, want string }{
		{"POST", "api.example.com", "/v1/items", "main/api/write"},
		{"GET", "api.example.com", "/v1/items/12", "main/api"},   // the regex route: the vhost's config
		{"GET", "api.example.com", "/v1/items/12/x", "main/api"}, // not the whole regex: /v1 then a /
		{"GET", "api.example.com", "/v1", "main/api"},            // path_separated_prefix: the end
		{"GET", "api.example.com", "/v12", ""},                   // not / after the prefix
		{"GET", "www.example.com", "/anything", "main"},          // the wildcard vhost: the filter's config
		{"GET", "other.org", "/anything", ""},                    // no virtual host
	} {
		require.Equal(t, c.want, routeOf(t, rt, c.method, c.host, c.path), "%s %s %s", c.method, c.host, c.path)
	}
}

// testdata/envoy-listeners.yaml's listeners by hand: a log line names its
// listener (the listener's name) or its local address, which the
// listener's socket_address takes (0.0.0.0: any address of its port); a
// listener without a local_ratelimit is a route without a row; an address
// no listener has is no route; within a listener, its own routes.
func TestEnvoyListenerRoutes(t *testing.T) {
	data, err := os.ReadFile("testdata/envoy-listeners.yaml")
	require.NoError(t, err)
	l, err := ReadEnvoyLocal("envoy-listeners.yaml", data)
	require.NoError(t, err)
	rt, err := l.Routes(Options{})
	require.NoError(t, err)
	require.Equal(t, traffic.NeedPath|traffic.NeedFrontend, rt.Needs())
	require.Equal(t, []traffic.Route{{Name: "public", Limited: true}, {Name: "internal", Limited: true}, {Name: "admin"}}, rt.Routes())
	for _, c := range []struct{ listener, path, want string }{
		{"public", "/a", "public"},
		{"10.0.0.5:8080", "/a", "public"},
		{"127.0.0.1:9090", "/jobs/1", "internal"},
		{"127.0.0.2:9090", "/jobs/1", ""}, // internal listens on 127.0.0.1 only
		{"internal", "/other", ""},        // no route of internal's
		{"127.0.0.1:9901", "/stats", "admin"},
		{"[::1]:9901", "/stats", ""}, // 0.0.0.0 takes IPv4 only
		{"10.0.0.9:7000", "/a", ""},
	} {
		require.Equal(t, c.want, frontendOf(t, rt, c.listener, "GET", "h", c.path), "%s %s", c.listener, c.path)
	}
	// one listener's scopes: a line still goes to its listener, the other
	// listeners' to routes without a row (public's too, left out)
	rt, err = l.Routes(Options{Scope: "internal"})
	require.NoError(t, err)
	require.Equal(t, traffic.NeedPath|traffic.NeedFrontend, rt.Needs())
	require.Equal(t, []traffic.Route{{Name: "internal", Limited: true}, {Name: "public"}, {Name: "admin"}}, rt.Routes())
	for _, c := range []struct{ listener, path, want string }{
		{"127.0.0.1:9090", "/jobs/1", "internal"},
		{"public", "/a", "public"},
		{"127.0.0.1:9901", "/stats", "admin"},
	} {
		require.Equal(t, c.want, frontendOf(t, rt, c.listener, "GET", "h", c.path), "%s %s", c.listener, c.path)
	}
	// a log that names no listener: its routes alone, as before
	require.True(t, rt.hasLoose)
	require.Equal(t, traffic.NeedPath, rt.loose.Needs())
}
