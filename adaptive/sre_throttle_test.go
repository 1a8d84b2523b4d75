package adaptive

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func newThrottle(t *testing.T) *Throttle {
	th, err := NewThrottle(DefaultThrottleConfig())
	require.NoError(t, err)
	return th
}

func TestThrottleFormula(t *testing.T) {
	th := newThrottle(t)
	require.True(t, th.Admit(0, 0, 0), "fresh: (0 - 2*0)/(0+1) = 0, so u = 0 passes")
	// 9 more requests, none accepted: before the 11th, p = 10/11
	for range 9 {
		th.Admit(0, 0, 0.99)
	}
	require.Equal(t, 10.0/11, th.RejectProbability(0, 0))
	require.False(t, th.Admit(0, 0, 0.90), "0.90 < 10/11 = 0.909: rejected locally")
	// that request counted: 11 requests, p = 11/12 = 0.9167
	require.True(t, th.Admit(0, 0, 0.92), "0.92 >= 11/12")
	// 12 requests; 3 accepted: (12 - 6)/13
	for range 3 {
		th.OnResult(0, 0, true)
	}
	th.OnResult(0, 0, false) // not accepted: counts nothing more
	require.Equal(t, 6.0/13, th.RejectProbability(0, 0))
	// 6 accepted: 12 - 12 = 0; 7: negative, so 0
	for range 4 {
		th.OnResult(0, 0, true)
	}
	require.Equal(t, 0.0, th.RejectProbability(0, 0))
	require.True(t, th.Admit(0, 0, 0))
	require.Equal(t, 0.0, th.RejectProbability(0, 1), "another key has its own counts")
}

func TestThrottleWindow(t *testing.T) {
	th := newThrottle(t)
	s := time.Second
	for range 10 {
		th.Admit(500*ms, 0, 0.99) // second 0
	}
	th.Admit(60*s, 0, 0.99) // second 60
	require.Equal(t, 11.0/12, th.RejectProbability(119*s+999*ms, 0),
		"second 119: the window is seconds 0 to 119")
	require.Equal(t, 1.0/2, th.RejectProbability(120*s, 0),
		"second 120: second 0 left the window, second 60 is still in")
	require.Equal(t, 0.0, th.RejectProbability(180*s, 0), "second 180: both left")
	// an accept counts at the instant it is reported
	th.Admit(200*s, 0, 0.99)
	th.Admit(200*s, 0, 0.99)
	th.OnResult(250*s, 0, true)
	require.Equal(t, 0.0, th.RejectProbability(319*s, 0), "(2 - 2*1)/3")
	require.Equal(t, 0.0, th.RejectProbability(320*s, 0), "the requests left, the accept is still in: negative, 0")
	th.Admit(369*s, 0, 0.99)
	require.Equal(t, 1.0/2, th.RejectProbability(370*s, 0), "the accept of second 250 left at 370")
	require.Equal(t, 0.0, th.RejectProbability(10000*s, 0), "a gap longer than the window clears it")
}

func TestThrottleK(t *testing.T) {
	th, err := NewThrottle(ThrottleConfig{K: 1.1, Window: time.Minute})
	require.NoError(t, err)
	for range 10 {
		th.Admit(0, 3, 0.99)
	}
	for range 5 {
		th.OnResult(0, 3, true)
	}
	require.Equal(t, (10-float64(1.1*5))/11, th.RejectProbability(0, 3))
	require.Equal(t, 0.0, th.RejectProbability(60*time.Second, 3), "a 1m window")
}
