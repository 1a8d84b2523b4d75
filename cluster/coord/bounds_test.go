package coord

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/internal/testenv"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

// The worst-case admissions of one key in any interval of length W, by the
// instant their verdicts take effect, for each coordination mode: the
// bounds table of docs/cluster.md, checked on randomised clusters. Costs
// are 1, and the store has no faults (a flush hands out a fresh key, and
// fail-open admits every failed attempt: both add to any bound).
//
// Notation: N nodes, L the rate per W, B the burst, rtt, J the jitter of
// one trip, service, S the sync interval, K the lease, sigma the spread of
// the nodes' skews, Q the longest an operation can wait in the store's
// queue and still be answered (timeout - rtt - service; 0 with service 0).

// exactBound is A(V): the most one exact limiter admits for one key, cost
// 1, in any half-open interval of length v.
func exactBound(name string, p algorithms.Params, v time.Duration) int64 {
	w := p.Per
	// windowsTouched is how many aligned windows of length w an interval
	// of length v can intersect.
	windowsTouched := int64((v-1)/w) + 2
	ceilDiv := func(a, b int64) int64 { return (a + b - 1) / b }
	switch name {
	case "fixed-window", "sliding-window":
		// at most L per aligned window (cur + c <= L)
		return p.Rate * windowsTouched
	case "sliding-log":
		return p.Rate * ceilDiv(int64(v), int64(w))
	case "token-bucket", "gcra", "leaky-bucket":
		// B at once, then one per W/L
		return p.Burst + ceilDiv(int64(v)*p.Rate, int64(w))
	case "nginx":
		// as the buckets, on a clock of whole milliseconds
		return p.Burst + ceilDiv(int64(v+time.Millisecond)*p.Rate, int64(w))
	}
	panic("no bound for " + name)
}

// clusterBound is the documented worst case of a cluster row: the most one
// key is admitted in any interval of length W; ok is false where no bound
// holds (docs/cluster.md says why, and TestClusterUnboundedGrows shows it).
// arrivals(d) is the most attempts of the key in any interval of length d.
func clusterBound(name string, p algorithms.Params, cl *cluster.Config, co cluster.Coordination, arrivals func(time.Duration) int64) (int64, bool) {
	n := int64(cl.Nodes)
	w := p.Per
	st := cl.Store
	j := st.Jitter
	q := time.Duration(0)
	if st.Service > 0 {
		q = st.Timeout - st.RTT - st.Service
	}
	sigma := slices.Max(cl.Skew) - slices.Min(cl.Skew)
	switch co.Mode {
	case cluster.Local:
		return n * exactBound(name, p, w), true
	case cluster.Split:
		var sum int64
		for i := range cl.Nodes {
			sp := splitParams(name, p, i, cl.Nodes)
			if sp.Rate > 0 && sp.Burst > 0 {
				sum += exactBound(name, sp, w)
			}
		}
		return sum, true
	case cluster.Central:
		if co.Clock != cluster.NodeClock {
			// the exact algorithm at the store's instants; verdicts take
			// effect a reply trip later, which varies by J
			return exactBound(name, p, w+j), true
		}
		if name == "fixed-window" || name == "sliding-window" {
			return 0, false // a call from an earlier window resets the count
		}
		// the exact algorithm on the callers' instants, which a window of
		// verdicts spreads over W + sigma + the spread of the trips
		return exactBound(name, p, w+sigma+2*j+q), true
	case cluster.Racy:
		if co.Write != cluster.WriteIncr {
			return 0, false // lost updates
		}
		// per aligned window: L, plus the GETs that ran while a counted
		// one's INCRBY was on its way (at most service + rtt + 2J + Q
		// after it), which were sent within that plus J + Q
		r := arrivals(st.Service + st.RTT + 3*j + 2*q)
		windows := int64((w+j-1)/w) + 2
		return (p.Rate + r) * windows, true
	case cluster.Sync:
		// each node counts its own admissions: at most L per window of
		// its clock, two of which an interval of length W touches
		return n * exactBound(name, p, w), true
	case cluster.Lease:
		// what the store's bucket grants in W + J, plus what each node
		// can hold over: at most K-1 after the request that took it
		k := co.Lease
		if k <= 0 {
			k = cluster.DefaultLease(p.Burst, cl.Nodes)
		}
		return exactBound(name, p, w+j) + n*(k-1), true
	}
	return 0, false
}

// maxInWindow returns the most instants of at (sorted) in any half-open
// interval of length v.
func maxInWindow(at []time.Duration, v time.Duration) int64 {
	best, lo := 0, 0
	for hi := range at {
		for at[hi]-at[lo] >= v {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return int64(best)
}

// randomCluster draws a cluster row and one key's traffic.
func randomCluster(r *rand.Rand) (sim.Config, string) {
	names := []string{"fixed-window", "sliding-log", "sliding-window", "token-bucket", "gcra", "leaky-bucket", "nginx"}
	name := names[r.IntN(len(names))]
	var modes []cluster.Mode
	for _, m := range cluster.ModesOf(name) {
		modes = append(modes, m)
	}
	co := cluster.Coordination{Mode: modes[r.IntN(len(modes))]}
	switch co.Mode {
	case cluster.Central:
		if r.IntN(2) == 0 && name != "fixed-window" && name != "sliding-window" {
			co.Clock = cluster.NodeClock
		}
	case cluster.Racy:
		if !cluster.IncrWrites(name) {
			co.Mode = cluster.Central // racy set has no bound: see below
		} else {
			co.Write = cluster.WriteIncr
		}
	case cluster.Sync:
		co.Sync = time.Duration(10+r.IntN(500)) * time.Millisecond
	case cluster.Global:
		co.Mode = cluster.Central // global has no bound: see below
	}
	l := int64(1 + r.IntN(10))
	p := algorithms.Params{Policy: algorithms.Policy{Rate: l, Per: time.Second, Burst: 1 + r.Int64N(2*l)}}
	if co.Mode == cluster.Lease && r.IntN(2) == 0 {
		co.Lease = 1 + r.Int64N(p.Burst)
	}
	n := 1 + r.IntN(5)
	cl := &cluster.Config{Nodes: n, Balancer: cluster.Balancers[r.IntN(len(cluster.Balancers))], Skew: make([]time.Duration, n),
		Store: cluster.Store{
			RTT:     time.Duration(r.IntN(5000)) * time.Microsecond,
			Jitter:  time.Duration(r.IntN(3)) * time.Duration(r.IntN(2000)) * time.Microsecond,
			Service: time.Duration(r.IntN(2)) * time.Duration(r.IntN(300)) * time.Microsecond,
			Timeout: 200 * time.Millisecond,
		}, OnStoreError: cluster.Allow}
	for i := range cl.Skew {
		if r.IntN(2) == 0 {
			cl.Skew[i] = time.Duration(r.IntN(20000)-10000) * time.Microsecond
		}
	}
	if cl.Balancer.Weighs() {
		for range n {
			cl.Weights = append(cl.Weights, 1+r.Int64N(5))
		}
	}
	// bursts and gaps around the rate, up to 40 times it
	var at []time.Duration
	t := time.Duration(r.IntN(1000)) * time.Millisecond
	rate := time.Second / time.Duration(l*int64(1+r.IntN(40)))
	for range 100 + r.IntN(600) {
		switch x := r.IntN(10); {
		case x < 3: // same instant
		case x < 9:
			t += time.Duration(r.Int64N(int64(2 * rate)))
		default:
			t += time.Duration(r.Int64N(int64(time.Second)))
		}
		at = append(at, t)
	}
	cfg := baseConfig(timesPlan(at...), sim.Algorithm{Name: name, Label: name, Params: p, Coord: co})
	cfg.Limit = p.Policy
	cfg.Duration = t + time.Second
	cfg.Windows = []time.Duration{time.Second}
	cfg.Cluster = cl
	if r.IntN(3) == 0 {
		cfg.Retries = []traffic.RetryPolicy{{Policy: "retry-after", MaxAttempts: 3}}
	}
	return cfg, fmt.Sprintf("%s %+v n=%d L=%d B=%d K=%d S=%v store=%+v skew=%v balancer=%s %v", name, co, n, l, p.Burst, co.Lease, co.Sync, cl.Store, cl.Skew, cl.Balancer, cl.Weights)
}

// The bounds hold on randomised clusters: for every mode that has one, no
// key is ever admitted more often in an interval of W than the bound says.
func TestClusterBoundsHold(t *testing.T) {
	t.Parallel()
	runs := testenv.Runs(150, 400)
	if testing.Short() {
		runs = 60
	}
	r := rand.New(rand.NewPCG(7, 11))
	for i := range runs {
		cfg, desc := randomCluster(r)
		rec := &recorder{}
		cfg.Observe = func(int) sim.Observer { return rec }
		rep, err := simRun(cfg)
		require.NoError(t, err, desc)
		var admitted, attempts []time.Duration
		for _, d := range rec.got {
			attempts = append(attempts, d.Time)
			if d.Verdict != algorithms.Reject {
				admitted = append(admitted, d.Decided)
			}
		}
		slices.Sort(admitted)
		slices.Sort(attempts)
		alg := cfg.Algorithms[0]
		bound, ok := clusterBound(alg.Name, alg.Params, cfg.Cluster, alg.Coord,
			func(d time.Duration) int64 { return maxInWindow(attempts, d) })
		require.True(t, ok, desc)
		got := maxInWindow(admitted, cfg.Limit.Per)
		require.LessOrEqual(t, got, bound, "run %d: %s: %d admitted in one window", i, desc, got)
		// the engine's own account agrees with the decisions
		require.Equal(t, int64(len(admitted)), rep.Results[0].Cluster.Admitted, desc)
	}
}

// Where no bound exists, the overshoot grows with what drives it.
func TestClusterUnboundedGrows(t *testing.T) {
	t.Parallel()
	pol := algorithms.Policy{Rate: 1, Per: time.Second, Burst: 1}
	steady := func(every time.Duration) []time.Duration {
		var at []time.Duration
		for t := time.Duration(0); t < 2*time.Second; t += every {
			at = append(at, t)
		}
		return at
	}
	extra := func(cfg sim.Config) int64 {
		res, _ := runCluster(t, cfg)
		return res.Cluster.ExtraAdmitted
	}
	// racy with write: set: every GET that runs before the last SET lands
	// reads a state that lets it through: the more arrivals within a round
	// trip, the more get through (lost updates). gcra, L=1 per 1s, 4
	// nodes, rtt 20 ms.
	t.Run("racy-set-by-rate", func(t *testing.T) {
		var last int64 = -1
		for _, every := range []time.Duration{50 * ms, 10 * ms, 2 * ms, 500 * us} {
			e := extra(clusterConfig("gcra", pol, cluster.Coordination{Mode: cluster.Racy}, 4, 20*ms, steady(every)...))
			require.Greater(t, e, last, "one every %v", every)
			last = e
		}
	})
	// central with clock: node, a node 300 ms behind another, fixed-window:
	// each call from the node behind near a window's start resets the
	// count, so the more calls, the more get through.
	t.Run("central-node-clock-by-rate", func(t *testing.T) {
		var last int64 = -1
		for _, every := range []time.Duration{200 * ms, 50 * ms, 10 * ms} {
			cfg := clusterConfig("fixed-window", algorithms.Policy{Rate: 2, Per: time.Second, Burst: 2},
				cluster.Coordination{Mode: cluster.Central, Clock: cluster.NodeClock}, 2, ms, steady(every)...)
			cfg.Cluster.Skew = []time.Duration{0, -300 * ms}
			e := extra(cfg)
			require.Greater(t, e, last, "one every %v", every)
			last = e
		}
	})
	// global (gubernator's GLOBAL): a node whose copy says "under the
	// limit" admits everything until the owner's next broadcast reaches
	// it, which the hits it sends trigger; the longer the wait between
	// sends and broadcasts, the more get through. token-bucket, L=1 per
	// 1s, 4 nodes, rtt 2 ms, one request every 2 ms.
	t.Run("global-by-sync", func(t *testing.T) {
		var last int64 = -1 << 62
		for _, s := range []time.Duration{ms, 10 * ms, 100 * ms} {
			e := extra(clusterConfig("token-bucket", pol, cluster.Coordination{Mode: cluster.Global, Sync: s}, 4, 2*ms, steady(2*ms)...))
			require.Greater(t, e, last, "sync %v", s)
			last = e
		}
	})
	// local under round-robin: N times the limit, growing with N.
	t.Run("local-by-nodes", func(t *testing.T) {
		var last int64 = -1
		for _, n := range []int{1, 2, 4, 8} {
			e := extra(clusterConfig("sliding-log", algorithms.Policy{Rate: 5, Per: time.Second, Burst: 5},
				cluster.Coordination{Mode: cluster.Local}, n, ms, steady(10*ms)...))
			require.Greater(t, e, last, "%d nodes", n)
			last = e
		}
	})
}
