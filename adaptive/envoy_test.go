package adaptive

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCircllhistBuckets(t *testing.T) {
	h := newLatencyHist()
	for _, c := range []struct {
		us          int64
		index       int
		left, width float64
	}{
		{0, 0, 0, 0},              // the zero bucket, of width 0
		{1, 1, 1, 0.1},            // (val 10, exp 0): [1, 1.1)
		{9, 81, 9, 0.1},           // (90, 0)
		{10, 91, 10, 1},           // (10, 1): [10, 11)
		{99, 180, 99, 1},          // (99, 1)
		{100, 181, 100, 10},       // (10, 2): [100, 110)
		{123, 183, 120, 10},       // (12, 2): [120, 130)
		{10500, 361, 10000, 1000}, // (10, 4): [10000, 11000)
	} {
		i := bucketOf(c.us)
		require.Equal(t, c.index, i, "bucketOf(%d)", c.us)
		left, width := h.bucketBounds(i)
		require.InDelta(t, c.left, left, 1e-9, "left of %d", c.us)
		require.InDelta(t, c.width, width, 1e-12, "width of %d", c.us)
	}
}

func TestCircllhistQuantile(t *testing.T) {
	h := newLatencyHist()
	for _, v := range []int64{1, 2, 3, 4} {
		h.insert(v)
	}
	// target 4*0.5 = 2: the bucket [2, 2.1) ends exactly at count 2, so its
	// right edge
	require.InDelta(t, 2.1, h.quantile(0.5), 1e-12)
	h.clear()
	require.Zero(t, h.n)
	for v := int64(100); v <= 1000; v += 100 {
		h.insert(v)
	}
	require.Equal(t, 100.0, h.quantile(0), "target 0: the first bucket's left edge")
	require.Equal(t, 910.0, h.quantile(0.9), "target 9 ends the bucket [900, 910)")
	require.Equal(t, 1100.0, h.quantile(1), "target 10 ends the last bucket [1000, 1100)")
	require.InDelta(t, 505, h.quantile(0.45), 1e-9, "target 4.5: half way through [500, 510)")
	h.clear()
	for range 5 {
		h.insert(10000)
	}
	require.Equal(t, 10500.0, h.quantile(0.5), "target 2.5 of 5 in one bucket: 10000 + 2.5/5*1000")
}

func envoyConfig() EnvoyConfig {
	c := DefaultEnvoyConfig()
	c.Interval, c.MinRTTCalcInterval = 100*ms, time.Second
	c.RequestCount, c.Jitter = 5, 0
	return c
}

func newEnvoy(t *testing.T, c EnvoyConfig) *Envoy {
	e, err := NewEnvoy(c, seeded(3), 0)
	require.NoError(t, err)
	return e
}

// measureMinRTT feeds request-count (5) samples of rtt completing at from,
// from+10ms, ...
func measureMinRTT(e *Envoy, from, rtt time.Duration) {
	for i := range 5 {
		e.OnSample(from+time.Duration(i)*10*ms, rtt, 1, false)
	}
}

func TestEnvoyTimeline(t *testing.T) {
	e := newEnvoy(t, envoyConfig())
	require.True(t, e.InMinRTTWindow(0), "the controller starts in a min-RTT window")
	require.Equal(t, 3, e.Limit(0), "pinned to min-concurrency")
	measureMinRTT(e, 10*ms, 10*ms) // 10ms to 50ms
	// the 5th sample ends the window: minRTT = p50 of five 10000µs, inside
	// circllhist's bucket [10000, 11000): 10000 + 2.5/5*1000 = 10500µs
	require.False(t, e.InMinRTTWindow(50*ms))
	require.Equal(t, 10500*time.Microsecond, e.MinRTT())
	require.Equal(t, 3, e.Limit(50*ms), "the limit from before the window, min-concurrency")
	// the sample timer was armed at 50ms + 100ms
	for i := range 4 {
		e.OnSample(60*ms+time.Duration(i)*10*ms, 8*ms, 3, false)
	}
	require.Equal(t, 3, e.Limit(150*ms-1))
	// at 150ms: sampleRTT = p50 of four 8000µs in [8000, 8100) = 8050µs;
	// gradient = (10.5 + 10.5*0.25)/8.05 = 1.6304; 3*1.6304 = 4.891;
	// + sqrt(4.891) = 7.10 -> 7
	require.Equal(t, 7, e.Limit(150*ms))
	for i := range 4 {
		e.OnSample(160*ms+time.Duration(i)*10*ms, 8*ms, 7, false)
	}
	// 7*1.6304 = 11.413 + 3.378 = 14.79 -> 14
	require.Equal(t, 14, e.Limit(250*ms))
	require.Equal(t, 14, e.Limit(350*ms), "no samples: the limit stays")
	e.OnSample(360*ms, 100*ms, 14, true) // dropped plays no part
	// 100000µs in [100000, 110000): p50 of one = 105000µs; gradient
	// 13.125/105 = 0.125, clamped to 0.5: 14*0.5 = 7 + sqrt(7) = 9.65 -> 9
	require.Equal(t, 9, e.Limit(450*ms))
	// the next min-RTT window is due at 50ms + 1s; the idle sample timer
	// is due then too, armed later, so the window opens first and the
	// sample timer, finding it open, stops
	require.Equal(t, 9, e.Limit(time.Second+50*ms-1))
	require.Equal(t, 3, e.Limit(time.Second+50*ms))
	require.True(t, e.InMinRTTWindow(time.Second+50*ms))
	require.Equal(t, never, e.sampleTimer.due)
	e.OnSample(time.Second+60*ms, 20*ms, 1, false) // sent at 1.04s, before the window: ignored
	require.Zero(t, e.hist.n)
	measureMinRTT(e, time.Second+100*ms, 12*ms)
	require.Equal(t, 12500*time.Microsecond, e.MinRTT(), "[12000, 13000): 12000 + 2.5/5*1000")
	require.Equal(t, 9, e.Limit(time.Second+140*ms), "restored")
	require.Equal(t, time.Second+240*ms, e.sampleTimer.due)
	require.Equal(t, 2*time.Second+140*ms, e.minRTTTimer.due)
}

func TestEnvoyFiveTimesAtMinimum(t *testing.T) {
	// Set to min-concurrency from min-concurrency 5 times in a row outside
	// a window: a new min-RTT measurement starts at once.
	e := newEnvoy(t, envoyConfig())
	measureMinRTT(e, 10*ms, 10*ms) // minRTT 10.5ms at 50ms; limit 3
	for i := range 5 {
		at := 60*ms + time.Duration(i)*100*ms
		e.OnSample(at, 50*ms, 3, false) // sent at 10ms or later, in the epoch
		// each interval: gradient 0.5, 3*0.5 = 1.5 + 1.22 = 2.72 -> 2,
		// raised to 3: 3 -> 3, the (i+1)th time
		require.False(t, e.InMinRTTWindow(at+90*ms-1))
	}
	require.Equal(t, uint32(4), e.consecutiveMin)
	require.True(t, e.InMinRTTWindow(550*ms), "the 5th, at 550ms, opens a window at 550ms")
	require.Equal(t, uint32(0), e.consecutiveMin, "entering the window resets the count")
	require.Equal(t, 550*ms, e.epoch)
}

func TestEnvoyJitter(t *testing.T) {
	c := envoyConfig()
	c.Jitter = 15
	e := newEnvoy(t, c)
	measureMinRTT(e, 10*ms, 10*ms) // ends at 50ms, drawing the jitter
	// the same seed's first draw: 1000ms + draw % ceil(1000*0.15) ms
	want := 50*ms + time.Second + time.Duration(seeded(3).Uint64()%150)*ms
	require.Equal(t, want, e.minRTTTimer.due)
	require.False(t, e.InMinRTTWindow(want-1))
	require.True(t, e.InMinRTTWindow(want))
}

func TestEnvoyZeroLatencies(t *testing.T) {
	// rtts under 1µs truncate to 0µs: minRTT and sampleRTT 0, a NaN
	// gradient, which envoy's std::min/std::max turn into 2.0:
	// 3*2 = 6 + sqrt(6) = 8.45 -> 8
	e := newEnvoy(t, envoyConfig())
	measureMinRTT(e, 10*ms, 500)
	require.Zero(t, e.MinRTT())
	e.OnSample(60*ms, 999, 3, false)
	require.Equal(t, 8, e.Limit(150*ms))
}

func TestEnvoyMaxAndIdle(t *testing.T) {
	c := envoyConfig()
	c.MaxConcurrencyLimit = 10
	e := newEnvoy(t, c)
	measureMinRTT(e, 10*ms, 10*ms)
	for step := range 3 {
		e.OnSample(60*ms+time.Duration(step)*100*ms, 1*ms, 3, false)
	}
	// gradient 2 each time: 3 -> 6+2.45 = 8 -> 16+4 = 20, capped at 10
	require.Equal(t, 10, e.Limit(350*ms))
	// an hour without traffic: windows open and stay open (no samples),
	// the sample timer stops; nothing loops an hour's worth of intervals
	require.Equal(t, 3, e.Limit(time.Hour))
	require.True(t, e.InMinRTTWindow(time.Hour))
	require.Equal(t, time.Second+50*ms, e.epoch, "opened when due, not when noticed")
}
