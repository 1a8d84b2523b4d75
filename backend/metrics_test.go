package backend

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratesim/ratesim/internal/hist"
	"github.com/stretchr/testify/require"
)

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

// TestSeriesFeedsAll: the series feeds the histogram of every response
// (series.all) at its buckets' closes, at once or as bucket counts (lazy);
// with the open bucket's responses added (pending), it holds what a
// histogram given each response as it came holds: the same count, mean,
// maximum, percentiles and exactness. Buckets of fewer and of more than
// bufMax responses, before and after all falls back to buckets
// (ExactValues distinct values), and responses before the series' start.
func TestSeriesFeedsAll(t *testing.T) {
	for _, perBucket := range []int{10, bufMax, bufMax + 1, 3 * bufMax} {
		for _, buckets := range []int{1, 3, 12} {
			var all, want hist.Hist
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
				want.Add(int64(v))
			}
			for b := range buckets {
				for i := range perBucket {
					v := d()
					s.response(time.Duration(b+1)*time.Second+time.Duration(i), v)
					want.Add(int64(v))
				}
			}
			got := all.Clone()
			s.pending(&got)
			require.Equal(t, want.Summary(), got.Summary(), "%d a bucket, %d buckets", perBucket, buckets)
			require.Equal(t, want.N(), got.N())
			// closing the last bucket gives all the same
			s.response(time.Duration(buckets+2)*time.Second, 7)
			want.Add(7)
			s.close()
			require.Equal(t, want.Summary(), all.Summary(), "%d a bucket, %d buckets, closed", perBucket, buckets)
		}
	}
}
