package traffic

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestOnOff(t *testing.T) {
	ms := time.Millisecond
	onoff := func(c Common, start, end time.Duration, count int64, per, on, off time.Duration) *OnOff {
		c.Start, c.End = start, end
		return &OnOff{Common: c, Rate: Rate{Count: count, Per: per}, On: on, Off: off}
	}
	for _, tt := range []struct {
		name  string
		src   *OnOff
		at    []time.Duration
		names []string
	}{
		{
			// 10/s is one every 100ms: 0, 100, 200 in [0, 250); silence in
			// [250, 500); again 500, 600, 700 in [500, 750); 1s is the end
			name: "10/s on 250ms off 250ms", src: onoff(one, 0, time.Second, 10, time.Second, 250*ms, 250*ms),
			at:    []time.Duration{0, 100 * ms, 200 * ms, 500 * ms, 600 * ms, 700 * ms},
			names: []string{"k", "k", "k", "k", "k", "k"},
		},
		{
			// j*1s/3 floored in each phase: 333333333.3 and 666666666.6; the
			// fourth, at 1s, is not inside [0, 1s); the next phase starts at 2s
			// (on + off) and counts j from 0 again
			name: "3/s on 1s off 1s", src: onoff(one, 0, 4*time.Second, 3, time.Second, time.Second, time.Second),
			at:    []time.Duration{0, 333333333, 666666666, 2 * time.Second, 2*time.Second + 333333333, 2*time.Second + 666666666},
			names: []string{"k", "k", "k", "k", "k", "k"},
		},
		{
			// the client counter runs across phases: 3 requests per phase go to
			// c-0, c-1, c-0, then c-1, c-0, c-1 (not c-0 again)
			name: "clients counted across phases", src: onoff(clients(2), 0, time.Second, 10, time.Second, 250*ms, 250*ms),
			at:    []time.Duration{0, 100 * ms, 200 * ms, 500 * ms, 600 * ms, 700 * ms},
			names: []string{"c-0", "c-1", "c-0", "c-1", "c-0", "c-1"},
		},
		{
			// phases start at the start: [1s, 1.25s) then [2s, 2.25s); the end
			// 2.2s cuts 2.2s itself
			name: "start and end", src: onoff(one, time.Second, 2200*ms, 10, time.Second, 250*ms, 750*ms),
			at:    []time.Duration{1000 * ms, 1100 * ms, 1200 * ms, 2000 * ms, 2100 * ms},
			names: []string{"k", "k", "k", "k", "k"},
		},
		{
			// the gap (1s) is longer than on: one request at each phase start
			name: "on shorter than the gap", src: onoff(one, 0, 3*time.Second, 1, time.Second, 100*ms, 900*ms),
			at:    []time.Duration{0, time.Second, 2 * time.Second},
			names: []string{"k", "k", "k"},
		},
		{
			// on 300ms, 10/s: 0, 100, 200 (300 is the end of on, excluded), then
			// off 1ns: the next phase at 300ms + 1ns
			name: "off 1ns", src: onoff(one, 0, 500*ms, 10, time.Second, 300*ms, 1),
			at:    []time.Duration{0, 100 * ms, 200 * ms, 300*ms + 1, 400*ms + 1},
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

func TestOnOffCopiesSourceAndCost(t *testing.T) {
	src := &OnOff{Common: Common{Clients: Clients{Key: "k"}, Cost: 2, End: time.Second},
		Rate: Rate{Count: 1, Per: time.Second}, On: 100 * time.Millisecond, Off: 400 * time.Millisecond}
	got, _ := openOne(t, src, 5)
	require.Equal(t, []Arrival{
		{At: 0, Key: 0, Cost: 2, Source: 5},
		{At: 500 * time.Millisecond, Key: 0, Cost: 2, Source: 5},
	}, got)
	require.Equal(t, time.Second, src.End())
	require.Equal(t, time.Duration(0), (&OnOff{}).End())
}

// TestOnOffNoDrift: 3/s on 1s off 1s for 2000s puts every request at an
// exact ns: phase p's request j at p*2s + floor(j*1s/3).
func TestOnOffNoDrift(t *testing.T) {
	src := &OnOff{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, End: 2000 * time.Second},
		Rate: Rate{Count: 3, Per: time.Second}, On: time.Second, Off: time.Second}
	got, _ := openOne(t, src, 0)
	require.Len(t, got, 3000) // 1000 phases of 3
	for i, a := range got {
		p, j := int64(i/3), int64(i%3)
		require.Equal(t, time.Duration(p*2e9+j*1e9/3), a.At, "request %d", i)
	}
}

// TestOnOffNearLimits: without an end, an onoff source stops at the last
// instant a time.Duration can hold.
func TestOnOffNearLimits(t *testing.T) {
	for _, tt := range []struct {
		name string
		src  OnOff
		want []time.Duration
	}{
		// phases at max-3h and max-1h; the next, at max+1h, does not exist
		{"phases past the end of time",
			OnOff{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, Start: maxDur - 3*time.Hour},
				Rate: Rate{Count: 1, Per: time.Hour}, On: time.Hour, Off: time.Hour},
			[]time.Duration{maxDur - 3*time.Hour, maxDur - time.Hour}},
		// on and off so long that on+off overflows: a single phase, with
		// j*(max/2) for j = 0, 1, 2 (2*(max/2) = max-1, max being odd)
		{"on + off overflows",
			OnOff{Common: Common{Clients: Clients{Key: "k"}, Cost: 1},
				Rate: Rate{Count: 1, Per: maxDur / 2}, On: maxDur, Off: maxDur},
			[]time.Duration{0, maxDur / 2, maxDur - 1}},
		// within a phase, the next request would be past the end of time
		{"request past the end of time",
			OnOff{Common: Common{Clients: Clients{Key: "k"}, Cost: 1, Start: maxDur - 1},
				Rate: Rate{Count: 1, Per: 2}, On: 10, Off: 10},
			[]time.Duration{maxDur - 1}},
		{"rate 0 sends nothing",
			OnOff{Common: Common{Clients: Clients{Key: "k"}, Cost: 1}, Rate: Rate{Per: time.Second}, On: 1, Off: 1}, nil},
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

func TestOnOffInvalid(t *testing.T) {
	for _, src := range []OnOff{
		{Rate: Rate{1, time.Second}, On: time.Second},
		{Rate: Rate{1, time.Second}, Off: time.Second},
		{Rate: Rate{1, time.Second}, On: -1, Off: time.Second},
	} {
		src.Common = one
		_, err := src.Open(NewKeys(), 0, 0)
		require.Error(t, err)
	}
}
