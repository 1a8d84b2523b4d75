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

// TestThrottlePool: the seconds of every key share one pool (Throttle's
// doc). Key 0 takes seconds 0 to 4 one request each: its block of 1 entry
// moves to one of 2 at its second second, of 4 at its third, of 8 at its
// fifth; key 1, seen at second 5, takes the block of 1 key 0 left, and key
// 2, seen then too, a new one (16 entries in all), then at its second and
// third seconds the blocks of 2 and of 4 key 0 left. Each key's
// probability is its own: key 0 has 5 requests and no accept, p = 5/6;
// key 1 one request, p = 1/2; key 2 three (seconds 5, 6 and 7), p = 3/4,
// and when second 5 leaves key 2's window at 125s, 2/3.
func TestThrottlePool(t *testing.T) {
	th := newThrottle(t)
	s := time.Second
	for i := range 5 {
		th.Admit(time.Duration(i)*s, 0, 0.99)
	}
	th.Admit(5*s, 1, 0.99)
	th.Admit(5*s, 2, 0.99)
	th.Admit(6*s, 2, 0.99)
	th.Admit(7*s, 2, 0.99)
	require.Equal(t, 5.0/6, th.RejectProbability(7*s, 0))
	require.Equal(t, 1.0/2, th.RejectProbability(7*s, 1))
	require.Equal(t, 3.0/4, th.RejectProbability(7*s, 2))
	require.Equal(t, 2.0/3, th.RejectProbability(125*s, 2), "second 5 left key 2's window")
	require.Equal(t, 0.0, th.RejectProbability(125*s, 0), "seconds 0 to 4 left key 0's")
	now, most := th.Entries()
	require.Equal(t, int64(2+0+1), now, "key 2 holds seconds 6 and 7, key 0 none, key 1 second 5")
	require.Equal(t, 5, most)
	require.Equal(t, 3, th.Keys())
	require.Len(t, th.pool, 1+2+4+8+1, "blocks of 1, 2, 4 and 8 entries for key 0, and key 2's first")
	require.Equal(t, []throttleSec{{sec: 6, req: 1}, {sec: 7, req: 1}}, th.pool[3:5], "key 2's seconds, in the block of 4 key 0 left")
	require.Equal(t, throttleSec{sec: 5, req: 1}, th.pool[0], "key 1's second, in the block of 1 key 0 left")
}
