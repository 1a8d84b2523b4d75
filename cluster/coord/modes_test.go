package coord

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

var (
	acc = algorithms.Accept
	rej = algorithms.Reject
	dly = algorithms.Delay
)

// Split: L=4, B=4 over 2 nodes gives each 2 per 1s, burst 2. Eight
// requests at 0 alternate between the nodes: each admits its first two
// and rejects the rest until its bucket refills one token, 500 ms. Split
// admits 4, as the reference does: extra 0.
func TestClusterSplit(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 4, Per: time.Second, Burst: 4}
	at := make([]time.Duration, 8)
	res, got := runCluster(t, clusterConfig("token-bucket", pol, cluster.Coordination{Mode: cluster.Split}, 2, ms, at...))
	var want []decisionRow
	for i := range at {
		w := decisionRow{node: i % 2, verdict: acc}
		if i >= 4 {
			w.verdict, w.retryAfter = rej, 500*ms
		}
		want = append(want, w)
	}
	requireDecisions(t, want, got)
	require.Equal(t, int64(0), res.Cluster.ExtraAdmitted)
}

// Split with fewer requests per period than nodes: L=1 over 2 nodes leaves
// node 1 no share, and it admits nothing (retry_after never).
func TestClusterSplitNoShare(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 1, Per: time.Second, Burst: 1}
	res, got := runCluster(t, clusterConfig("gcra", pol, cluster.Coordination{Mode: cluster.Split}, 2, ms, 0, 10*ms))
	requireDecisions(t, []decisionRow{
		{0, 0, 0, acc, 0},
		{10 * ms, 10 * ms, 1, rej, algorithms.Never},
	}, got)
	require.Equal(t, int64(0), res.Cluster.ExtraAdmitted)
}

// Central with clock: node, a node 200 ms behind, fixed-window L=2 per 1s,
// rtt 0: the nodes' calls alternate between windows 1 and 0 in the store
// (1050 ms on node 0, 860 ms on node 1, ...); each call finds the stored
// window not its own, counts from 0 and takes the state over: all five are
// admitted, where the reference (and clock: store) admit 2.
func TestClusterCentralNodeClockGoesBack(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2}
	at := []time.Duration{1050 * ms, 1060 * ms, 1070 * ms, 1080 * ms, 1090 * ms}
	run := func(clock cluster.Clock) (sim.Result, []sim.Decision) {
		cfg := clusterConfig("fixed-window", pol, cluster.Coordination{Mode: cluster.Central, Clock: clock}, 2, 0, at...)
		cfg.Cluster.Skew = []time.Duration{0, -200 * ms}
		return runCluster(t, cfg)
	}
	res, got := run(cluster.NodeClock)
	for i, d := range got {
		require.Equal(t, acc, d.Verdict, "decision %d", i)
		require.Equal(t, at[i], d.Decided, "decision %d: rtt 0", i)
	}
	require.Equal(t, int64(3), res.Cluster.ExtraAdmitted)
	require.Equal(t, "node", res.Cluster.Clock)
	res, _ = run(cluster.StoreClock)
	require.Equal(t, int64(0), res.Cluster.ExtraAdmitted)
}

// Racy with write: set loses an update, write: incr does not. fixed-window
// L=2 per 1s, 2 nodes, rtt 10 ms; requests at 0, 3, 20 and 40 ms. The GETs
// of the first two run at 5 and 8 ms on a fresh key: both admitted. With
// set, both write (window 0, count 1) at 15 and 18 ms: the third GET (25
// ms) reads 1 and admits; its write of 2 lands at 35 ms, and the fourth (45
// ms) is rejected: 3 admitted. With incr, the store counts 2 by 18 ms: the
// third and fourth are rejected (retry_after from their GETs at 25 and 45
// ms to the next window): 2 admitted, as the reference.
func TestClusterRacyWrites(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2}
	at := []time.Duration{0, 3 * ms, 20 * ms, 40 * ms}
	run := func(w cluster.Write) (sim.Result, []sim.Decision) {
		return runCluster(t, clusterConfig("fixed-window", pol, cluster.Coordination{Mode: cluster.Racy, Write: w}, 2, 10*ms, at...))
	}
	res, got := run(cluster.WriteSet)
	requireDecisions(t, []decisionRow{
		{0, 10 * ms, 0, acc, 0},
		{3 * ms, 13 * ms, 1, acc, 0},
		{20 * ms, 30 * ms, 0, acc, 0},
		{40 * ms, 50 * ms, 1, rej, 955 * ms},
	}, got)
	require.Equal(t, int64(1), res.Cluster.ExtraAdmitted)
	require.Equal(t, int64(7), res.Cluster.StoreOps) // 4 GETs, 3 SETs
	res, got = run(cluster.WriteIncr)
	requireDecisions(t, []decisionRow{
		{0, 10 * ms, 0, acc, 0},
		{3 * ms, 13 * ms, 1, acc, 0},
		{20 * ms, 30 * ms, 0, rej, 975 * ms},
		{40 * ms, 50 * ms, 1, rej, 955 * ms},
	}, got)
	require.Equal(t, int64(0), res.Cluster.ExtraAdmitted)
	require.Equal(t, int64(6), res.Cluster.StoreOps) // 4 GETs, 2 INCRBYs
	require.Equal(t, "incr", res.Cluster.Write)
}

// Lease, gcra L=10 per 1s (T = 100 ms), B=10, 2 nodes, K=3, rtt 2 ms.
//
// Six requests at 0 ms, alternating: each node's first sends a take (want
// 3, need 1) that runs at 1 ms; the bucket is full and grants 3 to each
// (TAT 301 ms, then 601 ms). Each node's other two wait for the reply at 2
// ms, and the stock of 3 pays for all three: 6 admitted, 2 ops.
//
// Eight requests at 10 ms: node 0's first takes at 11 ms: TAT 601 ms is
// 590 ms ahead, room for 4 tokens, 3 granted (TAT 901 ms). Node 1's take,
// after it, finds room for 1 (TAT 1001 ms), and the wait for 1 more is
// 1001 + 100 - 11 - 1000 = 90 ms. At 12 ms node 0's stock pays three of its
// four; its fourth finds the stock empty after a take granted in full and
// takes again, at 13 ms: no room (1001 + 100 - 13 > 1000), wait 88 ms:
// rejected at 14 ms. Node 1's stock of 1 pays one; its take was short, so
// its other three are rejected at 12 ms with the 90 ms it gave. 10
// admitted in all, as the reference admits 10 (6, then 4 of 8 at 10 ms).
func TestClusterLease(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}
	at := []time.Duration{0, 0, 0, 0, 0, 0}
	for range 8 {
		at = append(at, 10*ms)
	}
	cfg := clusterConfig("gcra", pol, cluster.Coordination{Mode: cluster.Lease, Lease: 3}, 2, 2*ms, at...)
	res, got := runCluster(t, cfg)
	want := []decisionRow{
		{0, 2 * ms, 0, acc, 0}, {0, 2 * ms, 1, acc, 0}, {0, 2 * ms, 0, acc, 0},
		{0, 2 * ms, 1, acc, 0}, {0, 2 * ms, 0, acc, 0}, {0, 2 * ms, 1, acc, 0},
		{10 * ms, 12 * ms, 0, acc, 0}, {10 * ms, 12 * ms, 1, acc, 0},
		{10 * ms, 12 * ms, 0, acc, 0}, {10 * ms, 12 * ms, 1, rej, 90 * ms},
		{10 * ms, 12 * ms, 0, acc, 0}, {10 * ms, 12 * ms, 1, rej, 90 * ms},
		{10 * ms, 14 * ms, 0, rej, 88 * ms}, {10 * ms, 12 * ms, 1, rej, 90 * ms},
	}
	requireDecisions(t, want, got)
	c := res.Cluster
	require.Equal(t, int64(10), c.Admitted)
	require.Equal(t, int64(10), c.ReferenceAdmitted)
	require.Equal(t, int64(5), c.StoreOps)
	require.Equal(t, int64(3), c.Lease)
}

// The store down from 100 to 200 ms, timeout 50 ms, central gcra L=1 per
// 1s, rtt 2 ms: the request at 150 ms reaches the store at 151 ms, while it
// is down, and fails at 150 + 50 = 200 ms: admitted with allow (fail open),
// rejected with deny (retry_after W). The one at 0 ms set TAT 1.001s, so
// the one at 300 ms is rejected (run at 301 ms: 700 ms to wait).
func TestClusterStoreDown(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 1, Per: time.Second, Burst: 1}
	for _, onErr := range []cluster.OnError{cluster.Allow, cluster.Deny} {
		t.Run(string(onErr), func(t *testing.T) {
			cfg := clusterConfig("gcra", pol, cluster.Coordination{Mode: cluster.Central}, 1, 2*ms, 0, 150*ms, 300*ms)
			cfg.Cluster.Store.Timeout = 50 * ms
			cfg.Cluster.OnStoreError = onErr
			cfg.Cluster.Faults = []cluster.Fault{{Type: cluster.StoreDown, At: 100 * ms, For: 100 * ms}}
			res, got := runCluster(t, cfg)
			failed := decisionRow{150 * ms, 200 * ms, 0, acc, 0}
			if onErr == cluster.Deny {
				failed.verdict, failed.retryAfter = rej, time.Second
			}
			requireDecisions(t, []decisionRow{
				{0, 2 * ms, 0, acc, 0},
				failed,
				{300 * ms, 302 * ms, 0, rej, 700 * ms},
			}, got)
			c := res.Cluster
			require.Equal(t, int64(1), c.StoreErrors)
			if onErr == cluster.Allow {
				require.Equal(t, [2]int64{1, 0}, [2]int64{c.FailOpen, c.FailClosed})
			} else {
				require.Equal(t, [2]int64{0, 1}, [2]int64{c.FailOpen, c.FailClosed})
			}
		})
	}
}

// A slow store: ops sent during [100, 200) ms travel with rtt 40 ms. With
// timeout 50 ms the request at 150 ms is answered at 190 ms. With rtt 200
// ms it reaches the store at 250 ms, after its node gave up at 200 ms
// (fail open): the script still runs there and takes the key's only token,
// so the request at 300 ms (run at 301 ms) is rejected.
func TestClusterStoreSlow(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 1, Per: time.Second, Burst: 1}
	run := func(rtt time.Duration) (sim.Result, []sim.Decision) {
		cfg := clusterConfig("gcra", pol, cluster.Coordination{Mode: cluster.Central}, 1, 2*ms, 150*ms, 300*ms)
		cfg.Cluster.Store.Timeout = 50 * ms
		cfg.Cluster.Faults = []cluster.Fault{{Type: cluster.StoreSlow, At: 100 * ms, For: 100 * ms, RTT: rtt}}
		return runCluster(t, cfg)
	}
	_, got := run(40 * ms)
	requireDecisions(t, []decisionRow{
		{150 * ms, 190 * ms, 0, acc, 0},
		{300 * ms, 302 * ms, 0, rej, 869 * ms}, // TAT 1.17s (run at 170 ms)
	}, got)
	res, got := run(200 * ms)
	requireDecisions(t, []decisionRow{
		{150 * ms, 200 * ms, 0, acc, 0},
		{300 * ms, 302 * ms, 0, rej, 949 * ms}, // TAT 1.25s (run at 250 ms)
	}, got)
	require.Equal(t, int64(1), res.Cluster.FailOpen)
}

// A store flush at 500 ms forgets the key: the request at 600 ms, which
// TAT 1.001s would reject, is admitted.
func TestClusterStoreFlush(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 1, Per: time.Second, Burst: 1}
	cfg := clusterConfig("gcra", pol, cluster.Coordination{Mode: cluster.Central}, 1, 2*ms, 0, 400*ms, 600*ms)
	cfg.Cluster.Faults = []cluster.Fault{{Type: cluster.StoreFlush, At: 500 * ms}}
	_, got := runCluster(t, cfg)
	requireDecisions(t, []decisionRow{
		{0, 2 * ms, 0, acc, 0},
		{400 * ms, 402 * ms, 0, rej, 600 * ms},
		{600 * ms, 602 * ms, 0, acc, 0},
	}, got)
}

// Node 1 down from 25 to 100 ms, local gcra L=2 per 1s (T 500 ms), B=2,
// round-robin over 2 nodes: the requests at 30 and 40 ms skip it and go to
// node 0, which is full (TAT 1.0s after 0 and 20 ms); node 1 lost its state
// (TAT 510 ms after 10 ms) and comes back fresh: 110 ms is admitted.
func TestClusterNodeDown(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2}
	cfg := clusterConfig("gcra", pol, cluster.Coordination{Mode: cluster.Local}, 2, ms,
		0, 10*ms, 20*ms, 30*ms, 40*ms, 110*ms, 120*ms)
	cfg.Cluster.Faults = []cluster.Fault{{Type: cluster.NodeDown, Node: 1, At: 25 * ms, For: 75 * ms}}
	res, got := runCluster(t, cfg)
	requireDecisions(t, []decisionRow{
		{0, 0, 0, acc, 0},
		{10 * ms, 10 * ms, 1, acc, 0},
		{20 * ms, 20 * ms, 0, acc, 0},
		{30 * ms, 30 * ms, 0, rej, 470 * ms},
		{40 * ms, 40 * ms, 0, rej, 460 * ms},
		{110 * ms, 110 * ms, 1, acc, 0},
		{120 * ms, 120 * ms, 0, rej, 380 * ms},
	}, got)
	require.Equal(t, []sim.NodeCount{{Node: 0, Attempts: 5, Admitted: 2, Rejected: 3}, {Node: 1, Attempts: 2, Admitted: 2, Rejected: 0}}, res.Cluster.PerNode)
}

// Through the Go API (the scenario parser refuses it first), a cluster
// whose faults leave no node up is an error, not a balancer looking for a
// live node forever.
func TestClusterAllNodesDown(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2}
	cfg := clusterConfig("gcra", pol, cluster.Coordination{Mode: cluster.Local}, 2, ms, 0, 10*ms, 50*ms)
	cfg.Cluster.Faults = []cluster.Fault{{Type: cluster.NodeDown, Node: 0, At: 5 * ms, For: 40 * ms},
		{Type: cluster.NodeDown, Node: 1, At: 8 * ms, For: 10 * ms}}
	_, err := simRun(cfg)
	require.ErrorContains(t, err, "all 2 nodes are down over [8ms, 18ms)")
}

// A shaper in the store: docs/algorithms.md's leaky-bucket example (L=4 per
// 1s, B=4; requests at 0,0,0,0,0,100,600,1700 ms) through a central store
// with rtt 2 ms: the script runs each 1 ms later, so the verdicts and
// delays are the example's, and each takes effect 2 ms after its arrival:
// a delayed request reaches the backend at decided + delay.
func TestClusterCentralShaper(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 4, Per: time.Second, Burst: 4}
	at := []time.Duration{0, 0, 0, 0, 0, 100 * ms, 600 * ms, 1700 * ms}
	res, got := runCluster(t, clusterConfig("leaky-bucket", pol, cluster.Coordination{Mode: cluster.Central}, 1, 2*ms, at...))
	verdicts := []algorithms.Verdict{acc, dly, dly, dly, rej, rej, dly, acc}
	delays := []time.Duration{0, 250 * ms, 500 * ms, 750 * ms, 0, 0, 400 * ms, 0}
	for i, d := range got {
		require.Equal(t, verdicts[i], d.Verdict, "decision %d", i)
		require.Equal(t, delays[i], d.Delay, "decision %d", i)
		require.Equal(t, at[i]+2*ms, d.Decided, "decision %d", i)
	}
	// the delayed ones reach the backend at 252, 502 and 752 ms: the
	// busiest 100 ms holds one request
	require.Equal(t, int64(1), res.Peaks[1].Count)
	require.Equal(t, int64(0), res.Cluster.ExtraAdmitted)
}

// Retries go through the balancer again, from the instant their rejection
// took effect: central gcra L=1 per 1s, rtt 2 ms, retry-after exact. The
// request at 0 is admitted at 2 ms; the one at 10 ms is rejected at 12 ms
// (run at 11 ms: retry_after 990 ms) and retried at 12 + 990 = 1002 ms, on
// node 0 again (2 nodes, the third arrival), run at 1003 ms: admitted.
func TestClusterRetry(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 1, Per: time.Second, Burst: 1}
	cfg := clusterConfig("gcra", pol, cluster.Coordination{Mode: cluster.Central}, 2, 2*ms, 0, 10*ms)
	cfg.Retries = []traffic.RetryPolicy{{Policy: "retry-after", MaxAttempts: 3}}
	res, got := runCluster(t, cfg)
	requireDecisions(t, []decisionRow{
		{0, 2 * ms, 0, acc, 0},
		{10 * ms, 12 * ms, 1, rej, 990 * ms},
		{1002 * ms, 1004 * ms, 0, acc, 0},
	}, got)
	require.Equal(t, int64(3), res.Attempts)
	require.Equal(t, int64(2), res.Offered)
}

// A node whose clock is behind reads instants before time 0 at the start
// of a synthetic run: every algorithm takes them (local, split, and the
// store's scripts with clock: node), and a fresh key admits its first
// request whatever the clock.
func TestClusterClocksBeforeZero(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2}
	for _, name := range algorithms.Names() {
		for _, co := range []cluster.Coordination{{Mode: cluster.Local}, {Mode: cluster.Split},
			{Mode: cluster.Central, Clock: cluster.NodeClock}} {
			if !cluster.Supports(name, co.Mode) || adaptive(name) {
				continue // adaptive rows need a backend: TestClusterBackendConserves
			}
			t.Run(name+"/"+string(co.Mode), func(t *testing.T) {
				cfg := clusterConfig(name, pol, co, 2, ms, 0, ms, 2*ms, 3*ms)
				cfg.Cluster.Skew = []time.Duration{-50 * ms, -1500 * ms}
				cfg.Algorithms[0].Params.Service = 10 * ms
				_, got := runCluster(t, cfg)
				require.Len(t, got, 4)
				require.NotEqual(t, rej, got[0].Verdict, "a fresh key's first request")
			})
		}
	}
}

// With a recorded trace (no duration: absolute instants), the faults are
// placed from the first arrival: a store-down at 100ms of a trace that
// starts at 1.7e18 ns covers its requests from 100 to 200 ms in.
func TestClusterFaultsOnATrace(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 1, Per: time.Second, Burst: 1}
	t0 := time.Duration(1_700_000_000) * time.Second
	cfg := clusterConfig("gcra", pol, cluster.Coordination{Mode: cluster.Central}, 1, 2*ms, t0, t0+150*ms, t0+300*ms)
	cfg.Duration = 0
	cfg.Cluster.Store.Timeout = 50 * ms
	cfg.Cluster.OnStoreError = cluster.Deny
	cfg.Cluster.Faults = []cluster.Fault{{Type: cluster.StoreDown, At: 100 * ms, For: 100 * ms}}
	res, got := runCluster(t, cfg)
	requireDecisions(t, []decisionRow{
		{t0, t0 + 2*ms, 0, acc, 0},
		{t0 + 150*ms, t0 + 200*ms, 0, rej, time.Second}, // failed closed
		{t0 + 300*ms, t0 + 302*ms, 0, rej, 700 * ms},
	}, got)
	require.Equal(t, int64(1), res.Cluster.FailClosed)
}

// Every algorithm runs in every mode it takes, with jitter, a service
// time, skews, faults and retries, and the accounts add up: every attempt
// has one verdict, the cluster object's admissions are the row's, and the
// nodes' shares add up to the row's.
func TestClusterEveryAlgorithmEveryMode(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 5, Per: time.Second, Burst: 4}
	var at []time.Duration
	for i := range 300 {
		at = append(at, time.Duration(i*i%997)*3*ms)
	}
	slices.Sort(at)
	// the opt-in rows too (a vendor's, a library's), but those that limit
	// what is in flight, which a cluster does not model, and those that
	// need options of their own
	names := algorithms.Names()
	for _, a := range algorithms.OptIn() {
		if _, err := algorithms.New(a.Name, algorithms.Params{Policy: pol}); err == nil && !a.InFlight {
			names = append(names, a.Name)
		}
	}
	for _, name := range names {
		if adaptive(name) {
			continue // they need a backend: TestClusterBackendConserves
		}
		for _, mode := range cluster.ModesOf(name) {
			co := cluster.Coordination{Mode: mode}
			switch mode {
			case cluster.Sync:
				co.Sync = 40 * ms
			case cluster.Lease:
				co.Lease = 2
			}
			t.Run(name+"/"+string(mode), func(t *testing.T) {
				cfg := clusterConfig(name, pol, co, 3, 2*ms, at...)
				cfg.Algorithms[0].Params.Service = 50 * ms
				if name == "cloudflare-rate-limit" {
					// its block, which a node loses when it goes down
					cfg.Algorithms[0].Params.MitigationTimeout = 400 * ms
				}
				cfg.Cluster.Store.Jitter = 700 * us
				cfg.Cluster.Store.Service = 100 * us
				cfg.Cluster.Store.Timeout = 20 * ms
				cfg.Cluster.Skew = []time.Duration{-ms, 0, 2 * ms}
				cfg.Cluster.Faults = []cluster.Fault{
					{Type: cluster.NodeDown, Node: 1, At: 300 * ms, For: 400 * ms},
					{Type: cluster.StoreDown, At: 1500 * ms, For: 100 * ms},
					{Type: cluster.StoreFlush, At: 2 * time.Second},
				}
				cfg.Retries = []traffic.RetryPolicy{{Policy: "retry-after", MaxAttempts: 2}}
				res, got := runCluster(t, cfg)
				require.Equal(t, res.Attempts, int64(len(got)))
				require.Equal(t, res.Attempts, res.Accepted+res.Delayed+res.Rejected)
				c := res.Cluster
				require.Equal(t, res.Accepted+res.Delayed, c.Admitted)
				var att, adm, rj int64
				for _, n := range c.PerNode {
					att, adm, rj = att+n.Attempts, adm+n.Admitted, rj+n.Rejected
				}
				require.Equal(t, [3]int64{res.Attempts, c.Admitted, res.Rejected}, [3]int64{att, adm, rj})
				for i, d := range got {
					require.GreaterOrEqual(t, d.Decided, d.Time, "decision %d", i)
					if i > 0 {
						require.GreaterOrEqual(t, d.Time, got[i-1].Time, "decisions in arrival order")
					}
				}
			})
		}
	}
}

// The store observer sees a central row's scripts as the store runs them:
// in the store's order at non-decreasing instants (clock: store), and one
// exact limiter of the algorithm, fed those scripts in that order, decides
// each as the store did. That is what `compare --redis` replays. With
// jitter and service time, operations reach the store out of send order;
// with a store-down fault some never run (the observer sees none of them,
// and there are fewer scripts than attempts).
func TestClusterStoreObserver(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 5, Per: time.Second, Burst: 4}
	var at []time.Duration
	for i := range 400 {
		at = append(at, time.Duration(i*i%997)*3*ms)
	}
	slices.Sort(at)
	for _, name := range algorithms.Names() {
		if !cluster.Supports(name, cluster.Central) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			cfg := clusterConfig(name, pol, cluster.Coordination{Mode: cluster.Central}, 3, 2*ms, at...)
			cfg.Algorithms[0].Params.Service = 50 * ms
			cfg.Cluster.Store.Jitter = 700 * us
			cfg.Cluster.Store.Service = 100 * us
			cfg.Cluster.Store.Timeout = 20 * ms
			cfg.Cluster.Faults = []cluster.Fault{{Type: cluster.StoreDown, At: 1500 * ms, For: 100 * ms}}
			cfg.Retries = []traffic.RetryPolicy{{Policy: "retry-after", MaxAttempts: 2}}
			store := &recorder{}
			cfg.ObserveStore = func(int) sim.Observer { return store }
			res, _ := runCluster(t, cfg)
			require.NotEmpty(t, store.got)
			require.Less(t, int64(len(store.got)), res.Attempts, "the store-down fault's operations never ran")
			lim, err := algorithms.New(name, cfg.Algorithms[0].Params)
			require.NoError(t, err)
			keys := map[string]algorithms.Key{}
			for i, d := range store.got {
				if i > 0 {
					require.GreaterOrEqual(t, d.Decided, store.got[i-1].Decided, "store order")
				}
				require.Equal(t, d.Decided, d.Time, "clock: store")
				k, ok := keys[d.Key]
				if !ok {
					k = algorithms.Key(len(keys))
					keys[d.Key] = k
				}
				require.Equal(t, lim.Decide(d.Time, k, d.Cost), d.Decision, "script %d", i)
			}
		})
	}
}
