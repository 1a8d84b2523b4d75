package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/traffic"
)

// Kong's routes ranked by hand (traditional_compat): priority points
// (methods, hosts), plain hosts before wildcards, regex paths by
// regex_priority before prefix paths, longest prefix first.
const kongRouteConf = `_format_version: "3.0"
services:
  - name: shop
    url: http://shop:8080
    routes:
      - name: catalog
        paths: [/catalog, /items]
      - name: items-v2
        paths: ["~/items/v[0-9]+/"]
        regex_priority: 5
      - name: items-id
        paths: ["~/items/[0-9]+$"]
        regex_priority: 1
      - name: checkout
        methods: [POST]
        paths: [/catalog/checkout]
      - name: api-host
        hosts: [api.example.com]
        paths: [/]
      - name: wild-host
        hosts: ["*.example.com"]
        paths: [/catalog]
    plugins:
      - name: rate-limiting
        config: {second: 10, policy: local}
  - name: spare
    url: http://spare:8080
plugins:
  - name: rate-limiting
    route: checkout
    config: {second: 1, policy: local}
`

func TestKongRoutes(t *testing.T) {
	k, err := ReadKong("kong.yaml", []byte(kongRouteConf))
	require.NoError(t, err)
	rt, err := k.Routes(Options{})
	require.NoError(t, err)
	require.Equal(t, traffic.NeedMethod|traffic.NeedHost|traffic.NeedPath, rt.Needs())
	for _, c := range []struct{ method, host, path, want string }{
		{"GET", "shop", "/catalog/a", "catalog"},
		{"GET", "shop", "/items/v2/a", "items-v2"},                   // regexes before prefixes
		{"GET", "shop", "/items/12", "items-id"},                     // the regex anchored at the start
		{"GET", "shop", "/x/items/12", ""},                           // no route
		{"POST", "shop", "/catalog/checkout", "checkout"},            // a method is a point
		{"GET", "shop", "/catalog/checkout", "catalog"},              // GET is not POST
		{"GET", "api.example.com", "/catalog/a", "api-host"},         // a plain host before a wildcard
		{"GET", "www.example.com", "/catalog/a", "wild-host"},        // a host is a point
		{"POST", "api.example.com", "/catalog/checkout", "api-host"}, // both have a point: plain host first
	} {
		require.Equal(t, c.want, routeOf(t, rt, c.method, c.host, c.path), "%s %s %s", c.method, c.host, c.path)
	}
	rows := map[string]int{}
	for label, i := range rt.rows {
		rows[label] = i
	}
	require.Equal(t, 0, rows["catalog"])
	require.Equal(t, 3, rows["checkout"])
	// the service's plugin counts its routes together; checkout has its own
	require.Len(t, rt.shares, 1)
	require.Contains(t, rt.shares[0].note, "the rate-limiting plugin of service shop (kong.yaml:24) is used by catalog, items-v2, items-id, api-host, wild-host: Kong keys its counters")
	_, ok := rows["spare"]
	require.False(t, ok, "a service without routes and without a limit has no row")
}

func TestKongRouteHeaders(t *testing.T) {
	k, err := ReadKong("kong.yaml", []byte(`_format_version: "3.0"
services:
  - name: s
    url: http://s
    routes:
      - name: r
        headers: {x-version: ["2"]}
    plugins:
      - name: rate-limiting
        config: {second: 1}
`))
	require.NoError(t, err)
	_, err = k.Routes(Options{})
	require.ErrorContains(t, err, "kong.yaml:7:18")
	require.ErrorContains(t, err, "route r matches on headers, which a log does not say")
}
