package backend

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestHistExact: nearest rank on a few values, by hand: 0, 10, 20, 30, 40
// (n = 5): p50 is the 3rd (rank ceil(2.5)), p90 and p99 the 5th.
func TestHistExact(t *testing.T) {
	h := newHist()
	for _, v := range []time.Duration{30, 0, 10, 40, 20} {
		h.add(v)
	}
	require.Equal(t, Percentiles{Mean: 20, P50: 20, P90: 40, P99: 40, Max: 40, Exact: true}, h.percentiles())
	h.reset()
	require.Equal(t, Percentiles{Exact: true}, h.percentiles())
	h.add(3)
	h.add(4)
	// mean 3.5 rounds half up
	require.Equal(t, Percentiles{Mean: 4, P50: 3, P90: 4, P99: 4, Max: 4, Exact: true}, h.percentiles())
}

// TestHistFallback: past ExactValues distinct values, every percentile is
// within 1/1024 of the exact order statistic and never below it, the mean
// and max stay exact; reset makes it exact again.
func TestHistFallback(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	h := newHist()
	var all []int64
	var sum int64
	for range 200_000 {
		v := int64(rng.ExpFloat64() * 1e7)
		if rng.IntN(10) == 0 {
			v = int64(rng.IntN(3000)) // small values and zeros too
		}
		all = append(all, v)
		sum += v
		h.add(time.Duration(v))
	}
	slices.Sort(all)
	p := h.percentiles()
	require.False(t, p.Exact)
	rank := func(q int) int64 { return all[(q*len(all)+99)/100-1] }
	for _, c := range []struct {
		q   int
		got int64
	}{{50, p.P50}, {90, p.P90}, {99, p.P99}} {
		want := rank(c.q)
		require.GreaterOrEqual(t, c.got, want, "p%d", c.q)
		require.LessOrEqual(t, float64(c.got-want), float64(want)/1024+1, "p%d", c.q)
	}
	require.Equal(t, all[len(all)-1], p.Max)
	require.Equal(t, (sum+int64(len(all))/2)/int64(len(all)), p.Mean)
	h.reset()
	h.add(5)
	require.Equal(t, Percentiles{Mean: 5, P50: 5, P90: 5, P99: 5, Max: 5, Exact: true}, h.percentiles())
}

// TestBucketP99: a bucket's p99 is the nearest-rank p99 of its responses
// while they are kept one by one (up to bufMax); past that, the top of the
// 11-significant-bit bucket that holds it (at most 1/1024 above, never
// below): 1..n ms, p99 = ceil(0.99n) ms.
func TestBucketP99(t *testing.T) {
	for _, n := range []int{1, 100, bufMax, bufMax + 1, 3 * bufMax} {
		for round := range 2 { // the second after a bucket was reduced
			s := newSeries(0, time.Second, DefaultMaxBuckets)
			if round == 1 {
				for i := range bufMax + 1 {
					s.response(0, time.Duration(i))
				}
			}
			for i := n; i >= 1; i-- {
				s.response(time.Second+time.Duration(i), time.Duration(i)*time.Millisecond)
			}
			want := int64((99*n+99)/100) * int64(time.Millisecond)
			got := s.openP99()
			if n <= bufMax {
				require.Equal(t, want, got, "n=%d", n)
			} else {
				require.GreaterOrEqual(t, got, want, "n=%d", n)
				require.LessOrEqual(t, got, want+want/1024, "n=%d", n)
			}
			s.response(2*time.Second, 1) // closes bucket 1
			require.Equal(t, got, s.rows[1].p99, "n=%d", n)
			require.Equal(t, int64(1), s.openP99())
		}
	}
}

// TestFaultWindows: Result gives the faults' windows as configured, in
// their order, on the run's clock, the end of an endless one saturated;
// none without faults.
func TestFaultWindows(t *testing.T) {
	cfg := cfgOf(1, 5*time.Millisecond)
	cfg.Faults = []Fault{
		{Type: Slow, At: 2 * time.Second, For: time.Second, Factor: 2},
		{Type: Pause, At: time.Second, For: 500 * time.Millisecond},
		{Type: Workers, At: 3 * time.Second, For: math.MaxInt64, Count: 0},
	}
	b, err := New(cfg, nil)
	require.NoError(t, err)
	want := []FaultWindow{
		{Type: Slow, StartNs: int64(2 * time.Second), EndNs: int64(3 * time.Second)},
		{Type: Pause, StartNs: int64(time.Second), EndNs: int64(1500 * time.Millisecond)},
		{Type: Workers, StartNs: int64(3 * time.Second), EndNs: math.MaxInt64},
	}
	res := b.Result(0, 4*time.Second)
	require.Equal(t, want, res.FaultWindows)
	// each Result its own slice
	res.FaultWindows[0].StartNs = 0
	require.Equal(t, want, b.Result(0, 4*time.Second).FaultWindows)

	cfg.Faults = nil
	b, err = New(cfg, nil)
	require.NoError(t, err)
	require.Nil(t, b.Result(0, time.Second).FaultWindows)
}

// TestHistExactMerge: the exact histogram, which merges its values into a
// sorted run pendMax at a time, counts as a map of every value would, up
// to ExactValues distinct values and across resets; one more distinct
// value makes it fall back to buckets.
func TestHistExactMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	h := newHist()
	for round := range 3 {
		want := map[int64]int64{}
		for len(want) < ExactValues {
			v := int64(rng.IntN(3*ExactValues)) + 1
			if rng.IntN(4) == 0 && len(want) > 0 {
				v = int64(rng.IntN(ExactValues/8)) + 1 // repeats
			}
			want[v]++
			h.add(time.Duration(v))
		}
		p := h.percentiles()
		require.True(t, p.Exact, "round %d", round)
		keys := make([]int64, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		require.Equal(t, keys, h.vals)
		for i, k := range keys {
			require.Equal(t, want[k], h.cnts[i], "value %d", k)
		}
		h.reset()
	}
	for i := range ExactValues + 1 {
		h.add(time.Duration(i + 1))
	}
	require.False(t, h.percentiles().Exact)
}

// TestSeriesFeedsAll: the series feeds the histogram of every response
// (series.all) at its buckets' closes, at once or as bucket counts (lazy);
// with the open bucket's responses added (pending), it holds what a
// histogram given each response as it came holds: the same count, sum,
// maximum, percentiles and exactness. Buckets of fewer and of more than
// bufMax responses, before and after all falls back to buckets
// (ExactValues distinct values), and responses before the series' start.
func TestSeriesFeedsAll(t *testing.T) {
	for _, perBucket := range []int{10, bufMax, bufMax + 1, 3 * bufMax} {
		for _, buckets := range []int{1, 3, 12} {
			all, want := newHist(), newHist()
			s := newSeries(time.Second, time.Second, DefaultMaxBuckets)
			s.all = &all
			rng := rand.New(rand.NewPCG(uint64(perBucket), uint64(buckets)))
			d := func() time.Duration {
				if rng.IntN(10) == 0 {
					return 0
				}
				return time.Duration(rng.Int64N(int64(time.Second)))
			}
			for range 5 { // before the start
				v := d()
				s.response(time.Second/2, v)
				want.add(v)
			}
			for b := range buckets {
				for i := range perBucket {
					v := d()
					s.response(time.Duration(b+1)*time.Second+time.Duration(i), v)
					want.add(v)
				}
			}
			got := all.clone()
			s.pending(&got)
			require.Equal(t, want.percentiles(), got.percentiles(), "%d a bucket, %d buckets", perBucket, buckets)
			require.Equal(t, want.n, got.n)
			require.Equal(t, want.sumLo, got.sumLo)
			require.Equal(t, want.sumHi, got.sumHi)
			// closing the last bucket gives all the same
			s.response(time.Duration(buckets+2)*time.Second, 7)
			want.add(7)
			s.close()
			require.Equal(t, want.percentiles(), all.percentiles(), "%d a bucket, %d buckets, closed", perBucket, buckets)
		}
	}
}

// TestRadixSort: radixSort orders as slices.Sort does, on batches of
// durations of every size to 2,100, from all equal to spread over the
// whole int64 range (one pass to six), its room reused.
func TestRadixSort(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 2))
	var tmp []int64
	for n := 1; n <= 2100; n += 37 {
		for _, bitsN := range []int{0, 3, 11, 12, 22, 40, 63} {
			p := make([]int64, n)
			for i := range p {
				switch {
				case bitsN == 63:
					p[i] = r.Int64()
				case bitsN > 0:
					p[i] = r.Int64N(1 << bitsN)
				}
			}
			want := slices.Clone(p)
			slices.Sort(want)
			tmp = radixSort(p, tmp)
			if !slices.Equal(want, p) {
				t.Fatalf("%d values of %d bits: not sorted", n, bitsN)
			}
		}
	}
}
