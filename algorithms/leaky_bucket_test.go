package algorithms

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLeakyBucketSpecExample2(t *testing.T) {
	// docs/algorithms.md, worked example 2: L=4 per 1s (D = 250ms), B=4; requests at
	// 0,0,0,0,0,100,600,1700 ms: accept, delay, delay, delay, reject,
	// reject, delay, accept; delays 0, 250, 500, 750, -, -, 400, 0 ms.
	lb := newBucketLimiter(t, newLeakyBucketLimiter, bucketPolicy(4, time.Second, 4))
	runBucketRows(t, lb, []bucketRow{
		{0, 0, 1, Accept, 0, 0},               // empty queue: leaves now, TAT -> 250ms
		{0, 0, 1, Delay, 250 * ms, 0},         // released at TAT 250, TAT -> 500
		{0, 0, 1, Delay, 500 * ms, 0},         // -> 750
		{0, 0, 1, Delay, 750 * ms, 0},         // 750 + 250 - 0 = 1000 <= B*D: the 4th place, TAT -> 1000
		{0, 0, 1, Reject, 0, 250 * ms},        // 1000 + 250 - 1000 - 0: full until the first leaves
		{100 * ms, 0, 1, Reject, 0, 150 * ms}, // 1000 + 250 - 1000 - 100
		{600 * ms, 0, 1, Delay, 400 * ms, 0},  // 1000 + 250 - 600 = 650 <= 1000: released at 1000
		{1700 * ms, 0, 1, Accept, 0, 0},       // queue empty since 1250
	})
}

func TestSpecExample2SameAdmissions(t *testing.T) {
	// docs/algorithms.md, worked example 2: with one policy, token-bucket, gcra and leaky-bucket admit the
	// same requests; only the leaky bucket delays them.
	at := []time.Duration{0, 0, 0, 0, 0, 100 * ms, 600 * ms, 1700 * ms}
	wantAdmit := []bool{true, true, true, true, false, false, true, true}
	for _, newLim := range []func(Params) (Limiter, error){newTokenBucketLimiter, newGCRALimiter, newLeakyBucketLimiter} {
		lim := newBucketLimiter(t, newLim, bucketPolicy(4, time.Second, 4))
		for i, a := range at {
			d := lim.Decide(a, 0, 1)
			require.Equal(t, wantAdmit[i], d.Verdict != Reject, "%T request %d", lim, i)
			if _, leaky := lim.(*LeakyBucket); !leaky {
				require.NotEqual(t, Delay, d.Verdict)
			}
		}
	}
}

func TestLeakyBucketRows(t *testing.T) {
	t.Run("costs", func(t *testing.T) {
		lb := newBucketLimiter(t, newLeakyBucketLimiter, bucketPolicy(4, time.Second, 4))
		runBucketRows(t, lb, []bucketRow{
			{0, 0, 2, Accept, 0, 0},               // two places, leaves now: TAT -> 500ms
			{0, 0, 3, Reject, 0, 250 * ms},        // 500 + 750 - 1000 = 250ms
			{0, 0, 5, Reject, 0, Never},           // larger than the queue
			{0, 0, 2, Delay, 500 * ms, 0},         // released when the first pair has left: TAT -> 1000
			{0, 1, 4, Accept, 0, 0},               // key 1 has its own queue
			{300 * ms, 0, 1, Delay, 700 * ms, 0},  // 1000 + 250 - 300 = 950 <= 1000
			{300 * ms, 1, 2, Reject, 0, 200 * ms}, // key 1 TAT 1000: 1000 + 500 - 1000 - 300
			{1250 * ms, 0, 4, Accept, 0, 0},       // key 0 empty at 1250
		})
	})
	t.Run("exact thirds", func(t *testing.T) {
		// L=3 per 1s, B=3: releases exactly T = 333333333 1/3 ns apart,
		// each rounded up on its own: 0, ceil(T), ceil(2T), 1s, ...
		lb := newBucketLimiter(t, newLeakyBucketLimiter, bucketPolicy(3, time.Second, 3))
		runBucketRows(t, lb, []bucketRow{
			{0, 0, 1, Accept, 0, 0},                 // TAT -> T
			{0, 0, 1, Delay, 333333334, 0},          // release at T, rounded up
			{0, 0, 1, Delay, 666666667, 0},          // at 2T, rounded up: TAT -> 1s
			{0, 0, 1, Reject, 0, 333333334},         // 1s + T - 1s: ceil(T)
			{333333333, 0, 1, Reject, 0, 1},         // 1/3 ns before the first place frees
			{333333334, 0, 1, Delay, 666666666, 0},  // released at 1s exactly
			{1000000000, 0, 1, Delay, 333333334, 0}, // at 4T = 1333333333 1/3, rounded up
		})
	})
}

func TestLeakyBucketSteadyNoDrift(t *testing.T) {
	for _, p := range []Params{
		bucketPolicy(3, time.Second, 3),
		bucketPolicy(3, time.Second, 2),
		bucketPolicy(7, time.Minute, 7),
		bucketPolicy(7, time.Minute, 2),
	} {
		n := 3600 * p.Rate * int64(time.Second) / int64(p.Per)
		if p.Per == time.Minute {
			n *= 24
		}
		L, W, B := p.Rate, int64(p.Per), p.Burst
		lb := newBucketLimiter(t, newLeakyBucketLimiter, p)
		// Request i (after the burst of B at 0) queues behind B+i-1
		// others: released at (B+i-1)*T exactly, rounded up.
		runSteady(t, lb, p, n, func(i, at int64) time.Duration {
			return time.Duration(exactCeilDiv((B+i-1)*W-at*L, L))
		})
	}
}

func TestLeakyBucketMatchesModel(t *testing.T) {
	for i, mp := range modelPolicies {
		lim := newBucketLimiter(t, newLeakyBucketLimiter, mp.p)
		T := mp.p.Per / time.Duration(mp.p.Rate)
		checkAgainstModel(t, "leaky-bucket", lim, mp.p, bucketTrace(uint64(i+31), 2000, 3, T, 3, mp.start))
	}
}

func TestLeakyBucketRelease(t *testing.T) {
	lb := newBucketLimiter(t, newLeakyBucketLimiter, bucketPolicy(4, time.Second, 4)).(*LeakyBucket)
	for range 4 {
		lb.Decide(0, 5, 1) // queue of 4: empty again at 1s
	}
	keys, bytes := lb.liveAt(time.Second - 1)
	require.Equal(t, [2]int64{1, 16}, [2]int64{keys, bytes})
	keys, _ = lb.liveAt(time.Second)
	require.Zero(t, keys)
	require.Equal(t, Memory{BytesPerKeyMax: 16, KeysPeak: 1, BytesPeak: 16}, lb.Memory())
}

func TestLeakyBucketParams(t *testing.T) {
	for field, set := range map[string]func(*Params){
		"max-delay":      func(p *Params) { p.MaxDelay = time.Second },
		"count-rejected": func(p *Params) { p.CountRejected = true },
		"burst":          func(p *Params) { p.NginxBurst, p.NginxBurstSet = 3, true },
		"nodelay":        func(p *Params) { p.Nodelay = true },
		"delay":          func(p *Params) { p.NginxDelay = 2 },
		"max":            func(p *Params) { p.Max = 4 },
	} {
		p := bucketPolicy(10, time.Second, 10)
		set(&p)
		_, err := newLeakyBucketLimiter(p)
		requireParamError(t, err, field)
	}
	_, err := newLeakyBucketLimiter(bucketPolicy(10, 0, 10))
	requireParamError(t, err, "per")
}
