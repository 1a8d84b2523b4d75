package coord

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
)

// global (gubernator's GLOBAL), worked by hand: fixed-window L=2 per 1s,
// 2 nodes round-robin, rtt 2 ms, sync 10 ms. The key alice is owned by
// node 1 (FNV-1a-64("alice") mod 2 = 1); arrivals alternate node 0, 1.
//
//   - 0, 2 ms at node 0: no copy yet, its own limiter counts 1, 2: admitted;
//     4 ms: its own count is full: rejected, retry_after to the window's
//     end, 996 ms. Its hits add up to 3, sent at 10 ms (sync after the
//     first).
//   - 1, 3 ms at node 1, the owner: its state counts 1, 2: admitted; the
//     first change schedules its broadcast at 11 ms.
//   - 11 ms: node 0's 3 hits reach the owner first (arrivals before timers)
//     as one request of cost 3, which 2 + 3 > 2 refuses whole; then the
//     broadcast: a request of 1 would be refused until 1000 ms; node 0
//     holds that copy from 12 ms.
//   - 30 ms at node 1 (the owner, full): rejected, retry_after 970 ms;
//     31 ms at node 0: its copy refuses, retry_after 1000 - 31 = 969 ms.
//   - 1000 ms at node 1: window 1 at the owner: admitted; 1001 ms at node
//     0: the copy expired at its reset (1000 ms), so node 0 decides on its
//     own limiter again, in window 1: admitted.
//
// Six admitted where one exact limiter admits 4 (two a window): extra +2.
// Every decision takes effect at its arrival: no node waits for another.
func TestClusterGlobal(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2}
	at := []time.Duration{0, ms, 2 * ms, 3 * ms, 4 * ms, 30 * ms, 31 * ms, 1000 * ms, 1001 * ms}
	res, got := runCluster(t, clusterConfig("fixed-window", pol, cluster.Coordination{Mode: cluster.Global, Sync: 10 * ms}, 2, 2*ms, at...))
	requireDecisions(t, []decisionRow{
		{0, 0, 0, acc, 0},
		{ms, ms, 1, acc, 0},
		{2 * ms, 2 * ms, 0, acc, 0},
		{3 * ms, 3 * ms, 1, acc, 0},
		{4 * ms, 4 * ms, 0, rej, 996 * ms},
		{30 * ms, 30 * ms, 1, rej, 970 * ms},
		{31 * ms, 31 * ms, 0, rej, 969 * ms},
		{1000 * ms, 1000 * ms, 1, acc, 0},
		{1001 * ms, 1001 * ms, 0, acc, 0},
	}, got)
	require.Equal(t, int64(2), res.Cluster.ExtraAdmitted)
	require.Equal(t, "global", res.Cluster.Coordination)
	require.Equal(t, int64(10*ms), res.Cluster.SyncNs)
	// messages: node 0's hits at 10, 41 and 1011 ms; the owner's
	// broadcasts 10 ms after each first request or hits since the last
	// (rejected ones too: gubernator queues an update for every request
	// at the owner): at 11, 40, 52, 1010 and 1022 ms
	require.Equal(t, int64(8), res.Cluster.StoreOps)
}

// On one node every key's owner is that node: global decides every request
// on the owner's state at its arrival, as one exact limiter does, and
// sends nothing.
func TestClusterGlobalOneNode(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 5))
	for _, name := range []string{"fixed-window", "sliding-window", "sliding-log", "token-bucket", "gcra", "leaky-bucket"} {
		var at []time.Duration
		tm := time.Duration(0)
		for range 300 {
			tm += time.Duration(r.Int64N(int64(40 * ms)))
			at = append(at, tm)
		}
		pol := algorithms.Policy{Rate: 5, Per: time.Second, Burst: 3}
		res, _ := runCluster(t, clusterConfig(name, pol, cluster.Coordination{Mode: cluster.Global, Sync: 5 * ms}, 1, ms, at...))
		require.Equal(t, int64(0), res.Cluster.ExtraAdmitted, name)
		require.Equal(t, int64(0), res.Cluster.StoreOps, name)
	}
}

// Cloudflare's counters per data center, with the modes that exist
// (docs/algorithms.md): 3 data centers, one client sending 30 requests
// 100 ms apart against 5 per 10s. With coordination local each data center
// counts alone: key-hash keeps the client at one, which admits 5, as one
// exact counter; round-robin moves it between all three, which admit 5
// each. Counts that reach the others later (sync every 2s) land in between.
func TestClusterPerDataCenter(t *testing.T) {
	t.Parallel()
	at := make([]time.Duration, 30)
	for i := range at {
		at[i] = time.Duration(i) * 100 * ms
	}
	pol := algorithms.Policy{Rate: 5, Per: 10 * time.Second, Burst: 5}
	extra := func(name string, co cluster.Coordination, bal cluster.Balancer) int64 {
		cfg := clusterConfig(name, pol, co, 3, ms, at...)
		cfg.Cluster.Balancer = bal
		res, _ := runCluster(t, cfg)
		return res.Cluster.ExtraAdmitted
	}
	local := cluster.Coordination{Mode: cluster.Local}
	require.Equal(t, int64(0), extra("cloudflare-rate-limit", local, cluster.KeyHash))
	require.Equal(t, int64(10), extra("cloudflare-rate-limit", local, cluster.RoundRobin))
	late := extra("cloudflare-rate-limit", cluster.Coordination{Mode: cluster.Sync, Sync: 2 * time.Second}, cluster.RoundRobin)
	require.Greater(t, late, int64(0))
	require.Less(t, late, int64(10))
}
