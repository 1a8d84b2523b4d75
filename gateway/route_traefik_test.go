package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/traffic"
)

// Traefik's routers by hand: the longest rule first unless a priority is
// set; && and || and ! as written; Host ignores case; PathPrefix is a
// prefix, Path exact.
const traefikRouteConf = `http:
  routers:
    api:
      rule: "Host(` + "`api.example.com`" + `) && PathPrefix(` + "`/v1`" + `)"
      middlewares: [limit]
    admin:
      rule: "Host(` + "`api.example.com`" + `) && PathPrefix(` + "`/v1/admin`" + `) && !Method(` + "`DELETE`" + `)"
      middlewares: [limit, strict]
    web:
      rule: "PathPrefix(` + "`/`" + `)"
    login:
      rule: "Path(` + "`/login`" + `) || PathRegexp(` + "`^/signin/[a-z]+$`" + `)"
      priority: 1000
      middlewares: [strict]
  middlewares:
    limit:
      rateLimit: {average: 10, burst: 5}
    strict:
      rateLimit: {average: 1}
    spare:
      rateLimit: {average: 2}
`

func TestTraefikRoutes(t *testing.T) {
	tr, err := ReadTraefik("dynamic.yml", []byte(traefikRouteConf))
	require.NoError(t, err)
	rt, err := tr.Routes(Options{})
	require.NoError(t, err)
	require.Equal(t, traffic.NeedMethod|traffic.NeedHost|traffic.NeedPath, rt.Needs())
	for _, c := range []struct{ method, host, path, want string }{
		{"GET", "api.example.com", "/v1/users", "api"},
		{"GET", "API.example.com", "/v1/admin/x", "admin"},  // the longer rule first
		{"DELETE", "api.example.com", "/v1/admin/x", "api"}, // !Method
		{"GET", "other.example.com", "/v1/users", "web"},
		{"GET", "api.example.com", "/login", "login"},      // its priority beats api's length
		{"GET", "api.example.com", "/signin/abc", "login"}, // a regexp
		{"GET", "api.example.com", "/signin/ABC", "web"},
	} {
		require.Equal(t, c.want, routeOf(t, rt, c.method, c.host, c.path), "%s %s %s", c.method, c.host, c.path)
	}
	// admin's two middlewares are two rows of one route; spare, used by
	// no router, takes no request
	require.Equal(t, map[string]int{"api": 0, "admin/limit": 1, "admin/strict": 1, "login": 3, "spare": -1}, rt.rows)
}

func TestTraefikRouteBadRule(t *testing.T) {
	for conf, want := range map[string]string{
		"http:\n  routers:\n    a:\n      rule: \"Header(`X`, `y`)\"\n      middlewares: [m]\n  middlewares:\n    m:\n      rateLimit: {average: 1}\n":     "dynamic.yml:4:13: rule: \"Header(`X`, `y`)\": Header: a matcher replay cannot read",
		"http:\n  routers:\n    a:\n      rule: \"Path(`/a`\"\n      middlewares: [m]\n  middlewares:\n    m:\n      rateLimit: {average: 1}\n":            "want , or ) at column 10",
		"http:\n  routers:\n    a:\n      rule: \"PathRegexp(`(?<=a)`)\"\n      middlewares: [m]\n  middlewares:\n    m:\n      rateLimit: {average: 1}\n": "PathRegexp(\"(?<=a)\"): error parsing regexp",
	} {
		tr, err := ReadTraefik("dynamic.yml", []byte(conf))
		require.NoError(t, err)
		_, err = tr.Routes(Options{})
		require.ErrorContains(t, err, want)
	}
}
