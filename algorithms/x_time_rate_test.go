package algorithms

import (
	"fmt"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

func TestXTimeRateSpecExample2(t *testing.T) {
	// docs/algorithms.md, worked example 2 (L=4 per 1s, B=4) on the real library: it
	// admits what token-bucket admits. The waits here are exact in float64
	// or round to the exact value.
	x := newBucketLimiter(t, newXTimeRateLimiter, bucketPolicy(4, time.Second, 4))
	runBucketRows(t, x, []bucketRow{
		{0, 0, 1, Accept, 0, 0},               // NewLimiter starts full: 4 -> 3
		{0, 0, 1, Accept, 0, 0},               // 2
		{0, 0, 1, Accept, 0, 0},               // 1
		{0, 0, 1, Accept, 0, 0},               // 0
		{0, 0, 1, Reject, 0, 250 * ms},        // 1 token / 4 per s = 0.25 s
		{100 * ms, 0, 1, Reject, 0, 150 * ms}, // 0.4 token: 0.6/4 s, 149999999.99999999 rounds to 1.5e8 in float64
		{600 * ms, 0, 1, Accept, 0, 0},        // 2.4 tokens
		{1700 * ms, 0, 1, Accept, 0, 0},       // capped at 4
		{1700 * ms, 0, 5, Reject, 0, Never},   // n > burst: the library's reservation is not OK
	})
}

func TestXTimeRateMaxDelay(t *testing.T) {
	p := bucketPolicy(10, time.Second, 2)
	p.MaxDelay = 150 * ms
	x := newBucketLimiter(t, newXTimeRateLimiter, p)
	runBucketRows(t, x, []bucketRow{
		{0, 0, 1, Accept, 0, 0},       // 2 -> 1
		{0, 0, 1, Accept, 0, 0},       // 1 -> 0
		{0, 0, 1, Delay, 100 * ms, 0}, // ReserveN: 0 -> -1, DelayFrom = 100ms
		{0, 0, 1, Reject, 0, 50 * ms}, // would wait 200ms > 150: not reserved; retry when the wait is 150
		{0, 0, 3, Reject, 0, Never},   // n > burst
	})
}

// twinDecision is what the library limiter lim decides of a request of
// cost at ns on the virtual clock, as the x-time-rate row reads it with
// max-delay d: AllowN when nothing may wait; a cost over the burst never
// passes; else the reservation's delay, over d a rejection that says when
// it would pass (AllowN refuses without touching lim).
func twinDecision(lim *rate.Limiter, ns time.Duration, cost, burst int64, d time.Duration) Decision {
	at := time.Unix(0, int64(ns))
	switch {
	case d == 0 && lim.AllowN(at, int(cost)):
		return Decision{Verdict: Accept}
	case cost > burst:
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	w := lim.ReserveN(at, int(cost)).DelayFrom(at)
	switch {
	case w > d:
		return Decision{Verdict: Reject, RetryAfter: w - d}
	case w > 0:
		return Decision{Verdict: Delay, Delay: w}
	}
	return Decision{Verdict: Accept}
}

// xTimeRateTwin replays a key's admitted requests into a new library
// Limiter: the same calls in the same order give the same float64 state, bit
// for bit, so it answers as the row's own Limiter would.
func xTimeRateTwin(p Params, history []bucketArrival) *rate.Limiter {
	lim := rate.NewLimiter(rate.Limit(float64(p.Rate)/p.Per.Seconds()), int(p.Burst))
	for _, a := range history {
		lim.ReserveN(time.Unix(0, int64(a.at)), int(a.cost))
	}
	return lim
}

func TestXTimeRateIsTheLibrary(t *testing.T) {
	// Every decision is the library's: AllowN's verdict, and on a reject
	// ReserveN(t,c).DelayFrom(t) (minus max-delay) to the nanosecond, asked
	// of a twin Limiter with the same history. This checks both that the
	// row never touches the Limiter on a reject and that its non-mutating
	// wait equals the library's reservation.
	for i, mp := range modelPolicies {
		for _, d := range []time.Duration{0, 500 * ms} {
			p := mp.p
			p.MaxDelay = d
			x := newBucketLimiter(t, newXTimeRateLimiter, p)
			T := p.Per / time.Duration(p.Rate)
			history := map[Key][]bucketArrival{}
			for j, a := range bucketTrace(uint64(i+51), 600, 3, T, 3, mp.start) {
				got := x.Decide(a.at, a.key, a.cost)
				twin := xTimeRateTwin(p, history[a.key])
				want := twinDecision(twin, a.at, a.cost, p.Burst, d)
				require.Equalf(t, want, got, "%v max-delay %v arrival %d: t=%v key=%d cost=%d", p.Policy, d, j, a.at, a.key, a.cost)
				if got.Verdict != Reject {
					history[a.key] = append(history[a.key], a)
				}
				// The release time kept since the last admission is the
				// one the library gives now.
				if st := &x.(*XTimeRate).state[a.key]; st.lim != nil && st.fresh != xTimeRateUnknown {
					require.Equal(t, x.(*XTimeRate).releaseAt(st), st.fresh)
				}
			}
		}
	}
}

func TestXTimeRateRelease(t *testing.T) {
	x := newBucketLimiter(t, newXTimeRateLimiter, bucketPolicy(10, time.Second, 10)).(*XTimeRate)
	x.Decide(0, 3, 1) // 9 tokens: full again about 100ms later
	s := &x.state[3]
	fresh := x.freshAt(s)
	require.InDelta(t, float64(100*ms), float64(fresh), float64(time.Microsecond))
	// The release instant is the first at which the library's own float
	// refill reaches B.
	require.GreaterOrEqual(t, s.lim.TokensAt(time.Unix(0, int64(fresh))), 10.0)
	require.Less(t, s.lim.TokensAt(time.Unix(0, int64(fresh-1))), 10.0)
	size := int64(unsafe.Sizeof(rate.Limiter{}))
	keys, bytes := x.liveAt(fresh - 1)
	require.Equal(t, [2]int64{1, size}, [2]int64{keys, bytes})
	keys, _ = x.liveAt(fresh)
	require.Zero(t, keys)
	require.Equal(t, Memory{BytesPerKeyMax: size, KeysPeak: 1, BytesPeak: size}, x.Memory())
	// A released key gets a new, full Limiter.
	require.Equal(t, Decision{Verdict: Accept}, x.Decide(time.Second, 3, 10))
}

// TestXTimeRateFreshKept: the release time is computed with the library
// when a key becomes live, kept until the next admission, and computed
// again (by the library, from the new state) when the key is rechecked.
func TestXTimeRateFreshKept(t *testing.T) {
	x := newBucketLimiter(t, newXTimeRateLimiter, bucketPolicy(10, time.Second, 10)).(*XTimeRate)
	x.Decide(0, 3, 1) // key 3 becomes live: 9 tokens, full about 100ms later
	s := &x.state[3]
	first := s.fresh
	require.Equal(t, x.releaseAt(s), first)
	require.InDelta(t, float64(100*ms), float64(first), float64(time.Microsecond))
	// A rejection changes nothing: cost 11 > B.
	x.Decide(10*ms, 3, 11)
	require.Equal(t, first, s.fresh)
	// An admission at 50ms leaves 9.5 - 1 = 8.5 tokens: the kept time is
	// forgotten, and the recheck at the first release time finds about
	// 50ms + 150ms.
	x.Decide(50*ms, 3, 1)
	require.Equal(t, xTimeRateUnknown, s.fresh)
	keys, _ := x.liveAt(first)
	require.Equal(t, int64(1), keys)
	require.Equal(t, x.releaseAt(s), s.fresh)
	require.InDelta(t, float64(200*ms), float64(s.fresh), float64(time.Microsecond))
	keys, _ = x.liveAt(s.fresh)
	require.Zero(t, keys)
}

func TestXTimeRateParams(t *testing.T) {
	p := bucketPolicy(10, time.Second, 10)
	p.MaxDelay = -1
	_, err := newXTimeRateLimiter(p)
	requireParamError(t, err, "max-delay")
	p = bucketPolicy(10, time.Second, 10)
	p.CountRejected = true
	_, err = newXTimeRateLimiter(p)
	requireParamError(t, err, "count-rejected")
	info, ok := Lookup("x-time-rate")
	require.True(t, ok)
	require.False(t, info.Exact)
}

// TestXTimeRateReusedLimiter: a released key's Limiter serves the next key
// that becomes live, reset to exactly the value of a new Limiter, so it
// answers and changes as one would.
func TestXTimeRateReusedLimiter(t *testing.T) {
	p := bucketPolicy(10, time.Second, 10)
	x := newBucketLimiter(t, newXTimeRateLimiter, p).(*XTimeRate)
	x.Decide(0, 3, 1) // 9 tokens, full again about 100ms later
	lim := x.state[3].lim
	keys, _ := x.liveAt(time.Second)
	require.Zero(t, keys, "key 3 released")
	require.Equal(t, []*rate.Limiter{lim}, x.free, "its Limiter kept")
	// Key 5 at 1s, cost 4: it gets key 3's Limiter, which held 9 tokens
	// and last = lastEvent = 0 when released. After the reset and the
	// admission it holds what a new Limiter holds after AllowN(1s, 4):
	// 10-4 = 6 tokens, last = lastEvent = 1s, every field (compared by
	// value, the mutex included).
	require.Equal(t, Decision{Verdict: Accept}, x.Decide(time.Second, 5, 4))
	require.Same(t, lim, x.state[5].lim)
	require.Empty(t, x.free)
	want := rate.NewLimiter(rate.Limit(10), 10)
	require.True(t, want.AllowN(time.Unix(1, 0), 4))
	require.Equal(t, want, lim)
	// A second key live at once gets a new Limiter.
	require.Equal(t, Decision{Verdict: Accept}, x.Decide(time.Second, 3, 1))
	require.NotSame(t, lim, x.state[3].lim)
}

// Two Traefik rateLimit middlewares on one router, A by client address and
// B by a header, both average 1 per 1s, burst 1 (max-delay 500ms), are a
// chain, not limits decided at one instant: A's ServeHTTP reserves,
// sleeps its delay, and only then calls B, which reserves at t+dA
// (pkg/middlewares/ratelimiter/rate_limiter.go, ServeHTTP). So no all-of
// commit models them: every all-of member decides at the request's
// instant, and the request waits the largest delay. Hand-computed on the
// library itself, requests (client, header) at 0 (X, G), 300ms (Y, H) and
// 700ms (X, H):
//   - at 700ms A(X) holds 0.7 tokens: it waits 300ms <= 500ms;
//   - Traefik asks B(H) at 1000ms, where it holds 0.7: it waits 300ms,
//     admitted after 600ms in all;
//   - asked at 700ms, B(H) holds 0.4 and would wait 600ms > 500ms:
//     rejected, the verdict an all-of (in-order or any other) gives.
func TestTraefikChainIsNotOneInstant(t *testing.T) {
	maxDelay := TraefikMaxDelay(1, time.Second)
	if maxDelay != 500*time.Millisecond {
		t.Fatalf("max-delay %v", maxDelay)
	}
	at := func(d time.Duration) time.Time { return time.Unix(0, int64(d)) }
	type req struct {
		t          time.Duration
		client, hd string
	}
	reqs := []req{{0, "X", "G"}, {300 * ms, "Y", "H"}, {700 * ms, "X", "H"}}
	// decide runs the requests through A then B; chained says whether B
	// reserves after A's delay (Traefik) or at the request's instant.
	decide := func(chained bool) []string {
		a, b := map[string]*rate.Limiter{}, map[string]*rate.Limiter{}
		lim := func(m map[string]*rate.Limiter, k string) *rate.Limiter {
			if m[k] == nil {
				m[k] = rate.NewLimiter(1, 1)
			}
			return m[k]
		}
		var out []string
		for _, r := range reqs {
			ra := lim(a, r.client).ReserveN(at(r.t), 1)
			da := ra.DelayFrom(at(r.t))
			if da > maxDelay {
				ra.CancelAt(at(r.t))
				out = append(out, "429 by A")
				continue
			}
			tb := r.t
			if chained {
				tb += da
			}
			rb := lim(b, r.hd).ReserveN(at(tb), 1)
			db := rb.DelayFrom(at(tb))
			if db > maxDelay {
				rb.CancelAt(at(tb))
				out = append(out, "429 by B")
				continue
			}
			if chained {
				out = append(out, fmt.Sprintf("200 after %v", da+db))
			} else {
				out = append(out, fmt.Sprintf("200 after %v", max(da, db)))
			}
		}
		return out
	}
	if got, want := decide(true), []string{"200 after 0s", "200 after 0s", "200 after 600ms"}; !slices.Equal(got, want) {
		t.Errorf("Traefik's chain: got %q, want %q", got, want)
	}
	if got, want := decide(false), []string{"200 after 0s", "200 after 0s", "429 by B"}; !slices.Equal(got, want) {
		t.Errorf("at one instant: got %q, want %q", got, want)
	}
}
