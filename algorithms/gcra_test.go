package algorithms

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestGCRASpecExample2(t *testing.T) {
	// docs/algorithms.md, worked example 2: L=4 per 1s (T = 250ms), B=4: gcra admits
	// the same requests as leaky-bucket, with no delay.
	g := newBucketLimiter(t, newGCRALimiter, bucketPolicy(4, time.Second, 4))
	runBucketRows(t, g, []bucketRow{
		{0, 0, 1, Accept, 0, 0},               // TAT 0 -> 250ms
		{0, 0, 1, Accept, 0, 0},               // -> 500ms
		{0, 0, 1, Accept, 0, 0},               // -> 750ms
		{0, 0, 1, Accept, 0, 0},               // -> 1000ms: 1000 + 0 - 0 <= B*T exactly
		{0, 0, 1, Reject, 0, 250 * ms},        // 1000 + 250 - 1000 - 0 = 250ms
		{100 * ms, 0, 1, Reject, 0, 150 * ms}, // 1000 + 250 - 1000 - 100 = 150ms
		{600 * ms, 0, 1, Accept, 0, 0},        // 1000 + 250 - 600 = 650 <= 1000: TAT -> 1250
		{1700 * ms, 0, 1, Accept, 0, 0},       // TAT in the past: from 1700
	})
}

func TestGCRARows(t *testing.T) {
	t.Run("costs", func(t *testing.T) {
		g := newBucketLimiter(t, newGCRALimiter, bucketPolicy(10, time.Second, 10))
		runBucketRows(t, g, []bucketRow{
			{0, 0, 4, Accept, 0, 0},               // TAT -> 400ms
			{0, 0, 7, Reject, 0, 100 * ms},        // 400 + 700 - 1000 = 100ms
			{0, 0, 11, Reject, 0, Never},          // c > B: never
			{0, 0, 6, Accept, 0, 0},               // 400 + 600 = 1000 <= 1000: TAT -> 1000ms
			{250 * ms, 0, 3, Reject, 0, 50 * ms},  // 1000 + 300 - 1000 - 250 = 50ms
			{300 * ms, 0, 3, Accept, 0, 0},        // exactly on the boundary: TAT -> 1300ms
			{300 * ms, 1, 10, Accept, 0, 0},       // another key: its own TAT
			{300 * ms, 1, 1, Reject, 0, 100 * ms}, // key 1 TAT 1300: 1300 + 100 - 1000 - 300
			{1299 * ms, 0, 10, Reject, 0, 1 * ms}, // 1300 + 1000 - 1000 - 1299 = 1ms
			{1300 * ms, 0, 10, Accept, 0, 0},      // key 0 at TAT: a full burst again
		})
	})
	t.Run("exact thirds, B=1", func(t *testing.T) {
		// L=3 per 1s: T = 333333333 1/3 ns. With B=1 requests must be at
		// least T apart; TAT keeps the third exactly.
		g := newBucketLimiter(t, newGCRALimiter, bucketPolicy(3, time.Second, 1))
		runBucketRows(t, g, []bucketRow{
			{0, 0, 1, Accept, 0, 0},              // TAT -> T
			{333333333, 0, 1, Reject, 0, 1},      // 1/3 ns early, rounded up to 1
			{333333334, 0, 1, Accept, 0, 0},      // 2/3 ns late: TAT -> 333333334 + T = 666666667 1/3
			{666666667, 0, 1, Reject, 0, 1},      // ceil(2T), but only 333333333 ns after the last: 1/3 ns early
			{666666668, 0, 1, Accept, 0, 0},      // TAT -> 1000000001 1/3
			{1000000001, 0, 1, Reject, 0, 1},     // 1/3 ns early
			{1000000002, 0, 1, Accept, 0, 0},     //
			{1000000002, 0, 2, Reject, 0, Never}, // c > B
		})
	})
	t.Run("max-delay", func(t *testing.T) {
		p := bucketPolicy(10, time.Second, 2)
		p.MaxDelay = 150 * ms
		g := newBucketLimiter(t, newGCRALimiter, p)
		runBucketRows(t, g, []bucketRow{
			{0, 0, 1, Accept, 0, 0},              // TAT -> 100ms
			{0, 0, 1, Accept, 0, 0},              // -> 200ms = B*T: still conforming
			{0, 0, 1, Delay, 100 * ms, 0},        // excess 200 + 100 - 200 = 100ms <= 150: TAT -> 300ms
			{0, 0, 1, Reject, 0, 50 * ms},        // excess 200ms > 150: retry when it is 150
			{50 * ms, 0, 1, Delay, 150 * ms, 0},  // excess 300 + 100 - 200 - 50 = 150: TAT -> 400ms
			{50 * ms, 0, 1, Reject, 0, 100 * ms}, // excess 250ms
			{50 * ms, 0, 3, Reject, 0, Never},    // c > B even with shaping
			{400 * ms, 0, 2, Accept, 0, 0},       // at TAT: a full burst
		})
	})
}

func TestGCRASteadyNoDrift(t *testing.T) {
	for _, p := range []Params{
		bucketPolicy(3, time.Second, 3), // an hour of T = 333333333 1/3 ns
		bucketPolicy(3, time.Second, 2),
		bucketPolicy(7, time.Minute, 7), // a day of T = 8571428571 3/7 ns
		bucketPolicy(7, time.Minute, 2),
	} {
		n := 3600 * p.Rate * int64(time.Second) / int64(p.Per)
		if p.Per == time.Minute {
			n *= 24
		}
		g := newBucketLimiter(t, newGCRALimiter, p).(*GCRA)
		runSteady(t, g, p, n, nil)
		// TAT is exactly (B+n)*T: no fraction was lost on the way.
		r := newFracRate(p.Rate, p.Per)
		require.Equal(t, r.times(p.Burst+n), g.state[0].tat)
		// One extra request at the last instant is one too many: it waits
		// for its own interval, (n+1)*T - ceil(n*T), rounded up.
		last := exactCeilDiv(n*int64(p.Per), p.Rate)
		want := exactCeilDiv((n+1)*int64(p.Per)-last*p.Rate, p.Rate)
		require.Equal(t, Decision{Verdict: Reject, RetryAfter: time.Duration(want)}, g.Decide(time.Duration(last), 0, 1))
	}
}

func TestGCRAMatchesModel(t *testing.T) {
	for i, mp := range modelPolicies {
		for _, d := range []time.Duration{0, 700 * ms} {
			p := mp.p
			p.MaxDelay = d
			lim := newBucketLimiter(t, newGCRALimiter, p)
			T := p.Per / time.Duration(p.Rate)
			checkAgainstModel(t, "gcra", lim, p, bucketTrace(uint64(i+11), 1500, 3, T, 3, mp.start))
		}
	}
}

func TestGCRAEqualsTokenBucket(t *testing.T) {
	// GCRA is the token bucket kept as one instant: on any trace they take
	// the same decisions, delays and retry_after included.
	for i, mp := range modelPolicies {
		for _, d := range []time.Duration{0, 300 * ms} {
			p := mp.p
			p.MaxDelay = d
			g := newBucketLimiter(t, newGCRALimiter, p)
			tb := newBucketLimiter(t, newTokenBucketLimiter, p)
			T := p.Per / time.Duration(p.Rate)
			for j, a := range bucketTrace(uint64(i+21), 3000, 4, T, 3, mp.start) {
				require.Equalf(t, tb.Decide(a.at, a.key, a.cost), g.Decide(a.at, a.key, a.cost), "%v arrival %d", p.Policy, j)
			}
		}
	}
}

func TestGCRARelease(t *testing.T) {
	g := newBucketLimiter(t, newGCRALimiter, bucketPolicy(3, time.Second, 3)).(*GCRA)
	g.Decide(0, 0, 2)      // TAT 666666666 2/3: fresh at 666666667
	g.Decide(500*ms, 2, 1) // TAT 833333333 1/3: fresh at 833333334
	keys, bytes := g.liveAt(666666666)
	require.Equal(t, [2]int64{2, 32}, [2]int64{keys, bytes})
	keys, bytes = g.liveAt(666666667)
	require.Equal(t, [2]int64{1, 16}, [2]int64{keys, bytes})
	g.Decide(700*ms, 2, 1) // TAT -> 1166666666 2/3: the heap entry at 833333334 is pushed back
	keys, _ = g.liveAt(1166666666)
	require.Equal(t, int64(1), keys)
	keys, _ = g.liveAt(1166666667)
	require.Zero(t, keys)
	require.Equal(t, Memory{BytesPerKeyMax: 16, KeysPeak: 2, BytesPeak: 32}, g.Memory())
	runBucketRows(t, g, []bucketRow{
		{2 * time.Second, 0, 3, Accept, 0, 0}, // released key 0 is fresh: a full burst
		{2 * time.Second, 2, 3, Accept, 0, 0}, // and so is key 2
	})
}

func TestGCRAParams(t *testing.T) {
	p := bucketPolicy(10, time.Second, 10)
	p.MaxDelay = -time.Second
	_, err := newGCRALimiter(p)
	requireParamError(t, err, "max-delay")
	p.MaxDelay = maxExact + 1
	_, err = newGCRALimiter(p)
	requireParamError(t, err, "max-delay")
	p = bucketPolicy(10, time.Second, 10)
	p.CountRejected = true
	_, err = newGCRALimiter(p)
	requireParamError(t, err, "count-rejected")
	p = bucketPolicy(10, time.Second, 10)
	p.Nodelay = true
	_, err = newGCRALimiter(p)
	requireParamError(t, err, "nodelay")
	_, err = newGCRALimiter(bucketPolicy(1, time.Hour, maxExact/int64(time.Hour)+1))
	requireParamError(t, err, "burst")
}
