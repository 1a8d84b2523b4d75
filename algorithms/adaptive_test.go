package algorithms

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// aimd learns from every sample; wrapped in WindowedLimit (window 1s,
// min-samples 10, the least the Java takes) it learns once a window. Twenty requests admitted at 0
// (the initial limit, 20, is full: the next is rejected); nineteen answers
// between 10ms and 190ms, each with 20 in flight at its admission. Bare,
// each raises the limit by one (2*20 >= limit up to 40): 39. Windowed, the
// first sample closes the window it opens with one sample (fewer than 10:
// no update) and the next closes after 1.01s: the limit stays 20 until a
// sample at 1.02s closes the window of the other eighteen, one update: 21.
func TestAdaptiveWindowed(t *testing.T) {
	ms := time.Millisecond
	pol := Policy{Rate: 10, Per: time.Second, Burst: 10}
	run := func(p Params) (*Adaptive, []int) {
		l, err := New("aimd", p)
		require.NoError(t, err)
		a := l.(*Adaptive)
		for range 20 {
			require.Equal(t, Accept, a.Decide(0, 0, 1).Verdict)
		}
		require.Equal(t, Decision{Verdict: Reject, RetryAfter: 1}, a.Decide(0, 0, 1), "retry_after: the mean service, here none: 1ns")
		var limits []int
		for i := 1; i <= 19; i++ {
			a.Sample(time.Duration(i)*10*ms, 0, 1, time.Duration(i)*10*ms, 20, Served)
			limits = append(limits, a.Limit(time.Duration(i)*10*ms))
		}
		return a, limits
	}
	_, bare := run(Params{Policy: pol})
	require.Equal(t, 39, bare[18])
	a, windowed := run(Params{Policy: pol, Window: time.Second, MinSamples: 10})
	require.Equal(t, 20, windowed[18])
	a.Decide(time.Second, 0, 1)
	a.Sample(1020*ms, 0, 1, 10*ms, 20, Served)
	require.Equal(t, 21, a.Limit(1020*ms))

	_, err := New("aimd", Params{Policy: pol, MinSamples: 3})
	require.EqualError(t, err, "window: 0s: want a window > 0 over which samples are gathered")
	_, err = New("gcra", Params{Policy: pol, Window: time.Second})
	require.Error(t, err, "only the adaptive limits take a window")
}
