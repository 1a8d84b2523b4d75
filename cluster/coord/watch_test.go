package coord

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/internal/testenv"
	"github.com/ratesim/ratesim/sim"
)

// A store watcher (Config.Inspect: the state chart) sees the key's state
// in the store as the queued path has it, each script changing it when it
// reaches the store, rtt/2 after it was sent: random central clusters
// without jitter or service time give the same watched states, decisions
// and report as the same clusters with a store-slow fault over the whole
// run whose round trip is the store's own (which sends every script
// through the queue, as in TestClusterFIFOsMatchQueue).
func TestClusterWatchedStoreMatchesQueue(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(21, 34))
	runs := 0
	for i := 0; runs < testenv.Runs(12, 40); i++ {
		cfg, desc := randomCluster(r)
		if cfg.Algorithms[0].Coord.Mode != cluster.Central || cfg.Cluster.Store.Service != 0 {
			continue
		}
		runs++
		cfg.Cluster.Store.Jitter = 0
		cfg.Inspect = &sim.Inspect{Key: "alice", Every: 250 * time.Microsecond}
		run := func(cfg sim.Config) (*sim.Report, []sim.Decision) {
			rec := &recorder{}
			cfg.Observe = func(int) sim.Observer { return rec }
			rep, err := simRun(cfg)
			require.NoError(t, err, desc)
			require.NotEmpty(t, rep.Results[0].NodeStates, desc)
			return rep, rec.got
		}
		plainRep, plainDec := run(cfg)
		queued := *cfg.Cluster
		queued.Faults = append([]cluster.Fault{{Type: cluster.StoreSlow, At: 0, For: math.MaxInt64, RTT: queued.Store.RTT}},
			queued.Faults...)
		cfg.Cluster = &queued
		queueRep, queueDec := run(cfg)
		requireSameStates(t, queueRep.Results[0].NodeStates, plainRep.Results[0].NodeStates, "run %d: %s", i, desc)
		require.Equal(t, queueDec, plainDec, "run %d: %s", i, desc)
		require.Equal(t, queueRep, plainRep, "run %d: %s", i, desc)
	}
}

// What a row saw when it decided one request (Config.Explain, the
// playground's "why") is what the queued path sees: the state where the
// script ran and the scripts in flight when it ran, the ones sent after
// it and not yet executed among them. Random central clusters without
// jitter or service time, a request of each asked, give the queued path's
// view, as in TestClusterWatchedStoreMatchesQueue.
func TestClusterViewMatchesQueue(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(21, 34))
	runs := 0
	for i := 0; runs < 40; i++ {
		cfg, desc := randomCluster(r)
		if cfg.Algorithms[0].Coord.Mode != cluster.Central || cfg.Cluster.Store.Service != 0 {
			continue
		}
		runs++
		cfg.Cluster.Store.Jitter = 0
		cfg.Explain = &sim.Explain{Row: 0, Seq: uint64(r.IntN(100))}
		plain, err := simRun(cfg)
		require.NoError(t, err, desc)
		queued := *cfg.Cluster
		queued.Faults = append([]cluster.Fault{{Type: cluster.StoreSlow, At: 0, For: math.MaxInt64, RTT: queued.Store.RTT}},
			queued.Faults...)
		cfg.Cluster = &queued
		queue, err := simRun(cfg)
		require.NoError(t, err, desc)
		require.Equal(t, queue.Results[0].View, plain.Results[0].View, "run %d: %s", i, desc)
	}
}

// requireSameStates fails, naming the first sample that differs, unless
// got is want.
func requireSameStates(t *testing.T, want, got []sim.StateSeries, msg string, args ...any) {
	t.Helper()
	require.Equal(t, len(want), len(got), args...)
	for k := range want {
		w, g := want[k], got[k]
		require.Equal(t, w.Names, g.Names, args...)
		require.Equal(t, len(w.TimesNs), len(g.TimesNs), args...)
		for j := range w.TimesNs {
			if w.TimesNs[j] != g.TimesNs[j] || !reflect.DeepEqual(w.Values[j], g.Values[j]) {
				t.Fatalf(msg+": %s at %dns shows %v, the queued path %v at %dns", append(args, g.Where, g.TimesNs[j], g.Values[j], w.Values[j], w.TimesNs[j])...)
			}
		}
	}
}
