package algorithms

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// nginxParams is limit_req_zone rate=<rate>/<per> with limit_req burst=<burst>
// and the given mode.
func nginxParams(rate int64, per time.Duration, burst int64, nodelay bool, delay int64) Params {
	p := bucketPolicy(rate, per, 10)
	p.NginxBurst, p.NginxBurstSet = burst, true
	p.Nodelay = nodelay
	p.NginxDelay = delay
	return p
}

func TestNginxSpecExample3(t *testing.T) {
	// docs/algorithms.md, worked example 3: rate=10r/s burst=5 nodelay (rate 10000
	// milli-requests/s, burst 5000): 8 requests at 0 ms admit 6 and reject
	// 2; then 50, 100, 150, 250 ms: rejected, admitted, rejected, admitted.
	n := newBucketLimiter(t, newNginxLimiter, nginxParams(10, time.Second, 5, true, 0))
	runBucketRows(t, n, []bucketRow{
		{0, 0, 1, Accept, 0, 0},              // new node: excess 0, last 0
		{0, 0, 1, Accept, 0, 0},              // ms 0: excess 1000
		{0, 0, 1, Accept, 0, 0},              // 2000
		{0, 0, 1, Accept, 0, 0},              // 3000
		{0, 0, 1, Accept, 0, 0},              // 4000
		{0, 0, 1, Accept, 0, 0},              // 5000 = burst: not more than burst
		{0, 0, 1, Reject, 0, 100 * ms},       // 6000 > 5000; fits when 10000*ms/1000 >= 1000: ms = 100
		{0, 0, 1, Reject, 0, 100 * ms},       // unchanged state, same answer
		{50 * ms, 0, 1, Reject, 0, 50 * ms},  // 5000 - 500 + 1000 = 5500
		{100 * ms, 0, 1, Accept, 0, 0},       // 5000 - 1000 + 1000 = 5000: stored, last 100
		{150 * ms, 0, 1, Reject, 0, 50 * ms}, // 5000 - 500 + 1000; fits at 200
		{250 * ms, 0, 1, Accept, 0, 0},       // 5000 - 1500 + 1000 = 4500
	})
}

func TestNginxRows(t *testing.T) {
	t.Run("delay mode", func(t *testing.T) {
		// rate=10r/s burst=5 without nodelay: each request waits until its
		// excess has leaked, excess*1000/rate ms.
		n := newBucketLimiter(t, newNginxLimiter, nginxParams(10, time.Second, 5, false, 0))
		runBucketRows(t, n, []bucketRow{
			{0, 0, 1, Accept, 0, 0},              // new node, excess 0
			{0, 0, 1, Delay, 100 * ms, 0},        // excess 1000: 1000*1000/10000 = 100ms
			{0, 0, 1, Delay, 200 * ms, 0},        // 2000
			{0, 0, 1, Delay, 300 * ms, 0},        // 3000
			{0, 0, 1, Delay, 400 * ms, 0},        // 4000
			{0, 0, 1, Delay, 500 * ms, 0},        // 5000
			{0, 0, 1, Reject, 0, 100 * ms},       // 6000 > burst
			{120 * ms, 0, 1, Delay, 480 * ms, 0}, // 5000 - 1200 + 1000 = 4800 -> 480ms from now
			{121 * ms, 0, 1, Reject, 0, 79 * ms}, // 4800 - 10 + 1000 = 5790; fits at 120 + 80 ms
		})
	})
	t.Run("two-stage delay=2", func(t *testing.T) {
		// burst=5 delay=2: the first 3 (excess <= 2000) pass at once, the
		// next are delayed by (excess - 2000)*1000/rate.
		n := newBucketLimiter(t, newNginxLimiter, nginxParams(10, time.Second, 5, false, 2))
		runBucketRows(t, n, []bucketRow{
			{0, 0, 1, Accept, 0, 0},        // excess 0
			{0, 0, 1, Accept, 0, 0},        // 1000 <= 2000
			{0, 0, 1, Accept, 0, 0},        // 2000 <= 2000
			{0, 0, 1, Delay, 100 * ms, 0},  // (3000 - 2000)*1000/10000
			{0, 0, 1, Delay, 200 * ms, 0},  // 4000
			{0, 0, 1, Delay, 300 * ms, 0},  // 5000
			{0, 0, 1, Reject, 0, 100 * ms}, // 6000 > 5000
		})
	})
	t.Run("nodelay wins over delay", func(t *testing.T) {
		n := newBucketLimiter(t, newNginxLimiter, nginxParams(10, time.Second, 2, true, 1))
		runBucketRows(t, n, []bucketRow{
			{0, 0, 1, Accept, 0, 0},
			{0, 0, 1, Accept, 0, 0},
			{0, 0, 1, Accept, 0, 0}, // excess 2000 > delay 1000, but nodelay
			{0, 0, 1, Reject, 0, 100 * ms},
		})
	})
	t.Run("default burst is B-1", func(t *testing.T) {
		// No nginx burst set: burst = B-1 = 2, so a fresh key admits B = 3
		// at once (delayed, as nginx's default is not nodelay).
		n := newBucketLimiter(t, newNginxLimiter, bucketPolicy(10, time.Second, 3))
		runBucketRows(t, n, []bucketRow{
			{0, 0, 1, Accept, 0, 0},
			{0, 0, 1, Delay, 100 * ms, 0},
			{0, 0, 1, Delay, 200 * ms, 0},
			{0, 0, 1, Reject, 0, 100 * ms},
		})
	})
	t.Run("millisecond clock", func(t *testing.T) {
		// rate=1000r/s burst=0: one request per whole ms. nginx sees
		// floor(t/1ms): 999999 ns is still ms 0.
		n := newBucketLimiter(t, newNginxLimiter, nginxParams(1000, time.Second, 0, true, 0))
		runBucketRows(t, n, []bucketRow{
			{0, 0, 1, Accept, 0, 0},      // new node at ms 0
			{999999, 0, 1, Reject, 0, 1}, // ms 0 again: excess 1000 > 0; fits at ms 1, 1 ns away
			{1 * ms, 0, 1, Accept, 0, 0}, // 0 - 1000000*1/1000 + 1000 = 0
			{1500 * time.Microsecond, 0, 1, Reject, 0, 500 * time.Microsecond}, // ms 1 = last: fits at ms 2
			{2*ms + 999999, 0, 1, Accept, 0, 0},                                // ms 2
		})
	})
	t.Run("per minute, truncated rate", func(t *testing.T) {
		// rate=7r/m is 7000/60 = 116 milli-requests/s, truncated as nginx
		// does: the next request fits after ceil(1000*1000/116) = 8621 ms,
		// not 60/7 s = 8571.4 ms.
		n := newBucketLimiter(t, newNginxLimiter, nginxParams(7, time.Minute, 0, true, 0))
		runBucketRows(t, n, []bucketRow{
			{0, 0, 1, Accept, 0, 0},               // new node
			{8600 * ms, 0, 1, Reject, 0, 21 * ms}, // 0 - 116*8600/1000 (997) + 1000 = 3 > 0
			{8621 * ms, 0, 1, Accept, 0, 0},       // 116*8621/1000 = 1000: excess 0
		})
		n = newBucketLimiter(t, newNginxLimiter, nginxParams(30, time.Minute, 0, true, 0))
		runBucketRows(t, n, []bucketRow{
			{0, 0, 1, Accept, 0, 0},              // 30r/m = 500 milli-requests/s
			{1999 * ms, 0, 1, Reject, 0, 1 * ms}, // 0 - 999 + 1000 = 1
			{2000 * ms, 0, 1, Accept, 0, 0},      // 0 - 1000 + 1000 = 0
		})
	})
	t.Run("costs", func(t *testing.T) {
		// A request of cost c is c requests in the same ms, all or none.
		n := newBucketLimiter(t, newNginxLimiter, nginxParams(10, time.Second, 5, false, 0))
		runBucketRows(t, n, []bucketRow{
			{0, 0, 7, Reject, 0, Never},           // c-1 = 6 > burst 5: never
			{0, 0, 3, Delay, 200 * ms, 0},         // new node 0, then 1000, 2000: the last waits 200ms
			{0, 0, 4, Reject, 0, 100 * ms},        // 2000 + 1000 + 3000 = 6000 > 5000
			{0, 0, 3, Delay, 500 * ms, 0},         // 5000
			{0, 1, 6, Delay, 500 * ms, 0},         // another key: its own node
			{300 * ms, 0, 4, Reject, 0, 100 * ms}, // 5000 - 3000 + 1000 + 3000 = 6000; fits at 400ms
			{300 * ms, 0, 3, Delay, 500 * ms, 0},  // 5000 - 3000 + 1000 + 2000 = 5000
		})
	})
}

func TestNginxRelease(t *testing.T) {
	n := newBucketLimiter(t, newNginxLimiter, nginxParams(10, time.Second, 5, true, 0)).(*Nginx)
	n.Decide(0, 0, 1) // excess 0, last 0: the next request computes 0 from ms 100 on
	for range 6 {
		n.Decide(0, 1, 1) // excess 5000: fresh from ms (5000+1000)*1000/10000 = 600
	}
	keys, bytes := n.liveAt(100*ms - 1)
	require.Equal(t, [2]int64{2, 32}, [2]int64{keys, bytes})
	keys, bytes = n.liveAt(100 * ms)
	require.Equal(t, [2]int64{1, 16}, [2]int64{keys, bytes})
	keys, _ = n.liveAt(600*ms - 1)
	require.Equal(t, int64(1), keys)
	keys, _ = n.liveAt(600 * ms)
	require.Zero(t, keys)
	require.Equal(t, Memory{BytesPerKeyMax: 16, KeysPeak: 2, BytesPeak: 32}, n.Memory())

	// Just before the fresh instant the stored node still differs from a
	// new one: at 599 ms it computes 5000 - 5990 + 1000 = 10, not 0.
	n2 := newBucketLimiter(t, newNginxLimiter, nginxParams(10, time.Second, 5, true, 0)).(*Nginx)
	for range 6 {
		n2.Decide(0, 1, 1)
	}
	require.Equal(t, Accept, n2.Decide(599*ms, 1, 1).Verdict)
	require.Equal(t, nginxState{excess: 10, last: 599}, n2.state[1])
}

// nginxRef is limit_req transcribed directly, one node per key that is
// never forgotten, with retry_after found by search: the reference that the
// limiter, which releases fresh keys, must match.
type nginxRef struct {
	rate, burst, delay int64 // milli units, as in Nginx
	nodelay            bool
	nodes              map[Key]*nginxState
}

func (r *nginxRef) excessAt(nd *nginxState, nowMs, cost int64) int64 {
	e := max(0, nd.excess-r.rate*(nowMs-nd.last)/1000+1000)
	return e + (cost-1)*1000
}

func (r *nginxRef) decide(now time.Duration, key Key, cost int64) Decision {
	if (cost-1)*1000 > r.burst {
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	nowMs := int64(now / time.Millisecond)
	nd, ok := r.nodes[key]
	var e int64
	if !ok {
		e = (cost - 1) * 1000
		r.nodes[key] = &nginxState{excess: e, last: nowMs}
	} else {
		e = r.excessAt(nd, nowMs, cost)
		if e > r.burst {
			hi := nowMs + 1
			for r.excessAt(nd, hi, cost) > r.burst {
				hi = nowMs + 2*(hi-nowMs)
			}
			lo := nowMs // rejected at lo, admitted at hi
			for hi-lo > 1 {
				mid := lo + (hi-lo)/2
				if r.excessAt(nd, mid, cost) > r.burst {
					lo = mid
				} else {
					hi = mid
				}
			}
			return Decision{Verdict: Reject, RetryAfter: time.Duration(hi)*time.Millisecond - now}
		}
		if nowMs != nd.last {
			nd.last = nowMs
		}
		nd.excess = e
	}
	if !r.nodelay && e > r.delay {
		if d := (e - r.delay) * 1000 / r.rate; d > 0 {
			return Decision{Verdict: Delay, Delay: time.Duration(d) * time.Millisecond}
		}
	}
	return Decision{Verdict: Accept}
}

func TestNginxMatchesReference(t *testing.T) {
	for i, c := range []struct {
		rate  int64
		per   time.Duration
		burst int64
		nd    bool
		delay int64
		start time.Duration
	}{
		{10, time.Second, 5, true, 0, 0},
		{10, time.Second, 5, false, 0, 0},
		{10, time.Second, 5, false, 2, 1_700_000_000_123_456_789},
		{7, time.Minute, 2, false, 0, 0},
		{1000, time.Second, 0, true, 0, 0},
		{3, time.Second, 0, false, 0, 1_700_000_000_000_000_000},
		{333, time.Second, 20, false, 7, 0},
	} {
		t.Run(fmt.Sprintf("%d/%v burst=%d nodelay=%v delay=%d", c.rate, c.per, c.burst, c.nd, c.delay), func(t *testing.T) {
			n := newBucketLimiter(t, newNginxLimiter, nginxParams(c.rate, c.per, c.burst, c.nd, c.delay))
			scale := int64(c.per / time.Second)
			ref := &nginxRef{rate: c.rate * 1000 / scale, burst: c.burst * 1000, delay: c.delay * 1000,
				nodelay: c.nd, nodes: map[Key]*nginxState{}}
			T := c.per / time.Duration(c.rate)
			for j, a := range bucketTrace(uint64(i+41), 2000, 3, T, 3, c.start) {
				// the reference first, so that the limiter is copied only
				// before the rejections that are probed
				want := ref.decide(a.at, a.key, a.cost)
				var before Limiter
				if want.Verdict == Reject && j%5 == 0 {
					before, _ = bucketClone(n)
				}
				if got := n.Decide(a.at, a.key, a.cost); got != want {
					require.Equalf(t, want, got, "arrival %d: t=%v key=%d cost=%d", j, a.at, a.key, a.cost)
				}
				if want.Verdict == Reject && j%5 == 0 {
					probeReject(t, before, a.at, a.key, a.cost, want.RetryAfter)
				}
			}
		})
	}
}

func TestNginxParams(t *testing.T) {
	for _, per := range []time.Duration{2 * time.Second, time.Hour, 500 * ms} {
		_, err := newNginxLimiter(bucketPolicy(10, per, 10))
		requireParamError(t, err, "per")
	}
	_, err := newNginxLimiter(nginxParams(10, time.Second, -1, false, 0))
	requireParamError(t, err, "burst")
	_, err = newNginxLimiter(nginxParams(10, time.Second, nginxMaxBurst+1, false, 0))
	requireParamError(t, err, "burst")
	_, err = newNginxLimiter(nginxParams(10, time.Second, 5, false, -1))
	requireParamError(t, err, "delay")
	p := nginxParams(10, time.Second, 5, false, 0)
	p.MaxDelay = time.Second
	_, err = newNginxLimiter(p)
	requireParamError(t, err, "max-delay")
	p = nginxParams(10, time.Second, 5, false, 0)
	p.Max = 3
	_, err = newNginxLimiter(p)
	requireParamError(t, err, "max")
	// burst=0 is nginx's default and valid: policy burst 1 gives it.
	_, err = newNginxLimiter(bucketPolicy(10, time.Second, 1))
	require.NoError(t, err)
}
