package algorithms

import (
	"testing"
	"time"

	"github.com/ratesim/ratesim/adaptive"
	"github.com/stretchr/testify/require"
)

// envoy-adaptive as a row, by the rules of gradient_controller.cc with
// envoy's defaults (min-concurrency 3, request-count 50, percentile 50,
// buffer 25%):
//   - the controller is built at the row's first decision, at 5s, and
//     starts in a min-RTT window at min-concurrency: a fourth request in
//     flight is rejected;
//   - a client's timeout (Abandoned) is no sample (envoy cancels the
//     latency sample of a stream destroyed first), while a shed (Failed)
//     is one: 49 served + 1 abandoned leave the window open, the 50th
//     served sample (at 5.99s) closes it with minRTT = their p50 and the
//     limit back to the deferred 3;
//   - one interval (1s) later the sample timer computes gradient =
//     clamp(minRTT*1.25/sampleRTT, 0.5, 2) = 1.25 (the same 10ms samples,
//     the same count: the same percentile), limit' = 3*1.25 = 3.75, and the
//     new limit uint32(3.75 + sqrt(3.75)) = uint32(5.69) = 5.
func TestEnvoyAdaptiveRow(t *testing.T) {
	ms := time.Millisecond
	pol := Policy{Rate: 10, Per: time.Second, Burst: 10}
	_, err := New("envoy-adaptive", Params{Policy: pol})
	require.EqualError(t, err, "interval: none: required, as in envoy (concurrency_update_interval): how often the limit is recalculated")
	_, err = New("envoy-adaptive", Params{Policy: pol, Interval: 500 * time.Microsecond})
	require.EqualError(t, err, "interval: 500µs: want at least 1ms (envoy reads it in whole milliseconds)")

	l, err := New("envoy-adaptive", Params{Policy: pol, Interval: time.Second, MinRTTInterval: 30 * time.Second, Service: 10 * ms})
	require.NoError(t, err)
	a := l.(*Adaptive)
	start := 5 * time.Second
	for range 3 {
		require.Equal(t, Accept, a.Decide(start, 0, 1).Verdict)
	}
	require.Equal(t, Decision{Verdict: Reject, RetryAfter: 10 * ms}, a.Decide(start, 0, 1), "min-concurrency 3 in the first min-RTT window; retry_after the mean service")
	for range 3 {
		a.Sample(start+10*ms, 0, 1, 10*ms, 3, Served)
	}
	env := a.lim.(*adaptive.Envoy)
	now := start + 20*ms
	for i := 3; i < 49; i++ {
		require.Equal(t, Accept, a.Decide(now, 0, 1).Verdict)
		a.Sample(now+10*ms, 0, 1, 10*ms, 1, Served)
		now += 20 * ms
	}
	require.Equal(t, Accept, a.Decide(now, 0, 1).Verdict)
	a.Sample(now+10*ms, 0, 1, 10*ms, 1, Abandoned) // 49 served, one abandoned: no sample
	require.True(t, env.InMinRTTWindow(now+10*ms))
	require.Equal(t, int64(0), a.InFlight(), "the abandoned request left flight all the same")
	now += 20 * ms
	require.Equal(t, Accept, a.Decide(now, 0, 1).Verdict)
	a.Sample(now+10*ms, 0, 1, 10*ms, 1, Served) // the 50th sample
	t1 := now + 10*ms
	require.False(t, env.InMinRTTWindow(t1))
	require.Equal(t, 3, a.Limit(t1), "the deferred limit, min-concurrency")
	for i := range 50 {
		at := t1 + 5*ms + time.Duration(i)*19*ms
		require.Equal(t, Accept, a.Decide(at, 0, 1).Verdict)
		a.Sample(at+10*ms, 0, 1, 10*ms, 1, Served)
	}
	require.Equal(t, 3, a.Limit(t1+time.Second-1))
	require.Equal(t, 5, a.Limit(t1+time.Second))
}

// sre-throttle as a row, with K = 2 and every draw 0.4: the first request
// of a key has p = (0 - 0)/1 = 0 and passes; the second p = (1 - 0)/2 =
// 0.5 and the third p = 2/3, both above 0.4: rejected locally (they still
// count as attempted). The first is served (an accept); then p = (3 -
// 2*1)/4 = 0.25 < 0.4: the fourth passes. A shed is no accept: p = (4 -
// 2)/5 = 0.4, not above the draw, passes; p = (5 - 2)/6 = 0.5 rejects. Two
// minutes on, the history is gone: p = 0. A key's state is 32 bytes
// (adaptive.KeyBytes: its sums, and the index, count and room of its
// seconds in the pool), and 16 for each second it holds counts for.
func TestSREThrottleRow(t *testing.T) {
	pol := Policy{Rate: 10, Per: time.Second, Burst: 10}
	l, err := New("sre-throttle", Params{Policy: pol, Service: time.Millisecond})
	require.NoError(t, err)
	s := l.(*SREThrottle)
	s.draw = func() float64 { return 0.4 }
	ms := time.Millisecond
	require.Equal(t, Accept, s.Decide(0, 7, 1).Verdict)
	require.Equal(t, Decision{Verdict: Reject, RetryAfter: ms}, s.Decide(ms, 7, 1))
	require.Equal(t, Reject, s.Decide(2*ms, 7, 1).Verdict)
	s.Sample(3*ms, 7, 1, 3*ms, 1, Served)
	require.Equal(t, int64(0), s.InFlight())
	require.Equal(t, Accept, s.Decide(4*ms, 7, 1).Verdict)
	s.Sample(5*ms, 7, 1, ms, 1, Failed)
	require.Equal(t, Accept, s.Decide(6*ms, 7, 1).Verdict)
	require.Equal(t, Reject, s.Decide(7*ms, 7, 1).Verdict)
	require.Equal(t, Accept, s.Decide(2*time.Minute+time.Second, 7, 1).Verdict)
	require.Equal(t, Memory{BytesPerKeyMax: 48, KeysPeak: 1, BytesPeak: 48}, s.Memory(), "32 bytes and one second of counts (the seconds of 0 left the window at 2m)")

	_, err = New("sre-throttle", Params{Policy: pol, K: -1})
	require.EqualError(t, err, "k: -1: want a multiplier greater than 0 (the book: 2)")
	_, err = New("sre-throttle", Params{Policy: pol, Window: 1500 * ms})
	require.EqualError(t, err, "window: 1.5s: want a whole number of seconds, at least 1s (the book: 2m)")
	_, err = New("sre-throttle", Params{Policy: pol, Interval: time.Second})
	require.Error(t, err, "interval is envoy-adaptive's")
}

// The Netflix limits' own bounds as options: aimd with initial-limit 2
// admits two requests in flight and rejects a third; a drop takes its
// limit to (int)(2*0.9) = 1 with min-limit 1 (the Java's default minLimit,
// 20, would hold it at 20 and refuse an initial limit below it). vegas
// has no minLimit, so min-limit is refused for it.
func TestAdaptiveLimitOptions(t *testing.T) {
	pol := Policy{Rate: 10, Per: time.Second, Burst: 10}
	l, err := New("aimd", Params{Policy: pol, InitialLimit: 2, MinLimit: 1, MaxLimit: 50})
	require.NoError(t, err)
	a := l.(*Adaptive)
	require.Equal(t, Accept, a.Decide(0, 0, 1).Verdict)
	require.Equal(t, Accept, a.Decide(0, 0, 1).Verdict)
	require.Equal(t, Reject, a.Decide(0, 0, 1).Verdict, "initial-limit 2")
	a.Sample(time.Millisecond, 0, 1, time.Millisecond, 2, Failed)
	require.Equal(t, 1, a.Limit(time.Millisecond), "(int)(2*0.9), floored at min-limit 1")

	_, err = New("aimd", Params{Policy: pol, InitialLimit: 2})
	require.Error(t, err, "an initial limit below the default minLimit 20")
	_, err = New("vegas", Params{Policy: pol, MinLimit: 2})
	require.EqualError(t, err, "min-limit: 2: vegas takes no min-limit (only aimd, gradient2)")
	_, err = New("gradient2", Params{Policy: pol, InitialLimit: 4, MinLimit: 2, MaxLimit: 8})
	require.NoError(t, err)
	_, err = New("gcra", Params{Policy: pol, MaxLimit: 8})
	require.Error(t, err)
}
