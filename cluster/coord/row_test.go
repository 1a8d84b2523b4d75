package coord

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/internal/testenv"
	"github.com/ratesim/ratesim/sim"
)

// runCluster runs cfg and returns its one result and the decisions.
func runCluster(t *testing.T, cfg sim.Config) (sim.Result, []sim.Decision) {
	t.Helper()
	rec := &recorder{}
	cfg.Observe = func(int) sim.Observer { return rec }
	rep, err := simRun(cfg)
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	return rep.Results[0], rec.got
}

// decisionRow is what a test wants of one decision.
type decisionRow struct {
	at, decided time.Duration
	node        int
	verdict     algorithms.Verdict
	retryAfter  time.Duration
}

func requireDecisions(t *testing.T, want []decisionRow, got []sim.Decision) {
	t.Helper()
	require.Len(t, got, len(want))
	for i, w := range want {
		g := got[i]
		require.Equal(t, w, decisionRow{at: g.Time, decided: g.Decided, node: g.Node,
			verdict: g.Verdict, retryAfter: g.RetryAfter}, "decision %d", i)
	}
}

// docs/cluster.md, worked example 1: local gcra, L=2 per 1s, B=2, 3 nodes
// round-robin; 9 requests at 0, 10, ..., 80 ms. Node i gets requests i,
// i+3, i+6 and admits its first two: 6 admitted (0-50 ms), 3 rejected; the
// reference admits 2, so extra +4. A local decision takes no time: decided
// = arrival. The rejected ones wait for their node's TAT: node 0 admitted
// at 0 and 30 ms, TAT max(0.5, 0.03) + 0.5 = 1.0s, so at 60 ms retry_after
// = 1.0 - 0.06 - (B-1)*T = 440 ms; likewise 440 ms for nodes 1 and 2.
func TestClusterLocalExample(t *testing.T) {
	t.Parallel()
	var at []time.Duration
	for i := range 9 {
		at = append(at, time.Duration(i)*10*ms)
	}
	pol := algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2}
	res, got := runCluster(t, clusterConfig("gcra", pol, cluster.Coordination{Mode: cluster.Local}, 3, time.Millisecond, at...))
	var want []decisionRow
	for i, a := range at {
		w := decisionRow{at: a, decided: a, node: i % 3, verdict: algorithms.Accept}
		if i >= 6 {
			w.verdict, w.retryAfter = algorithms.Reject, 440*ms
		}
		want = append(want, w)
	}
	requireDecisions(t, want, got)
	c := res.Cluster
	require.Equal(t, int64(6), c.Admitted)
	require.Equal(t, int64(2), c.ReferenceAdmitted)
	require.Equal(t, int64(4), c.ExtraAdmitted)
	require.Equal(t, sim.Ratio(2.0), c.ExtraRatio)
	require.Equal(t, int64(0), c.StoreOps)
	require.Equal(t, []sim.NodeCount{{Node: 0, Attempts: 3, Admitted: 2, Rejected: 1}, {Node: 1, Attempts: 3, Admitted: 2, Rejected: 1}, {Node: 2, Attempts: 3, Admitted: 2, Rejected: 1}}, c.PerNode)
	require.Equal(t, "local", c.Coordination)
}

// docs/cluster.md, worked example 2: central fixed-window, L=2 per 1s, B=2,
// rtt 2ms; requests at 999.2, 999.4 and 1000.3 ms. The store runs them at
// 1000.2, 1000.4 and 1001.3 ms, all in window 1: accept, accept, reject,
// decided at 1001.2, 1001.4 and 1002.3 ms (the reject's retry_after is
// the script's, from 1001.3 ms to the next window: 998.7 ms). The reference
// (window 0 twice, then window 1) admits all three: extra -1.
func TestClusterCentralExample(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2}
	cfg := clusterConfig("fixed-window", pol, cluster.Coordination{Mode: cluster.Central, Clock: cluster.StoreClock}, 2, 2*ms,
		999200*us, 999400*us, 1000300*us)
	res, got := runCluster(t, cfg)
	requireDecisions(t, []decisionRow{
		{999200 * us, 1001200 * us, 0, algorithms.Accept, 0},
		{999400 * us, 1001400 * us, 1, algorithms.Accept, 0},
		{1000300 * us, 1002300 * us, 0, algorithms.Reject, 998700 * us},
	}, got)
	c := res.Cluster
	require.Equal(t, int64(2), c.Admitted)
	require.Equal(t, int64(3), c.ReferenceAdmitted)
	require.Equal(t, int64(-1), c.ExtraAdmitted)
	require.Equal(t, int64(3), c.StoreOps)
	require.Equal(t, sim.Ratio(1.0), c.StoreOpsPerAttempt)
	require.Equal(t, sim.LatencyPercentiles{P50: 2 * ms.Nanoseconds(), P99: 2 * ms.Nanoseconds(), Max: 2 * ms.Nanoseconds()}, c.AddedLatencyNs)
	require.Equal(t, "store", c.Clock)
}

// docs/cluster.md, worked example 3: racy gcra, L=1 per 1s, B=1, rtt 10ms,
// 2 nodes; requests at 0, 3 and 20 ms. The GETs run at 5 and 8 ms and both
// read a fresh key: both admitted (decided at 10 and 13 ms). The SETs land
// at 15 and 18 ms; the third GET (25 ms) reads the second SET's state, TAT
// 1.008s: rejected, retry_after 1.008 - 0.025 = 983 ms, decided at 30 ms.
// The reference admits 1: extra +1. Store ops: 3 GETs and 2 SETs.
func TestClusterRacyExample(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 1, Per: time.Second, Burst: 1}
	cfg := clusterConfig("gcra", pol, cluster.Coordination{Mode: cluster.Racy, Write: cluster.WriteSet}, 2, 10*ms,
		0, 3*ms, 20*ms)
	res, got := runCluster(t, cfg)
	requireDecisions(t, []decisionRow{
		{0, 10 * ms, 0, algorithms.Accept, 0},
		{3 * ms, 13 * ms, 1, algorithms.Accept, 0},
		{20 * ms, 30 * ms, 0, algorithms.Reject, 983 * ms},
	}, got)
	c := res.Cluster
	require.Equal(t, int64(2), c.Admitted)
	require.Equal(t, int64(1), c.ReferenceAdmitted)
	require.Equal(t, int64(1), c.ExtraAdmitted)
	require.Equal(t, int64(5), c.StoreOps)
	require.Equal(t, "set", c.Write)
}

// docs/cluster.md, worked example 4: sync, fixed-window, L=3 per 1s, 2
// nodes, S=100ms, rtt 2ms; requests at 10, 20, ..., 60 ms. Node 1 syncs at
// 50 ms (delta 2): the store holds 2 from 51 ms and node 1 learns g=2 at 52
// ms. Node 0 admits 10, 30, 50 (its count 0, 1, 2); node 1 admits 20, 40
// and, at 60 ms, g + delta = 2 < 3, admits again: 6 admitted against the
// reference's 3, extra +3. Store ops: node 1's sync at 50 ms and node 0's
// at 100 ms (delta 3), then node 1's at 150 ms (delta 1).
func TestClusterSyncExample(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 3, Per: time.Second, Burst: 3}
	var at []time.Duration
	for i := 1; i <= 6; i++ {
		at = append(at, time.Duration(i)*10*ms)
	}
	cfg := clusterConfig("fixed-window", pol, cluster.Coordination{Mode: cluster.Sync, Sync: 100 * ms}, 2, 2*ms, at...)
	res, got := runCluster(t, cfg)
	var want []decisionRow
	for i, a := range at {
		want = append(want, decisionRow{at: a, decided: a, node: i % 2, verdict: algorithms.Accept})
	}
	requireDecisions(t, want, got)
	c := res.Cluster
	require.Equal(t, int64(6), c.Admitted)
	require.Equal(t, int64(3), c.ReferenceAdmitted)
	require.Equal(t, int64(3), c.ExtraAdmitted)
	require.Equal(t, int64(3), c.StoreOps)
	require.Equal(t, int64(100*ms), c.SyncNs)
}

// The FIFOs that hold events made in order (fixed trips) decide as the
// queue does: random clusters without jitter give the same decisions,
// store scripts (central) and results as the same clusters with a
// store-slow fault over the whole run whose round trip is the store's own,
// which changes no trip but sends every one through the queue (a store-slow
// fault leaves the trips to the heap: see storeEvents). Central rows
// without service time take the direct path (clusterRun.script) without
// the fault, and the queued one with it.
func TestClusterFIFOsMatchQueue(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 5))
	direct := 0
	for i := range 100 {
		cfg, desc := randomCluster(r)
		cfg.Cluster.Store.Jitter = 0
		if cfg.Algorithms[0].Coord.Mode == cluster.Central && cfg.Cluster.Store.Service == 0 {
			direct++
		}
		run := func(cfg sim.Config) (*sim.Report, []sim.Decision, []sim.Decision) {
			rec, store := &recorder{}, &recorder{}
			cfg.Observe = func(int) sim.Observer { return rec }
			cfg.ObserveStore = func(int) sim.Observer { return store }
			rep, err := simRun(cfg)
			require.NoError(t, err, desc)
			return rep, rec.got, store.got
		}
		fifoRep, fifoDec, fifoStore := run(cfg)
		queued := *cfg.Cluster
		// first, so that a store-slow fault of the cluster's own, which
		// faultAt takes over it (the last written), keeps its trips
		queued.Faults = append([]cluster.Fault{{Type: cluster.StoreSlow, At: 0, For: math.MaxInt64, RTT: queued.Store.RTT}},
			queued.Faults...)
		cfg.Cluster = &queued
		queueRep, queueDec, queueStore := run(cfg)
		require.Equal(t, queueDec, fifoDec, "run %d: %s", i, desc)
		require.Equal(t, queueStore, fifoStore, "run %d: %s", i, desc)
		require.Equal(t, queueRep, fifoRep, "run %d: %s", i, desc)
	}
	require.GreaterOrEqual(t, direct, 5, "runs that take the direct path")
}

// Local and split take a path of their own (decideOnNode) when nothing
// watches the decisions and there is no backend: random clusters in those
// modes give the same report with an observer (which takes the general
// path through decided) as without.
func TestClusterOnNodePath(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(8, 13))
	for i := range 100 {
		cfg, desc := randomCluster(r)
		co := &cfg.Algorithms[0].Coord
		*co = cluster.Coordination{Mode: cluster.Local}
		if r.IntN(2) == 0 {
			co.Mode = cluster.Split
		}
		plain, err := simRun(cfg)
		require.NoError(t, err, desc)
		rec := &recorder{}
		cfg.Observe = func(int) sim.Observer { return rec }
		observed, err := simRun(cfg)
		require.NoError(t, err, desc)
		require.NotEmpty(t, rec.got, desc)
		require.Equal(t, observed, plain, "run %d: %s %s", i, co.Mode, desc)
	}
}

// Every cluster row runs its own reference, which depends on nothing of
// its row but the algorithm and its params: random clusters with a row in
// each mode the algorithm supports, and one more with another burst, give
// each row the result it gets when it runs alone, and the rows of one
// algorithm's params report the same reference admissions.
func TestClusterReferencePerRow(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 8))
	for i := range testenv.Runs(12, 30) {
		cfg, desc := randomCluster(r)
		base := cfg.Algorithms[0]
		cfg.Algorithms = nil
		for _, m := range cluster.ModesOf(base.Name) {
			a := base
			a.Label, a.Coord = string(m), cluster.Coordination{Mode: m}
			if m == cluster.Sync {
				a.Coord.Sync = 100 * ms
			}
			cfg.Algorithms = append(cfg.Algorithms, a)
		}
		other := base
		other.Label, other.Coord = "other-burst", cluster.Coordination{Mode: cluster.Central}
		other.Params.Burst++
		cfg.Algorithms = append(cfg.Algorithms, other)

		all, err := simRun(cfg)
		require.NoError(t, err, desc)
		for k, a := range cfg.Algorithms {
			one := cfg
			one.Algorithms = []sim.Algorithm{a}
			alone, err := simRun(one)
			require.NoError(t, err, desc)
			require.Equal(t, alone.Results[0], all.Results[k], "run %d row %s: %s", i, a.Label, desc)
		}
		ref := all.Results[0].Cluster.ReferenceAdmitted
		for _, res := range all.Results[:len(all.Results)-1] {
			require.Equal(t, ref, res.Cluster.ReferenceAdmitted, "run %d: %s", i, desc)
		}
	}
}
