package algorithms

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The rows below are worked by hand from HAProxy 2.6's
// include/haproxy/freq_ctr.h (update_freq_ctr_period, read_freq_ctr_period)
// and src/freq_ctr.c (freq_ctr_total): "upd" is the update (count the hit;
// rotate when m - tick >= P; restart at m when m - tick' >= P again; store
// the tick with its low bit cleared), "rd" the read: remain = tick + P - m,
// rate = curr + floor(prev*remain/P). Deny iff rate > L. Times are ms ticks,
// now_ms = floor(t/1ms).

func haproxyParams(rate int64, per time.Duration) Params {
	return Params{Policy: Policy{Rate: rate, Per: per, Burst: rate}}
}

func TestHAProxyAnchoredPeriods(t *testing.T) {
	// gt 3 over 1s; the key's first hit at 10000 ms, more than 2P after
	// now_ms 0, so the new entry's tick 0 is two periods old.
	l := mustLimiter(t, "haproxy", haproxyParams(3, time.Second))
	checkRows(t, l, []decideRow{
		// upd: 10000-0 >= P: rotate (prev 0, curr 1, tick 1000); 10000-1000
		// >= P: restart, tick 10000. rd: remain 1000, rate 1.
		{at: 10000 * ms, cost: 1, want: Accept},
		{at: 10100 * ms, cost: 1, want: Accept},         // curr 2, rate 2
		{at: 10200*ms + 999_999, cost: 1, want: Accept}, // tick 10200 (floored): curr 3, rate 3, not > 3
		// curr 4 (counted though denied): rate 4 > 3. Next period (tick
		// 11000): rate 1 + floor(4*remain/1000) <= 3 iff 4*remain <= 2999,
		// remain <= 749: m = 12000 - 749 = 11251 (at 11250, 4*750/1000 = 3).
		{at: 10300 * ms, cost: 1, want: Reject, retry: 951 * ms},
		// curr 5: 5*remain <= 2999, remain <= 599: m = 11401.
		{at: 10999*ms + 500_000, cost: 1, want: Reject, retry: 11401*ms - (10999*ms + 500_000)},
		// upd: 11000-10000 = P: rotate, prev 5, curr 1, tick 11000. rd:
		// remain 1000: 1 + 5 = 6 > 3. In this period: 2 + floor(5*remain/1000)
		// <= 3 iff 5*remain <= 1999, remain <= 399: m = 11601.
		{at: 11000 * ms, cost: 1, want: Reject, retry: 601 * ms},
		// curr 2, remain 500: 2 + floor(2500/1000) = 4 > 3. 3 + floor(5*r/1000)
		// <= 3 iff 5*r <= 999, r <= 199: m = 11801.
		{at: 11500 * ms, cost: 1, want: Reject, retry: 301 * ms},
		{at: 11900 * ms, cost: 1, want: Accept}, // curr 3, remain 100: 3 + floor(500/1000) = 3
		// upd: 13999-11000 >= P: rotate (tick 12000); 13999-12000 >= P:
		// restart, prev 0, tick 13999 stored as 13998 (low bit cleared).
		{at: 13999 * ms, cost: 1, want: Accept},
		{at: 14997 * ms, cost: 1, want: Accept}, // 14997-13998 < P: curr 2, remain 1: rate 2
		// 14998-13998 = P: rotate, prev 2, curr 1, tick 14998: the period
		// began at 13998, not at the first hit's 13999. rd: 1 + 2 = 3.
		{at: 14998 * ms, cost: 1, want: Accept},
		// curr 2: 2 + 2 = 4 > 3. 3 + floor(2*r/1000) <= 3 iff r <= 499:
		// m = 15998 - 499 = 15499.
		{at: 14998 * ms, cost: 1, want: Reject, retry: 501 * ms},
	})
}

func TestHAProxyFirstPeriodsAfterWrap(t *testing.T) {
	// now_ms is 0 at time 0 (and every 2^32 ms): a new entry's tick 0 is
	// then recent, so its periods are anchored at 0 and P, not at the hit.
	l := mustLimiter(t, "haproxy", haproxyParams(2, time.Second))
	checkRows(t, l, []decideRow{
		// key 0. upd: 900-0 < P: curr 1, tick 0. rd: remain 100: rate 1.
		{at: 900 * ms, key: 0, cost: 1, want: Accept},
		{at: 950 * ms, key: 0, cost: 1, want: Accept}, // curr 2
		// curr 3 > 2. Next period (tick 1000): 1 + floor(3*r/1000) <= 2
		// iff 3*r <= 1999, r <= 666: m = 2000 - 666 = 1334.
		{at: 990 * ms, key: 0, cost: 1, want: Reject, retry: 344 * ms},
		// upd: 1000-0 = P: rotate, prev 3, curr 1, tick 1000 (1000-1000
		// < P: no restart). rd: 1 + 3 = 4 > 2. This period: 2 +
		// floor(3*r/1000) <= 2 iff r <= 333: m = 1667.
		{at: 1000 * ms, key: 0, cost: 1, want: Reject, retry: 667 * ms},
		// key 1, new at 1500: 1500-0 >= P: rotate (prev 0, curr 1, tick
		// 1000); 1500-1000 < P: no restart, so its period is [1000, 2000).
		{at: 1500 * ms, key: 1, cost: 1, want: Accept},
		{at: 1600 * ms, key: 1, cost: 1, want: Accept}, // curr 2
		// 2000-1000 = P: rotate, prev 2, curr 1, tick 2000: 1 + 2 = 3 > 2.
		// 2 + floor(2*r/1000) <= 2 iff r <= 499: m = 2501.
		{at: 2000 * ms, key: 1, cost: 1, want: Reject, retry: 501 * ms},
	})
}

func TestHAProxyOddPeriod(t *testing.T) {
	// per 5ms, gt 1: a period's tick loses its low bit at each rotation.
	l := mustLimiter(t, "haproxy", haproxyParams(1, 5*time.Millisecond))
	checkRows(t, l, []decideRow{
		// upd: restart at 101, stored 100. rd: remain 4: rate 1.
		{at: 101 * ms, cost: 1, want: Accept},
		// 105-100 = P: rotate, prev 1, curr 1, tick 105 stored 104. rd:
		// remain 104+5-105 = 4: 1 + floor(4/5) = 1.
		{at: 105 * ms, cost: 1, want: Accept},
		// 109-104 = P: rotate, prev 1, curr 1, tick 109 stored 108: 1.
		{at: 109 * ms, cost: 1, want: Accept},
		// curr 2 > 1. This period: 3 > 1 always. Next (from 113, its tick
		// stored 112): 1 + floor(2*r/5) <= 1 iff r <= 2, r = 112+5-m: m = 115.
		{at: 109 * ms, cost: 1, want: Reject, retry: 6 * ms},
	})
}

func TestHAProxyCost(t *testing.T) {
	// Cost c is c hits in one ms, all counted, admitted all or none.
	l := mustLimiter(t, "haproxy", haproxyParams(3, time.Second))
	checkRows(t, l, []decideRow{
		{at: 10000 * ms, cost: 2, want: Accept}, // curr 2
		// curr 4 > 3; this period: 6 > 3; next: 2 + floor(4*r/1000) <= 3
		// iff 4*r < 2000, r <= 499: m = 12000 - 499 = 11501.
		{at: 10000 * ms, cost: 2, want: Reject, retry: 1501 * ms},
		{at: 10000 * ms, cost: 4, want: Reject, retry: Never}, // 4 > 3 hits at once: never; counted: curr 8
		// 11000: rotate, prev 8, curr 1: 1 + 8 = 9 > 3. This period: 2 +
		// floor(8r/1000) <= 3 iff r <= 249: m = 11751.
		{at: 11000 * ms, cost: 1, want: Reject, retry: 751 * ms},
	})
}

func TestHAProxyRead(t *testing.T) {
	// Inspect's rate is read_freq_ctr_period without a new hit.
	l := mustLimiter(t, "haproxy", haproxyParams(3, time.Second)).(*HAProxy)
	rate := func(at time.Duration) float64 { return l.Inspect(at, 0)[0].Value }
	require.Zero(t, rate(10000*ms)) // a new entry: 0
	l.Decide(10000*ms, 0, 1)        // tick 10000, curr 1
	require.Equal(t, 1.0, rate(10500*ms))
	// 11500: remain = 11000-11500 < 0: remain += P = 500, past = curr = 1,
	// curr = 0; the flapping correction then reads past, 1, not
	// floor(1*500/1000) = 0.
	require.Equal(t, 1.0, rate(11500*ms))
	l.Decide(11500*ms, 0, 1) // rotate: prev 1, curr 1, tick 11000
	l.Decide(11500*ms, 0, 1) // curr 2
	// 12500: remain 500 after += P; past = curr = 2, curr 0: floor(2*500/1000) = 1.
	require.Equal(t, 1.0, rate(12500*ms))
	// 13000: remain = 11000+1000-13000 = -1000, += P: 0 >= 0: past 2,
	// floor(2*0/1000) = 0; 13001: remain < 0 still: past 0.
	require.Equal(t, 0.0, rate(13000*ms))
	require.Equal(t, 0.0, rate(13001*ms))
}

func TestHAProxyRelease(t *testing.T) {
	// State is released at tick + 2P, when a hit restarts the counter as
	// on a new entry.
	l := mustLimiter(t, "haproxy", haproxyParams(3, time.Second))
	h := l.(stateHolder)
	l.Decide(10001*ms, 0, 1) // tick 10000 (low bit cleared)
	requireLive(t, h, 11999*ms+999_999, 1, 16)
	requireLive(t, h, 12000*ms, 0, 0)
	require.Equal(t, Memory{BytesPerKeyMax: 16, KeysPeak: 1, BytesPeak: 16}, l.Memory())
}

func TestHAProxyParams(t *testing.T) {
	for _, tc := range []struct {
		p    Params
		want string
	}{
		{haproxyParams(3, 1500*time.Microsecond), "per: 1.5ms: haproxy's http_req_rate period is whole milliseconds"},
		{haproxyParams(3, 25*24*time.Hour), "per: 600h0m0s: haproxy's http_req_rate period is whole milliseconds, from 1ms to 596h31m23.647s"},
		{Params{Policy: Policy{Rate: 1 << 32, Per: time.Millisecond, Burst: 1}}, "rate: 4294967296: want at most 4294967294"},
		{Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 3}, CountRejected: true}, "count-rejected: true: haproxy takes no count-rejected"},
	} {
		_, err := New("haproxy", tc.p)
		require.ErrorContains(t, err, tc.want)
	}
}

func TestHAProxyInvariantsOddPeriod(t *testing.T) {
	// The suite's checks with odd periods in ms, where a rotated tick
	// loses its low bit (7ms, and 1001ms).
	for i, pol := range []Policy{{Rate: 2, Per: 7 * time.Millisecond, Burst: 2}, {Rate: 5, Per: 1001 * time.Millisecond, Burst: 5}} {
		info, _ := Lookup("haproxy")
		p := Params{Policy: pol}
		l := mustLimiter(t, "haproxy", p)
		calls := invTrace(uint64(i+10), pol, invArrivals)
		ds := decideAll(l, calls)
		checkDecisions(t, info, p, calls, ds)
		checkWindows(t, info.Name, p, calls, ds)
		checkRetryExact(t, info, p, calls, ds)
		checkRelease(t, l, p, calls, nil)
	}
}

func TestHAProxyPeriodEdges(t *testing.T) {
	// update_freq_ctr_period at exactly one, just under two and exactly two
	// periods after the tick, read through Inspect's "previous".
	l := mustLimiter(t, "haproxy", haproxyParams(1, time.Second)).(*HAProxy)
	prev := func(at time.Duration, key Key) float64 { return l.Inspect(at, key)[2].Value }
	for key := Key(0); key < 3; key++ {
		l.Decide(10000*ms, key, 1) // restart: tick 10000, curr 1
		l.Decide(10000*ms, key, 1) // curr 2, denied
	}
	// 11000-10000 = P: rotate (tick 11000, prev 2, curr 1); rd 1 + 2 = 3 > 1.
	// Not in this period (curr 2 > 1); in the next, prev 1: 1 + floor(r/1000)
	// <= 1 iff r <= 999: m = 13000 - 999 = 12001.
	require.Equal(t, Decision{Verdict: Reject, RetryAfter: 1001 * ms}, l.Decide(11000*ms, 0, 1))
	require.Equal(t, 2.0, prev(11000*ms, 0))
	// 11999-10000 < 2P: rotate (tick 11000, prev 2); 11999-11000 < P: no
	// restart. rd: remain 1: 1 + floor(2/1000) = 1: admitted.
	require.Equal(t, Decision{Verdict: Accept}, l.Decide(11999*ms, 1, 1))
	require.Equal(t, 2.0, prev(11999*ms, 1))
	// 12000-10000 = 2P: rotate to tick 11000, 12000-11000 = P: restart,
	// prev 0, tick 12000. (The state was released at 12000 too.)
	require.Equal(t, Decision{Verdict: Accept}, l.Decide(12000*ms, 2, 1))
	require.Equal(t, 0.0, prev(12000*ms, 2))
}

func TestHAProxyWrap(t *testing.T) {
	// now_ms wraps every 2^32 ms: a key new at 2^32 ms + 300 ms finds its
	// entry's tick 0 only 300 ms old (mod 2^32), so its period is anchored
	// at the wrap, as at time 0.
	const wrap = time.Duration(1<<32) * ms
	l := mustLimiter(t, "haproxy", haproxyParams(1, time.Second))
	checkRows(t, l, []decideRow{
		{at: wrap + 300*ms, cost: 1, want: Accept}, // 300 - 0 < P: curr 1, tick at the wrap
		// curr 2. Next period (from wrap + 1000): 1 + floor(2*r/1000) <= 1 iff
		// r <= 499: m = wrap + 2000 - 499.
		{at: wrap + 400*ms, cost: 1, want: Reject, retry: 1101 * ms},
		// a key new at wrap + 5000 ms is more than 2P past the wrap: its
		// period starts at its own (even) ms.
		{at: wrap + 5001*ms, key: 1, cost: 1, want: Accept},
		{at: wrap + 5001*ms, key: 1, cost: 1, want: Reject, retry: 1500 * ms}, // tick 5000: next period [6000, 7000), r <= 499: m = 6501
	})
}
