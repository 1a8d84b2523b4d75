package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
)

// One nginx zone named by two locations is one row of a replay; on a
// cluster (a scenario that runs the config's rows on nodes) the nodes'
// limiters decide without the route, so Route refuses, naming the zone
// and its locations. Without the cluster the two rows become one.
func TestSharedZoneOnCluster(t *testing.T) {
	conf := `http {
    log_format route '$msec $http_x_client "$request" $limit_req_status';
    access_log route.log route;
    limit_req_zone $http_x_client zone=z:1m rate=10r/s;
    server {
        location /a/ { limit_req zone=z burst=5 nodelay; }
        location /b/ { limit_req zone=z nodelay; }
    }
}
`
	n, err := ReadNginx("nginx.conf", []byte(conf))
	require.NoError(t, err)
	build := func(cluster bool) (*Replay, *scenarios.Scenario) {
		g, err := ReadReplay(n, ReplayOptions{From: "nginx", File: "nginx.conf", Trace: "route.log"})
		require.NoError(t, err)
		doc := *g.Doc
		doc.Name, doc.Duration = str("shared"), scenarios.DurationOf("1s")
		doc.Traffic = []scenarios.Source{{Type: str("steady"), Key: str("c"), Rate: scenarios.RateOf("1/s")}}
		if cluster {
			doc.Cluster = &scenarios.Cluster{Nodes: scenarios.IntOf(2)}
		}
		sc, err := scenarios.Build(&doc)
		require.NoError(t, err)
		return g, sc
	}
	g, sc := build(false)
	require.NoError(t, g.Route(sc))
	require.Len(t, sc.Algorithms, 1)
	require.Equal(t, "/a/ + /b/", sc.Algorithms[0].Label)

	g, sc = build(true)
	err = g.Route(sc)
	require.EqualError(t, err, "--gateway: zone=z (nginx.conf:4) is used by /a/ (burst=5), /b/ (burst=0): nginx keeps one state per key in a zone for every location that names it, which ratesim makes one row of, but not on a cluster (its nodes' limiters decide without the route); keep one location with --scope, or give each location a zone of its own")
}
