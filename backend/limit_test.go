package backend

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLimitSeries: the limit recorded by Backend.Limit, per 1s bucket and
// over the run. It is 10 from 0.5s and 20 from 1.5s (a repeat of 20 at 2s
// changes nothing), to the end at 3s:
//   - bucket 0 holds [0.5s, 1s) at 10: least, mean and greatest 10;
//   - bucket 1 holds [1s, 1.5s) at 10 and [1.5s, 2s) at 20: 10, 15, 20;
//   - bucket 2 holds [2s, 3s) at 20: 20, 20, 20;
//   - the run: least 10, greatest 20, mean (10*1s + 20*1.5s)/2.5s = 16.
//
// A backend without a limit has none: no series, no summary.
func TestLimitSeries(t *testing.T) {
	cfg := cfgOf(1, 10*ms)
	cfg.Bucket = time.Second
	b, err := New(cfg, func(Event) {})
	require.NoError(t, err)
	b.Limit(500*ms, 10)
	b.Limit(1500*ms, 20)
	b.Limit(2*time.Second, 20)
	r := b.Result(0, 3*time.Second)
	require.Equal(t, &LimitStats{Min: 10, Mean: 16, Max: 20}, r.Limit)
	s := r.Series
	require.Equal(t, int64(time.Second), s.BucketNs)
	require.Equal(t, []int64{10, 10, 20}, s.LimitMin)
	require.Equal(t, []float64{10, 15, 20}, s.LimitMean)
	require.Equal(t, []int64{10, 20, 20}, s.LimitMax)

	// at most 2 buckets: buckets 0 and 1 of 1s merge into one of 2s that
	// the limit covers for 1.5s: least 10, greatest 20, mean (10*1s +
	// 20*0.5s)/1.5s = 20/1.5; bucket 1 is [2s, 4s), at 20 to the end
	cfg.MaxBuckets = 2
	b, err = New(cfg, func(Event) {})
	require.NoError(t, err)
	b.Limit(500*ms, 10)
	b.Limit(1500*ms, 20)
	r = b.Result(0, 3*time.Second)
	require.Equal(t, int64(2*time.Second), r.Series.BucketNs)
	require.Equal(t, []int64{10, 20}, r.Series.LimitMin)
	require.Equal(t, []float64{20.0 / 1.5, 20}, r.Series.LimitMean)
	require.Equal(t, []int64{20, 20}, r.Series.LimitMax)
	require.Equal(t, &LimitStats{Min: 10, Mean: 16, Max: 20}, r.Limit, "the run's figures do not depend on the buckets")
	cfg.MaxBuckets = 0

	// a limit recorded from 1.5s: bucket 0 has none (NaN mean)
	b, err = New(cfg, func(Event) {})
	require.NoError(t, err)
	b.Limit(1500*ms, 7)
	r = b.Result(0, 2*time.Second)
	require.True(t, math.IsNaN(r.Series.LimitMean[0]))
	require.Equal(t, []int64{0, 7}, r.Series.LimitMax)
	require.Equal(t, 7.0, r.Series.LimitMean[1])

	b, err = New(cfg, func(Event) {})
	require.NoError(t, err)
	r = b.Result(0, 3*time.Second)
	require.Nil(t, r.Limit)
	require.Nil(t, r.Series.LimitMean)
}
