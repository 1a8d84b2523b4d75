package sim

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/internal/testenv"
	"github.com/ratesim/ratesim/traffic"
)

// TestPeakSetRunsByHand: evenly spaced releases of one cost, each peak
// worked out by hand, held in a few entries however many releases the
// window holds.
func TestPeakSetRunsByHand(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		rs   []release
		vs   []time.Duration
		want []release // {start, count} by window
		most int       // entries held at most
		why  string
	}{
		{
			name: "every 3ns from 5ns, cost 2",
			rs:   every(5, 3, 2, 1000),
			vs:   []time.Duration{10, 9},
			want: []release{{5, 8}, {5, 6}},
			most: 2,
			why:  "[5, 15) holds 5, 8, 11 and 14; [5, 14) holds 5, 8 and 11; every later start holds as many",
		},
		{
			name: "every ns, one more at the last instant",
			rs:   append(every(0, 1, 1, 10), release{9, 5}),
			vs:   []time.Duration{3, 1},
			want: []release{{7, 8}, {9, 6}},
			most: 3,
			why:  "[7, 10) holds 7, 8 and 9 (cost 1+1+6); the instant 9 alone costs 6",
		},
		{
			name: "a million, one a nanosecond, in a window of a minute (held whole)",
			rs:   every(time.Second, 1, 1, 1_000_000),
			vs:   []time.Duration{time.Minute, 100},
			want: []release{{time.Second, 1_000_000}, {time.Second, 100}},
			most: 2,
			why:  "the minute from the first holds them all; any 100ns from one of them, 100 (the earliest wins)",
		},
		{
			name: "two a nanosecond, each instant's pair made one release",
			rs:   pairs(every(0, 1, 1, 1000)),
			vs:   []time.Duration{10, time.Minute},
			want: []release{{0, 20}, {0, 2000}},
			most: 3,
			why:  "[0, 10) holds ten instants of two; the minute all thousand",
		},
		{
			name: "two runs of different costs",
			rs:   append(every(0, 10, 1, 100), every(1000, 10, 3, 100)...),
			vs:   []time.Duration{50},
			want: []release{{1000, 15}},
			most: 3,
			why:  "five releases of cost 3 in any 50ns of the second run",
		},
	}
	for _, tc := range cases {
		p := newPeakSet(tc.vs)
		most := 0
		for _, r := range tc.rs {
			p.add(r.at, r.cost)
			most = max(most, p.held())
		}
		require.LessOrEqual(t, most, tc.most, tc.name)
		got := p.finish()
		for i := range tc.vs {
			require.Equal(t, tc.want[i].cost, got[i].cost, "%s: %s", tc.name, tc.why)
			require.Equal(t, tc.want[i].at, got[i].at, "%s: %s", tc.name, tc.why)
		}
	}
}

// pairs is each release of rs twice.
func pairs(rs []release) []release {
	var out []release
	for _, r := range rs {
		out = append(out, r, r)
	}
	return out
}

// every is n releases of cost from at, step apart.
func every(at, step time.Duration, cost int64, n int) []release {
	rs := make([]release, n)
	for i := range rs {
		rs[i] = release{at + time.Duration(i)*step, cost}
	}
	return rs
}

// TestPeakSetSteadySourceHeldInRuns: a steady source of one request a
// nanosecond for 20ms (twenty million releases, the rate of 1e9/s)
// gives its exact peaks, the whole window's count, in a handful of
// entries where one release an entry would hold them all.
func TestPeakSetSteadySourceHeldInRuns(t *testing.T) {
	t.Parallel()
	const n = 20_000_000
	if testing.Short() {
		t.Skip("twenty million releases")
	}
	p := newPeakSet([]time.Duration{time.Second, 10 * time.Millisecond, time.Millisecond})
	most := 0
	for i := range time.Duration(n) {
		p.add(i, 1)
		if i%2_000_000 == 0 {
			most = max(most, p.held())
		}
	}
	most = max(most, p.held())
	require.LessOrEqual(t, most, 2, "entries held")
	require.Equal(t, []release{{0, n}, {0, 10_000_000}, {0, 1_000_000}}, p.finish())
}

// TestPeakSetRunsMatchTwoPointers: random streams made of runs (evenly
// spaced releases of one cost, some interrupted by a second release at
// one of their instants, gaps between them, runs that repeat the last
// gap), with short and long windows (held whole past 2^32-1 ns) and the
// odd cost past 32 bits, some thousands of runs long, give the peaks of the plain computation over
// every release, which groups nothing.
func TestPeakSetRunsMatchTwoPointers(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range testenv.Runs(150, 400) {
		var rs []release
		var at time.Duration
		huge := trial%5 == 4
		runs, long := 1+rng.IntN(40), 300
		if trial%4 == 1 { // many short runs: flushes of 512 entries, most of them skipped
			runs, long = 1000+rng.IntN(3000), 8
		}
		for i := range runs {
			step := time.Duration(1 + rng.IntN(20))
			cost := int64(1 + rng.IntN(2))
			if huge && rng.IntN(8) == 0 {
				cost = math.MaxUint32 + int64(rng.IntN(2))
			}
			n := 1 + rng.IntN(long)
			if long == 8 && i == 0 { // an early peak that later flushes cannot beat
				step, n = 1, 3000
			}
			for range n {
				rs = append(rs, release{at, cost})
				if rng.IntN(40) == 0 || trial%6 == 5 { // more at the same instant
					for range 1 + rng.IntN(2) {
						rs = append(rs, release{at, int64(rng.IntN(2))})
					}
				}
				at += step
			}
			switch rng.IntN(3) {
			case 0: // the next run goes on from the last gap
				at -= step
				at += time.Duration(rng.IntN(30))
			case 1: // a gap
				at += time.Duration(rng.IntN(500))
			}
		}
		vs := []time.Duration{time.Duration(1 + rng.IntN(400)), time.Duration(1 + rng.IntN(40))}
		if trial%3 == 0 {
			vs[0] += math.MaxUint32 // held whole
		}
		if long == 8 {
			vs[0] = time.Duration(1000 + rng.IntN(40_000))
		}
		if trial%7 == 0 {
			vs = append(vs, time.Duration(1+rng.IntN(4000)))
		}
		p := newPeakSet(vs)
		for _, r := range rs {
			p.add(r.at, r.cost)
		}
		got := p.finish()
		for i, v := range vs {
			wantC, wantS := twoPointerPeak(rs, v)
			require.Equal(t, wantC, got[i].cost, "trial %d window %v", trial, v)
			require.Equal(t, wantS, got[i].at, "trial %d window %v", trial, v)
		}
	}
}

// TestPeakSetHoldsWhatTheEstimateSays: for steady sources and bursts of
// random rates, some a whole number of nanoseconds apart, most not (3 or 4 ns,
// 1 or 2), the entries the peaks hold at any time stay within the runs
// traffic.SizeOf promises for their window, and the two not yet counted (which the run's estimate
// counts), and the peaks stay those of every release counted alone.
func TestPeakSetHoldsWhatTheEstimateSays(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := range testenv.Runs(20, 60) {
		per := time.Duration(1 + rng.IntN(1000))
		count := int64(1 + rng.IntN(int(per)))
		if trial%4 == 0 {
			per = time.Duration(count * int64(1+rng.IntN(5)))
		}
		v := time.Duration(1 + rng.IntN(20_000))
		var src traffic.Source = &traffic.Steady{Rate: traffic.Rate{Count: count, Per: per},
			Common: traffic.Common{Cost: 1 + rng.Int64N(3), Clients: traffic.Clients{Key: "k"}}}
		if trial%3 == 2 { // a burst of count to each of 3 clients over per, again and again
			src = &traffic.Burst{Count: count * 200_000 / int64(per), Over: 200_000,
				Common: traffic.Common{Cost: 1, Clients: traffic.Clients{N: 3, Prefix: "c"}}}
		}
		size, err := traffic.SizeOf(src, 200_000, v)
		require.NoError(t, err)
		st, err := src.Open(traffic.NewKeys(), 0, 0)
		require.NoError(t, err)
		p := newPeakSet([]time.Duration{v, v/3 + 1})
		var rs []release
		most := 0
		var a traffic.Arrival
		for st.Next(&a) && a.At < 200_000 {
			p.add(a.At, a.Cost)
			rs = append(rs, release{a.At, a.Cost})
			most = max(most, p.held())
		}
		// and the two entries not yet counted, which may reach past the
		// window (the estimate's ring has room for 2048 entries more)
		require.LessOrEqual(t, int64(most), size.Runs+2, "trial %d: %d/%v in %v", trial, count, per, v)
		got := p.finish()
		for i, w := range []time.Duration{v, v/3 + 1} {
			c, s := twoPointerPeak(rs, w)
			require.Equal(t, release{s, c}, got[i], "trial %d window %v", trial, w)
		}
	}
}
