package coord

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/traffic"
)

// oneWorker is one worker, constant service svc, a queue of q and clients
// that wait timeout.
func oneWorker(svc time.Duration, q int, timeout time.Duration) *backend.Config {
	return &backend.Config{Workers: 1, Service: backend.Service{Dist: backend.Constant, Mean: svc},
		Queue: q, Timeout: timeout, Seed: 1, Bucket: 100 * ms}
}

// Two local nodes (round-robin) in front of one worker serving 100ms, a
// queue of 2, clients that wait 250ms; fixed-window, L=2 per 1s, one key;
// requests at 0, 10, 20, 30 and 40 ms. Node 0 gets requests 0, 2 and 4,
// node 1 gets 1 and 3; each admits its first two (its own window count,
// cluster.go arrive with Local): 0-3 admitted, at their arrival (a local
// decision takes no time), and 4 rejected, the third at node 0. The
// reference, one fixed window, admits 2: extra +2.
//
// The backend (backend.go admit, complete): 0 starts at 0 and ends at 100;
// 1 (10) and 2 (20) wait; 3 (30) finds the queue full: shed at 30. 1
// starts at 100 (waited 90) and ends at 200, response 190 <= its deadline
// 260: goodput. 2 starts at 200 (waited 180); its client gives up at 270
// (20 + 250); it ends at 300, response 280, wasted 300 - 270 = 30 ms.
// Responses {100, 190, 280}: mean 190, p50 190 (rank 2 of 3), p90, p99
// and max 280. Waits {0, 90, 180}. Busy 300ms of the 3s span: 10%.
func TestClusterBackendLocalByHand(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2}
	cfg := clusterConfig("fixed-window", pol, cluster.Coordination{Mode: cluster.Local}, 2, ms,
		0, 10*ms, 20*ms, 30*ms, 40*ms)
	cfg.Backend = oneWorker(100*ms, 2, 250*ms)
	res, got := runCluster(t, cfg)
	requireDecisions(t, []decisionRow{
		{0, 0, 0, acc, 0},
		{10 * ms, 10 * ms, 1, acc, 0},
		{20 * ms, 20 * ms, 0, acc, 0},
		{30 * ms, 30 * ms, 1, acc, 0},
		{40 * ms, 40 * ms, 0, rej, 960 * ms},
	}, got)
	require.Equal(t, int64(2), res.Cluster.ExtraAdmitted)
	b := res.Backend
	require.NotNil(t, b)
	require.Equal(t, [6]int64{3, 3, 2, 1, 1, 0}, [6]int64{b.Served, b.CompletedOK, b.Goodput, b.Shed, b.TimedOut, b.Errors})
	require.Equal(t, int64(30*ms), b.WastedNs)
	require.Equal(t, backend.Percentiles{Mean: int64(190 * ms), P50: int64(190 * ms), P90: int64(280 * ms),
		P99: int64(280 * ms), Max: int64(280 * ms), Exact: true}, b.ResponseNs)
	require.Equal(t, backend.Percentiles{Mean: int64(90 * ms), P50: int64(90 * ms), P90: int64(180 * ms),
		P99: int64(180 * ms), Max: int64(180 * ms), Exact: true}, b.QueueWaitNs)
	require.InDelta(t, 0.1, b.Utilization, 1e-12)

	// the same requests as a recorded trace (no duration, absolute
	// instants): the row and its reference get their backends at the
	// first arrival, and serve alike
	t0 := time.Duration(1_700_000_000) * time.Second
	cfg = clusterConfig("fixed-window", pol, cluster.Coordination{Mode: cluster.Local}, 2, ms,
		t0, t0+10*ms, t0+20*ms, t0+30*ms, t0+40*ms)
	cfg.Duration = 0
	cfg.Backend = oneWorker(100*ms, 2, 250*ms)
	res, _ = runCluster(t, cfg)
	require.Equal(t, int64(2), res.Cluster.ExtraAdmitted)
	tb := res.Backend
	require.Equal(t, [6]int64{3, 3, 2, 1, 1, 0}, [6]int64{tb.Served, tb.CompletedOK, tb.Goodput, tb.Shed, tb.TimedOut, tb.Errors})
	require.Equal(t, b.ResponseNs, tb.ResponseNs)
}

// central gcra (L=10 per 1s: both admitted) on 2 nodes, store rtt 2ms, in
// front of one worker serving 10ms, clients that wait 15ms; requests at 0
// and 5 ms. Each script reaches the store 1ms after it is sent and its
// reply comes 1ms after that (cluster.go script): decided at 2 and 7 ms,
// when each is submitted (backend.Request.Gate 2ms). 0 starts at 2 and
// ends at 12: response 12 - 0 = 12ms (2 at the gateway, 10 served), in
// time (deadline 15). 1 reaches the backend at 7, waits for the worker
// until 12 and ends at 22; its client, which sent it at 5, gives up at 20:
// timed out, wasted 22 - 20 = 2ms, response 22 - 5 = 17ms. Without the
// cluster the same requests answer in 10 and 15 ms, both in time: the
// store's round trip is in the response time and uses up the client's
// patience.
func TestClusterBackendCentralByHand(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}
	cfg := clusterConfig("gcra", pol, cluster.Coordination{Mode: cluster.Central}, 2, 2*ms, 0, 5*ms)
	cfg.Backend = oneWorker(10*ms, 2, 15*ms)
	res, got := runCluster(t, cfg)
	requireDecisions(t, []decisionRow{
		{0, 2 * ms, 0, acc, 0},
		{5 * ms, 7 * ms, 1, acc, 0},
	}, got)
	require.Equal(t, int64(2*ms), res.Cluster.AddedLatencyNs.P99)
	b := res.Backend
	require.Equal(t, [4]int64{2, 1, 0, 1}, [4]int64{b.Served, b.Goodput, b.Shed, b.TimedOut})
	require.Equal(t, int64(2*ms), b.WastedNs)
	require.Equal(t, backend.Percentiles{Mean: int64(14500 * us), P50: int64(12 * ms), P90: int64(17 * ms),
		P99: int64(17 * ms), Max: int64(17 * ms), Exact: true}, b.ResponseNs)
	require.Equal(t, int64(5*ms), b.QueueWaitNs.Max, "1 waits from 7 to 12")

	cfg.Cluster = nil
	rep, err := simRun(cfg)
	require.NoError(t, err)
	b = rep.Results[0].Backend
	require.Equal(t, [2]int64{2, 0}, [2]int64{b.Goodput, b.TimedOut})
	require.Equal(t, int64(15*ms), b.ResponseNs.Max)
}

// A store fault in front of the backend: central gcra on 1 node, rtt 2ms,
// store timeout 50ms, the store down over [30, 60) ms, fail open; one
// worker serving 10ms, clients that wait 40ms and retry a timeout once,
// 5ms after it. Requests at 0 and 35 ms.
//
//   - 0: decided at 2 (rtt), served 2-12, response 12ms.
//   - 35: its script reaches the store at 36, while it is down; the node
//     gives up at 35 + 50 = 85 and admits it (fail open, cluster.go
//     failed). Its client's deadline, 75, passed while the node waited:
//     the engine learns it at the verdict, 85 (backend.Submit), when the
//     client times out and retries, at 90. The gateway still forwards
//     the request: served 85-95, all of it after the deadline, wasted
//     10ms, response 95 - 35 = 60ms.
//   - the retry at 90 goes through the balancer and the store (up again):
//     decided at 92, it waits for the worker until 95 and ends at 105,
//     response 105 - 90 = 15ms, before its deadline 130: goodput.
//
// Served 3, goodput 2, timed out 1; responses {12, 15, 60}; attempts 3 for
// 2 requests; added latency {2, 50, 2}: p99 50ms.
func TestClusterBackendStoreDownByHand(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}
	cfg := clusterConfig("gcra", pol, cluster.Coordination{Mode: cluster.Central}, 1, 2*ms, 0, 35*ms)
	cfg.Cluster.Store.Timeout = 50 * ms
	cfg.Cluster.Faults = []cluster.Fault{{Type: cluster.StoreDown, At: 30 * ms, For: 30 * ms}}
	cfg.Backend = oneWorker(10*ms, 2, 40*ms)
	cfg.Retries = []traffic.RetryPolicy{{Policy: "fixed", Delay: 5 * ms, MaxAttempts: 2,
		On: traffic.RetryOnOf(traffic.CauseTimeout)}}
	res, got := runCluster(t, cfg)
	requireDecisions(t, []decisionRow{
		{0, 2 * ms, 0, acc, 0},
		{35 * ms, 85 * ms, 0, acc, 0},
		{90 * ms, 92 * ms, 0, acc, 0},
	}, got)
	require.Equal(t, [2]int64{1, 1}, [2]int64{res.Cluster.FailOpen, res.Cluster.StoreErrors})
	require.Equal(t, int64(50*ms), res.Cluster.AddedLatencyNs.P99)
	b := res.Backend
	require.Equal(t, [4]int64{3, 2, 0, 1}, [4]int64{b.Served, b.Goodput, b.Shed, b.TimedOut})
	require.Equal(t, int64(10*ms), b.WastedNs)
	require.Equal(t, [3]int64{int64(15 * ms), int64(60 * ms), int64(60 * ms)}, [3]int64{b.ResponseNs.P50, b.ResponseNs.P99, b.ResponseNs.Max})
	require.Equal(t, 1.5, b.RetryAmplification)
}

// Each node's adaptive or concurrency limit learns from the answers to the
// requests it admitted itself. The concurrency limit, max 1 on each of 2
// local nodes, in front of one worker serving 100ms (a queue of 4):
// requests at 0, 10, 20, 30, 120 and 130 ms. Node 0 admits 0 (in flight
// until it is answered at 100), node 1 admits 10 (queued, answered at
// 200); 20 (node 0) and 30 (node 1) find their node's one slot taken:
// rejected. At 120 node 0's request has been answered: admitted; at 130
// node 1's has not (200): rejected. A node-down throws the node's limit
// away: its samples are dropped (TestClusterBackendConserves).
func TestClusterBackendConcurrencyPerNode(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 1, Per: time.Second, Burst: 1}
	cfg := clusterConfig("concurrency", pol, cluster.Coordination{Mode: cluster.Local}, 2, ms,
		0, 10*ms, 20*ms, 30*ms, 120*ms, 130*ms)
	cfg.Algorithms[0].Params.Max = 1
	cfg.Algorithms[0].Params.Service = 100 * ms
	cfg.Backend = oneWorker(100*ms, 4, 0)
	res, got := runCluster(t, cfg)
	var verdicts []algorithms.Verdict
	for _, d := range got {
		verdicts = append(verdicts, d.Verdict)
	}
	require.Equal(t, []algorithms.Verdict{acc, acc, rej, rej, acc, rej}, verdicts)
	require.Equal(t, int64(3), res.Backend.Served)
	// the reference, one limit of 1 in front of its own backend, admits
	// 0 (answered at 100) and 120: extra +1
	require.Equal(t, int64(1), res.Cluster.ExtraAdmitted)
}

// An adaptive limit runs on a cluster in local mode only: the engine
// refuses the other modes, naming the one it takes.
func TestClusterBackendAdaptiveModes(t *testing.T) {
	t.Parallel()
	require.Equal(t, []cluster.Mode{cluster.Local}, cluster.ModesOf("aimd"))
	pol := algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}
	for _, m := range []cluster.Mode{cluster.Split, cluster.Central, cluster.Racy} {
		cfg := clusterConfig("aimd", pol, cluster.Coordination{Mode: m}, 2, ms, 0)
		cfg.Backend = oneWorker(10*ms, 2, 0)
		_, err := simRun(cfg)
		require.ErrorContains(t, err, "aimd is an adaptive limit, which each node keeps with its own samples: it runs in coordination local only, not "+string(m))
	}

	// in local mode each of the 2 nodes keeps its own AIMDLimit, which
	// starts at 20 and grows only on a sample with at least half of it in
	// flight (adaptive/aimd.go): one request each, so both stay at 20 and
	// the row's limit, the sum, is 40 throughout
	cfg := clusterConfig("aimd", pol, cluster.Coordination{Mode: cluster.Local}, 2, ms, 0, ms)
	cfg.Backend = oneWorker(10*ms, 2, 0)
	res, _ := runCluster(t, cfg)
	require.Equal(t, &backend.LimitStats{Min: 40, Mean: 40, Max: 40}, res.Backend.Limit)
}

// The backend's conservation holds behind every algorithm in every mode it
// takes, with random clusters (nodes, balancers, jitter, store service
// and timeouts, skews, node-down, store-down and store-slow faults),
// random backends (workers, queues, disciplines, timeouts with or without
// drop-expired, errors, backend faults) and clients that retry on every
// cause: every admitted attempt is submitted, and every submitted request
// is served, shed or dropped (its client gone), with none left in flight
// once the run has drained; no client hears of two outcomes (served in
// time, timed out); the retries went through the balancer (the nodes'
// attempts add up to the row's). Each run, repeated, gives the same JSON.
func TestClusterBackendConserves(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(14, 14))
	var names []string
	for _, name := range algorithms.Names() {
		names = append(names, name)
	}
	names = append(names, "none", "aimd", "vegas", "gradient2", "envoy-adaptive", "sre-throttle")
	slices.Sort(names)
	names = slices.Compact(names)
	cases := 0
	for _, name := range names {
		for _, mode := range cluster.ModesOf(name) {
			for k := range 3 {
				cases++
				t.Run(fmt.Sprintf("%s/%s/%d", name, mode, k), func(t *testing.T) {
					cfg := randomClusterBackend(rng, name, mode)
					rep, err := simRun(cfg)
					require.NoError(t, err)
					res := rep.Results[0]
					b := res.Backend
					require.NotNil(t, b)
					require.Equal(t, res.Accepted+res.Delayed, b.Submitted, "every admitted attempt reaches the backend")
					require.Equal(t, b.Submitted, b.Started+b.Shed+b.Dropped, "submitted = started + shed + dropped")
					require.Equal(t, b.Started, b.Served, "nothing left in service")
					require.Equal(t, b.Served, b.CompletedOK+b.Errors)
					// a client's one outcome: goodput, an error in time, a
					// shed while it waits, or a timeout (a request can be
					// shed after its client gave up: both are counted)
					require.True(t, b.Goodput+b.TimedOut <= b.Submitted && b.Submitted <= b.Goodput+b.TimedOut+b.Shed+b.Errors,
						"one outcome per client: %d submitted, %d goodput, %d shed, %d timed out, %d errors", b.Submitted, b.Goodput, b.Shed, b.TimedOut, b.Errors)
					var att int64
					for _, n := range res.Cluster.PerNode {
						att += n.Attempts
					}
					require.Equal(t, res.Attempts, att)
					require.Equal(t, res.Attempts, res.Accepted+res.Delayed+res.Rejected)
					again, err := simRun(cfg)
					require.NoError(t, err)
					j1, _ := json.Marshal(rep)
					j2, _ := json.Marshal(again)
					require.Equal(t, string(j1), string(j2))
				})
			}
		}
	}
	require.Greater(t, cases, 100)
}

// One local node with no skew is one limiter: in front of the same
// backend, with the same clients retrying on every cause, the row admits
// the same attempts and its backend object is the same, byte for byte, as
// without a cluster (with retries, and without, when the engine runs its
// backend lazily), for every algorithm that takes local (shapers,
// concurrency and adaptive limits included). The backend's events at an
// instant come before the arrivals in both engines.
func TestClusterBackendOneLocalNodeIsNoCluster(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 4))
	names := append(algorithms.Names(), "none", "aimd", "vegas", "gradient2", "envoy-adaptive", "sre-throttle")
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		for k := range 3 {
			t.Run(fmt.Sprintf("%s/%d", name, k), func(t *testing.T) {
				cfg := randomClusterBackend(rng, name, cluster.Local)
				cfg.Cluster.Nodes, cfg.Cluster.Skew, cfg.Cluster.Faults = 1, []time.Duration{0}, nil
				if k == 2 {
					cfg.Retries = nil // no client retries: only the limiter hears the backend
				}
				rep, err := simRun(cfg)
				require.NoError(t, err)
				cfg.Cluster = nil
				want, err := simRun(cfg)
				require.NoError(t, err)
				g, w := rep.Results[0], want.Results[0]
				require.Equal(t, [5]int64{w.Attempts, w.Accepted, w.Delayed, w.Rejected, w.GaveUp},
					[5]int64{g.Attempts, g.Accepted, g.Delayed, g.Rejected, g.GaveUp})
				jg, _ := json.Marshal(g.Backend)
				jw, _ := json.Marshal(w.Backend)
				require.Equal(t, string(jw), string(jg))
			})
		}
	}
}
