package traffic

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAligned(t *testing.T) {
	ms := time.Millisecond
	with := func(c Common, start, end time.Duration) Common { c.Start, c.End = start, end; return c }
	for _, tt := range []struct {
		name  string
		src   Aligned
		at    []time.Duration
		names []string
	}{
		{
			// k=0 would be at -100ms: the first occurrence is 1s-100ms = 900ms,
			// straddling the boundary at 1s. Request i at 900ms + i*200ms/3:
			// 66666666.6 and 133333333.3 floored. Then the same from 1900ms;
			// 2900ms is past the end.
			name: "negative offset straddles a boundary",
			src:  Aligned{Common: with(one, 0, 2500*ms), Every: time.Second, Offset: -100 * ms, Count: 3, Over: 200 * ms},
			at: []time.Duration{900 * ms, 966666666, 1033333333,
				1900 * ms, 1966666666, 2033333333},
			names: []string{"k", "k", "k", "k", "k", "k"},
		},
		{
			// the defaults: one request at every boundary, 0, 1s, 2s; 3s is the end
			name:  "count 1 at every boundary",
			src:   Aligned{Common: with(one, 0, 3*time.Second), Every: time.Second, Count: 1},
			at:    []time.Duration{0, time.Second, 2 * time.Second},
			names: []string{"k", "k", "k"},
		},
		{
			// over 0: a client's count requests at once; by time, then client,
			// then i: c-0's two, then c-1's two
			name:  "clients, then requests",
			src:   Aligned{Common: with(clients(2), 0, time.Second), Every: 500 * ms, Count: 2},
			at:    []time.Duration{0, 0, 0, 0, 500 * ms, 500 * ms, 500 * ms, 500 * ms},
			names: []string{"c-0", "c-0", "c-1", "c-1", "c-0", "c-0", "c-1", "c-1"},
		},
		{
			// count 3 over 2ns: i*2/3 = 0, 0.66 -> 0, 1.33 -> 1: requests 0 and
			// 1 share an instant. At 0: c-0's i=0,1, then c-1's; at 1ns: c-0's
			// i=2, then c-1's.
			name:  "requests that share an instant stay with their client",
			src:   Aligned{Common: with(clients(2), 0, time.Second), Every: time.Second, Count: 3, Over: 2},
			at:    []time.Duration{0, 0, 0, 0, 1, 1},
			names: []string{"c-0", "c-0", "c-1", "c-1", "c-0", "c-1"},
		},
		{
			// occurrences at 250ms, 1250ms, 2250ms: 250ms is before the start
			name:  "positive offset from a start",
			src:   Aligned{Common: with(one, time.Second, 3*time.Second), Every: time.Second, Offset: 250 * ms, Count: 1},
			at:    []time.Duration{1250 * ms, 2250 * ms},
			names: []string{"k", "k"},
		},
		{
			// the occurrence at 900ms is before the start 950ms: it sends
			// nothing, not even its requests at 966ms and 1033ms; the next is at
			// 1900ms
			name: "an occurrence before the start sends nothing",
			src:  Aligned{Common: with(one, 950*ms, 2*time.Second), Every: time.Second, Offset: -100 * ms, Count: 3, Over: 200 * ms},
			at:   []time.Duration{1900 * ms, 1966666666},
			// 2033333333 is past the end 2s
			names: []string{"k", "k"},
		},
		{
			// the end cuts an occurrence: 900ms and 966666666 are before 1s
			name:  "end cuts an occurrence",
			src:   Aligned{Common: with(one, 0, time.Second), Every: time.Second, Offset: -100 * ms, Count: 3, Over: 200 * ms},
			at:    []time.Duration{900 * ms, 966666666},
			names: []string{"k", "k"},
		},
		{
			// a start on an occurrence includes it
			name:  "start on an occurrence",
			src:   Aligned{Common: with(one, 2*time.Second, 4*time.Second), Every: time.Second, Count: 1},
			at:    []time.Duration{2 * time.Second, 3 * time.Second},
			names: []string{"k", "k"},
		},
		{
			// every 1s, offset 999ms (the largest below every): 999ms, 1999ms
			name:  "offset just below every",
			src:   Aligned{Common: with(one, 0, 2*time.Second), Every: time.Second, Offset: 999 * ms, Count: 1},
			at:    []time.Duration{999 * ms, 1999 * ms},
			names: []string{"k", "k"},
		},
		{
			name: "count 0 sends nothing",
			src:  Aligned{Common: with(one, 0, time.Second), Every: time.Second},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, k := openOne(t, &tt.src, 0)
			require.Equal(t, tt.at, ats(got))
			require.Equal(t, tt.names, keyNames(k, got))
		})
	}
}

func TestAlignedCopiesSourceAndCost(t *testing.T) {
	src := &Aligned{Common: Common{Clients: Clients{Key: "k"}, Cost: 7, End: 2 * time.Second}, Every: time.Second, Count: 1}
	got, _ := openOne(t, src, 4)
	require.Equal(t, []Arrival{
		{At: 0, Key: 0, Cost: 7, Source: 4},
		{At: time.Second, Key: 0, Cost: 7, Source: 4},
	}, got)
	require.Equal(t, 2*time.Second, src.End())
	require.Equal(t, time.Duration(0), (&Aligned{}).End())
}

// TestAlignedNearLimits: without an end, an aligned source stops at the last
// instant a time.Duration can hold, instead of overflowing.
func TestAlignedNearLimits(t *testing.T) {
	for _, tt := range []struct {
		name string
		src  Aligned
		want []time.Duration
	}{
		// max = q*1h + r: with offset r - 30m, occurrence q is at max - 30m
		// and q+1 at max + 30m, past the end of time
		{"offset past the end of time",
			Aligned{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, Start: maxDur - time.Hour},
				Every: time.Hour, Offset: maxDur%time.Hour - 30*time.Minute, Count: 1},
			[]time.Duration{maxDur - 30*time.Minute}},
		// an occurrence at max - 1ns whose second request would be at max + 1ns
		{"spread past the end of time",
			Aligned{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, Start: maxDur - 1},
				Every: maxDur - 1, Count: 2, Over: 4},
			[]time.Duration{maxDur - 1}},
		// every max: occurrence 0 at 0 and occurrence 1 at max itself
		{"every max",
			Aligned{Common: Common{Clients: Clients{Key: "k"}, Cost: 1}, Every: maxDur, Count: 1},
			[]time.Duration{0, maxDur}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.src.Open(NewKeys(), 0, 0)
			require.NoError(t, err)
			got, more := drainAtMost(s, len(tt.want)+10)
			require.False(t, more, "the stream does not end")
			require.Equal(t, tt.want, ats(got))
		})
	}
}

func TestAlignedInvalid(t *testing.T) {
	for name, src := range map[string]Aligned{
		"every 0":           {Count: 1},
		"offset = every":    {Every: time.Second, Offset: time.Second, Count: 1},
		"offset = -every":   {Every: time.Second, Offset: -time.Second, Count: 1},
		"over = every":      {Every: time.Second, Over: time.Second, Count: 1},
		"over negative":     {Every: time.Second, Over: -1, Count: 1},
		"every negative":    {Every: -time.Second, Count: 1},
		"offset past every": {Every: time.Second, Offset: 2 * time.Second, Count: 1},
	} {
		src.Common = one
		_, err := src.Open(NewKeys(), 0, 0)
		require.Error(t, err, name)
	}
}
