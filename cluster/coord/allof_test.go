package coord

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/sim"
)

// kongWindows is an all-of row of two fixed windows, 2 per 1s and 3 per
// 1m, as Kong's rate-limiting plugin with second: 2 and minute: 3 imports;
// countRejected for its redis policy.
func kongWindows(commit algorithms.Commit, co cluster.Coordination, countRejected bool, n int, rtt time.Duration, at ...time.Duration) sim.Config {
	pol := algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2}
	cfg := clusterConfig("all-of", pol, co, n, rtt, at...)
	cfg.Duration = 3 * time.Second
	member := func(rate int64, per time.Duration) algorithms.Member {
		return algorithms.Member{Name: "fixed-window", Params: algorithms.Params{
			Policy: algorithms.Policy{Rate: rate, Per: per, Burst: rate}, CountRejected: countRejected}}
	}
	cfg.Algorithms[0].Params.Commit = commit
	cfg.Algorithms[0].Params.Members = []algorithms.Member{member(2, time.Second), member(3, time.Minute)}
	return cfg
}

// Local (Kong's policy: local on 2 nodes), all-or-nothing: requests at 0,
// 10, ..., 50 ms and at 1000 and 1010 ms alternate between the nodes.
// Each node counts alone: node 0 admits 0 and 20 ms (second window 2 of
// 2, minute 2 of 3), rejects 40 ms (second window full until 1 s: 960 ms;
// nothing charged, the minute stays at 2), then admits 1000 ms (a new
// second, minute 3 of 3); node 1 likewise at 10, 30, 50 (950 ms) and
// 1010 ms. 6 admitted. The reference admits 0 and 10 ms, rejects 20, 30,
// 40 and 50 ms (980, 970, 960, 950 ms), admits 1000 ms (minute 3 of 3) and
// rejects 1010 ms on the minute (60 s - 1.01 s = 58.99 s): 3 admitted,
// extra +3.
func TestClusterAllOfLocal(t *testing.T) {
	t.Parallel()
	at := []time.Duration{0, 10 * ms, 20 * ms, 30 * ms, 40 * ms, 50 * ms, 1000 * ms, 1010 * ms}
	res, got := runCluster(t, kongWindows(algorithms.AllOrNothing, cluster.Coordination{Mode: cluster.Local}, false, 2, ms, at...))
	requireDecisions(t, []decisionRow{
		{0, 0, 0, acc, 0},
		{10 * ms, 10 * ms, 1, acc, 0},
		{20 * ms, 20 * ms, 0, acc, 0},
		{30 * ms, 30 * ms, 1, acc, 0},
		{40 * ms, 40 * ms, 0, rej, 960 * ms},
		{50 * ms, 50 * ms, 1, rej, 950 * ms},
		{1000 * ms, 1000 * ms, 0, acc, 0},
		{1010 * ms, 1010 * ms, 1, acc, 0},
	}, got)
	require.Equal(t, int64(6), res.Cluster.Admitted)
	require.Equal(t, int64(3), res.Cluster.ReferenceAdmitted)
	require.Equal(t, int64(3), res.Cluster.ExtraAdmitted)
	// each rejection names the limit that fired on its node, the second
	// window (limit 1), as a single gateway's row does
	requireFired(t, []int{0, 0, 0, 0, 1, 1, 0, 0}, got)
	require.Equal(t, []sim.LimitFired{{Limit: res.Fired[0].Limit, Rejected: 2}, {Limit: res.Fired[1].Limit}}, res.Fired)
	// without an observer (the nodes' quick path) the counts are the same
	rep, err := simRun(kongWindows(algorithms.AllOrNothing, cluster.Coordination{Mode: cluster.Local}, false, 2, ms, at...))
	require.NoError(t, err)
	require.Equal(t, res.Fired, rep.Results[0].Fired)
}

// requireFired holds each decision's Fired (1 + the limit's index, 0 for
// none) to want.
func requireFired(t *testing.T, want []int, got []sim.Decision) {
	t.Helper()
	var fired []int
	for _, d := range got {
		fired = append(fired, d.Fired)
	}
	require.Equal(t, want, fired)
}

// Central (Kong's redis policy), every-hit, every window counting rejected
// hits, rtt 2 ms, 2 nodes: requests at 0, 10, 20, 1000 and 1010 ms run
// in the store 1 ms later. 1 and 11 ms: admitted (second 1, 2; minute 1,
// 2). 21 ms: the second window is full (2 >= 2): rejected until 1 s (979
// ms), and both windows count it (second 3, minute 3). 1001 ms: a new
// second admits (1), the minute is full (3 >= 3) and counts it (4):
// rejected until 60 s (58.999 s); 1011 ms likewise (58.989 s). Each
// verdict takes effect at the reply, 1 ms after. 2 admitted, as the
// reference (the same rule without latency): extra 0. With all-or-nothing
// the rejected hit at 20 ms would not have counted and 1000 ms would be
// admitted (minute 3 of 3).
func TestClusterAllOfCentral(t *testing.T) {
	t.Parallel()
	at := []time.Duration{0, 10 * ms, 20 * ms, 1000 * ms, 1010 * ms}
	res, got := runCluster(t, kongWindows(algorithms.EveryHit, cluster.Coordination{Mode: cluster.Central}, true, 2, 2*ms, at...))
	requireDecisions(t, []decisionRow{
		{0, 2 * ms, 0, acc, 0},
		{10 * ms, 12 * ms, 1, acc, 0},
		{20 * ms, 22 * ms, 0, rej, 979 * ms},
		{1000 * ms, 1002 * ms, 1, rej, 58999 * ms},
		{1010 * ms, 1012 * ms, 0, rej, 58989 * ms},
	}, got)
	require.Equal(t, int64(0), res.Cluster.ExtraAdmitted)
	require.Equal(t, int64(5), res.Cluster.StoreOps)
	// the script names the limit that fired: the second window at 20 ms,
	// the minute at 1000 and 1010 ms
	requireFired(t, []int{0, 0, 1, 2, 2}, got)
	require.Equal(t, int64(1), res.Fired[0].Rejected)
	require.Equal(t, int64(2), res.Fired[1].Rejected)

	_, got = runCluster(t, kongWindows(algorithms.AllOrNothing, cluster.Coordination{Mode: cluster.Central}, false, 2, 2*ms, at...))
	require.Equal(t, acc, got[3].Verdict, "all-or-nothing: the reject at 20 ms charged nothing")
}

// Racy with write: incr (Kong's cluster policy: read the counters, then
// increment every window of an admitted request), all-or-nothing, rtt 10
// ms, 2 nodes: requests at 0, 3, 6 and 20 ms. The GETs run at 5, 8 and 11
// ms and all read a fresh key (the first INCR lands at 15 ms): 3 admitted,
// decided at 10, 13 and 16 ms, one over the second window's 2. The
// INCRs land at 15, 18 and 21 ms (second 3, minute 3); the fourth GET (25
// ms) is rejected by both windows, the largest wait the minute's (60 s -
// 25 ms = 59.975 s). The reference admits 2: extra +1. No update is lost:
// with write: set the three SETs would each write 1.
func TestClusterAllOfRacyIncr(t *testing.T) {
	t.Parallel()
	at := []time.Duration{0, 3 * ms, 6 * ms, 20 * ms}
	res, got := runCluster(t, kongWindows(algorithms.AllOrNothing, cluster.Coordination{Mode: cluster.Racy, Write: cluster.WriteIncr}, false, 2, 10*ms, at...))
	requireDecisions(t, []decisionRow{
		{0, 10 * ms, 0, acc, 0},
		{3 * ms, 13 * ms, 1, acc, 0},
		{6 * ms, 16 * ms, 0, acc, 0},
		{20 * ms, 30 * ms, 1, rej, 59975 * ms},
	}, got)
	require.Equal(t, int64(1), res.Cluster.ExtraAdmitted)
	require.Equal(t, int64(4+3), res.Cluster.StoreOps, "4 GETs, 3 INCRs")
	// both windows reject the fourth: the first in order fired (the
	// second window), as nginx checks its limits
	requireFired(t, []int{0, 0, 0, 1}, got)
}
