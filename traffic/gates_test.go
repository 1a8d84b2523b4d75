package traffic

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDecorrelatedJitter: Brooker's sleep = min(cap, uniform [base,
// 3*sleep]) from sleep = base. Every wait is within [base, cap] and within
// 3 times the one before; the k-th wait of a request is a function of its
// stream alone (drawn afresh from the stream's start), the same as a
// chain drawn by hand; the mean first wait is 2*base.
func TestDecorrelatedJitter(t *testing.T) {
	const ms = time.Millisecond
	p := RetryPolicy{Policy: "backoff", Delay: 5 * ms, Cap: 2 * time.Second, Jitter: "decorrelated", Factor: Fraction{2, 1}}
	rng := rand.New(rand.NewPCG(0, 0))
	var sum time.Duration
	const n = 4000
	for id := uint64(0); id < n; id++ {
		prev := p.Delay
		for k := 1; k <= 12; k++ {
			rng = rand.New(rand.NewPCG(1, id))
			w, ok := p.Wait(k, 0, rng)
			require.True(t, ok)
			require.GreaterOrEqual(t, w, p.Delay)
			require.LessOrEqual(t, w, min(p.Cap, 3*prev))
			if k == 1 {
				sum += w
			}
			// by hand, one draw after another on one stream
			hand := rand.New(rand.NewPCG(1, id))
			s := p.Delay
			for range k {
				s = min(p.Cap, p.Delay+time.Duration(hand.Int64N(int64(3*s-p.Delay)+1)))
			}
			require.Equal(t, s, w)
			prev = w
		}
	}
	require.InDelta(t, float64(10*ms), float64(sum/n), float64(ms)/5)
	// a sleep that reaches the cap stays within it: with cap = base, every
	// wait is the base
	q := RetryPolicy{Policy: "backoff", Delay: 5 * ms, Cap: 5 * ms, Jitter: "decorrelated"}
	for k := 1; k < 20; k++ {
		w, _ := q.Wait(k, 0, rand.New(rand.NewPCG(2, 3)))
		require.Equal(t, 5*ms, w)
	}
	// no cap and many attempts: no overflow
	r := RetryPolicy{Policy: "backoff", Delay: time.Second, Jitter: "decorrelated"}
	w, _ := r.Wait(200, 0, rand.New(rand.NewPCG(2, 3)))
	require.Positive(t, w)
}

// TestTokenBuckets by hand: capacity 2, a retry takes 1, a success gives
// back 0.25. A client starts full: two retries, then none; four
// successes give one retry back; the bucket never passes its capacity;
// each client has its own.
func TestTokenBuckets(t *testing.T) {
	require.Nil(t, NewTokenBuckets(RetryTokens{}))
	b := NewTokenBuckets(RetryTokens{CapacityMilli: 2000, CostMilli: 1000, RefillMilli: 250})
	b.Succeed(3) // full already
	for range 2 {
		require.True(t, b.Allows(3))
		b.Spend(3)
	}
	require.False(t, b.Allows(3))
	require.True(t, b.Allows(4), "each client has its own bucket")
	for range 3 {
		b.Succeed(3)
		require.False(t, b.Allows(3))
	}
	b.Succeed(3)
	require.True(t, b.Allows(3))
	for range 100 {
		b.Succeed(3)
	}
	b.Spend(3)
	b.Spend(3)
	require.False(t, b.Allows(3), "the bucket holds at most its capacity")
}

// TestBreakers walks one client's breaker through its states: window 4,
// threshold 0.5, open for 1s.
func TestBreakers(t *testing.T) {
	const s = time.Second
	require.Nil(t, NewBreakers(RetryBreaker{}))
	b := NewBreakers(RetryBreaker{Window: 4, ThresholdMilli: 500, OpenFor: s})
	require.True(t, b.Allows(1, 0))
	// closed: 2 failures of 3 outcomes do not open it (the window is not full)
	b.Outcome(1, 0, true)
	b.Outcome(1, 0, true)
	b.Outcome(1, 0, false)
	require.True(t, b.Allows(1, 0))
	// the 4th outcome fills the window: 2 of 4 failed, 50%: open at 1s
	b.Outcome(1, s, false)
	require.False(t, b.Allows(1, s))
	require.False(t, b.Allows(1, 2*s-1))
	require.True(t, b.Allows(7, s), "each client has its own breaker")
	// open: outcomes are not counted
	b.Outcome(1, 2*s-1, false)
	require.False(t, b.Allows(1, 2*s-1))
	// half-open from 2s: retries go; a failure opens it again at 2.5s
	require.True(t, b.Allows(1, 2*s))
	b.Outcome(1, 2*s+s/2, true)
	require.False(t, b.Allows(1, 3*s))
	require.True(t, b.Allows(1, 3*s+s/2))
	// a success closes it with the window emptied
	b.Outcome(1, 4*s, false)
	for _, failed := range []bool{true, false, false, false, true} {
		require.True(t, b.Allows(1, 4*s))
		b.Outcome(1, 4*s, failed) // at most 1 failure in the last 4
	}
	require.True(t, b.Allows(1, 4*s))
	b.Outcome(1, 5*s, true) // the last 4: ok ok fail fail
	require.False(t, b.Allows(1, 5*s))
	require.True(t, b.Allows(1, 6*s))
}
