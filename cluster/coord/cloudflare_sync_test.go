package coord

import (
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/traffic"
	"github.com/stretchr/testify/require"
)

// cloudflare-rate-limit in sync (docs/algorithms.md, docs/cluster.md):
// each node (a data center) decides on the counts it knows, its own plus
// what reached it at its last sync, and blocks a key on its own for the
// mitigation timeout. 3 requests per 12s, blocked 5s, 2 nodes round-robin
// (request i at node i%2), sync every 2s (node 0 at 0, 2, 4... s, node 1
// at 1, 3, 5... s), rtt 2ms. All counts below are window 0's (t < 12s)
// until 18s.
//
//	0.5s n0: knows 0, admits (1 <= 3); its delta 1
//	0.6s n1: knows 0, admits; its delta 1
//	0.7s n0: knows 1, admits; delta 2
//	0.8s n1: knows 1, admits; delta 2
//	1s   n1 sends 2: the store holds 2, n1 learns g=2 at 1.002s
//	2s   n0 sends 2: the store holds 4, n0 learns g=4 at 2.002s
//	2.5s n0: knows 4, 5 > 3: blocked until 7.5s. Its wait: to 7.5s, then
//	     on cur 4 at e=7.5s the sliding window fits 1 more in window 1
//	     where 4*(W-e) + 1*12 <= 36, e >= 6s: 18s, 15.5s away
//	2.6s n1: knows 2 (n0's 2 have not reached it), admits: 3 <= 3;
//	     node 0's block is its own
//	3s   n1 sends 1: the store holds 5, n1 learns g=5 at 3.002s
//	3.5s n0: blocked, counts nothing: 18s, 14.5s away
//	3.6s n1: knows 5, blocked until 8.6s; in window 1, 5*(W-e) <= 24,
//	     e >= 7.2s: 19.2s, 15.6s away
//	8.0s n0: block over, but it still knows 4 (it counted nothing since,
//	     so it synced nothing and heard nothing): a new trigger, blocked
//	     until 13s; then window 1 e=1s, prev 4: e >= 6s, 18s, 10s away
//	8.1s n1: blocked until 8.6s: 19.2s, 11.1s away
//	18s  n0: window 1, e=6s, prev 4: 24 + 12 = 36, admitted
//	19.2s n1: window 1, e=7.2s, prev 5: 5*4.8 + 12 = 36, admitted
//
// 7 admitted. One exact data center admits 0.5, 0.6, 0.7 s, blocks from
// 0.8s to 5.8s and from 8.0s (its count 3 in window 0) to 13s, admits 18s
// (3*6 + 12 = 30) and blocks 19.2s (3*4.8 + 2*12 = 38.4 > 36): 4, so the
// counts that arrive late cost +3.
func TestCloudflareSyncBlocksPerNode(t *testing.T) {
	t.Parallel()
	sec := time.Second
	pol := algorithms.Policy{Rate: 3, Per: 12 * sec, Burst: 3}
	at := []time.Duration{500 * ms, 600 * ms, 700 * ms, 800 * ms, 2500 * ms, 2600 * ms,
		3500 * ms, 3600 * ms, 8000 * ms, 8100 * ms, 18 * sec, 19200 * ms}
	cfg := clusterConfig("cloudflare-rate-limit", pol, cluster.Coordination{Mode: cluster.Sync, Sync: 2 * sec}, 2, 2*ms, at...)
	cfg.Algorithms[0].Params.MitigationTimeout = 5 * sec
	cfg.Duration = 25 * sec
	res, got := runCluster(t, cfg)
	acc, rej := algorithms.Accept, algorithms.Reject
	want := []decisionRow{
		{at: 500 * ms, node: 0, verdict: acc},
		{at: 600 * ms, node: 1, verdict: acc},
		{at: 700 * ms, node: 0, verdict: acc},
		{at: 800 * ms, node: 1, verdict: acc},
		{at: 2500 * ms, node: 0, verdict: rej, retryAfter: 15500 * ms},
		{at: 2600 * ms, node: 1, verdict: acc},
		{at: 3500 * ms, node: 0, verdict: rej, retryAfter: 14500 * ms},
		{at: 3600 * ms, node: 1, verdict: rej, retryAfter: 15600 * ms},
		{at: 8000 * ms, node: 0, verdict: rej, retryAfter: 10 * sec},
		{at: 8100 * ms, node: 1, verdict: rej, retryAfter: 11100 * ms},
		{at: 18 * sec, node: 0, verdict: acc},
		{at: 19200 * ms, node: 1, verdict: acc},
	}
	for i := range want {
		want[i].decided = want[i].at
	}
	requireDecisions(t, want, got)
	c := res.Cluster
	require.Equal(t, [3]int64{7, 4, 3}, [3]int64{c.Admitted, c.ReferenceAdmitted, c.ExtraAdmitted})
	// what node 0 decided on at 3.5s (request 6): the 4 it heard at
	// 2.002s, and its block from 2.5s
	v := explainCluster(t, cfg, 6).View
	require.Equal(t, "node 0", v.Where)
	require.Equal(t, "the node's counts of the key: current window 4 (last heard 4 + in flight 0 + counted since 0), previous 0; the node blocks the key until 7.5s", v.Note)
}

// With mitigation-timeout 0 (throttle) cloudflare-rate-limit is the
// sliding window alone, in sync too: on the same traffic, with skews,
// jitter, faults and retries, it decides every attempt as sliding-window
// does and reports the same figures.
func TestCloudflareSyncThrottleIsSlidingWindow(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 5, Per: time.Second, Burst: 5}
	var at []time.Duration
	for i := range 300 {
		at = append(at, time.Duration(i*i%997)*3*ms)
	}
	run := func(name string) ([]decisionRow, any) {
		cfg := clusterConfig(name, pol, cluster.Coordination{Mode: cluster.Sync, Sync: 70 * ms}, 3, 2*ms, at...)
		cfg.Algorithms[0].Label = "row"
		cfg.Cluster.Store.Jitter = 700 * us
		cfg.Cluster.Skew = []time.Duration{-ms, 0, 2 * ms}
		cfg.Cluster.Faults = []cluster.Fault{
			{Type: cluster.NodeDown, Node: 1, At: 300 * ms, For: 400 * ms},
			{Type: cluster.StoreDown, At: 1500 * ms, For: 100 * ms},
		}
		cfg.Retries = []traffic.RetryPolicy{{Policy: "retry-after", MaxAttempts: 2}}
		res, got := runCluster(t, cfg)
		var rows []decisionRow
		for _, g := range got {
			rows = append(rows, decisionRow{at: g.Time, decided: g.Decided, node: g.Node, verdict: g.Verdict, retryAfter: g.RetryAfter})
		}
		res.Algorithm = ""
		return rows, res
	}
	cfRows, cfRes := run("cloudflare-rate-limit")
	swRows, swRes := run("sliding-window")
	require.Equal(t, swRows, cfRows)
	require.Equal(t, swRes, cfRes)
	require.Greater(t, len(cfRows), 300) // retries ran
}

// A node whose clock is behind the run's start decides a key it has never
// blocked on the counts alone: with skew -1ms the first request (its
// clock at -1ms) is admitted in local and sync alike, and the second (its
// clock at 2ms, window 0, the first's count weighing 1*(W-2ms)/W), over 1
// per 10s, blocks the key until 10.002s, in window 1 where window -1's
// count no longer weighs: the wait is the block's 10s.
func TestCloudflareSkewedNodeNotBlocked(t *testing.T) {
	t.Parallel()
	sec := time.Second
	pol := algorithms.Policy{Rate: 1, Per: 10 * sec, Burst: 1}
	for _, co := range []cluster.Coordination{{Mode: cluster.Local}, {Mode: cluster.Sync, Sync: sec}} {
		cfg := clusterConfig("cloudflare-rate-limit", pol, co, 1, 2*ms, 0, 3*ms)
		cfg.Algorithms[0].Params.MitigationTimeout = 10 * sec
		cfg.Cluster.Skew = []time.Duration{-ms}
		_, got := runCluster(t, cfg)
		requireDecisions(t, []decisionRow{
			{at: 0, decided: 0, verdict: algorithms.Accept},
			{at: 3 * ms, decided: 3 * ms, verdict: algorithms.Reject, retryAfter: 10 * sec},
		}, got)
	}
}

// A node's blocks go with the rest of its state when it goes down: 1 per
// 10s, blocked 1 minute, node 0 alone up but for 3s to 4s, syncing every
// second (at 0, 1, 2... s; node 1 would at 0.5, 1.5... s). 0s is admitted
// and sent at once (a sync at an arrival's instant comes after it): node 0
// knows 1 from 2ms. 1s finds 1, and 1 + 1 is over the rate: blocked
// until 61s (then window 6, where window 0's count no longer weighs: the
// wait is the block's 60s); 2s is blocked (59s). The node is down from 3s
// to 4s and comes back fresh, knowing no count and no block: 5s is
// admitted, though the store still holds 1 for the window.
func TestCloudflareSyncBlockLostWithNode(t *testing.T) {
	t.Parallel()
	sec := time.Second
	pol := algorithms.Policy{Rate: 1, Per: 10 * sec, Burst: 1}
	cfg := clusterConfig("cloudflare-rate-limit", pol, cluster.Coordination{Mode: cluster.Sync, Sync: sec}, 2, 2*ms, 0, sec, 2*sec, 5*sec)
	cfg.Algorithms[0].Params.MitigationTimeout = time.Minute
	cfg.Duration = 10 * sec
	cfg.Cluster.Faults = []cluster.Fault{ // node 1 stands in while node 0 is down
		{Type: cluster.NodeDown, Node: 1, At: 0, For: 3 * sec},
		{Type: cluster.NodeDown, Node: 0, At: 3 * sec, For: sec},
		{Type: cluster.NodeDown, Node: 1, At: 4 * sec, For: 6 * sec},
	}
	_, got := runCluster(t, cfg)
	requireDecisions(t, []decisionRow{
		{at: 0, decided: 0, verdict: algorithms.Accept},
		{at: sec, decided: sec, verdict: algorithms.Reject, retryAfter: 60 * sec},
		{at: 2 * sec, decided: 2 * sec, verdict: algorithms.Reject, retryAfter: 59 * sec},
		{at: 5 * sec, decided: 5 * sec, verdict: algorithms.Accept},
	}, got)
}
