package sim

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
)

// windowTwin is the trailing count written plainly: at instant t, the cost
// of every release in (t-w, t], and a step's largest count over the
// instants where it can rise (the step's start and its releases).
func windowTwin(rel []timedCost, w time.Duration, s *WindowSeries) []int64 {
	count := func(t time.Duration) int64 {
		var n int64
		for _, r := range rel {
			if r.at > t-w && r.at <= t {
				n += r.cost
			}
		}
		return n
	}
	out := make([]int64, len(s.Max))
	for i := range out {
		from := time.Duration(s.StartNs + int64(i)*s.StepNs)
		to := from + time.Duration(s.StepNs)
		m := count(from)
		for _, r := range rel {
			if r.at >= from && r.at < to {
				m = max(m, count(r.at))
			}
		}
		out[i] = m
	}
	return out
}

// TestWindowCounterAgainstTwin: random decisions, some delayed past later
// arrivals, some of another key; the counter's steps are the plain
// count's, its largest is the peak over half-open windows, and the series
// runs on until the window is empty.
func TestWindowCounterAgainstTwin(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		w := time.Duration(1+rng.IntN(500)) * time.Millisecond
		spread := time.Duration(1+rng.IntN(20)) * time.Second
		if seed%5 == 0 {
			spread = 3 * time.Hour // widened many times
		}
		n := 1 + rng.IntN(300)
		var times []time.Duration
		for range n {
			times = append(times, time.Duration(rng.Int64N(int64(spread))))
		}
		slices.Sort(times)
		all := NewAllKeysCounter(w)
		one := NewWindowCounter("a", w)
		var relAll, relA []timedCost
		for _, at := range times {
			d := Decision{Time: at, Decided: at, Cost: 1 + rng.Int64N(3), Key: []string{"a", "b"}[rng.IntN(2)]}
			switch rng.IntN(4) {
			case 0:
				d.Verdict = algorithms.Reject
			case 1:
				d.Verdict = algorithms.Delay
				d.Delay = time.Duration(rng.Int64N(int64(2 * w)))
			default:
				d.Verdict = algorithms.Accept
			}
			if d.Verdict != algorithms.Reject {
				r := timedCost{d.Decided + d.Delay, d.Cost}
				relAll = append(relAll, r)
				if d.Key == "a" {
					relA = append(relA, r)
				}
			}
			require.NoError(t, all.Observe(&d))
			require.NoError(t, one.Observe(&d))
		}
		for _, c := range []struct {
			counter *WindowCounter
			rel     []timedCost
			key     string
		}{{all, relAll, ""}, {one, relA, "a"}} {
			s := c.counter.Series()
			if len(c.rel) == 0 {
				require.Nil(t, s)
				continue
			}
			require.Equal(t, c.key, s.Key)
			require.LessOrEqual(t, len(s.Max), windowSteps, "seed %d", seed)
			require.Equal(t, windowTwin(c.rel, w, s), s.Max, "seed %d key %q", seed, c.key)
			// the peak over [s, s+w): every start at a release
			var peak int64
			for _, r := range c.rel {
				var n int64
				for _, q := range c.rel {
					if q.at >= r.at && q.at < r.at+w {
						n += q.cost
					}
				}
				peak = max(peak, n)
			}
			require.Equal(t, peak, slices.Max(s.Max), "seed %d", seed)
			require.Zero(t, s.Max[len(s.Max)-1], "seed %d: the series ends once the window is empty", seed)
		}
	}
}

// TestWindowCounterMemory: a long run (a million releases, a thousand a
// second for over a quarter of an hour) holds one window of releases and at
// most windowSteps steps: the heap grows by well under a megabyte, not by
// the 16 MB a million releases would take.
func TestWindowCounterMemory(t *testing.T) {
	c := NewAllKeysCounter(time.Second)
	d := Decision{Key: "k", Cost: 1}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range int64(1_000_000) {
		d.Time = time.Duration(i) * time.Millisecond
		d.Decided = d.Time
		require.NoError(t, c.Observe(&d))
	}
	s := c.Series()
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Equal(t, int64(1000), slices.Max(s.Max))
	require.LessOrEqual(t, len(s.Max), windowSteps)
	require.Less(t, int64(after.HeapAlloc)-int64(before.HeapAlloc), int64(1<<20))
}
