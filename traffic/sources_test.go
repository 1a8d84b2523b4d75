package traffic

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const maxDur = time.Duration(math.MaxInt64)

func TestMulDiv(t *testing.T) {
	for _, tt := range []struct {
		name    string
		a, b, c int64
		want    int64
		ok      bool
	}{
		{"zero", 0, 12345, 7, 0, true},
		// 100ms/3 = 33333333.33.. ns, floored
		{"third", 1, 100e6, 3, 33333333, true},
		// 200ms/3 = 66666666.66.. ns, floored (not rounded to ..67)
		{"two thirds", 2, 100e6, 3, 66666666, true},
		// 999999999 * 3.6e12 = 3.6e21 overflows int64 (9.2e18); /1e9 = i*3600
		{"wide product", 999999999, int64(time.Hour), 1e9, 999999999 * 3600, true},
		// (2^63-1)^2 / (2^63-1) = 2^63-1: the product needs 126 bits
		{"max squared over max", math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64, true},
		// 2*(2^63-1) = 18446744073709551614; /3 = 6148914691236517204 r 2
		{"two thirds of max", 2, math.MaxInt64, 3, 6148914691236517204, true},
		// 4*(2^63-1)/3 = 12297829382473034409: fits a uint64, not an int64
		{"quotient past int64", 4, math.MaxInt64, 3, 0, false},
		// (2^63-1)^2 / 1: the high word is >= c, the quotient needs 126 bits
		{"quotient past uint64", math.MaxInt64, math.MaxInt64, 1, 0, false},
		// nothing fits with c = 0 (a Rate with Count 0 sends nothing)
		{"zero divisor", 1, 1, 0, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := mulDiv(tt.a, tt.b, tt.c)
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestTimes(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		name  string
		src   Times
		at    []time.Duration
		names []string
	}{
		{
			// unsorted with a duplicate: sorted, the duplicate kept
			name: "sorted", src: Times{Common: one, At: []time.Duration{400 * ms, 0, 200 * ms, 0}},
			at:    []time.Duration{0, 0, 200 * ms, 400 * ms},
			names: []string{"k", "k", "k", "k"},
		},
		{
			// every client at every instant, clients in index order
			name: "clients", src: Times{Common: clients(2), At: []time.Duration{200 * ms, 0}},
			at:    []time.Duration{0, 0, 200 * ms, 200 * ms},
			names: []string{"c-0", "c-1", "c-0", "c-1"},
		},
		{
			// [start, end): 100ms kept, 400ms dropped
			name: "start and end",
			src: Times{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, Start: 100 * ms, End: 400 * ms},
				At: []time.Duration{500 * ms, 0, 100 * ms, 200 * ms, 300 * ms, 400 * ms}},
			at:    []time.Duration{100 * ms, 200 * ms, 300 * ms},
			names: []string{"k", "k", "k"},
		},
		{
			name: "empty", src: Times{Common: one},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, k := openOne(t, &tt.src, 0)
			require.Equal(t, tt.at, ats(got))
			require.Equal(t, tt.names, keyNames(k, got))
		})
	}
}

func TestTimesCopiesSourceAndCost(t *testing.T) {
	at := []time.Duration{time.Second, 0}
	src := &Times{Common: Common{Clients: Clients{Key: "k"}, Cost: 3}, At: at}
	got, _ := openOne(t, src, 2)
	// the source's own list is not sorted in place: a scenario stays as parsed
	require.Equal(t, []time.Duration{time.Second, 0}, at)
	require.Equal(t, []Arrival{
		{At: 0, Key: 0, Cost: 3, Source: 2},
		{At: time.Second, Key: 0, Cost: 3, Source: 2},
	}, got)
}

func TestTimesEnd(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		name string
		src  Times
		want time.Duration
	}{
		// the last instant has been sent once 400ms+1ns is reached
		{"last instant + 1ns", Times{At: []time.Duration{400 * ms, 0}}, 400*ms + 1},
		// an End sooner than that cuts it
		{"cut by end", Times{Common: Common{End: 300 * ms}, At: []time.Duration{400 * ms, 0}}, 300 * ms},
		// a later End does not lengthen it
		{"later end", Times{Common: Common{End: time.Second}, At: []time.Duration{400 * ms}}, 400*ms + 1},
		// no instants: 0, nothing of its own
		{"empty", Times{}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.src.End())
		})
	}
}

func TestBurst(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		name  string
		src   Burst
		at    []time.Duration
		names []string
	}{
		{
			// i*100ms/3: 0, 33333333.3 -> 33333333, 66666666.6 -> 66666666
			name: "count 3 over 100ms", src: Burst{Common: one, At: time.Second, Count: 3, Over: 100 * ms},
			at:    []time.Duration{time.Second, time.Second + 33333333, time.Second + 66666666},
			names: []string{"k", "k", "k"},
		},
		{
			// i*1s/7 floored: 142857142.8, 285714285.7, 428571428.5, ...
			name: "count 7 over 1s", src: Burst{Common: one, Count: 7, Over: time.Second},
			at:    []time.Duration{0, 142857142, 285714285, 428571428, 571428571, 714285714, 857142857},
			names: []string{"k", "k", "k", "k", "k", "k", "k"},
		},
		{
			// over 0: every request at At
			name: "over 0", src: Burst{Common: one, At: 5 * ms, Count: 3},
			at:    []time.Duration{5 * ms, 5 * ms, 5 * ms},
			names: []string{"k", "k", "k"},
		},
		{
			// each client sends its request i at the same instant, in client order
			name: "clients", src: Burst{Common: clients(2), Count: 2, Over: 10 * ms},
			at:    []time.Duration{0, 0, 5 * ms, 5 * ms},
			names: []string{"c-0", "c-1", "c-0", "c-1"},
		},
		{
			// requests at 0, 100, 200, 300ms; [100ms, 300ms) keeps two
			name: "start and end",
			src: Burst{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, Start: 100 * ms, End: 300 * ms},
				Count: 4, Over: 400 * ms},
			at:    []time.Duration{100 * ms, 200 * ms},
			names: []string{"k", "k"},
		},
		{
			name: "count 0", src: Burst{Common: one, Over: time.Second},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, k := openOne(t, &tt.src, 0)
			require.Equal(t, tt.at, ats(got))
			require.Equal(t, tt.names, keyNames(k, got))
		})
	}
}

func TestBurstCopiesSourceAndCost(t *testing.T) {
	got, _ := openOne(t, &Burst{Common: Common{Clients: Clients{Key: "k"}, Cost: 5}, Count: 1}, 3)
	require.Equal(t, []Arrival{{At: 0, Key: 0, Cost: 5, Source: 3}}, got)
}

// TestBurstWide checks instants whose product i*over overflows an int64:
// only the 128-bit mulDiv gets them right. Walking a billion requests would
// be slow, so it asks the stream's grid for request i directly.
func TestBurstWide(t *testing.T) {
	for _, tt := range []struct {
		name string
		src  Burst
		i    int64
		want time.Duration
	}{
		// 1e9 over 1h: i*3.6e12/1e9 = i*3600ns exactly
		{"1e9 over 1h, first", Burst{Count: 1e9, Over: time.Hour}, 0, 0},
		{"1e9 over 1h, second", Burst{Count: 1e9, Over: time.Hour}, 1, 3600},
		// 500000000*3.6e12 = 1.8e21 > 9.2e18: half way, 30 minutes
		{"1e9 over 1h, middle", Burst{Count: 1e9, Over: time.Hour}, 5e8, 30 * time.Minute},
		// the last: 1h - 3600ns
		{"1e9 over 1h, last", Burst{Count: 1e9, Over: time.Hour}, 1e9 - 1, time.Hour - 3600},
		// (2^63-1)/3 = 3074457345618258602 r 1
		{"3 over max", Burst{Count: 3, Over: maxDur}, 1, 3074457345618258602},
		// 2*(2^63-1)/3 = 6148914691236517204 r 2
		{"3 over max, last", Burst{Count: 3, Over: maxDur}, 2, 6148914691236517204},
		// At is added after the division
		{"at + offset", Burst{At: time.Second, Count: 1e9, Over: time.Hour}, 1e9 - 1, time.Second + time.Hour - 3600},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := tt.src
			src.Clients = Clients{Key: "k"}
			src.Cost = 1
			s, err := src.Open(NewKeys(), 0, 0)
			require.NoError(t, err)
			at, ok := s.(*gridStream).at(tt.i)
			require.True(t, ok)
			require.Equal(t, tt.want, at)
		})
	}
	// and through the stream, the first few of the billion
	s, err := (&Burst{Common: one, Count: 1e9, Over: time.Hour}).Open(NewKeys(), 0, 0)
	require.NoError(t, err)
	got, _ := drainAtMost(s, 4)
	require.Equal(t, []time.Duration{0, 3600, 7200, 10800}, ats(got))
}

func TestBurstEnd(t *testing.T) {
	for _, tt := range []struct {
		name string
		src  Burst
		want time.Duration
	}{
		// last request at 1s + 66666666 (2*100ms/3), done 1ns later
		{"count 3 over 100ms", Burst{At: time.Second, Count: 3, Over: 100 * time.Millisecond}, time.Second + 66666666 + 1},
		// all at At
		{"over 0", Burst{At: time.Second, Count: 5}, time.Second + 1},
		// an End sooner than that cuts it
		{"cut by end", Burst{Common: Common{End: time.Second}, At: time.Second, Count: 2, Over: time.Second}, time.Second},
		// (1e9-1)*1h overflows int64: the last request is at 1h - 3600ns
		{"wide", Burst{Count: 1e9, Over: time.Hour}, time.Hour - 3600 + 1},
		{"count 0", Burst{At: time.Second}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.src.End())
		})
	}
}

func TestSteady(t *testing.T) {
	ms := time.Millisecond
	steady := func(c Common, count int64, per time.Duration) *Steady {
		return &Steady{Common: c, Rate: Rate{Count: count, Per: per}}
	}
	until := func(c Common, end time.Duration) Common { c.End = end; return c }
	for _, tt := range []struct {
		name  string
		src   *Steady
		at    []time.Duration
		names []string
	}{
		{
			// i*1s/3: 333333333.3 and 666666666.6 floored; the 4th exactly at 1s
			name: "3/s", src: steady(until(one, time.Second+1), 3, time.Second),
			at:    []time.Duration{0, 333333333, 666666666, time.Second},
			names: []string{"k", "k", "k", "k"},
		},
		{
			// i*60s/7: 8571428571.4, 17142857142.8, 25714285714.2, 34285714285.7,
			// 42857142857.1, 51428571428.5 floored, and i=7 exactly at 60s
			name: "7/m", src: steady(until(one, time.Minute+1), 7, time.Minute),
			at: []time.Duration{0, 8571428571, 17142857142, 25714285714, 34285714285,
				42857142857, 51428571428, time.Minute},
			names: []string{"k", "k", "k", "k", "k", "k", "k", "k"},
		},
		{
			// the end is exclusive: 4/s until 1s stops before the request at 1s
			name: "end exclusive", src: steady(until(one, time.Second), 4, time.Second),
			at:    []time.Duration{0, 250 * ms, 500 * ms, 750 * ms},
			names: []string{"k", "k", "k", "k"},
		},
		{
			// request i at 250ms + i*500ms while < 2s
			name:  "start offset",
			src:   steady(Common{Clients: Clients{Key: "k"}, Cost: 1, Start: 250 * ms, End: 2 * time.Second}, 2, time.Second),
			at:    []time.Duration{250 * ms, 750 * ms, 1250 * ms, 1750 * ms},
			names: []string{"k", "k", "k", "k"},
		},
		{
			// request i goes to client i mod 3; the rate is the total, not per client
			name: "clients", src: steady(until(clients(3), 500*ms), 10, time.Second),
			at:    []time.Duration{0, 100 * ms, 200 * ms, 300 * ms, 400 * ms},
			names: []string{"c-0", "c-1", "c-2", "c-0", "c-1"},
		},
		{
			// 5/100ms: every 20ms
			name: "5/100ms", src: steady(until(one, 100*ms), 5, 100*ms),
			at:    []time.Duration{0, 20 * ms, 40 * ms, 60 * ms, 80 * ms},
			names: []string{"k", "k", "k", "k", "k"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, k := openOne(t, tt.src, 0)
			require.Equal(t, tt.at, ats(got))
			require.Equal(t, tt.names, keyNames(k, got))
		})
	}
}

func TestSteadyCopiesSourceAndCost(t *testing.T) {
	src := &Steady{Common: Common{Clients: Clients{Key: "k"}, Cost: 4, End: time.Second}, Rate: Rate{Count: 2, Per: time.Second}}
	got, _ := openOne(t, src, 1)
	require.Equal(t, []Arrival{
		{At: 0, Key: 0, Cost: 4, Source: 1},
		{At: 500 * time.Millisecond, Key: 0, Cost: 4, Source: 1},
	}, got)
	require.Equal(t, time.Second, src.End()) // its own End
	require.Equal(t, time.Duration(0), (&Steady{}).End())
}

// TestSteadyNoDrift: 3/s for 1000s puts request 3000 at exactly 1000s, where
// adding a float 1/3s a thousand times would not.
func TestSteadyNoDrift(t *testing.T) {
	src := &Steady{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, End: 1000*time.Second + 1},
		Rate: Rate{Count: 3, Per: time.Second}}
	got, _ := openOne(t, src, 0)
	require.Len(t, got, 3001) // i = 0 .. 3000
	// 2999s/3 = 999.666666666.. s
	require.Equal(t, 999666666666*time.Nanosecond, got[2999].At)
	require.Equal(t, 1000*time.Second, got[3000].At)
	for i, a := range got {
		require.Equal(t, time.Duration(int64(i)*int64(time.Second)/3), a.At, "request %d", i)
	}
}

// drainAtMost reads at most n arrivals of s, so that a stream that would
// never end fails a test instead of hanging it; more says whether it had more.
func drainAtMost(s Stream, n int) (got []Arrival, more bool) {
	var a Arrival
	for s.Next(&a) {
		if len(got) == n {
			return got, true
		}
		got = append(got, a)
	}
	return got, false
}

// TestSteadyNearLimits: without an end, a steady source stops at the last
// instant a time.Duration can hold, instead of overflowing or repeating it.
func TestSteadyNearLimits(t *testing.T) {
	for _, tt := range []struct {
		name  string
		start time.Duration
		rate  Rate
		want  []time.Duration
	}{
		// request 2 would be at 2^63, one past the largest Duration
		{"1 per 2^62", 0, Rate{1, 1 << 62}, []time.Duration{0, 1 << 62}},
		// i*(2^63-1)/3: request 3 at exactly 2^63-1, request 4 past it
		{"3 per max", 0, Rate{3, maxDur}, []time.Duration{0, 3074457345618258602, 6148914691236517204, maxDur}},
		// from 3h before the end of time, hourly: the 4th lands on 2^63-1 itself
		{"start near max", maxDur - 3*time.Hour, Rate{1, time.Hour},
			[]time.Duration{maxDur - 3*time.Hour, maxDur - 2*time.Hour, maxDur - time.Hour, maxDur}},
		// request 1 at 2^63-1 - 1h + 2h would overflow start + offset
		{"start + offset overflows", maxDur - time.Hour, Rate{1, 2 * time.Hour}, []time.Duration{maxDur - time.Hour}},
		// a rate of 0 requests sends nothing rather than dividing by zero
		{"count 0", 0, Rate{0, time.Second}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := &Steady{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, Start: tt.start}, Rate: tt.rate}
			s, err := src.Open(NewKeys(), 0, 0)
			require.NoError(t, err)
			got, more := drainAtMost(s, len(tt.want)+10)
			require.False(t, more, "the stream does not end")
			require.Equal(t, tt.want, ats(got))
			require.NoError(t, s.Err())
		})
	}
}
