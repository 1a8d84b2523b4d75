package adaptive

import (
	"math"
	"time"
)

// WindowConfig holds the parameters of the windowed wrapper, named as a
// scenario spells them. DefaultWindowConfig gives the Java's defaults:
//
//	window             1s     the sample window: the Java's minWindowTime
//	                          and maxWindowTime together (both default to
//	                          1s; each must be >= 100ms)
//	min-samples        10     a window with fewer samples is discarded (the
//	                          Java's windowSize, >= 10)
//	min-rtt-threshold  100µs  samples with a shorter rtt are ignored
type WindowConfig struct {
	Window          time.Duration
	MinSamples      int
	MinRTTThreshold time.Duration
}

// DefaultWindowConfig returns WindowedLimit.Builder's defaults.
func DefaultWindowConfig() WindowConfig {
	return WindowConfig{Window: time.Second, MinSamples: 10, MinRTTThreshold: 100 * time.Microsecond}
}

// Windowed is Netflix concurrency-limits' WindowedLimit: it gathers samples
// into windows and hands the delegate one sample per window, the window's
// mean rtt.
//
// Source: concurrency-limits-core/src/main/java/com/netflix/concurrency/
// limits/limit/WindowedLimit.java (onSample, isWindowReady) with the
// default window/ImmutableAverageSampleWindow.java. State: the current
// window (min rtt, sum of rtts, max inflight, sample count, any drop) and
// nextUpdateTime (0 at first). On each sample completing at now (the Java's
// endTime = startTime + rtt):
//
//	if rtt < minRttThreshold: ignore it
//	add it to the window
//	if now > nextUpdateTime:
//	    close the window and open an empty one
//	    nextUpdateTime = now + min(max(2*window.minRtt, minWindowTime), maxWindowTime)
//	    if window.count >= windowSize:
//	        delegate.onSample(rtt = window.sum/window.count (integer division),
//	                          inflight = window.maxInflight, dropped = window.anyDrop)
//
// So the very first sample closes a window of one, which is discarded: the
// first real window starts after it. With window = min = max window time,
// a window lasts exactly `window`.
//
// The Go port (platinummonkey/go-concurrency-limits limit/windowed.go)
// differs: its 100µs threshold is 1e8 ns (100ms), a window is ready when
// the sample's inflight exceeds the window size (not when the window holds
// that many samples), the delegate gets the last sample's drop flag, and
// dropped samples add no rtt; this follows the Java.
type Windowed struct {
	cfg        WindowConfig
	delegate   Limit
	nextUpdate time.Duration
	win        sampleWindow
}

var _ Limit = (*Windowed)(nil)

// sampleWindow is ImmutableAverageSampleWindow.
type sampleWindow struct {
	minRTT      time.Duration // math.MaxInt64 when empty
	sum         time.Duration
	maxInflight int
	count       int
	dropped     bool
}

func emptyWindow() sampleWindow { return sampleWindow{minRTT: math.MaxInt64} }

// NewWindowed wraps delegate (an AIMD, Vegas or Gradient2) in a window, or
// returns an error naming the first invalid parameter, as the Java's
// builder checks them: window >= 100ms, min-samples >= 10; and a
// min-rtt-threshold of 0 or more.
func NewWindowed(c WindowConfig, delegate Limit) (*Windowed, error) {
	if c.Window < 100*time.Millisecond {
		return nil, paramErr("windowed", "window", c.Window, "want at least 100ms")
	}
	if c.MinSamples < 10 {
		return nil, paramErr("windowed", "min-samples", c.MinSamples, "want at least 10")
	}
	if c.MinRTTThreshold < 0 {
		return nil, paramErr("windowed", "min-rtt-threshold", c.MinRTTThreshold, "want 0 or more")
	}
	if delegate == nil {
		return nil, paramErr("windowed", "delegate", "none", "want a limit to wrap")
	}
	return &Windowed{cfg: c, delegate: delegate, win: emptyWindow()}, nil
}

// Limit returns the delegate's limit.
func (w *Windowed) Limit(now time.Duration) int { return w.delegate.Limit(now) }

// OnSample applies WindowedLimit.onSample.
func (w *Windowed) OnSample(now, rtt time.Duration, inflight int, dropped bool) {
	if rtt < w.cfg.MinRTTThreshold {
		return
	}
	s := &w.win
	s.minRTT = min(s.minRTT, rtt)
	s.sum += rtt
	s.maxInflight = max(s.maxInflight, inflight)
	s.count++
	s.dropped = s.dropped || dropped
	if now <= w.nextUpdate {
		return
	}
	cur := *s
	*s = emptyWindow()
	w.nextUpdate = now + min(max(cur.minRTT*2, w.cfg.Window), w.cfg.Window)
	if cur.minRTT < math.MaxInt64 && cur.count >= w.cfg.MinSamples {
		w.delegate.OnSample(now, cur.sum/time.Duration(cur.count), cur.maxInflight, cur.dropped)
	}
}
