package algorithms

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTraefikMaxDelayAndTTL(t *testing.T) {
	// Traefik's New (pkg/middlewares/ratelimiter/rate_limiter.go):
	// rtl = average*1s/period requests per second; maxDelay =
	// 1s/(2*int(rtl)) for rtl >= 1, else 500ms; ttl = 1 + (1 for rtl >= 1,
	// int(1/rtl) for 0 < rtl < 1) seconds.
	for _, c := range []struct {
		average       int64
		period        time.Duration
		maxDelay, ttl time.Duration
	}{
		{10, time.Second, 50 * ms, 2 * time.Second},                 // 1s/20
		{100, time.Second, 5 * ms, 2 * time.Second},                 // 1s/200
		{3, time.Second, 166_666_666, 2 * time.Second},              // 1s/6, truncated to the ns
		{5, 2 * time.Second, 250 * ms, 2 * time.Second},             // 2.5/s: int(2.5) = 2, 1s/4
		{1, time.Second, 500 * ms, 2 * time.Second},                 // r = 1: 1s/2
		{1, 2 * time.Second, 500 * ms, 3 * time.Second},             // r = 0.5 < 1: 500ms; ttl 1 + 2
		{6, time.Minute, 500 * ms, 11 * time.Second},                // r = 0.1: ttl 1 + 10
		{7, time.Minute, 500 * ms, 9 * time.Second},                 // r = 0.11666: 1/r = 8.57, int 8
		{0, time.Second, 0, time.Second},                            // no limit
		{10, 0, 50 * ms, 2 * time.Second},                           // period 0 is Traefik's default 1s
		{600, time.Minute, 50 * ms, 2 * time.Second},                // 10/s
		{2_000_000_000, time.Second, 0, 2 * time.Second},            // 1s/4e9 truncates to 0
		{1000, 3 * time.Second, time.Second / 666, 2 * time.Second}, // 333.3/s: int 333, 1s/666
	} {
		require.Equal(t, c.maxDelay, TraefikMaxDelay(c.average, c.period), "maxDelay %d per %v", c.average, c.period)
		require.Equal(t, c.ttl, TraefikTTL(c.average, c.period), "ttl %d per %v", c.average, c.period)
	}
}

func TestXTimeRateTraefikRow(t *testing.T) {
	// A Traefik row: average 10, period 1s, burst 20 gives max-delay 50ms
	// (TraefikMaxDelay) and idle-reset 2s (TraefikTTL). One token per
	// 100ms; the waits below come out exact from the library's floats.
	p := bucketPolicy(10, time.Second, 20)
	p.MaxDelay = 50 * ms
	p.IdleReset = 2 * time.Second
	x := newBucketLimiter(t, newXTimeRateLimiter, p)
	runBucketRows(t, x, []bucketRow{
		{500 * ms, 0, 20, Accept, 0, 0}, // a new Limiter is full: 20 -> 0; its entry expires at second 0+2
		// 0 tokens: the next comes in 100ms > 50ms. Traefik reserves, sees
		// Delay() > maxDelay, cancels, 429; the row rejects, retry when
		// the wait is 50ms.
		{500 * ms, 0, 1, Reject, 0, 50 * ms},
		// 0.5 tokens: a wait of exactly 50ms is not > maxDelay: reserved
		// and delayed (Traefik sleeps it). -0.5 tokens.
		{550 * ms, 0, 1, Delay, 50 * ms, 0},
		{560 * ms, 0, 1, Reject, 0, 90 * ms}, // -0.4: 1.4 tokens missing, 140ms
		// 13.99 tokens: 601ms to wait. Rejected, but Traefik Sets the
		// entry before it reserves: it now expires at second 1+2 = 3s.
		{1999 * ms, 0, 20, Reject, 0, 551 * ms},
		// So at 2.5s the Limiter is still there (from the entry set at
		// 550ms alone it would have expired at 2s and come back full): 19
		// tokens, 1 missing.
		{2500 * ms, 0, 20, Reject, 0, 50 * ms},
		{3100 * ms, 0, 20, Accept, 0, 0}, // refilled to 20 (capped): 20 -> 0; expires at second 3+2 = 5s
		// At 5s the entry has expired: a new, full Limiter admits 20,
		// where the old one, refilled for 1.9s, held 19.
		{5 * time.Second, 0, 20, Accept, 0, 0},
		{5 * time.Second, 0, 1, Reject, 0, 50 * ms},
		{6900 * ms, 0, 20, Reject, 0, 50 * ms}, // 19 tokens: expires at 6+2 = 8s now
	})
}

func TestXTimeRateIdleResetParams(t *testing.T) {
	p := bucketPolicy(10, time.Second, 20)
	for _, d := range []time.Duration{-time.Second, 1500 * ms, time.Nanosecond} {
		p.IdleReset = d
		_, err := newXTimeRateLimiter(p)
		requireParamError(t, err, "idle-reset")
	}
	_, err := New("token-bucket", Params{Policy: p.Policy, IdleReset: time.Second})
	require.ErrorContains(t, err, "token-bucket takes no idle-reset (only x-time-rate)")
}

// TestDifferentialXTimeRateIdleReset holds the idle-reset row to the real
// library driven as Traefik drives it: a map of Limiters whose entries
// expire at (floor(last decision/1s) + ttl) seconds, a new Limiter for an
// expired or missing one, AllowN, and on a refusal the wait of ReserveN
// (cancelled at once) against max-delay.
func TestDifferentialXTimeRateIdleReset(t *testing.T) {
	for i, mp := range modelPolicies {
		for _, idle := range []time.Duration{time.Second, 2 * time.Second} {
			for _, d := range []time.Duration{0, 50 * ms} {
				p := mp.p
				p.MaxDelay, p.IdleReset = d, idle
				t.Run(fmt.Sprintf("%v/idle-%v/max-delay-%v", p.Policy, idle, d), func(t *testing.T) {
					x := newBucketLimiter(t, newXTimeRateLimiter, p)
					// A key's entry: the requests its Limiter admitted since it
					// was made, replayed into a new Limiter (xTimeRateTwin) for
					// each decision, so that a refusal leaves no trace.
					type entry struct {
						history []bucketArrival
						expires int64 // whole Unix seconds
					}
					lib := map[Key]*entry{}
					T := p.Per / time.Duration(p.Rate)
					// arrivals spread over gaps of up to 3 intervals, with
					// idle stretches that cross the ttl
					trace := bucketTrace(uint64(i+91), 800, 3, T, 3, mp.start)
					var resets int
					shift := time.Duration(0)
					for j, a := range trace {
						if j%50 == 49 {
							shift += idle - 700*ms + time.Duration(j%7)*200*ms // idle around the ttl
						}
						a.at += shift
						sec, _ := windowAt(a.at, time.Second)
						e := lib[a.key]
						if e != nil && e.expires <= sec {
							e, resets = nil, resets+1
						}
						if e == nil {
							e = &entry{}
							lib[a.key] = e
						}
						lim := xTimeRateTwin(p, e.history)
						e.expires = sec + int64(idle/time.Second) // Set on every request
						want := twinDecision(lim, a.at, a.cost, p.Burst, d)
						if want.Verdict != Reject {
							e.history = append(e.history, a)
						}
						got := x.Decide(a.at, a.key, a.cost)
						require.Equalf(t, want, got, "arrival %d: t=%v key=%d cost=%d", j, a.at, a.key, a.cost)
					}
					require.Positive(t, resets, "the trace should let Limiters expire")
				})
			}
		}
	}
}
