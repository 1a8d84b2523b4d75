package algorithms

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestConcurrencyDoubleBurst(t *testing.T) {
	const ms = time.Millisecond
	// docs/algorithms.md, worked example 1 with max = B = 10 and a 20ms service time:
	// requests 10ms apart are at most 2 in flight, so all 20 pass. The
	// concurrency limiter bounds what is in flight, not the rate.
	l := mustLimiter(t, "concurrency", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 10}, Service: 20 * ms})
	var rows []decideRow
	for i := range 20 {
		rows = append(rows, decideRow{at: 900*ms + time.Duration(i)*10*ms, cost: 1, want: Accept})
	}
	checkRows(t, l, rows)
}

func TestConcurrencyBoundaries(t *testing.T) {
	const ms = time.Millisecond
	l := mustLimiter(t, "concurrency", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 10}, Max: 2, Service: 100 * ms})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 1, want: Accept},                        // in flight [0, 100ms)
		{at: 0, cost: 1, want: Accept},                        // 2 in flight = max
		{at: 0, cost: 1, want: Reject, retry: 100 * ms},       // the first completes at 100ms
		{at: 100*ms - 1, cost: 1, want: Reject, retry: 1},     // last ns of their service
		{at: 100 * ms, cost: 1, want: Accept},                 // both completed at exactly 100ms
		{at: 100 * ms, cost: 1, want: Accept},                 // 2 in flight until 200ms
		{at: 150 * ms, cost: 2, want: Reject, retry: 50 * ms}, // cost 2 needs both slots
		{at: 150 * ms, cost: 3, want: Reject, retry: Never},   // 3 > max
		{at: 150 * ms, key: 1, cost: 2, want: Accept},         // key 1 has its own slots
		{at: 200 * ms, cost: 2, want: Accept},                 // both slots free
		{at: 250 * ms, key: 1, cost: 1, want: Accept},         // key 1's 2 completed at 250ms
	})

	// Staggered completions: the wait is until enough units have completed.
	l = mustLimiter(t, "concurrency", Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 3}, Service: time.Second})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 1, want: Accept},                         // until 1s
		{at: 100 * ms, cost: 1, want: Accept},                  // until 1.1s
		{at: 200 * ms, cost: 1, want: Accept},                  // until 1.2s: 3 = max (the burst)
		{at: 300 * ms, cost: 2, want: Reject, retry: 800 * ms}, // 3+2 > 3: two must complete, at 1.1s
		{at: 1100 * ms, cost: 2, want: Accept},
	})
}

func TestConcurrencyOddService(t *testing.T) {
	const sec = time.Second
	// Service W/3 for 3 per 1s: 333,333,333ns, completions at whole ns.
	l := mustLimiter(t, "concurrency", Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 1}, Service: sec / 3})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 1, want: Accept},
		{at: 333_333_332, cost: 1, want: Reject, retry: 1},
		{at: 333_333_333, cost: 1, want: Accept},
		{at: 666_666_665, cost: 1, want: Reject, retry: 1},
		{at: 666_666_666, cost: 1, want: Accept},
	})

	// Service 0: nothing is ever in flight and no state is kept.
	l = mustLimiter(t, "concurrency", Params{Policy: Policy{Rate: 7, Per: time.Minute, Burst: 7}})
	var rows []decideRow
	for range 20 {
		rows = append(rows, decideRow{at: 0, cost: 7, want: Accept})
	}
	rows = append(rows, decideRow{at: 0, cost: 8, want: Reject, retry: Never})
	checkRows(t, l, rows)
	require.Equal(t, Memory{}, l.Memory())
}

func TestConcurrencyParams(t *testing.T) {
	pol := Policy{Rate: 10, Per: time.Second, Burst: 10}
	for _, c := range []struct {
		p     Params
		field string
	}{
		{Params{Policy: pol, Max: -1}, "max"},
		{Params{Policy: pol, Service: -1}, "service"},
		{Params{Policy: pol, Service: maxExact + 1}, "service"},
		{Params{Policy: pol, MaxDelay: time.Second}, "max-delay"},
	} {
		_, err := New("concurrency", c.p)
		var pe *ParamError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, c.field, pe.Field)
	}
	// Max 0 means the burst.
	l := mustLimiter(t, "concurrency", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 3}, Service: time.Second})
	checkRows(t, l, []decideRow{
		{at: 0, cost: 3, want: Accept},
		{at: 0, cost: 1, want: Reject, retry: time.Second},
	})
}

func TestConcurrencyRelease(t *testing.T) {
	const ms = time.Millisecond
	l := mustLimiter(t, "concurrency", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 3}, Service: 100 * ms})
	live := l.(stateHolder)
	checkRows(t, l, []decideRow{
		{at: 0, key: 0, cost: 1, want: Accept},
		{at: 10 * ms, key: 0, cost: 2, want: Accept}, // key 0: 32 + 2*16 = 64 bytes
		{at: 20 * ms, key: 1, cost: 1, want: Accept}, // key 1: 48 bytes
		{at: 20 * ms, key: 1, cost: 3, want: Reject, retry: 100 * ms},
	})
	require.Equal(t, Memory{BytesPerKeyMax: 64, KeysPeak: 2, BytesPeak: 112}, l.Memory())
	requireLive(t, live, 100*ms-1, 2, 112)
	requireLive(t, live, 100*ms, 2, 96) // key 0's first request completed
	requireLive(t, live, 110*ms, 1, 48) // key 0 has nothing in flight: released
	require.Nil(t, l.(*Concurrency).state[0].entries, "released FIFO's ring given back")
	requireLive(t, live, 120*ms, 0, 0)
}
