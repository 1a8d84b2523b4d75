package algorithms

import (
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestSlidingLogDoubleBurst(t *testing.T) {
	const ms = time.Millisecond
	// docs/algorithms.md, worked example 1: L=10 per 1s, ten requests at 900..990ms,
	// ten at 1000..1090ms. At 1000+10i ms the ten entries 900..990 all
	// still count (t - s < 1s), so the second ten are rejected; each must
	// wait for the oldest entry, logged at 900ms, to stop counting at
	// 1900ms.
	l := mustLimiter(t, "sliding-log", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 10}})
	var rows []decideRow
	for i := range 10 {
		rows = append(rows, decideRow{at: 900*ms + time.Duration(i)*10*ms, cost: 1, want: Accept})
	}
	for i := range 10 {
		at := 1000*ms + time.Duration(i)*10*ms
		rows = append(rows, decideRow{at: at, cost: 1, want: Reject, retry: 1900*ms - at})
	}
	rows = append(rows,
		decideRow{at: 1900 * ms, cost: 1, want: Accept},                 // 900ms stops counting at exactly 1900ms
		decideRow{at: 1900 * ms, cost: 1, want: Reject, retry: 10 * ms}, // full again until 910ms's entry goes
	)
	checkRows(t, l, rows)
}

func TestSlidingLogBoundaries(t *testing.T) {
	const ms, sec = time.Millisecond, time.Second
	l := mustLimiter(t, "sliding-log", Params{Policy: Policy{Rate: 2, Per: time.Second, Burst: 2}})
	checkRows(t, l, []decideRow{
		{at: 100 * ms, cost: 1, want: Accept},
		{at: 300 * ms, cost: 1, want: Accept},                           // log: 100ms, 300ms
		{at: 1100*ms - 1, cost: 1, want: Reject, retry: 1},              // s+W-1: 100ms still counts for 1ns
		{at: 1100 * ms, cost: 1, want: Accept},                          // s+W exactly: 100ms no longer counts
		{at: 1100 * ms, cost: 1, want: Reject, retry: 200 * ms},         // 300ms, 1100ms count; 300ms goes at 1.3s
		{at: 1300 * ms, cost: 2, want: Reject, retry: 800 * ms},         // 1100ms counts: 1+2 > 2 until 2.1s
		{at: 1300 * ms, cost: 3, want: Reject, retry: Never},            // 3 > L
		{at: 1300 * ms, key: 1, cost: 2, want: Accept},                  // key 1 has its own log
		{at: 2100 * ms, cost: 2, want: Accept},                          // log empty at 2.1s
		{at: 2100 * ms, key: 1, cost: 1, want: Reject, retry: 200 * ms}, // key 1's cost 2 counts until 2.3s
		{at: 3 * sec, key: 1, cost: 1, want: Accept},
	})

	// Costs: the wait is until enough cost has stopped counting, here two
	// entries.
	l = mustLimiter(t, "sliding-log", Params{Policy: Policy{Rate: 5, Per: time.Second, Burst: 5}})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 2, want: Accept},
		{at: 100 * ms, cost: 2, want: Accept},
		{at: 200 * ms, cost: 1, want: Accept}, // sum 5
		// 5+3 > 5: 3 must go. At 1s the first 2 go (5-2+3 = 6 > 5), at
		// 1.1s the second 2 (5-4+3 = 4 <= 5): wait 600ms.
		{at: 500 * ms, cost: 3, want: Reject, retry: 600 * ms},
		{at: 1100*ms - 1, cost: 3, want: Reject, retry: 1},
		{at: 1100 * ms, cost: 3, want: Accept},
	})
}

func TestSlidingLogOddRates(t *testing.T) {
	const ms, sec = time.Millisecond, time.Second
	// 3 per 1s, requests spaced 333,333,333 or 333,333,334ns: the log
	// counts whole-ns times and never drifts.
	l := mustLimiter(t, "sliding-log", Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 3}})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 1, want: Accept},
		{at: 333_333_333, cost: 1, want: Accept},
		{at: 666_666_667, cost: 1, want: Accept},
		{at: 999_999_999, cost: 1, want: Reject, retry: 1}, // the entry at 0 goes at 1s
		{at: sec, cost: 1, want: Accept},
		{at: sec + 333_333_332, cost: 1, want: Reject, retry: 1},
		{at: sec + 333_333_333, cost: 1, want: Accept},
	})

	// 7 per 1m.
	l = mustLimiter(t, "sliding-log", Params{Policy: Policy{Rate: 7, Per: time.Minute, Burst: 7}})
	var rows []decideRow
	for i := range 7 {
		rows = append(rows, decideRow{at: time.Duration(i) * sec, cost: 1, want: Accept}) // 0s..6s
	}
	rows = append(rows,
		decideRow{at: 59*sec + 500*ms, cost: 1, want: Reject, retry: 500 * ms}, // 0s's entry goes at 60s
		decideRow{at: time.Minute, cost: 1, want: Accept},
		decideRow{at: time.Minute, cost: 1, want: Reject, retry: sec}, // next is 1s's, at 61s
		decideRow{at: time.Minute, cost: 2, want: Reject, retry: 2 * sec},
	)
	checkRows(t, l, rows)
}

func TestSlidingLogCountRejected(t *testing.T) {
	const ms = time.Millisecond
	pol := Policy{Rate: 2, Per: time.Second, Burst: 2}

	l := mustLimiter(t, "sliding-log", Params{Policy: pol})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 1, want: Accept},
		{at: 100 * ms, cost: 1, want: Accept},
		{at: 200 * ms, cost: 1, want: Reject, retry: 800 * ms}, // not logged: one entry (0) must go
		{at: 1000 * ms, cost: 1, want: Accept},                 // log: 100ms, 1000ms
	})

	l = mustLimiter(t, "sliding-log", Params{Policy: pol, CountRejected: true})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 1, want: Accept},
		{at: 100 * ms, cost: 1, want: Accept},
		// Logged: 0, 100, 200ms count 3, so 2 of them must go for a
		// request of 1 to fit; the rejected attempt counts against its
		// own retry: wait for 100ms's entry, at 1.1s.
		{at: 200 * ms, cost: 1, want: Reject, retry: 900 * ms},
		// At 1s the entry at 0 is gone but 100 and 200ms count: rejected
		// and logged again (100, 200, 1000ms): 200ms's goes at 1.2s.
		{at: 1000 * ms, cost: 1, want: Reject, retry: 200 * ms},
		// A cost above L is logged too (as L+1): with it, nothing fits
		// until it stops counting at 2.1s.
		{at: 1100 * ms, cost: 5, want: Reject, retry: Never},
		{at: 2100*ms - 1, cost: 1, want: Reject, retry: 1},
		{at: 2100 * ms, cost: 1, want: Accept}, // only 2.0999..s's entry counts
	})
}

func TestSlidingLogRelease(t *testing.T) {
	const ms, sec = time.Millisecond, time.Second
	require.Equal(t, uintptr(32), unsafe.Sizeof(costLog{}), "slice header + sum")
	require.Equal(t, uintptr(16), unsafe.Sizeof(costEntry{}), "expiry + cost")

	l := mustLimiter(t, "sliding-log", Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 3}})
	live := l.(stateHolder)
	checkRows(t, l, []decideRow{
		{at: 0, key: 0, cost: 1, want: Accept},
		{at: 1 * ms, key: 0, cost: 1, want: Accept},
		{at: 2 * ms, key: 0, cost: 1, want: Accept}, // key 0: 32 + 3*16 = 80 bytes
		{at: 5 * ms, key: 1, cost: 1, want: Accept}, // key 1: 32 + 16 = 48 bytes
	})
	require.Equal(t, Memory{BytesPerKeyMax: 80, KeysPeak: 2, BytesPeak: 128}, l.Memory())
	requireLive(t, live, sec-1, 2, 128)
	// Entries stop counting without their key being touched.
	requireLive(t, live, sec, 2, 2*32+3*16)        // 0's entry gone
	requireLive(t, live, sec+2*ms-1, 2, 2*32+2*16) // 1ms's gone
	requireLive(t, live, sec+2*ms, 1, 32+16)       // key 0 fresh: released
	require.Nil(t, l.(*SlidingLog).state[0].entries, "released log's ring given back")
	requireLive(t, live, sec+5*ms, 0, 0)

	// The byte peak is exact at every instant: key 0's ten entries have all
	// stopped counting when key 1 logs its ten, so the peak is one key's.
	l = mustLimiter(t, "sliding-log", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 10}})
	var rows []decideRow
	for range 10 {
		rows = append(rows, decideRow{at: 0, key: 0, cost: 1, want: Accept})
	}
	for range 10 {
		rows = append(rows, decideRow{at: sec, key: 1, cost: 1, want: Accept})
	}
	checkRows(t, l, rows)
	require.Equal(t, Memory{BytesPerKeyMax: 32 + 160, KeysPeak: 1, BytesPeak: 32 + 160}, l.Memory())
	requireLive(t, l.(stateHolder), 2*sec, 0, 0)

	// A rejected request keeps no state; with count-rejected it is an
	// entry like any other.
	for _, cr := range []bool{false, true} {
		l := mustLimiter(t, "sliding-log", Params{Policy: Policy{Rate: 1, Per: time.Second, Burst: 1}, CountRejected: cr})
		checkRows(t, l, []decideRow{{at: 0, cost: 2, want: Reject, retry: Never}})
		if cr {
			requireLive(t, l.(stateHolder), sec-1, 1, 48)
			requireLive(t, l.(stateHolder), sec, 0, 0)
		} else {
			requireLive(t, l.(stateHolder), 0, 0, 0)
		}
	}
}
