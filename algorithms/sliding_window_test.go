package algorithms

import (
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestSlidingWindowDoubleBurst(t *testing.T) {
	const ms = time.Millisecond
	// docs/algorithms.md, worked example 1, L=10 per 1s: the first ten fill window 0.
	// At 1000+10i ms (window 1, e = 10i ms) prev = 10, cur = 0:
	// 10*(1000-10i) + 1*1000 > 10*1000 (in ms), so the second ten are
	// rejected, as by the sliding log. The request fits once
	// 10*(1000-e') <= 9*1000, e' >= 100ms: at 1100ms.
	l := mustLimiter(t, "sliding-window", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 10}})
	var rows []decideRow
	for i := range 10 {
		rows = append(rows, decideRow{at: 900*ms + time.Duration(i)*10*ms, cost: 1, want: Accept})
	}
	for i := range 10 {
		at := 1000*ms + time.Duration(i)*10*ms
		rows = append(rows, decideRow{at: at, cost: 1, want: Reject, retry: 1100*ms - at})
	}
	rows = append(rows,
		decideRow{at: 1100*ms - 1, cost: 1, want: Reject, retry: 1},
		decideRow{at: 1100 * ms, cost: 1, want: Accept}, // 10*900 + 1*1000 = 10*1000 exactly
		// cur = 1: 10*(1000-e') + 2*1000 <= 10*1000 iff e' >= 200ms.
		decideRow{at: 1100 * ms, cost: 1, want: Reject, retry: 100 * ms},
		// Cost 9 needs 10*(1000-e') + 10*1000 <= 10*1000: e' = W, the start
		// of window 2, where prev' = 1: 1*1000 + 9*1000 fits.
		decideRow{at: 1100 * ms, cost: 9, want: Reject, retry: 900 * ms},
		decideRow{at: 2000 * ms, cost: 9, want: Accept},
	)
	checkRows(t, l, rows)
}

func TestSlidingWindowRetryAcrossWindows(t *testing.T) {
	const ms, sec = time.Millisecond, time.Second
	l := mustLimiter(t, "sliding-window", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 10}})
	checkRows(t, l, []decideRow{
		{at: 100 * ms, cost: 10, want: Accept}, // window 0 full
		// cur = 10: nothing fits in window 0. In window 1 prev' = 10:
		// 10*(1000-e') + 1*1000 <= 10*1000 iff e' >= 100ms: 1.1s, 600ms on.
		{at: 500 * ms, cost: 1, want: Reject, retry: 600 * ms},
		// Cost 10 needs 10*(1000-e') <= 0: e' = W, so window 2 at 2s.
		{at: 500 * ms, cost: 10, want: Reject, retry: 1500 * ms},
		{at: 2*sec - 1, cost: 10, want: Reject, retry: 1}, // prev 10 weighs 10*1ns
		{at: 2 * sec, cost: 10, want: Accept},             // window 2: count of window 0 forgotten
		{at: 2 * sec, key: 1, cost: 10, want: Accept},     // key 1 has its own counts
		{at: 2 * sec, cost: 11, want: Reject, retry: Never},
		// t = k*W exactly: window 3, e = 0, prev = 10 weighs all of W.
		{at: 3 * sec, cost: 1, want: Reject, retry: 100 * ms},
		// Window 5: the last count (window 2) is two windows back, forgotten.
		{at: 5 * sec, cost: 10, want: Accept},
	})
}

func TestSlidingWindowOddRates(t *testing.T) {
	const sec = time.Second
	// 3 per 1s: after 3 in window 0, at 1s+e' 3*(W-e') + 1*W <= 3*W iff
	// W-e' <= 2W/3 = 666,666,666.67ns, so W-e' <= 666,666,666 (rounded
	// down: prev*(W-e') is an integer) and e' >= 333,333,334ns.
	l := mustLimiter(t, "sliding-window", Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 3}})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 3, want: Accept},
		{at: sec, cost: 1, want: Reject, retry: 333_333_334},
		{at: sec + 333_333_333, cost: 1, want: Reject, retry: 1}, // 3*666,666,667 = 2,000,000,001 > 2e9
		{at: sec + 333_333_334, cost: 1, want: Accept},           // 3*666,666,666 = 1,999,999,998 <= 2e9
	})

	// 7 per 1m: W-e' <= 6*60e9/7 = 51,428,571,428.57ns, so e' >=
	// 60e9 - 51,428,571,428 = 8,571,428,572ns.
	l = mustLimiter(t, "sliding-window", Params{Policy: Policy{Rate: 7, Per: time.Minute, Burst: 7}})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 7, want: Accept},
		{at: time.Minute, cost: 1, want: Reject, retry: 8_571_428_572},
		{at: time.Minute + 8_571_428_571, cost: 1, want: Reject, retry: 1},
		{at: time.Minute + 8_571_428_572, cost: 1, want: Accept},
	})
}

func TestSlidingWindowCountRejected(t *testing.T) {
	const ms, sec = time.Millisecond, time.Second
	pol := Policy{Rate: 2, Per: time.Second, Burst: 2}

	l := mustLimiter(t, "sliding-window", Params{Policy: pol})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 1, want: Accept},
		{at: 0, cost: 1, want: Accept},
		// cur = 2: in window 1 with prev' = 2, 2*(W-e') + W <= 2W iff
		// e' >= W/2: at 1.5s.
		{at: 0, cost: 1, want: Reject, retry: 1500 * ms},
	})

	l = mustLimiter(t, "sliding-window", Params{Policy: pol, CountRejected: true})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 1, want: Accept},
		{at: 0, cost: 1, want: Accept},
		// Counted, cur = 3: 3*(W-e') <= W iff W-e' <= 333,333,333 iff
		// e' >= 666,666,667ns: the rejected attempt counts against itself.
		{at: 0, cost: 1, want: Reject, retry: sec + 666_666_667},
		// Never-fitting requests count too: cur = 3+5 = 8, and 8*(W-e') <=
		// W iff e' >= 875ms.
		{at: 0, cost: 5, want: Reject, retry: Never},
		// At 1.875s-1ns, 8*(125ms+1ns) + W > 2W. Uncounted it would fit
		// 1ns later (8*125ms + W = 2W), but counted, cur = 1 and
		// 8*(W-e') + 2W <= 2W holds only at window 2 (prev = 1: W + W).
		{at: sec + 875*ms - 1, cost: 1, want: Reject, retry: 125*ms + 1},
		{at: 2 * sec, cost: 1, want: Accept},
	})
}

func TestSlidingWindowRelease(t *testing.T) {
	const ms, sec = time.Millisecond, time.Second
	require.Equal(t, uintptr(24), unsafe.Sizeof(slidingWindowState{}), "window index + two counts")

	l := mustLimiter(t, "sliding-window", Params{Policy: Policy{Rate: 2, Per: time.Second, Burst: 2}})
	live := l.(stateHolder)
	checkRows(t, l, []decideRow{
		{at: 500 * ms, key: 0, cost: 1, want: Accept},
		{at: 900 * ms, key: 1, cost: 2, want: Accept},
		{at: 900 * ms, key: 2, cost: 3, want: Reject, retry: Never}, // no state for a reject
	})
	require.Equal(t, Memory{BytesPerKeyMax: 24, KeysPeak: 2, BytesPeak: 48}, l.Memory())
	// Window 0's counts weigh on window 1 as prev: alive until 2s.
	requireLive(t, live, 2*sec-1, 2, 48)
	requireLive(t, live, 2*sec, 0, 0)

	// A key counted in window 1 after window 0 is released at 3s.
	checkRows(t, l, []decideRow{
		{at: 2500 * ms, cost: 1, want: Accept}, // window 2
		{at: 3500 * ms, cost: 1, want: Accept}, // window 3: prev = 1
		// prev = 1 weighs 1*(W-e) and cur+c = 2 fills 2W: it fits once
		// prev's weight is 0, as window 4 starts (prev = 1, cur = 0).
		{at: 3500 * ms, cost: 1, want: Reject, retry: 500 * ms},
	})
	requireLive(t, live, 5*sec-1, 1, 24)
	requireLive(t, live, 5*sec, 0, 0)
}

func TestWindowCountersSaturate(t *testing.T) {
	const ms, sec = time.Millisecond, time.Second
	// With count-rejected the counts grow without bound; they saturate at
	// MaxInt64, and the weighted sum is compared by division, so huge
	// counts neither overflow nor wrap into admissions.
	pol := Policy{Rate: 2, Per: time.Second, Burst: 2}
	huge := int64(math.MaxInt64 - 1)
	for _, name := range []string{"fixed-window", "sliding-window", "sliding-log"} {
		l := mustLimiter(t, name, Params{Policy: pol, CountRejected: true})
		rows := []decideRow{
			{at: 0, cost: huge, want: Reject, retry: Never},
			{at: 0, cost: huge, want: Reject, retry: Never}, // count saturates
			{at: 0, cost: huge, want: Reject, retry: Never},
		}
		switch name {
		case "fixed-window":
			rows = append(rows,
				decideRow{at: 500 * ms, cost: 1, want: Reject, retry: 500 * ms},
				decideRow{at: sec, cost: 2, want: Accept})
		case "sliding-window":
			// prev = MaxInt64 in window 1: only window 2 forgets it.
			rows = append(rows,
				decideRow{at: 500 * ms, cost: 1, want: Reject, retry: 1500 * ms},
				decideRow{at: sec + 999*ms, cost: 1, want: Reject, retry: 1 * ms}, // counted: cur = 1
				decideRow{at: 2 * sec, cost: 2, want: Reject, retry: 2 * sec},     // prev = 1: W + 2W > 2W; counted too
				decideRow{at: 4 * sec, cost: 2, want: Accept})
		case "sliding-log":
			// Each logged as L+1 = 3; they all stop counting at 1s.
			rows = append(rows,
				decideRow{at: 500 * ms, cost: 1, want: Reject, retry: 500 * ms},
				decideRow{at: sec, cost: 1, want: Accept},             // 500ms's rejected 1 still counts: 1+1 <= 2
				decideRow{at: sec, cost: 1, want: Reject, retry: sec}, // 500ms, 1s and this one: two must go
				decideRow{at: 3 * sec, cost: 2, want: Accept})
		}
		checkRows(t, l, rows)
	}
}
