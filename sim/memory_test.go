package sim

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/testenv"
	"github.com/ratesim/ratesim/traffic"
	"github.com/stretchr/testify/require"
)

// uniformConfig is n Poisson requests at 100,000 a second over 20,000 keys
// drawn uniformly (5 a second each, against 5 per second with bursts of
// 5), through algs: the same keys and the same rate whatever n, so that
// only the number of requests differs.
func uniformConfig(n int64, algs []Algorithm) Config {
	const rate = 100_000
	src := &traffic.Poisson{
		Common: traffic.Common{Clients: traffic.Clients{N: 20_000, Prefix: "user"}, Cost: 1},
		Rate:   traffic.Rate{Count: rate, Per: time.Second},
	}
	return Config{
		Name: "memory", Seed: 1, Duration: time.Duration(n * int64(time.Second) / rate),
		Limit:      algorithms.Policy{Rate: 5, Per: time.Second, Burst: 5},
		Algorithms: algs,
		Traffic:    traffic.Plan{Sources: []traffic.Source{src}, Seed: 1},
		Windows:    []time.Duration{time.Second, 100 * ms},
		Bucket:     100 * ms,
	}
}

func allAlgorithms(p algorithms.Policy) []Algorithm {
	var algs []Algorithm
	for _, info := range algorithms.All() {
		algs = append(algs, Algorithm{Name: info.Name, Label: info.Name,
			Params: algorithms.Params{Policy: p, Service: 100 * ms}})
	}
	return algs
}

// liveHeap runs cfg and returns the largest live heap (after a GC) seen
// while it ran, sampled at each progress report of run 0.
func liveHeap(t *testing.T, cfg Config) uint64 {
	t.Helper()
	var most uint64
	cfg.Progress = func(done, total time.Duration) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		most = max(most, ms.HeapAlloc)
	}
	rep, err := Run(cfg)
	require.NoError(t, err)
	require.Positive(t, rep.Results[0].Rejected)
	return most
}

// TestMemoryIndependentOfRequests: ten times the requests over the same
// keys at the same rate hold no more memory. Each run's live heap, after a
// GC, at its largest while the run goes on: the key tables (the key peaks'
// records among them), the releases of the last second in the peak
// windows and the key peaks, the ring of batches. Bound: the
// 2,000,000-request run at most 10% (the engine's bound on RSS in BENCHMARKS.md) plus 4 MiB
// above the 200,000-request one; the 4 MiB are what does grow with time,
// not requests: the time series (200 buckets) and the delay histograms
// (at most DelayExactValues distinct delays each).
func TestMemoryIndependentOfRequests(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("20 million decisions: not in -short or under -race")
	}
	testenv.Long(t, "the memory check of 20 million decisions")
	p := algorithms.Policy{Rate: 5, Per: time.Second, Burst: 5}
	small := liveHeap(t, uniformConfig(200_000, allAlgorithms(p)))
	large := liveHeap(t, uniformConfig(2_000_000, allAlgorithms(p)))
	t.Logf("live heap: %.1f MiB for 200k requests, %.1f MiB for 2M", float64(small)/(1<<20), float64(large)/(1<<20))
	require.LessOrEqual(t, large, small+small/10+4<<20,
		"2M requests hold %d bytes, 200k %d", large, small)
}

// TestSteadyPathAllocatesNothing: past the start of a run (tables sized,
// peak windows grown to a second of releases, the release queues' wheels
// holding a chunk in each slot their delays reach), the engine allocates
// nothing per request. The six algorithms that allocate nothing per
// decision (algorithms' TestDecideAllocatesNothing) run 1,000,000 and then
// 2,000,000 requests of the same keys at the same rate (10 s and 20 s);
// the 1,000,000 more requests (6 million more decisions) may cost at most 1
// allocation per 10,000 requests (the series and histograms growing with
// time). A run of 1 s is not past the start: leaky-bucket's and nginx's
// delays, sparse over the wheel's 4,096 slots, are still taking a chunk for
// a slot the first time they reach it.
func TestSteadyPathAllocatesNothing(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("18 million decisions: not in -short or under -race")
	}
	testenv.Long(t, "the allocation check of 18 million decisions")
	p := algorithms.Policy{Rate: 5, Per: time.Second, Burst: 5}
	algs := slices.DeleteFunc(allAlgorithms(p), func(a Algorithm) bool {
		return a.Name == "sliding-log" || a.Name == "concurrency" || a.Name == "x-time-rate"
	})
	require.Len(t, algs, 6)
	mallocs := func(n int64) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Run(uniformConfig(n, algs))
		require.NoError(t, err)
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	small, large := mallocs(1_000_000), mallocs(2_000_000)
	t.Logf("allocations: %d for 1M requests, %d for 2M", small, large)
	require.LessOrEqual(t, large, small+1_000_000/10_000, "allocations per request past the start")
}
