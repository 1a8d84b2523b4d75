package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
)

const allOfHead = "name: t\nduration: 1s\nlimit: 10/s\ntraffic: [{type: steady, key: a, rate: 5/s}]\nalgorithms:\n"

var validAllOf = []struct {
	name, src string
}{
	{"nginx pair", allOfHead + "  - {name: all-of, label: x, commit: all-or-nothing, limits: [{name: nginx, rate: 10, per: 1s, burst: 5}, {name: nginx, rate: 100, per: 1m}]}\n"},
	{"default commit", allOfHead + "  - name: all-of\n    limits:\n      - fixed-window\n      - {name: sliding-window, rate: 100, per: 1m, count-rejected: true}\n"},
	{"in-order buckets", allOfHead + "  - {name: all-of, commit: in-order, limits: [{name: token-bucket, rate: 5, burst: 2}, token-bucket]}\n"},
	{"every-hit", allOfHead + "  - {name: all-of, commit: every-hit, limits: [{name: fixed-window, count-rejected: true}, {name: fixed-window, rate: 50, per: 1m, count-rejected: true}]}\n"},
	{"haproxy counters", allOfHead + "  - {name: all-of, commit: in-order, limits: [{name: haproxy, rate: 2, per: 1s}, {name: haproxy, rate: 5, per: 10s}]}\n"},
	{"haproxy on a cluster, local", allOfCluster + "  - {name: all-of, commit: every-hit, coordination: local, limits: [haproxy]}\n"},
}

var invalidAllOf = []struct {
	name, src, want string
}{
	{"unknown commit", allOfHead + "  - {name: all-of, commit: sometimes, limits: [nginx]}\n",
		`s.yaml:6:28: algorithms[0].commit: "sometimes": unknown commit (want all-or-nothing, every-hit or in-order)`},
	{"member that cannot peek", allOfHead + "  - {name: all-of, limits: [{name: gcra, rate: 3}]}\n",
		`s.yaml:6:36: algorithms[0].limits[0].name: "gcra": an all-of limit must be nginx, fixed-window, sliding-window or token-bucket (the algorithms that can check a request without charging it)`},
	{"plain member that cannot peek", allOfHead + "  - {name: all-of, limits: [nginx, leaky-bucket]}\n",
		`s.yaml:6:36: algorithms[0].limits[1]: "leaky-bucket": an all-of limit must be nginx, fixed-window, sliding-window or token-bucket (the algorithms that can check a request without charging it)`},
	{"no limits", allOfHead + "  - {name: all-of}\n",
		`s.yaml:6:5: algorithms[0].limits: missing (want a list of limits, e.g. limits: [{name: nginx, rate: 10, per: 1s, burst: 5}, {name: nginx, rate: 100, per: 1m}])`},
	{"empty limits", allOfHead + "  - {name: all-of, limits: []}\n",
		`s.yaml:6:28: algorithms[0].limits: empty list (want a list of limits, e.g. limits: [{name: nginx, rate: 10, per: 1s, burst: 5}, {name: nginx, rate: 100, per: 1m}])`},
	{"bare all-of", allOfHead + "  - all-of\n",
		`s.yaml:6:5: algorithms[0]: all-of needs its limits: write it as a mapping with a list of limits, e.g. limits: [{name: nginx, rate: 10, per: 1s, burst: 5}, {name: nginx, rate: 100, per: 1m}]`},
	{"policy on the row", allOfHead + "  - {name: all-of, rate: 3, limits: [nginx]}\n",
		`s.yaml:6:20: algorithms[0].rate: all-of takes no option "rate" (its options: label, commit, limits; rate, per and burst go in each limit); did you mean "name"?`},
	{"bad member per", allOfHead + "  - {name: all-of, limits: [{name: nginx, per: 2s}]}\n",
		`s.yaml:6:48: algorithms[0].limits[0].per: 2s: nginx takes a rate per 1s (r/s) or per 1m (r/m) only`},
	{"nested", allOfHead + "  - {name: all-of, limits: [{name: all-of, limits: [nginx]}]}\n",
		`s.yaml:6:36: algorithms[0].limits[0].name: "all-of": an all-of limit must be nginx, fixed-window, sliding-window or token-bucket (the algorithms that can check a request without charging it)`},
	{"limits not a list", allOfHead + "  - {name: all-of, limits: 3}\n",
		`s.yaml:6:28: algorithms[0].limits: found integer 3, want a list of limits, e.g. limits: [{name: nginx, rate: 10, per: 1s, burst: 5}, {name: nginx, rate: 100, per: 1m}]`},
	{"lease on a cluster", allOfCluster + "  - {name: all-of, coordination: lease, limits: [token-bucket]}\n",
		`s.yaml:7:34: algorithms[0].coordination: "lease": not a mode of all-of: lease is for token-bucket and gcra only (want local, central or racy)`},
	{"incr with every-hit", allOfCluster + "  - {name: all-of, commit: every-hit, coordination: racy, write: incr, limits: [fixed-window]}\n",
		`s.yaml:7:66: algorithms[0].write: "incr": an all-of row writes back by INCRBY only with commit all-or-nothing and fixed-window or sliding-window limits (want set)`},
	{"incr with a bucket", allOfCluster + "  - {name: all-of, coordination: racy, write: incr, limits: [fixed-window, token-bucket]}\n",
		`s.yaml:7:47: algorithms[0].write: "incr": an all-of row writes back by INCRBY only with commit all-or-nothing and fixed-window or sliding-window limits (want set)`},
	{"haproxy in all-or-nothing", allOfHead + "  - {name: all-of, limits: [{name: haproxy, rate: 2, per: 1s}]}\n",
		`s.yaml:6:29: algorithms[0].limits[0]: "haproxy" counts every request it is asked about, admitted or not: an all-of with it needs commit: every-hit or in-order`},
	{"haproxy in a store", allOfCluster + "  - {name: all-of, commit: every-hit, limits: [haproxy]}\n",
		`s.yaml:7:48: algorithms[0].limits[0]: "haproxy" keeps no state in a store: on a cluster an all-of with it runs coordination: local (found central)`},
	{"coordination without a cluster", allOfHead + "  - {name: all-of, coordination: local, limits: [nginx]}\n",
		`s.yaml:6:20: algorithms[0].coordination: needs a cluster section (add cluster: {nodes: N} at the top level, or remove coordination)`},
}

const allOfCluster = "name: t\nduration: 1s\nlimit: 10/s\ncluster: {nodes: 2}\ntraffic: [{type: steady, key: a, rate: 5/s}]\nalgorithms:\n"

// On a cluster, an all-of row runs local, central (the default) or racy,
// with write: incr when every limit is a window and the commit
// all-or-nothing (Kong's cluster policy).
func TestParseAllOfCluster(t *testing.T) {
	sc, err := Parse("s.yaml", []byte(allOfCluster+
		"  - {name: all-of, label: loc, coordination: local, limits: [fixed-window, {name: fixed-window, per: 1mo}]}\n"+
		"  - {name: all-of, label: cen, commit: every-hit, limits: [{name: fixed-window, count-rejected: true}, {name: fixed-window, per: 1m, count-rejected: true}]}\n"+
		"  - {name: all-of, label: racy, coordination: racy, write: incr, limits: [fixed-window, {name: sliding-window, per: 1m}]}\n"))
	if err != nil && strings.Contains(err.Error(), "1mo") {
		// per: 1mo comes with the calendar windows (another branch)
		sc, err = Parse("s.yaml", []byte(allOfCluster+
			"  - {name: all-of, label: loc, coordination: local, limits: [fixed-window, {name: fixed-window, per: 1h}]}\n"+
			"  - {name: all-of, label: cen, commit: every-hit, limits: [{name: fixed-window, count-rejected: true}, {name: fixed-window, per: 1m, count-rejected: true}]}\n"+
			"  - {name: all-of, label: racy, coordination: racy, write: incr, limits: [fixed-window, {name: sliding-window, per: 1m}]}\n"))
	}
	require.NoError(t, err)
	require.Equal(t, cluster.Local, sc.Algorithms[0].Coord.Mode)
	require.Equal(t, cluster.Central, sc.Algorithms[1].Coord.Mode)
	require.Equal(t, cluster.Racy, sc.Algorithms[2].Coord.Mode)
	require.Equal(t, cluster.WriteIncr, sc.Algorithms[2].Coord.Write)
}

func TestParseAllOf(t *testing.T) {
	for _, tc := range validAllOf {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse("s.yaml", []byte(tc.src))
			require.NoError(t, err)
			require.Len(t, sc.Algorithms, 1)
			a := sc.Algorithms[0]
			require.Equal(t, "all-of", a.Name)
			_, err = algorithms.New(a.Name, a.Params)
			require.NoError(t, err)
		})
	}
	for _, tc := range invalidAllOf {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tc.src))
			require.Error(t, err)
			require.Equal(t, tc.want, err.Error())
		})
	}
}

func TestParseAllOfParams(t *testing.T) {
	sc, err := Parse("s.yaml", []byte(validAllOf[0].src))
	require.NoError(t, err)
	a := sc.Algorithms[0]
	require.Equal(t, "x", a.Label)
	require.Equal(t, algorithms.AllOrNothing, a.Params.Commit)
	require.Len(t, a.Params.Members, 2)
	m0, m1 := a.Params.Members[0], a.Params.Members[1]
	require.Equal(t, "nginx", m0.Name)
	require.Equal(t, int64(5), m0.Params.NginxBurst)
	require.True(t, m0.Params.NginxBurstSet)
	require.Equal(t, time.Minute, m1.Params.Per)
	require.Equal(t, int64(100), m1.Params.Rate)
	require.Equal(t, int64(100), m1.Params.Burst, "the burst defaults to the limit's rate")
}
