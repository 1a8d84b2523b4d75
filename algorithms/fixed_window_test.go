package algorithms

import (
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestFixedWindowDoubleBurst(t *testing.T) {
	const ms, sec = time.Millisecond, time.Second
	// docs/algorithms.md, worked example 1: L=10 per 1s, ten requests at 900..990ms
	// and ten at 1000..1090ms. The second ten fall in window 1, which
	// starts empty, so all twenty are accepted: 20 within 190ms.
	l := mustLimiter(t, "fixed-window", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 10}})
	var rows []decideRow
	for i := range 20 {
		rows = append(rows, decideRow{at: 900*ms + time.Duration(i)*10*ms, cost: 1, want: Accept})
	}
	rows = append(rows,
		// Window 1 holds ten already: rejected until window 2 starts at 2s.
		decideRow{at: 1095 * ms, cost: 1, want: Reject, retry: 905 * ms},
	)
	checkRows(t, l, rows)
}

func TestFixedWindowBoundaries(t *testing.T) {
	const ms, sec = time.Millisecond, time.Second
	l := mustLimiter(t, "fixed-window", Params{Policy: Policy{Rate: 2, Per: time.Second, Burst: 2}})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 1, want: Accept},                               // window 0 = [0, 1s): count 1
		{at: time.Second - 1, cost: 1, want: Accept},                 // last ns of window 0: count 2
		{at: time.Second - 1, cost: 1, want: Reject, retry: 1},       // full; window 1 starts 1ns later
		{at: time.Second, cost: 1, want: Accept},                     // t = 1*W exactly is window 1, empty
		{at: time.Second + 1, cost: 2, want: Reject, retry: sec - 1}, // 1+2 > 2; next window at 2s
		{at: time.Second + 1, cost: 1, want: Accept},                 // 1+1 = 2 fits: the cost-2 reject counted nothing
		{at: 1500 * ms, cost: 3, want: Reject, retry: Never},         // 3 > L can never fit
		{at: 1500 * ms, key: 1, cost: 2, want: Accept},               // key 1 has its own window count
		{at: 1500 * ms, key: 1, cost: 1, want: Reject, retry: 500 * ms},
		{at: 2 * time.Second, cost: 2, want: Accept}, // window 2 starts empty for key 0
		{at: 2 * time.Second, key: 1, cost: 2, want: Accept},
	})
}

// Gateways' long windows with large limits (Kong's day: 100000, envoy's
// YEAR) load: fixed-window forms no product of the rate with per, so the
// 2^61 bound of the other exact algorithms does not apply to it, and its
// decisions are as exact at 10^9 a year as at 10 a second.
func TestFixedWindowLargeLimits(t *testing.T) {
	const day, year = 24 * time.Hour, 8760 * time.Hour
	l := mustLimiter(t, "fixed-window", Params{Policy: Policy{Rate: 100000, Per: day, Burst: 100000}})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 99999, want: Accept},                  // window 0 = [0, 24h): count 99999
		{at: day - 1, cost: 2, want: Reject, retry: 1},      // 99999+2 > 100000; window 1 in 1ns
		{at: day - 1, cost: 1, want: Accept},                // exactly the limit
		{at: day, cost: 100000, want: Accept},               // window 1 starts empty
		{at: day, cost: 100001, want: Reject, retry: Never}, // more than the limit can never fit
	})
	l = mustLimiter(t, "fixed-window", Params{Policy: Policy{Rate: 1_000_000_000, Per: year, Burst: 1_000_000_000}})
	checkRows(t, l, []decideRow{
		{at: year - time.Second, cost: 1_000_000_000, want: Accept},
		{at: year - 1, cost: 1, want: Reject, retry: 1}, // the year's window ends at 8760h
		{at: year, cost: 1, want: Accept},
	})
	// the other exact algorithms keep the bound (their products are of
	// rate or burst with per)
	_, err := New("token-bucket", Params{Policy: Policy{Rate: 100000, Per: day, Burst: 100000}})
	require.ErrorContains(t, err, "must stay within 2^61 ns")
}

func TestFixedWindowOddRates(t *testing.T) {
	const ms, sec = time.Millisecond, time.Second
	// 3 per 1s: W/L = 333,333,333.3ns is not a whole ns, which a fixed
	// window never needs: it only counts per aligned window.
	l := mustLimiter(t, "fixed-window", Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 3}})
	checkRows(t, l, []decideRow{
		{at: 333_333_333, cost: 1, want: Accept},
		{at: 666_666_666, cost: 2, want: Accept},                     // count 3 = L
		{at: 666_666_667, cost: 1, want: Reject, retry: 333_333_333}, // until 1s
		{at: 999_999_999, cost: 1, want: Reject, retry: 1},
		{at: time.Second, cost: 3, want: Accept},
	})

	// 7 per 1m: windows of 60s from time 0.
	l = mustLimiter(t, "fixed-window", Params{Policy: Policy{Rate: 7, Per: time.Minute, Burst: 7}})
	var rows []decideRow
	for i := range 7 {
		rows = append(rows, decideRow{at: time.Duration(i) * sec, cost: 1, want: Accept}) // 0s..6s: 7 in window 0
	}
	rows = append(rows,
		decideRow{at: 59*sec + 500*ms, cost: 1, want: Reject, retry: 500 * ms}, // window 1 starts at 60s
		decideRow{at: time.Minute, cost: 7, want: Accept},                      // all of window 1 at once
		decideRow{at: time.Minute, cost: 1, want: Reject, retry: time.Minute},  // full until 120s
	)
	checkRows(t, l, rows)
}

func TestFixedWindowCountRejected(t *testing.T) {
	const ms, sec = time.Millisecond, time.Second
	pol := Policy{Rate: 3, Per: time.Second, Burst: 3}
	for _, cr := range []bool{false, true} {
		l := mustLimiter(t, "fixed-window", Params{Policy: pol, CountRejected: cr})
		rows := []decideRow{
			{at: 0, cost: 2, want: Accept},                         // count 2
			{at: 100 * ms, cost: 2, want: Reject, retry: 900 * ms}, // 2+2 > 3; counted only with count-rejected (4)
		}
		if cr {
			rows = append(rows,
				decideRow{at: 200 * ms, cost: 1, want: Reject, retry: 800 * ms}, // 4+1 > 3: the rejected 2 counted
				decideRow{at: time.Second, cost: 3, want: Accept},               // window 1 starts empty
				decideRow{at: 1100 * ms, cost: 4, want: Reject, retry: Never},   // 4 > L: never, but counted (7)
				decideRow{at: 2 * sec, cost: 1, want: Accept},
			)
		} else {
			rows = append(rows,
				decideRow{at: 200 * ms, cost: 1, want: Accept}, // 2+1 = 3: the rejected 2 counted nothing
				decideRow{at: time.Second, cost: 3, want: Accept},
				decideRow{at: 1100 * ms, cost: 4, want: Reject, retry: Never},
				decideRow{at: 2 * sec, cost: 1, want: Accept},
			)
		}
		checkRows(t, l, rows)
	}

	// A request that can never fit, on a fresh key, makes state only when
	// rejected requests are counted.
	for _, cr := range []bool{false, true} {
		l := mustLimiter(t, "fixed-window", Params{Policy: pol, CountRejected: cr})
		checkRows(t, l, []decideRow{{at: 10 * ms, cost: 9, want: Reject, retry: Never}})
		keys, bytes := l.(stateHolder).liveAt(10 * ms)
		if cr {
			require.Equal(t, [2]int64{1, 16}, [2]int64{keys, bytes})
			// ...and it makes the rest of the window reject.
			checkRows(t, l, []decideRow{{at: 20 * ms, cost: 1, want: Reject, retry: 980 * ms}})
		} else {
			require.Equal(t, [2]int64{0, 0}, [2]int64{keys, bytes})
		}
	}
}

func TestFixedWindowRelease(t *testing.T) {
	const ms, sec = time.Millisecond, time.Second
	l := mustLimiter(t, "fixed-window", Params{Policy: Policy{Rate: 2, Per: time.Second, Burst: 2}})
	live := l.(stateHolder)
	require.Equal(t, uintptr(16), unsafe.Sizeof(fixedWindowState{}), "window index + count")

	checkRows(t, l, []decideRow{
		{at: 100 * ms, key: 0, cost: 1, want: Accept},
		{at: 500 * ms, key: 1, cost: 2, want: Accept},
		{at: 600 * ms, key: 1, cost: 1, want: Reject, retry: 400 * ms}, // a reject keeps no new state
	})
	requireLive(t, live, time.Second-1, 2, 32) // both count window 0 until its last ns
	requireLive(t, live, time.Second, 0, 0)    // at (k+1)*W both are fresh again
	require.Equal(t, Memory{BytesPerKeyMax: 16, KeysPeak: 2, BytesPeak: 32}, l.Memory())

	// A key alive in window 1 is released at 2s, not before.
	checkRows(t, l, []decideRow{{at: 1999 * ms, key: 7, cost: 1, want: Accept}})
	requireLive(t, live, 2*time.Second-1, 1, 16)
	requireLive(t, live, 2*time.Second, 0, 0)
	// The table grew to key 7; the peaks did not change.
	require.Equal(t, Memory{BytesPerKeyMax: 16, KeysPeak: 2, BytesPeak: 32}, l.Memory())
}

func TestCheckOptions(t *testing.T) {
	const ms, sec = time.Millisecond, time.Second
	pol := Policy{Rate: 10, Per: time.Second, Burst: 10}
	_, err := newFixedWindowLimiter(Params{Policy: pol, MaxDelay: time.Second})
	require.Equal(t, &ParamError{Field: "max-delay", Found: "1s",
		Want: "fixed-window takes no max-delay (only token-bucket, gcra, x-time-rate)"}, err)

	cases := []struct {
		name  string
		p     Params
		field string
		want  string
	}{
		{"fixed-window", Params{Policy: pol, Nodelay: true}, "nodelay", "fixed-window takes no nodelay (only nginx)"},
		{"fixed-window", Params{Policy: pol, Max: 3}, "max", "fixed-window takes no max (only concurrency)"},
		{"sliding-log", Params{Policy: pol, NginxBurstSet: true}, "burst", "sliding-log takes no nginx burst (only nginx)"},
		{"sliding-window", Params{Policy: pol, NginxDelay: 2}, "delay", "sliding-window takes no nginx delay (only nginx)"},
		{"concurrency", Params{Policy: pol, CountRejected: true}, "count-rejected",
			"concurrency takes no count-rejected (only fixed-window, sliding-log, sliding-window)"},
		{"sliding-log", Params{Policy: pol, MaxDelay: -1}, "max-delay", "sliding-log takes no max-delay (only token-bucket, gcra, x-time-rate)"},
	}
	for _, c := range cases {
		_, err := New(c.name, c.p)
		var pe *ParamError
		require.ErrorAs(t, err, &pe, c.name)
		require.Equal(t, c.field, pe.Field, c.name)
		require.Equal(t, c.want, pe.Want, c.name)
	}

	// The options an algorithm takes pass; the policy is still checked.
	require.NoError(t, checkOptions("sliding-log", Params{Policy: pol, CountRejected: true}, "count-rejected"))
	require.NoError(t, checkOptions("concurrency", Params{Policy: pol, Max: 2, Service: time.Second}, "max"))
	for _, name := range []string{"fixed-window", "sliding-log", "sliding-window", "concurrency"} {
		_, err := New(name, Params{Policy: Policy{Rate: 0, Per: time.Second, Burst: 1}})
		var pe *ParamError
		require.ErrorAs(t, err, &pe, name)
		require.Equal(t, "rate", pe.Field, name)
	}
}
