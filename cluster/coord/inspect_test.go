package coord

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/sim"
)

// explainCluster runs cfg asking what its row saw when it decided the
// attempt of index seq, and returns the row's result.
func explainCluster(t *testing.T, cfg sim.Config, seq uint64) sim.Result {
	t.Helper()
	cfg.Explain = &sim.Explain{Row: 0, Seq: seq}
	res, _ := runCluster(t, cfg)
	require.NotNil(t, res.View)
	return res
}

// What a cluster row saw when it decided one request: central,
// fixed-window 2 per 1s, rtt 2 ms, 2 nodes; requests at 0, 0.5 and 1 ms.
// The third runs in the store at 2 ms: the count is 2 before and after
// (it is refused), and the scripts of the first two are in flight, their
// replies due at 2 and 2.5 ms.
func TestClusterViewCentral(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2}
	cfg := clusterConfig("fixed-window", pol, cluster.Coordination{Mode: cluster.Central}, 2, 2*ms, 0, 500*us, ms)
	v := explainCluster(t, cfg, 2).View
	require.Equal(t, sim.ClusterView{Where: "store", At: 2 * ms,
		Before:   []algorithms.Gauge{{Name: "count", Value: 2}, {Name: "limit", Value: 2}},
		After:    []algorithms.Gauge{{Name: "count", Value: 2}, {Name: "limit", Value: 2}},
		InFlight: 2, InFlightKey: 2}, *v)
	// the same with a service time (the queued path): the store serves
	// one at a time, 100 us each; the third executes at 2 ms, the two
	// before it are answered at 1.1 and 1.6 ms, still on their way back
	cfg.Cluster.Store.Service = 100 * us
	v = explainCluster(t, cfg, 2).View
	require.Equal(t, "store", v.Where)
	require.Equal(t, 2, v.InFlight)
	require.Equal(t, float64(2), v.Before[0].Value)
}

// local: the node's limiter, on the node's clock (node 1, 5 ms ahead):
// the second request (node 1) finds its node's count 0 and leaves it 1.
func TestClusterViewLocal(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2}
	cfg := clusterConfig("fixed-window", pol, cluster.Coordination{Mode: cluster.Local}, 2, 2*ms, 0, 10*ms)
	cfg.Cluster.Skew = []time.Duration{0, 5 * ms}
	v := explainCluster(t, cfg, 1).View
	require.Equal(t, sim.ClusterView{Where: "node 1", At: 15 * ms,
		Before: []algorithms.Gauge{{Name: "count", Value: 0}, {Name: "limit", Value: 2}},
		After:  []algorithms.Gauge{{Name: "count", Value: 1}, {Name: "limit", Value: 2}}}, *v)
	// without an observer (the nodes' quick path) the same
	cfg.Explain = &sim.Explain{Row: 0, Seq: 1}
	rep, err := simRun(cfg)
	require.NoError(t, err)
	require.Equal(t, v, rep.Results[0].View)
}

// sync and global say what the node decided on in words.
func TestClusterViewNotes(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 3, Per: time.Second, Burst: 3}
	// docs/cluster.md's worked example 4: at 60 ms node 1 counts g 2 +
	// delta 1 (its 20 and 40 ms had been synced at 50 ms, heard at 52)
	at := []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms, 50 * ms, 60 * ms}
	v := explainCluster(t, clusterConfig("fixed-window", pol, cluster.Coordination{Mode: cluster.Sync, Sync: 100 * ms}, 2, 2*ms, at...), 5).View
	require.Equal(t, "node 1", v.Where)
	require.Equal(t, "the node's counts of the key: current window 2 (last heard 2 + in flight 0 + counted since 0), previous 0", v.Note)
	// global: TestClusterGlobal's 31 ms request at node 0 answered from
	// its copy of the owner's status
	gat := []time.Duration{0, ms, 2 * ms, 3 * ms, 4 * ms, 30 * ms, 31 * ms}
	v = explainCluster(t, clusterConfig("fixed-window", algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2},
		cluster.Coordination{Mode: cluster.Global, Sync: 10 * ms}, 2, 2*ms, gat...), 6).View
	require.Equal(t, "global: answered from the node's copy of the owner's last status, over the limit until 1s", v.Note)
}
