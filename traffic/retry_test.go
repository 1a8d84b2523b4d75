package traffic

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRetryWaitTable(t *testing.T) {
	const ms, sec = time.Millisecond, time.Second
	backoff := RetryPolicy{Policy: "backoff", Delay: 100 * ms, Factor: Fraction{2, 1}, Cap: time.Second, Jitter: "none", MaxAttempts: 10}
	for _, tc := range []struct {
		name       string
		p          RetryPolicy
		attempt    int
		retryAfter time.Duration
		wait       time.Duration
		ok         bool
	}{
		{"none gives up at once", RetryPolicy{Policy: "none"}, 1, sec, 0, false},
		{"zero value is none", RetryPolicy{}, 1, sec, 0, false},
		{"immediate retries at once", RetryPolicy{Policy: "immediate", MaxAttempts: 3}, 1, sec, 0, true},
		{"max-attempts counts the first try: attempt 3 of 3 was the last", RetryPolicy{Policy: "immediate", MaxAttempts: 3}, 3, sec, 0, false},
		{"fixed waits its delay whatever the limiter says", RetryPolicy{Policy: "fixed", Delay: 250 * ms}, 5, 7 * sec, 250 * ms, true},
		{"backoff: attempt 1 waits the base", backoff, 1, 0, 100 * ms, true},
		{"backoff: attempt 2 waits base*2", backoff, 2, 0, 200 * ms, true},
		{"backoff: attempt 4 waits base*2^3 = 800ms", backoff, 4, 0, 800 * ms, true},
		{"backoff: attempt 5 would be 1.6s, capped at 1s", backoff, 5, 0, time.Second, true},
		{"backoff: factor 3/2 exactly: 100ms*1.5*1.5 = 225ms", RetryPolicy{Policy: "backoff", Delay: 100 * ms, Factor: Fraction{3, 2}}, 3, 0, 225 * ms, true},
		{"backoff: factor 3/2 rounds down to a ns: 1ns*1.5 = 1ns", RetryPolicy{Policy: "backoff", Delay: 1, Factor: Fraction{3, 2}}, 2, 0, 1, true},
		{"backoff without cap saturates instead of overflowing", RetryPolicy{Policy: "backoff", Delay: sec, Factor: Fraction{1000, 1}}, 60, 0, time.Duration(1<<63-1) / 2, true},
		{"retry-after rounds 300ms up to the 1s resolution", RetryPolicy{Policy: "retry-after", Resolution: sec}, 1, 300 * ms, sec, true},
		{"retry-after of exactly 1s stays 1s", RetryPolicy{Policy: "retry-after", Resolution: sec}, 1, sec, sec, true},
		{"retry-after of 1s+1ns becomes 2s", RetryPolicy{Policy: "retry-after", Resolution: sec}, 1, sec + 1, 2 * sec, true},
		{"retry-after with resolution 0 is exact", RetryPolicy{Policy: "retry-after"}, 1, 123456789, 123456789, true},
		{"retry-after of never gives up", RetryPolicy{Policy: "retry-after", Resolution: sec}, 1, -1, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			wait, ok := tc.p.Wait(tc.attempt, tc.retryAfter, rng)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.wait, wait)
		})
	}
}

func TestRetryJitter(t *testing.T) {
	const ms = time.Millisecond
	// attempt 3 of a 100ms*2^k backoff: d = 400ms before jitter.
	const d = 400 * ms
	for _, tc := range []struct {
		jitter string
		lo, hi time.Duration
	}{
		{"full", 0, d},      // uniform in [0, d]
		{"equal", d / 2, d}, // d/2 + uniform in [0, d/2]
	} {
		p := RetryPolicy{Policy: "backoff", Delay: 100 * ms, Factor: Fraction{2, 1}, Jitter: tc.jitter}
		rng := rand.New(rand.NewPCG(7, 7))
		var sum time.Duration
		const n = 20000
		seen := map[time.Duration]bool{}
		for i := 0; i < n; i++ {
			w, ok := p.Wait(3, 0, rng)
			require.True(t, ok)
			require.GreaterOrEqual(t, w, tc.lo, tc.jitter)
			require.LessOrEqual(t, w, tc.hi, tc.jitter)
			sum += w
			seen[w] = true
		}
		mean := sum / n
		mid := (tc.lo + tc.hi) / 2
		require.InDelta(t, float64(mid), float64(mean), float64(d)/50, "%s jitter: mean %v, want about %v", tc.jitter, mean, mid)
		require.Greater(t, len(seen), n/2, "%s jitter spreads the waits", tc.jitter)
	}
	// The same seed gives the same waits.
	p := RetryPolicy{Policy: "backoff", Delay: 100 * ms, Factor: Fraction{2, 1}, Jitter: "full"}
	a, b := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
	for i := 1; i < 50; i++ {
		wa, _ := p.Wait(1+i%5, 0, a)
		wb, _ := p.Wait(1+i%5, 0, b)
		require.Equal(t, wa, wb)
	}
}

func TestRetryOn(t *testing.T) {
	all := []Cause{CauseReject, CauseShed, CauseTimeout, CauseError}
	require.Equal(t, all, Causes)
	for _, tc := range []struct {
		name string
		on   RetryOn
		want []Cause
		text string
	}{
		{"zero value is [reject], today's behaviour", 0, []Cause{CauseReject}, "[reject]"},
		{"reject alone is the zero value", RetryOnOf(CauseReject), []Cause{CauseReject}, "[reject]"},
		{"empty", RetryOnOf(), nil, "[]"},
		{"every cause", RetryOnOf(CauseError, CauseTimeout, CauseShed, CauseReject), all, "[reject, shed, timeout, error]"},
		{"timeouts only", RetryOnOf(CauseTimeout, CauseTimeout), []Cause{CauseTimeout}, "[timeout]"},
		{"reject and shed", RetryOnOf(CauseShed, CauseReject), []Cause{CauseReject, CauseShed}, "[reject, shed]"},
		{"an unknown cause is left out", RetryOnOf(Cause(7), CauseError), []Cause{CauseError}, "[error]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.on.Causes())
			require.Equal(t, tc.text, tc.on.String())
			for _, c := range all {
				require.Equal(t, slices.Contains(tc.want, c), tc.on.Retries(c), c.String())
			}
			require.False(t, tc.on.Retries(Cause(4)))
			// one representation per set
			require.Equal(t, tc.on, RetryOnOf(tc.want...))
		})
	}
	require.Equal(t, RetryOn(0), RetryOnOf(CauseReject))
	for _, c := range all {
		got, ok := ParseCause(c.String())
		require.True(t, ok)
		require.Equal(t, c, got)
	}
	_, ok := ParseCause("Reject")
	require.False(t, ok)
	require.Equal(t, "cause(9)", Cause(9).String())
}

// TestBudgets: gRPC's retry throttling by hand, max-tokens 3, token-ratio
// 0.5, in thousandths: a client starts full (3000) and may retry; a
// failure leaves 2000 (2*2000 > 3000: may retry); another leaves 1000 (no);
// a success 1500 (2*1500 = 3000, not above: no); another 2000 (yes). The
// count never passes 3000 nor goes below 0, and each client has its own.
func TestBudgets(t *testing.T) {
	require.Nil(t, NewBudgets(RetryBudget{}))
	b := NewBudgets(RetryBudget{MaxTokens: 3, RatioMilli: 500})
	require.True(t, b.Allows(7))
	b.Fail(7)
	require.True(t, b.Allows(7))
	b.Fail(7)
	require.False(t, b.Allows(7))
	b.Succeed(7)
	require.False(t, b.Allows(7))
	b.Succeed(7)
	require.True(t, b.Allows(7))
	require.True(t, b.Allows(3), "another client is full")
	for range 10 {
		b.Succeed(7)
	}
	b.Fail(7)
	b.Fail(7)
	require.False(t, b.Allows(7), "successes beyond full are not banked")
	for range 10 {
		b.Fail(7)
	}
	b.Succeed(7)
	b.Succeed(7)
	b.Succeed(7)
	require.False(t, b.Allows(7), "1500 after a floor of 0")
	b.Succeed(7)
	require.True(t, b.Allows(7))
}
