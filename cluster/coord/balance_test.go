package coord

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/sim"
)

// nodesOf runs n arrivals 1 ms apart through a local row that admits
// everything on a cluster of the given weights and balancer, with faults,
// and returns the node of each.
func nodesOf(t *testing.T, n int, w []int64, bal cluster.Balancer, faults ...cluster.Fault) ([]int, sim.Result) {
	t.Helper()
	at := make([]time.Duration, n)
	for i := range at {
		at[i] = time.Duration(i) * ms
	}
	pol := algorithms.Policy{Rate: 1000000, Per: time.Second, Burst: 1000000}
	cfg := clusterConfig("fixed-window", pol, cluster.Coordination{Mode: cluster.Local}, len(w), ms, at...)
	cfg.Duration = time.Duration(n)*ms + time.Second
	cfg.Cluster.Balancer, cfg.Cluster.Weights, cfg.Cluster.Faults = bal, w, faults
	res, got := runCluster(t, cfg)
	out := make([]int, len(got))
	for i, d := range got {
		out[i] = d.Node
	}
	return out, res
}

// nginx's smooth weighted round-robin: weights 5, 1, 1 give the sequence
// a, a, b, a, c, a, a in every cycle of 7 (the comment above
// ngx_http_upstream_get_peer). The current weights, a b c, before each
// pick: 5 1 1 -> a; 0 2 2 -> a; -5 3 3 -> b; 0 -3 4 -> a; -2 -2 5 -> c;
// 3 -1 -1 -> a; 1 0 0 -> a; back to 0 0 0.
func TestBalancerWeightedSequence(t *testing.T) {
	t.Parallel()
	got, res := nodesOf(t, 14, []int64{5, 1, 1}, cluster.Weighted)
	require.Equal(t, []int{0, 0, 1, 0, 2, 0, 0, 0, 0, 1, 0, 2, 0, 0}, got)
	require.Equal(t, "weighted", res.Cluster.Balancer)
	// weights 3, 3, 2 over a cycle of 8: 3 3 2 -> a; -2 6 4 -> b;
	// 1 1 6 -> c; 4 4 0 -> a; -1 7 2 -> b; 2 2 4 -> c; 5 5 -2 -> a;
	// 0 8 0 -> b; back to 0 0 0
	got, _ = nodesOf(t, 8, []int64{3, 3, 2}, cluster.Weighted)
	require.Equal(t, []int{0, 1, 2, 0, 1, 2, 0, 1}, got)
}

// A node that is down is skipped and keeps its current weight: weights
// 5, 1, 1 with node 0 down over [0, 4ms) alternate b, c, b, c; from 4 ms
// a's current weight, still 0, grows again with the others'.
func TestBalancerWeightedNodeDown(t *testing.T) {
	t.Parallel()
	got, _ := nodesOf(t, 6, []int64{5, 1, 1}, cluster.Weighted,
		cluster.Fault{Type: cluster.NodeDown, Node: 0, At: 0, For: 4 * ms})
	// the currents of b and c while a is down: 1 1 -> b; 0 2 -> c;
	// 1 1 -> b; 0 2 -> c; then of a, b and c: 5 1 1 -> a; 3 2 2 -> a
	require.Equal(t, []int{1, 2, 1, 2, 0, 0}, got)
}

// The weighted random draw sends each node its share in proportion to
// its weight, from the seed: the same seed gives the same nodes.
func TestBalancerWeightedRandom(t *testing.T) {
	t.Parallel()
	got, res := nodesOf(t, 7000, []int64{5, 1, 1}, cluster.WeightedRandom)
	again, _ := nodesOf(t, 7000, []int64{5, 1, 1}, cluster.WeightedRandom)
	require.Equal(t, got, again)
	require.Equal(t, "weighted-random", res.Cluster.Balancer)
	want := []int64{5000, 1000, 1000}
	for i, pn := range res.Cluster.PerNode {
		// 4 standard deviations of a binomial share of 7000
		require.InDelta(t, want[i], pn.Attempts, 160, "node %d", i)
	}
	// a node that is down gets nothing
	_, res = nodesOf(t, 700, []int64{5, 1, 1}, cluster.WeightedRandom,
		cluster.Fault{Type: cluster.NodeDown, Node: 0, At: 0, For: time.Second})
	require.Zero(t, res.Cluster.PerNode[0].Attempts)
}

// A row's own balancer overrides the cluster's.
func TestBalancerOfRow(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 100, Per: time.Second, Burst: 100}
	cfg := clusterConfig("fixed-window", pol, cluster.Coordination{Mode: cluster.Local, Balancer: cluster.Weighted}, 3, ms, 0, ms, 2*ms, 3*ms)
	cfg.Cluster.Weights = []int64{2, 1, 1}
	res, got := runCluster(t, cfg)
	require.Equal(t, "weighted", res.Cluster.Balancer)
	var nodes []int
	for _, d := range got {
		nodes = append(nodes, d.Node)
	}
	require.Equal(t, []int{0, 1, 2, 0}, nodes)
}

// istio #54759 beyond the report: 12 pods with envoy's local bucket of
// 600 tokens, refilled to 600 at every second, behind weights 3, 3, 2,
// ..., 2, under 7,200 a second for one second (the sum of the buckets).
// The two heavy pods get 3/26 of the arrivals, 830 or 831, and admit 600;
// the ten light ones get 2/26, about 554, under their 600, and admit all:
// the pods admit 6,738 or so of 7,200, where round-robin admits all 7,200.
func TestBalancerWeightedIstioTotal(t *testing.T) {
	t.Parallel()
	at := make([]time.Duration, 7200)
	for i := range at {
		at[i] = time.Duration(i) * time.Second / 7200
	}
	pol := algorithms.Policy{Rate: 600, Per: time.Second, Burst: 600}
	run := func(bal cluster.Balancer) sim.Result {
		cfg := clusterConfig("token-bucket", pol, cluster.Coordination{Mode: cluster.Local}, 12, ms, at...)
		cfg.Algorithms[0].Params.FillInterval, cfg.Algorithms[0].Params.TokensPerFill = time.Second, 600
		cfg.Duration = time.Second
		cfg.Cluster.Balancer = bal
		cfg.Cluster.Weights = []int64{3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}
		res, _ := runCluster(t, cfg)
		return res
	}
	res := run(cluster.Weighted)
	var want int64
	for i, pn := range res.Cluster.PerNode {
		if i < 2 {
			require.InDelta(t, 7200*3/26, pn.Attempts, 1, "node %d", i)
			require.Equal(t, int64(600), pn.Admitted, "node %d", i)
		} else {
			require.InDelta(t, 7200*2/26, pn.Attempts, 1, "node %d", i)
			require.Equal(t, pn.Attempts, pn.Admitted, "node %d", i)
		}
		want += pn.Admitted
	}
	require.Equal(t, want, res.Accepted)
	require.InDelta(t, 6738, res.Accepted, 2)
	require.Equal(t, int64(7200), run(cluster.RoundRobin).Accepted)
}
