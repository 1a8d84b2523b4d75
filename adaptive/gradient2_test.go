package adaptive

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func newGradient2(t *testing.T, edit func(*Gradient2Config)) *Gradient2 {
	c := DefaultGradient2Config()
	if edit != nil {
		edit(&c)
	}
	g, err := NewGradient2(c)
	require.NoError(t, err)
	return g
}

func TestGradient2Rows(t *testing.T) {
	// Defaults: E = 20, min 20, max 200, smoothing 0.2, queue 4, tolerance
	// 1.5; the long rtt is the plain mean of the first 10 samples.
	g := newGradient2(t, nil)
	runSamples(t, g, []sampleRow{
		// long 10ms, gradient min(1, 1.5*10/10) = 1: new 20+4 = 24;
		// E = 20*0.8 + 24*0.2 = 20.8
		{0, 10 * ms, 10, false, 20},
		// 10 < 20.8/2: app-limited; the long rtt still learns (10ms)
		{0, 10 * ms, 10, false, 20},
		// new 20.8 + 4 = 24.8; E = 16.64 + 4.96 = 21.6
		{0, 10 * ms, 11, false, 21},
		// long (30+40)/4 = 17.5ms; gradient 1.5*17.5/40 = 0.65625;
		// new 21.6*0.65625 + 4 = 18.175; E = 17.28 + 3.635 = 20.915
		{0, 40 * ms, 20, false, 20},
		// long 170/5 = 34ms; gradient 1.5*34/100 = 0.51; new 20.915*0.51 +
		// 4 = 14.667; E = 16.732 + 2.933 = 19.665, raised to min-limit 20
		{0, 100 * ms, 20, false, 20},
	})
	require.Equal(t, 20.0, g.estimated)
	// long 171/6 = 28.5ms > 2*1ms: the long rtt decays to 28.5*0.95 after
	// the gradient used 28.5: min(1, 1.5*28.5/1) = 1; new 24, E = 20.8
	runSamples(t, g, []sampleRow{{0, 1 * ms, 20, true, 20}})
	require.InDelta(t, 28.5e6*0.95, g.long.value, 1e-6)
	require.InDelta(t, 20.8, g.estimated, 1e-12)
	// still warming up: the 7th sample sets the mean again, 191ms/7 (not
	// twice 20ms: no decay), and the decay is lost, as in ExpAvgMeasurement
	g.OnSample(0, 20*ms, 0, false)
	require.Equal(t, 191e6/7, g.long.value)
}

func TestGradient2ExpAvg(t *testing.T) {
	// After the 10 warm-up samples, value*(1-f) + rtt*f with f = 2/601.
	g := newGradient2(t, nil)
	for range 10 {
		g.OnSample(0, 10*ms, 0, false)
	}
	require.Equal(t, 10e6, g.long.value)
	g.OnSample(0, 70*ms, 0, false)
	f := 2.0 / 601
	require.Equal(t, float64(10e6*(1-f))+float64(70e6*f), g.long.value)
	require.InDelta(t, 10.1996672e6, g.long.value, 1) // 10ms + 60ms*2/601
}

func TestGradient2Tolerance(t *testing.T) {
	// A 1.4x rtt is within the 1.5 tolerance: gradient min(1, 1.5/1.4) = 1,
	// so the limit grows by queue*smoothing = 0.8 per sample.
	g := newGradient2(t, func(c *Gradient2Config) { c.InitialLimit, c.MinLimit = 50, 1 })
	for range 10 {
		g.OnSample(0, 10*ms, 50, false)
	}
	e := g.estimated
	g.OnSample(0, 14*ms, 50, false)
	require.InDelta(t, e+0.8, g.estimated, 1e-9)
	// E is 50 + 11*0.8 = 58.8, long 10ms + 4ms*2/601 = 10.0133ms. A 3x
	// rtt: long = 10.0133 + (30-10.0133)*2/601 = 10.0798ms, gradient
	// 1.5*10.0798/30 = 0.50399: new = E*0.50399 + 4 = 33.635,
	// E' = 0.8E + 0.2*new = 47.04 + 6.727 = 53.767
	require.InDelta(t, 58.8, g.estimated, 1e-9)
	g.OnSample(0, 30*ms, 50, false)
	require.InDelta(t, 53.767, g.estimated, 1e-3)
}

func TestWindowed(t *testing.T) {
	rec := &recorder{limit: 5}
	w, err := NewWindowed(DefaultWindowConfig(), rec)
	require.NoError(t, err)
	w.OnSample(time.Second, 99*time.Microsecond, 50, true) // under 100µs: ignored altogether
	require.Zero(t, w.nextUpdate)
	w.OnSample(time.Second, 10*ms, 50, false) // 1s > nextUpdate 0: a window of one, discarded
	require.Equal(t, 2*time.Second, w.nextUpdate, "1s + min(max(2*10ms, 1s), 1s)")
	require.Empty(t, rec.got)
	// ten samples in (1s, 2s]: the window stays open up to 2s included
	for i := 1; i <= 10; i++ {
		w.OnSample(time.Second+time.Duration(i)*100*ms, time.Duration(i)*ms+1, i, i == 3)
	}
	require.Empty(t, rec.got)
	// the next one, after 2s, closes a window of 11 samples
	w.OnSample(2*time.Second+1, 12*ms, 4, false)
	require.Equal(t, []sampleRow{{
		now: 2*time.Second + 1,
		// (1+2+...+10 + 12)ms + 10ns over 11 samples, integer division
		rtt:      (67*ms + 10) / 11,
		inflight: 10,   // the window's largest
		dropped:  true, // any drop in the window
	}}, rec.got)
	require.Equal(t, 3*time.Second+1, w.nextUpdate)
	require.Equal(t, 5, w.Limit(0), "the delegate's limit")
	// 8 samples up to 3s+1ns and one after it: a window of 9, discarded
	for i := 1; i <= 8; i++ {
		w.OnSample(2*time.Second+time.Duration(i)*100*ms, 5*ms, 1, false)
	}
	w.OnSample(3*time.Second+10*ms, 5*ms, 1, false)
	require.Len(t, rec.got, 1)
	require.Equal(t, 4*time.Second+10*ms, w.nextUpdate, "3.01s + 1s: closed, even though discarded")
	// 9 samples up to 4.01s and one after it: a window of 10, delivered
	rec.got = nil
	for i := 1; i <= 9; i++ {
		w.OnSample(3*time.Second+time.Duration(i)*100*ms, 6*ms, 2, false)
	}
	w.OnSample(4*time.Second+20*ms, 16*ms, 1, false)
	require.Equal(t, []sampleRow{{now: 4*time.Second + 20*ms, rtt: 7 * ms, inflight: 2}}, rec.got,
		"(9*6 + 16)ms / 10 = 7ms; the closing sample counts in its window")
}

func TestWindowedAIMD(t *testing.T) {
	// A windowed AIMD moves once per window: one +1 for a window of ten
	// successes at inflight 10, however many samples it holds.
	a, err := NewAIMD(DefaultAIMDConfig())
	require.NoError(t, err)
	w, err := NewWindowed(DefaultWindowConfig(), a)
	require.NoError(t, err)
	w.OnSample(0+1, ms, 10, false) // opens: nextUpdate 1s+1ns
	for i := range 30 {
		w.OnSample(time.Duration(i+1)*10*ms, ms, 10, false)
	}
	require.Equal(t, 20, w.Limit(0))
	w.OnSample(time.Second+2, ms, 10, false)
	require.Equal(t, 21, w.Limit(0))
}

// recorder is a Limit that records the samples it is given.
type recorder struct {
	limit int
	got   []sampleRow
}

func (r *recorder) Limit(time.Duration) int { return r.limit }
func (r *recorder) OnSample(now, rtt time.Duration, inflight int, dropped bool) {
	r.got = append(r.got, sampleRow{now: now, rtt: rtt, inflight: inflight, dropped: dropped})
}
