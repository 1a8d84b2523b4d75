package algorithms

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// This file holds the token bucket's tests and the helpers shared by the
// tests of token-bucket, gcra, leaky-bucket, nginx and x-time-rate: scripted
// rows in the style of x/time/rate's rate_test.go, an exact big.Rat model of
// the formulas of docs/algorithms.md, and a probe that checks every retry_after is the
// shortest wait and every rejection leaves the key's state unchanged.

const ms = time.Millisecond

// bucketRow is one scripted request and the decision it must get.
type bucketRow struct {
	at    time.Duration
	key   Key
	cost  int64
	want  Verdict
	delay time.Duration // for Delay
	retry time.Duration // for Reject
}

// runBucketRows feeds rows to lim in order and checks every decision, then
// probes each rejection on a copy of the limiter (see probeReject).
func runBucketRows(t *testing.T, lim Limiter, rows []bucketRow) {
	t.Helper()
	for i, r := range rows {
		before, canProbe := bucketClone(lim)
		got := lim.Decide(r.at, r.key, r.cost)
		want := Decision{Verdict: r.want, Delay: r.delay, RetryAfter: r.retry}
		require.Equalf(t, want, got, "row %d: t=%v key=%d cost=%d", i, r.at, r.key, r.cost)
		if canProbe && got.Verdict == Reject {
			probeReject(t, before, r.at, r.key, r.cost, got.RetryAfter)
		}
	}
}

// newBucketLimiter builds a limiter and fails the test on error.
func newBucketLimiter(t *testing.T, newLim func(Params) (Limiter, error), p Params) Limiter {
	t.Helper()
	lim, err := newLim(p)
	require.NoError(t, err)
	return lim
}

// bucketPolicy is shorthand for Params with a policy and no options.
func bucketPolicy(rate int64, per time.Duration, burst int64) Params {
	return Params{Policy: Policy{Rate: rate, Per: per, Burst: burst}}
}

// bucketCloneKeyed copies a state table deeply (its closure is shared; it
// reads only the limiter's fixed configuration).
func bucketCloneKeyed[S any](k keyed[S]) keyed[S] {
	k.state = slices.Clone(k.state)
	k.flags = slices.Clone(k.flags)
	k.heap = k.heap.Clone()
	k.lines, k.prev = nil, slices.Clone(k.prev)
	return k
}

// bucketClone returns an independent copy of an exact limiter of this
// family; ok is false for the others (x-time-rate holds a Limiter with a
// mutex that must not be copied).
func bucketClone(l Limiter) (Limiter, bool) {
	switch v := l.(type) {
	case *TokenBucket:
		c := *v
		c.keyed = bucketCloneKeyed(v.keyed)
		return &c, true
	case *GCRA:
		c := *v
		c.keyed = bucketCloneKeyed(v.keyed)
		return &c, true
	case *LeakyBucket:
		c := *v
		c.keyed = bucketCloneKeyed(v.keyed)
		return &c, true
	case *Nginx:
		c := *v
		c.keyed = bucketCloneKeyed(v.keyed)
		return &c, true
	}
	return nil, false
}

// bucketKeyState returns key's state and liveness in an exact limiter at
// now (after releasing what is due, as Decide would), for checking that a
// rejection changes nothing.
func bucketKeyState(l Limiter, now time.Duration, key Key) any {
	type st struct {
		s    any
		live bool
	}
	switch v := l.(type) {
	case *TokenBucket:
		return st{*v.get(now, key), v.isLive(key)}
	case *GCRA:
		return st{*v.get(now, key), v.isLive(key)}
	case *LeakyBucket:
		return st{*v.get(now, key), v.isLive(key)}
	case *Nginx:
		return st{*v.get(now, key), v.isLive(key)}
	}
	return nil
}

// probeReject checks a rejection made by a copy `before` of the limiter
// taken just before it: deciding again leaves key's state as it was, the
// same request retry later is admitted, and (when retry > 1 ns) one
// nanosecond earlier it is still rejected: retry is the shortest wait.
func probeReject(t *testing.T, before Limiter, at time.Duration, key Key, cost int64, retry time.Duration) {
	t.Helper()
	st := bucketKeyState(before, at, key)
	early, _ := bucketClone(before)
	late, _ := bucketClone(before)
	require.Equal(t, Reject, before.Decide(at, key, cost).Verdict)
	require.Equal(t, st, bucketKeyState(before, at, key), "a rejection changed the state at t=%v key=%d", at, key)
	if retry == Never {
		return
	}
	require.GreaterOrEqual(t, retry, time.Duration(1))
	require.NotEqualf(t, Reject, late.Decide(at+retry, key, cost).Verdict,
		"t=%v key=%d cost=%d: not admitted after retry_after %v", at, key, cost, retry)
	if retry > 1 {
		require.Equalf(t, Reject, early.Decide(at+retry-1, key, cost).Verdict,
			"t=%v key=%d cost=%d: admitted before retry_after %v", at, key, cost, retry)
	}
}

// requireParamError checks that err is a *ParamError naming field.
func requireParamError(t *testing.T, err error, field string) {
	t.Helper()
	var pe *ParamError
	require.Truef(t, errors.As(err, &pe), "want a *ParamError for %s, got %v", field, err)
	require.Equal(t, field, pe.Field, "%v", err)
}

// ratModel is the docs/algorithms.md formula of gcra, leaky-bucket or
// token-bucket in exact rationals, never releasing a key: the reference the
// integer implementations must match decision for decision.
type ratModel struct {
	kind     string // "gcra", "leaky-bucket", "token-bucket"
	l, w, b  int64
	maxDelay int64
	tat      map[Key]*big.Rat // gcra, leaky-bucket
	tokens   map[Key]*big.Rat // token-bucket
	last     map[Key]int64
}

func newRatModel(kind string, p Params) *ratModel {
	return &ratModel{kind: kind, l: p.Rate, w: int64(p.Per), b: p.Burst, maxDelay: int64(p.MaxDelay),
		tat: map[Key]*big.Rat{}, tokens: map[Key]*big.Rat{}, last: map[Key]int64{}}
}

func ratInt(n int64) *big.Rat { return new(big.Rat).SetInt64(n) }

// ratCeil returns the least integer >= r.
func ratCeil(r *big.Rat) int64 {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

func (m *ratModel) decide(now time.Duration, key Key, cost int64) Decision {
	if cost > m.b {
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	t := ratInt(int64(now))
	T := big.NewRat(m.w, m.l)
	mul := func(n int64, r *big.Rat) *big.Rat { return new(big.Rat).Mul(ratInt(n), r) }
	switch m.kind {
	case "gcra", "leaky-bucket":
		tat, ok := m.tat[key]
		if !ok {
			tat = ratInt(0)
		}
		base := t
		if tat.Cmp(t) > 0 {
			base = tat
		}
		ahead := new(big.Rat).Sub(base, t)
		// excess = max(TAT,t) + c*T - t - B*T
		excess := new(big.Rat).Add(ahead, mul(cost-m.b, T))
		if excess.Cmp(ratInt(m.maxDelay)) > 0 {
			return Decision{Verdict: Reject, RetryAfter: time.Duration(ratCeil(new(big.Rat).Sub(excess, ratInt(m.maxDelay))))}
		}
		m.tat[key] = new(big.Rat).Add(base, mul(cost, T))
		delay := int64(0)
		if m.kind == "leaky-bucket" {
			delay = ratCeil(ahead)
		} else if excess.Sign() > 0 {
			delay = ratCeil(excess)
		}
		if delay > 0 {
			return Decision{Verdict: Delay, Delay: time.Duration(delay)}
		}
		return Decision{Verdict: Accept}
	default: // token-bucket
		tok, ok := m.tokens[key]
		if !ok {
			tok = ratInt(m.b)
		} else {
			// tokens = min(B, tokens + dt*L/W)
			tok = new(big.Rat).Add(tok, big.NewRat((int64(now)-m.last[key])*m.l, m.w))
			if tok.Cmp(ratInt(m.b)) > 0 {
				tok = ratInt(m.b)
			}
		}
		var wait *big.Rat
		if tok.Cmp(ratInt(cost)) < 0 {
			// (c - tokens) / (L/W)
			wait = new(big.Rat).Mul(new(big.Rat).Sub(ratInt(cost), tok), T)
			if wait.Cmp(ratInt(m.maxDelay)) > 0 {
				return Decision{Verdict: Reject, RetryAfter: time.Duration(ratCeil(new(big.Rat).Sub(wait, ratInt(m.maxDelay))))}
			}
		}
		m.tokens[key] = new(big.Rat).Sub(tok, ratInt(cost))
		m.last[key] = int64(now)
		if wait != nil {
			return Decision{Verdict: Delay, Delay: time.Duration(ratCeil(wait))}
		}
		return Decision{Verdict: Accept}
	}
}

// bucketTrace is a seeded random trace for several keys: mostly gaps around
// the policy's interval, some requests at the same instant, some long idle
// gaps (so keys are released and come back), costs 1..maxCost.
type bucketArrival struct {
	at   time.Duration
	key  Key
	cost int64
}

func bucketTrace(seed uint64, n int, keys int, interval time.Duration, maxCost int64, start time.Duration) []bucketArrival {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([]bucketArrival, 0, n)
	now := start
	for range n {
		switch r := rng.IntN(20); {
		case r < 4: // same instant
		case r == 19: // long idle gap
			now += time.Duration(rng.Int64N(int64(20*interval) + 1))
		default:
			now += time.Duration(rng.Int64N(int64(interval)/max(int64(keys)/2, 1) + 1))
		}
		out = append(out, bucketArrival{at: now, key: Key(rng.IntN(keys)), cost: 1 + rng.Int64N(maxCost)})
	}
	return out
}

// checkAgainstModel runs a trace through lim and the exact model and checks
// every decision, probing every rejection.
func checkAgainstModel(t *testing.T, kind string, lim Limiter, p Params, trace []bucketArrival) {
	t.Helper()
	model := newRatModel(kind, p)
	for i, a := range trace {
		// the model first, so that the limiter is copied only before the
		// rejections that are probed; compared before require, which costs
		// more than a decision
		want := model.decide(a.at, a.key, a.cost)
		var before Limiter
		if want.Verdict == Reject && i%7 == 0 {
			before, _ = bucketClone(lim)
		}
		if got := lim.Decide(a.at, a.key, a.cost); got != want {
			require.Equalf(t, want, got, "%s %v arrival %d: t=%v key=%d cost=%d", kind, p.Policy, i, a.at, a.key, a.cost)
		}
		if want.Verdict == Reject && i%7 == 0 {
			probeReject(t, before, a.at, a.key, a.cost, want.RetryAfter)
		}
	}
}

// modelPolicies are the policies the exact model is checked on: whole and
// fractional intervals, tiny and large bursts, absolute replay-like times.
var modelPolicies = []struct {
	p     Params
	start time.Duration
}{
	{bucketPolicy(4, time.Second, 4), 0},
	{bucketPolicy(3, time.Second, 3), 0},
	{bucketPolicy(3, time.Second, 1), 1_700_000_000_123_456_789},
	{bucketPolicy(7, time.Minute, 5), 0},
	{bucketPolicy(1000, time.Second, 50), 1_700_000_000_000_000_007},
	{bucketPolicy(9, 1300*time.Millisecond, 2), 0},
}

// runSteady checks that a steady stream right at the rate never drifts:
// after a burst of B at 0 (the bucket empty), request i = 1..n arrives at
// ceil(i*W/L), the first instant it conforms, and is admitted (wantDelay
// gives its leaky-bucket delay, nil for the policers); one nanosecond
// earlier the same request is rejected with retry_after exactly 1 ns. A
// limiter that rounded W/L either way would, within the run, reject one of
// the on-time requests or admit one of the early ones. B must be >= 2: the
// stream runs up to 1 ns behind the exact schedule, and with B = 1 a bucket
// that is full when such a late request comes drops the fraction (correctly:
// B = 1 means at least T apart, see the "exact thirds" rows).
func runSteady(t *testing.T, lim Limiter, p Params, n int64, wantDelay func(i, at int64) time.Duration) {
	t.Helper()
	L, W, B := p.Rate, int64(p.Per), p.Burst
	for range B {
		require.NotEqual(t, Reject, lim.Decide(0, 0, 1).Verdict)
	}
	for i := int64(1); i <= n; i++ {
		at := exactCeilDiv(i*W, L) // ceil(i*T)
		early := lim.Decide(time.Duration(at-1), 0, 1)
		require.Equalf(t, Decision{Verdict: Reject, RetryAfter: 1}, early, "request %d at %d-1 ns", i, at)
		got := lim.Decide(time.Duration(at), 0, 1)
		want := Decision{Verdict: Accept}
		if wantDelay != nil {
			if d := wantDelay(i, at); d > 0 {
				want = Decision{Verdict: Delay, Delay: d}
			}
		}
		require.Equalf(t, want, got, "request %d at %d ns", i, at)
	}
}

func TestTokenBucketSpecExample2(t *testing.T) {
	// docs/algorithms.md, worked example 2: L=4 per 1s, B=4. token-bucket admits the
	// same requests as leaky-bucket, with no delay.
	tb := newBucketLimiter(t, newTokenBucketLimiter, bucketPolicy(4, time.Second, 4))
	runBucketRows(t, tb, []bucketRow{
		{0, 0, 1, Accept, 0, 0},               // full bucket: 4 -> 3
		{0, 0, 1, Accept, 0, 0},               // 3 -> 2
		{0, 0, 1, Accept, 0, 0},               // 2 -> 1
		{0, 0, 1, Accept, 0, 0},               // 1 -> 0
		{0, 0, 1, Reject, 0, 250 * ms},        // empty: one token takes W/L = 250ms
		{100 * ms, 0, 1, Reject, 0, 150 * ms}, // 0.4 token: 0.6 more take 150ms
		{600 * ms, 0, 1, Accept, 0, 0},        // 2.4 tokens -> 1.4
		{1700 * ms, 0, 1, Accept, 0, 0},       // 1.4 + 4.4 capped at 4 -> 3
	})
}

func TestTokenBucketRows(t *testing.T) {
	t.Run("costs", func(t *testing.T) {
		tb := newBucketLimiter(t, newTokenBucketLimiter, bucketPolicy(10, time.Second, 10))
		runBucketRows(t, tb, []bucketRow{
			{0, 0, 4, Accept, 0, 0},                 // 10 -> 6
			{0, 0, 7, Reject, 0, 100 * ms},          // 6 < 7: one token at 10/s is 100ms
			{0, 0, 11, Reject, 0, Never},            // more than the bucket holds: never
			{0, 0, 6, Accept, 0, 0},                 // exactly the 6 left -> 0
			{250 * ms, 0, 3, Reject, 0, 50 * ms},    // 2.5 tokens: 0.5 more take 50ms
			{250 * ms, 0, 2, Accept, 0, 0},          // 2.5 -> 0.5
			{299 * ms, 0, 1, Reject, 0, 1 * ms},     // 0.99 token: 0.01 more take 1ms
			{300 * ms, 0, 1, Accept, 0, 0},          // exactly 1 token: the boundary admits
			{300 * ms, 0, 10, Reject, 0, 1000 * ms}, // empty: a full bucket takes W
			{1300 * ms, 0, 10, Accept, 0, 0},        // full again after W
		})
	})
	t.Run("keys", func(t *testing.T) {
		tb := newBucketLimiter(t, newTokenBucketLimiter, bucketPolicy(2, time.Second, 2))
		runBucketRows(t, tb, []bucketRow{
			{0, 0, 2, Accept, 0, 0},               // key 0 empties its bucket
			{0, 1, 1, Accept, 0, 0},               // key 1 has its own, full bucket
			{0, 0, 1, Reject, 0, 500 * ms},        // key 0: one token takes W/L = 500ms
			{0, 1, 1, Accept, 0, 0},               // key 1: its second token
			{0, 7, 2, Accept, 0, 0},               // a sparse key id grows the table
			{400 * ms, 1, 1, Reject, 0, 100 * ms}, // key 1 has 0.8 token
			{500 * ms, 0, 1, Accept, 0, 0},        // key 0 has exactly 1
		})
	})
	t.Run("exact thirds", func(t *testing.T) {
		// L=3 per 1s, B=1: T = 333333333 1/3 ns, never rounded.
		tb := newBucketLimiter(t, newTokenBucketLimiter, bucketPolicy(3, time.Second, 1))
		runBucketRows(t, tb, []bucketRow{
			{0, 0, 1, Accept, 0, 0},              // 1 -> 0
			{333333333, 0, 1, Reject, 0, 1},      // 0.999999999 token: 1/3 ns short, rounded up to 1
			{333333334, 0, 1, Accept, 0, 0},      // 1.000000002 capped at B=1 -> 0
			{666666667, 0, 1, Reject, 0, 1},      // 0.999999999 again: B=1 means T apart, the cap kept no fraction
			{666666668, 0, 1, Accept, 0, 0},      // 1.000000002 capped -> 0
			{999999999, 0, 1, Reject, 0, 3},      // 0.999999993: 7e-9 short at 3e-9/ns = 2 1/3 ns, rounded up
			{1000000002, 0, 1, Accept, 0, 0},     // 1.000000002 capped -> 0
			{1000000002, 0, 2, Reject, 0, Never}, // cost 2 > B = 1
		})
	})
	t.Run("max-delay", func(t *testing.T) {
		p := bucketPolicy(10, time.Second, 2)
		p.MaxDelay = 150 * ms
		tb := newBucketLimiter(t, newTokenBucketLimiter, p)
		runBucketRows(t, tb, []bucketRow{
			{0, 0, 1, Accept, 0, 0},              // 2 -> 1
			{0, 0, 1, Accept, 0, 0},              // 1 -> 0
			{0, 0, 1, Delay, 100 * ms, 0},        // 0 -> -1: its token comes in 100ms
			{0, 0, 1, Reject, 0, 50 * ms},        // would wait 200ms > 150: retry when the wait is 150
			{50 * ms, 0, 1, Delay, 150 * ms, 0},  // -0.5: waits exactly max-delay -> -1.5
			{50 * ms, 0, 1, Reject, 0, 100 * ms}, // would wait 250ms
			{50 * ms, 0, 3, Reject, 0, Never},    // cost 3 > B even with shaping
			{2000 * ms, 0, 2, Accept, 0, 0},      // refilled to full, debt paid
		})
	})
}

func TestTokenBucketSteadyNoDrift(t *testing.T) {
	for _, p := range []Params{
		bucketPolicy(3, time.Second, 3), // T = 333333333 1/3 ns, for an hour
		bucketPolicy(3, time.Second, 2), // the least burst that can carry a fraction (see runSteady)
		bucketPolicy(7, time.Minute, 7), // T = 8571428571 3/7 ns, for a day
		bucketPolicy(7, time.Minute, 2),
	} {
		n := 3600 * p.Rate * int64(time.Second) / int64(p.Per) // an hour of requests
		if p.Per == time.Minute {
			n *= 24
		}
		runSteady(t, newBucketLimiter(t, newTokenBucketLimiter, p), p, n, nil)
	}
}

func TestTokenBucketMatchesModel(t *testing.T) {
	for i, mp := range modelPolicies {
		for _, d := range []time.Duration{0, 700 * ms} {
			p := mp.p
			p.MaxDelay = d
			lim := newBucketLimiter(t, newTokenBucketLimiter, p)
			T := p.Per / time.Duration(p.Rate)
			checkAgainstModel(t, "token-bucket", lim, p, bucketTrace(uint64(i+1), 1500, 3, T, 3, mp.start))
		}
	}
}

func TestTokenBucketRelease(t *testing.T) {
	tb := newBucketLimiter(t, newTokenBucketLimiter, bucketPolicy(3, time.Second, 3)).(*TokenBucket)
	tb.Decide(0, 0, 2)      // key 0: 1 token left, full again at 2T = 666666666 2/3 ns
	tb.Decide(500*ms, 1, 1) // key 1: full again at 500ms + T
	keys, bytes := tb.liveAt(666666666)
	require.Equal(t, [2]int64{2, 32}, [2]int64{keys, bytes}) // key 0 still 2/3 ns short
	keys, bytes = tb.liveAt(666666667)
	require.Equal(t, [2]int64{1, 16}, [2]int64{keys, bytes}) // key 0 full: released
	keys, _ = tb.liveAt(500*ms + 333333333)
	require.Equal(t, int64(1), keys) // key 1 is 1/3 ns short
	keys, _ = tb.liveAt(500*ms + 333333334)
	require.Zero(t, keys) // key 1 full: released
	require.Equal(t, Memory{BytesPerKeyMax: 16, KeysPeak: 2, BytesPeak: 32}, tb.Memory())
	// A released key behaves as a fresh one.
	runBucketRows(t, tb, []bucketRow{
		{time.Second, 0, 3, Accept, 0, 0},
		{time.Second, 0, 1, Reject, 0, 333333334},
	})
}

func TestTokenBucketParams(t *testing.T) {
	p := bucketPolicy(10, time.Second, 10)
	p.MaxDelay = -1
	_, err := newTokenBucketLimiter(p)
	requireParamError(t, err, "max-delay")

	// The debt max-delay allows, D*L/W tokens scaled by W/gcd(L,W), must
	// stay exact: 3 per 1ns refills 3 units per ns, so D <= maxExact/3.
	p = bucketPolicy(3, time.Nanosecond, 1)
	p.MaxDelay = maxExact/3 + 1
	_, err = newTokenBucketLimiter(p)
	requireParamError(t, err, "max-delay")
	p.MaxDelay = maxExact / 3
	_, err = newTokenBucketLimiter(p)
	require.NoError(t, err)

	for field, set := range map[string]func(*Params){
		"count-rejected": func(p *Params) { p.CountRejected = true },
		"burst":          func(p *Params) { p.NginxBurst, p.NginxBurstSet = 3, true },
		"nodelay":        func(p *Params) { p.Nodelay = true },
		"delay":          func(p *Params) { p.NginxDelay = 2 },
		"max":            func(p *Params) { p.Max = 4 },
	} {
		p := bucketPolicy(10, time.Second, 10)
		set(&p)
		_, err := newTokenBucketLimiter(p)
		requireParamError(t, err, field)
	}
	_, err = newTokenBucketLimiter(bucketPolicy(0, time.Second, 1))
	requireParamError(t, err, "rate")
}

func TestTokenBucketDiscreteRefill(t *testing.T) {
	const ms = time.Millisecond
	// envoy's local rate limiter before 1.31 with max_tokens 3,
	// tokens_per_fill 2, fill_interval 100ms (local_ratelimit_impl.cc:
	// the bucket starts at max_tokens; onFillTimer adds tokens_per_fill up
	// to max_tokens; requestAllowed takes one). ratesim's ticks are at
	// every multiple of 100ms from time 0. Rate and per are not read.
	p := Params{Policy: Policy{Rate: 20, Per: time.Second, Burst: 3}, FillInterval: 100 * ms, TokensPerFill: 2}
	l := mustLimiter(t, "token-bucket", p)
	checkRows(t, l, []decideRow{
		{at: 10 * ms, cost: 1, want: Accept},                   // starts full: 3 -> 2
		{at: 10 * ms, cost: 2, want: Accept},                   // 2 -> 0
		{at: 10 * ms, cost: 1, want: Reject, retry: 90 * ms},   // the tick at 100ms brings 2
		{at: 99 * ms, cost: 1, want: Reject, retry: 1 * ms},    // no refill between ticks
		{at: 100 * ms, cost: 2, want: Accept},                  // the tick at 100ms comes first: 0+2 -> 0
		{at: 100 * ms, cost: 3, want: Reject, retry: 200 * ms}, // 3 missing: ceil(3/2) = 2 ticks, at 300ms
		{at: 150 * ms, cost: 4, want: Reject, retry: Never},    // 4 > max_tokens
		{at: 650 * ms, cost: 3, want: Accept},                  // 5 ticks (200..600ms) capped at 3: 3 -> 0
		{at: 700*ms - 1, cost: 1, want: Reject, retry: 1},      // the last ns before the tick at 700ms
		{at: 700 * ms, key: 1, cost: 3, want: Accept},          // key 1 starts full, whatever the tick
		{at: 700 * ms, cost: 1, want: Accept},                  // key 0: 0+2 at 700ms -> 1
	})

	// The bucket refills at the ticks, not 100ms after the key's first
	// request: a key emptied at 95ms gets 2 tokens 5ms later.
	l = mustLimiter(t, "token-bucket", p)
	checkRows(t, l, []decideRow{
		{at: 95 * ms, cost: 3, want: Accept},
		{at: 96 * ms, cost: 2, want: Reject, retry: 4 * ms},
		{at: 100 * ms, cost: 2, want: Accept},
	})

	// max-delay with discrete refill: a request short of tokens waits for
	// the tick that brings them, when that is within max-delay.
	p.MaxDelay = 150 * ms
	l = mustLimiter(t, "token-bucket", p)
	checkRows(t, l, []decideRow{
		{at: 20 * ms, cost: 3, want: Accept},                  // 3 -> 0
		{at: 20 * ms, cost: 2, want: Delay, delay: 80 * ms},   // the tick at 100ms: debt 2
		{at: 20 * ms, cost: 1, want: Reject, retry: 30 * ms},  // 3 missing: 2 ticks, at 200ms: 180ms > 150ms by 30ms
		{at: 50 * ms, cost: 1, want: Delay, delay: 150 * ms},  // at 50ms the tick at 200ms is 150ms away
		{at: 400 * ms, cost: 3, want: Accept},                 // -3 + 4 ticks of 2 (100..400ms) = 5, capped at 3
		{at: 400 * ms, cost: 1, want: Delay, delay: 100 * ms}, // empty: the tick at 500ms
		{at: 400 * ms, cost: 3, want: Reject, retry: 50 * ms}, // debt 1, needs 4: 2 ticks, at 600ms: 200ms > 150ms
	})
}

func TestTokenBucketDiscreteRelease(t *testing.T) {
	const ms = time.Millisecond
	// Released at the tick that fills the bucket: 3 taken at 30ms, 2 come
	// at 100ms and 1 more at 200ms (capped at 3).
	l := mustLimiter(t, "token-bucket", Params{Policy: Policy{Rate: 2, Per: 100 * ms, Burst: 3}, FillInterval: 100 * ms, TokensPerFill: 2})
	l.Decide(30*ms, 0, 3)
	requireLive(t, l.(stateHolder), 200*ms-1, 1, 16)
	requireLive(t, l.(stateHolder), 200*ms, 0, 0)
}

func TestTokenBucketDiscreteOptions(t *testing.T) {
	pol := Policy{Rate: 10, Per: time.Second, Burst: 10}
	for _, c := range []struct {
		p     Params
		field string
	}{
		{Params{Policy: pol, FillInterval: time.Second}, "tokens-per-fill"},
		{Params{Policy: pol, TokensPerFill: 3}, "fill-interval"},
		{Params{Policy: pol, FillInterval: -time.Second, TokensPerFill: 1}, "fill-interval"},
		{Params{Policy: pol, FillInterval: time.Second, TokensPerFill: -1}, "tokens-per-fill"},
		{Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 1 << 40}, FillInterval: time.Hour, TokensPerFill: 1}, "burst"},
	} {
		_, err := New("token-bucket", c.p)
		var pe *ParamError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, c.field, pe.Field, "%v", err)
	}
	_, err := New("gcra", Params{Policy: pol, FillInterval: time.Second, TokensPerFill: 1})
	require.ErrorContains(t, err, "gcra takes no fill-interval (only token-bucket)")
}

func TestAllOfDiscreteBuckets(t *testing.T) {
	const ms = time.Millisecond
	// envoy's local_ratelimit with a descriptor bucket and the default
	// bucket, before 1.31: consumed in order (in-order), each refilled at
	// its own ticks. Descriptor: max 2, 1 per 200ms; default: max 3, 3 per
	// 1s.
	desc := Params{Policy: Policy{Rate: 1, Per: 200 * ms, Burst: 2}, FillInterval: 200 * ms, TokensPerFill: 1}
	def := Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 3}, FillInterval: time.Second, TokensPerFill: 3}
	l := mustLimiter(t, "all-of", Params{Policy: def.Policy, Commit: InOrder,
		Members: []Member{{Name: "token-bucket", Params: desc}, {Name: "token-bucket", Params: def}}})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 1, want: Accept},                         // desc 2 -> 1, default 3 -> 2
		{at: 0, cost: 1, want: Accept},                         // desc 0, default 1
		{at: 0, cost: 1, want: Reject, retry: 200 * ms},        // desc empty until its tick at 200ms
		{at: 200 * ms, cost: 1, want: Accept},                  // desc 1 -> 0, default 1 -> 0
		{at: 400 * ms, cost: 1, want: Reject, retry: 600 * ms}, // desc 1 -> 0 taken (no refund), default empty until 1s
		{at: 600 * ms, cost: 1, want: Reject, retry: 400 * ms}, // desc 1 -> 0 again, default still empty
		{at: time.Second, cost: 1, want: Accept},               // ticks at 800ms and 1s: desc 2 -> 1; default 3 -> 2
	})
}
