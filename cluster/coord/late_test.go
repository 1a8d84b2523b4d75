package coord

import (
	"container/heap"
	"math"
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

// Central scripts over trips with jitter run at their replies
// (lateScripts) and decide as the queued path does: random central rows
// with jitter and no service time give the same decisions, store scripts
// and results as the same clusters with a store-slow fault over the whole
// run whose round trip is the store's own, which changes no trip but
// sends every script through the store's queue. Most runs have trips of a
// few nanoseconds and clients that retry, so that many arrivals at the
// store and many replies share an instant, and the order of tied replies
// decides which node a retry reaches; some have node-down faults, a
// node's clock or a backend.
func TestClusterLateScriptsMatchQueue(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(21, 34))
	late := 0
	runs := testenv.Runs(40, 120)
	for i := range runs {
		var cfg sim.Config
		desc := "backend"
		if i%3 == 2 {
			cfg = randomClusterBackend(r, "gcra", cluster.Central)
			cfg.Cluster.Faults = cfg.Cluster.Faults[2:] // node-down only, if any
			if r.IntN(2) == 0 {
				cfg.Retries = []traffic.RetryPolicy{{Policy: "retry-after", MaxAttempts: 3}}
			}
		} else {
			cfg, desc = randomCluster(r)
			if co := &cfg.Algorithms[0].Coord; co.Mode != cluster.Central {
				*co = cluster.Coordination{Mode: cluster.Central}
			}
			if r.IntN(3) != 0 { // replies tied at an instant, in another order, retry in it
				cfg.Retries = []traffic.RetryPolicy{{Policy: "retry-after", MaxAttempts: 3}}
			}
			if n := cfg.Cluster.Nodes; n > 1 && r.IntN(3) == 0 {
				cfg.Cluster.Faults = append(cfg.Cluster.Faults, cluster.Fault{Type: cluster.NodeDown,
					Node: r.IntN(n), At: time.Duration(r.IntN(2000)) * ms, For: time.Duration(1+r.IntN(500)) * ms})
			}
		}
		if i%10 == 4 { // an all-of row: each verdict names its limit
			var at []time.Duration
			for range 100 + r.IntN(200) {
				at = append(at, time.Duration(r.Int64N(int64(3*time.Second))))
			}
			slices.Sort(at)
			co := cluster.Coordination{Mode: cluster.Central}
			cfg = kongWindows(algorithms.AllOrNothing, co, r.IntN(2) == 0, 1+r.IntN(4), time.Duration(r.IntN(3000))*us, at...)
			desc = "all-of"
		}
		st := &cfg.Cluster.Store
		st.Service = 0
		if desc == "backend" || r.IntN(2) == 0 {
			st.RTT = time.Duration(r.IntN(5))
			st.Jitter = time.Duration(1 + r.IntN(4))
		} else {
			st.Jitter = time.Duration(1+r.IntN(2000)) * us
		}
		if r.IntN(10) == 0 {
			st.Timeout = st.RTT + st.Jitter // some trips fail: the queued path
		}
		if lateOK(cfg.Cluster, cfg.Inspect) {
			late++
		}
		run := func(cfg sim.Config) (*sim.Report, []sim.Decision, []sim.Decision) {
			rec, store := &recorder{}, &recorder{}
			cfg.Observe = func(int) sim.Observer { return rec }
			cfg.ObserveStore = func(int) sim.Observer { return store }
			rep, err := simRun(cfg)
			require.NoError(t, err, desc)
			return rep, rec.got, store.got
		}
		lateRep, lateDec, lateStore := run(cfg)
		queued := *cfg.Cluster
		queued.Faults = append([]cluster.Fault{{Type: cluster.StoreSlow, At: 0, For: math.MaxInt64, RTT: queued.Store.RTT}},
			queued.Faults...)
		cfg.Cluster = &queued
		queueRep, queueDec, queueStore := run(cfg)
		require.NotEmpty(t, lateStore, "run %d: %s", i, desc)
		require.Equal(t, queueDec, lateDec, "run %d: %s", i, desc)
		require.Equal(t, queueStore, lateStore, "run %d: %s", i, desc)
		require.Equal(t, queueRep, lateRep, "run %d: %s", i, desc)
	}
	require.GreaterOrEqual(t, late, runs*3/4, "runs that take the late path")
}

// Each wheel of lateScripts gives back the entries that container/heap
// gives back in cevLess order (plainCevs), in the same order, on random pushes, peeks and pops as in
// TestCevWheelMatchesHeap: mostly a jittered trip ahead of the last
// popped, with ties; sometimes past the wheel, before its slot, or after
// it emptied.
func TestLateWheelMatchesHeap(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		shift     uint
		trip, far time.Duration
	}{
		{"trips within the wheel", 4, 2000, 1 << 16},
		{"trips past the wheel", 0, 5000, 1 << 12},
		{"one slot", 30, 100, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(9, uint64(c.shift)))
			for round := range 10 {
				l := newLateScripts(c.shift)
				which := round % 2
				w := &l.arrived
				if which == 1 {
					w = &l.replies
				}
				var twin plainCevs
				now := time.Duration(r.IntN(2000)) - 1000
				for range 4000 {
					switch op := r.IntN(10); {
					case op < 5 || len(twin) == 0:
						at := now
						switch k := r.IntN(20); {
						case k == 0:
							at += dur(r, c.far)
						case k == 1:
							at -= dur(r, c.trip)
						case k < 8:
							at += dur(r, 4) // ties
						default:
							at += dur(r, c.trip)
						}
						if l.hi-l.lo == uint64(len(l.ring)) {
							l.grow()
						}
						n := l.hi
						l.hi++
						tr := l.trip(n)
						k := cev{at: at, seq: n}
						if tr.arrive = at; which == 1 {
							tr.reply, tr.arrive = at, at-dur(r, 3)
							k.sub = tr.arrive
						}
						w.push(l, n, k)
						heap.Push(&twin, k)
					case op < 7:
						require.Equal(t, twin[0], *w.peekAt(l), "round %d", round)
					default:
						k := heap.Pop(&twin).(cev)
						require.Equal(t, k, *w.popAt(l), "round %d", round)
						now = max(now, k.at)
					}
					require.Equal(t, len(twin), w.Len())
				}
				for len(twin) > 0 {
					require.Equal(t, heap.Pop(&twin).(cev), *w.popAt(l))
				}
				require.Zero(t, w.Len())
			}
		})
	}
}
