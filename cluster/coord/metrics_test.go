package coord

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/internal/hist"
	"github.com/ratesim/ratesim/sim"
)

// counts is h's distribution: each value (or bucket) with its count.
func counts(h *hist.Hist) [][2]int64 {
	var out [][2]int64
	for v, n := range h.Counts() {
		out = append(out, [2]int64{v, n})
	}
	return out
}

// TestRunHist: a runHist, which counts a run of equal delays at once,
// gives the figures of a histogram given each delay, with runs of one and
// of many, below and past hist.ExactValues distinct delays; the
// distribution of 0 ms x2, 250 ms x3, 750 ms x1 by hand (n = 6: p50 rank
// 3 = 250 ms, p90 rank 6 = 750 ms).
func TestRunHist(t *testing.T) {
	t.Parallel()
	var r runHist
	for _, d := range []time.Duration{0, 0, 250, 250, 750, 250} {
		r.add(d * time.Millisecond)
	}
	require.Equal(t, sim.Percentiles{P50: 250e6, P90: 750e6, P99: 750e6, Max: 750e6, Exact: true}, r.percentiles())
	require.Equal(t, [][2]int64{{0, 2}, {250e6, 3}, {750e6, 1}}, counts(&r.h))

	rng := rand.New(rand.NewPCG(3, 4))
	for _, distinct := range []int64{10, hist.ExactValues, 3 * hist.ExactValues} {
		var r runHist
		var h hist.Hist
		for range 200_000 {
			d := time.Duration(rng.Int64N(distinct)) * time.Microsecond
			for range 1 + rng.IntN(3) {
				r.add(d)
				h.Add(int64(d))
			}
		}
		s := h.Summary()
		require.Equal(t, sim.Percentiles{P50: s.P50, P90: s.P90, P99: s.P99, Max: s.Max, Exact: s.Exact}, r.percentiles(), "%d distinct", distinct)
		require.Equal(t, counts(&h), counts(&r.h), "%d distinct", distinct)
	}
}
