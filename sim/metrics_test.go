package sim

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// bruteForcePeak tries every release time as the start of [a, a+v).
func bruteForcePeak(rs []release, v time.Duration) (int64, time.Duration) {
	// rs is in time order (as every caller makes it), so the releases of
	// [a, a+v) are rs[lo:hi], found by binary search, and their cost is
	// the difference of two prefix sums: n log n, not n^2, for the long
	// random trials
	if !slices.IsSortedFunc(rs, func(a, b release) int { return cmp.Compare(a.at, b.at) }) {
		panic("bruteForcePeak: releases out of time order")
	}
	prefix := make([]int64, len(rs)+1)
	for i, r := range rs {
		prefix[i+1] = prefix[i] + r.cost
	}
	first := func(at time.Duration) int { // the first release at or after at
		return sort.Search(len(rs), func(i int) bool { return rs[i].at >= at })
	}
	var best int64
	var start time.Duration
	for _, a := range rs {
		sum := prefix[first(a.at+v)] - prefix[first(a.at)]
		if sum > best || (sum == best && a.at < start) {
			best, start = sum, a.at
		}
	}
	return best, start
}

// TestPeakSetDoubleBurst: four windows counted by one set over the same
// releases, each with the peak worked out by hand.
func TestPeakSetDoubleBurst(t *testing.T) {
	t.Parallel()
	// docs/algorithms.md, worked example 1 as fixed-window releases it: 10 requests
	// at 900, 910, ..., 990 ms and 10 at 1000, ..., 1090 ms.
	var rs []release
	for i := 0; i < 20; i++ {
		rs = append(rs, release{900*time.Millisecond + time.Duration(i)*10*time.Millisecond, 1})
	}
	cases := []struct {
		v     time.Duration
		count int64
		start time.Duration
		why   string
	}{
		{100 * time.Millisecond, 10, 900 * time.Millisecond, "[900ms, 1000ms) holds 900..990; every later start also holds 10, the earliest wins"},
		{time.Second, 20, 900 * time.Millisecond, "all 20 lie in [900ms, 1900ms)"},
		{10 * time.Millisecond, 1, 900 * time.Millisecond, "releases are exactly 10ms apart, so a 10ms interval holds one"},
		{11 * time.Millisecond, 2, 900 * time.Millisecond, "[900ms, 911ms) holds 900 and 910"},
	}
	var vs []time.Duration
	for _, tc := range cases {
		vs = append(vs, tc.v)
	}
	p := newPeakSet(vs)
	for _, r := range rs {
		p.add(r.at, r.cost)
	}
	got := p.finish()
	for i, tc := range cases {
		require.Equal(t, tc.count, got[i].cost, tc.why)
		require.Equal(t, tc.start, got[i].at, tc.why)
	}
}

// TestPeakSetMatchesBruteForce: random releases (a third sharing an
// instant) through sets of one to three random windows give, for each
// window, what trying every release as a start gives; the set holds only
// the releases of its longest window, in a ring at most twice that.
func TestPeakSetMatchesBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	skips := 0
	defer func() { require.Positive(t, skips, "some flushes took the bound") }()
	// short runs with short windows, then runs of thousands of releases
	// with windows holding up to thousands at once (the ring grows)
	for trial := 0; trial < 340; trial++ {
		n, vmax := rng.IntN(60), 120
		if trial >= 300 {
			n, vmax = 1+rng.IntN(4096), 40*1024
		}
		vs := make([]time.Duration, 1+rng.IntN(3))
		for i := range vs {
			vs[i] = time.Duration(1 + rng.IntN(vmax))
		}
		rs := make([]release, n)
		var at time.Duration
		for i := range rs {
			if rng.IntN(3) > 0 { // a third of releases share an instant
				at += time.Duration(rng.IntN(50))
			}
			rs[i] = release{at, int64(1 + rng.IntN(3))}
		}
		p := newPeakSet(vs)
		most := 0 // the most releases held at once
		for _, r := range rs {
			p.add(r.at, r.cost)
			most = max(most, p.held())
		}
		require.LessOrEqual(t, most, int(slices.Max(vs))+1, "holds only the last V of releases")
		require.LessOrEqual(t, p.short.held(), most/ringChunk+2, "chunks for what it held at most")
		require.False(t, p.wide)
		got := p.finish()
		skips += p.skips
		requireBruteForce(t, got, rs, vs, trial)
	}
}

// TestPeakSetSkipMatchesTwoPointers: long streams of releases whose rate
// wanders, so that most flushes of 512 take the bound (skip) and some,
// where the rate climbs to a new peak, count every release (flushWin),
// give the peaks of a plain two-pointer scan over their instants (every
// release's instant tried as a start, the earliest of equal sums kept).
func TestPeakSetSkipMatchesTwoPointers(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 6; trial++ {
		n := 100_000 + rng.IntN(100_000)
		vs := []time.Duration{time.Duration(20_000 + rng.IntN(200_000)), time.Duration(2_000 + rng.IntN(20_000))}
		rs := make([]release, n)
		var at time.Duration
		gap := 10.0
		for i := range rs {
			if i%5000 == 0 { // the mean gap drifts between 5 and 20 ns
				gap = min(20, max(5, gap+rng.Float64()*4-2))
			}
			at += time.Duration(rng.ExpFloat64() * gap)
			rs[i] = release{at, int64(1 + rng.IntN(3))}
		}
		p := newPeakSet(vs)
		for _, r := range rs {
			p.add(r.at, r.cost)
		}
		got := p.finish()
		require.Positive(t, p.skips, "trial %d: most flushes take the bound", trial)
		require.Less(t, p.skips, n/peakFlush*len(vs), "trial %d: some count every release", trial)
		for i, v := range vs {
			wantC, wantS := twoPointerPeak(rs, v)
			require.Equal(t, wantC, got[i].cost, "trial %d window %v", trial, v)
			require.Equal(t, wantS, got[i].at, "trial %d window %v", trial, v)
		}
	}
}

// twoPointerPeak is bruteForcePeak in linear time, for long streams: for
// each release in order as a start a, the sum of the releases in
// [a, a+v), from prefix sums and a pointer to the first release at or
// after a+v.
func twoPointerPeak(rs []release, v time.Duration) (int64, time.Duration) {
	prefix := make([]int64, len(rs)+1)
	for i, r := range rs {
		prefix[i+1] = prefix[i] + r.cost
	}
	var best int64
	var start time.Duration
	j := 0
	for i, a := range rs {
		if i > 0 && rs[i-1].at == a.at {
			continue // the same start as the release before
		}
		for j < len(rs) && rs[j].at < a.at+v {
			j++
		}
		if sum := prefix[j] - prefix[i]; sum > best {
			best, start = sum, a.at
		}
	}
	return best, start
}

// TestPeakSetWide: windows longer than 32 bits of ns (a per-minute
// policy's W and W/10) and costs past 32 bits hold releases whole; a set
// that meets such a cost midway switches and keeps its counts.
func TestPeakSetWide(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(2*1024)
		vs := []time.Duration{time.Duration(1 + rng.IntN(40*1024)), time.Duration(1 + rng.IntN(4*1024))}
		step, huge := 50, -1
		switch trial % 3 {
		case 0: // a long window, instants far apart
			vs[0] += time.Minute
			step = int(time.Second / 20)
		case 1: // a cost past 32 bits midway
			huge = rng.IntN(n)
		case 2: // one instant whose costs add up past 32 bits
			huge = -2
		}
		rs := make([]release, n)
		var at time.Duration
		for i := range rs {
			together := huge == -2 && i > n/2 && i < n/2+3 // at one instant
			if rng.IntN(3) > 0 && !together {
				at += time.Duration(rng.IntN(step))
			}
			cost := int64(1 + rng.IntN(3))
			if i == huge {
				cost = math.MaxUint32 + 1 + int64(rng.IntN(3))
			}
			if together {
				cost = math.MaxUint32/2 + 1
			}
			rs[i] = release{at, cost}
		}
		p := newPeakSet(vs)
		for _, r := range rs {
			p.add(r.at, r.cost)
		}
		wide := p.wide
		got := p.finish()
		requireBruteForce(t, got, rs, vs, trial)
		if trial%3 != 2 || n > 8 {
			require.True(t, wide, "trial %d", trial)
		}
	}
}

// TestPeakSetEmpty: no release, no peak (0 from 0), for every window.
func TestPeakSetEmpty(t *testing.T) {
	t.Parallel()
	p := newPeakSet([]time.Duration{time.Second, time.Millisecond})
	require.Equal(t, []release{{0, 0}, {0, 0}}, p.finish())
}

func TestSeriesPadsToEnd(t *testing.T) {
	t.Parallel()
	s := series{bucket: 100 * time.Millisecond}
	s.add(150*time.Millisecond, colOffered)
	s.add(199*time.Millisecond, colOffered)
	s.add(200*time.Millisecond, colRejected)
	out := s.result(time.Second)
	require.Equal(t, []int64{0, 2, 0, 0, 0, 0, 0, 0, 0, 0}, out.Offered)
	require.Equal(t, []int64{0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, out.Rejected)
	require.Len(t, out.Admitted, 10)
}

func TestEventQueueOrder(t *testing.T) {
	t.Parallel()
	var q eventQueue
	// Same instant: the order of scheduling is kept within a kind.
	for i := 0; i < 50; i++ {
		q.push(event{at: time.Duration(i % 5), cost: int64(i)})
	}
	var last event
	for i := 0; q.len() > 0; i++ {
		e := q.pop()
		if i > 0 {
			require.True(t, last.at < e.at || (last.at == e.at && last.cost < e.cost), "pop %d: %+v after %+v", i, e, last)
		}
		last = e
	}
}

// Retries come out least (time, scheduling order) first however they
// are pushed and popped: in order, as a Retry-After of whole seconds
// schedules them, or not, as jitter does.
func TestEventQueueInterleaved(t *testing.T) {
	t.Parallel()
	for _, spread := range []int{1, 3, 1000} {
		var q eventQueue
		var model []event // pushed, not popped
		r := rand.New(rand.NewPCG(7, uint64(spread)))
		now := time.Duration(0)
		for i := range 20000 {
			if r.IntN(2) == 0 || q.len() == 0 {
				ev := event{at: now + time.Duration(r.IntN(spread)), id: uint64(i)}
				ev.seq = q.seq
				q.push(ev)
				model = append(model, ev)
				continue
			}
			least := 0
			for j := range model {
				if model[j].Less(&model[least]) {
					least = j
				}
			}
			require.Equal(t, model[least], *q.peek())
			require.Equal(t, model[least], q.pop())
			now = model[least].at
			model = append(model[:least], model[least+1:]...)
			require.Equal(t, len(model), q.len())
		}
	}
}

func TestSeriesCoarsensLongRuns(t *testing.T) {
	t.Parallel()
	// One request per bucket of 1ns over 3*MaxSeriesBuckets ns: the series
	// doubles its bucket twice (to 4ns) and still counts every request.
	s := series{bucket: 1}
	n := 3 * MaxSeriesBuckets
	for i := 0; i < n; i++ {
		s.add(time.Duration(i), colOffered)
	}
	out := s.result(time.Duration(n))
	require.Equal(t, int64(4), out.BucketNs)
	require.LessOrEqual(t, len(out.Offered), MaxSeriesBuckets)
	var sum int64
	for i, c := range out.Offered {
		sum += c
		if i < len(out.Offered)-1 {
			require.Equal(t, int64(4), c, "bucket %d holds 4 requests", i)
		}
	}
	require.Equal(t, int64(n), sum, "coarsening loses no request")
}

// TestPeakSetLongGaps: releases held in 8 bytes with, now and then, a gap
// longer than 32 bits of ns (4.29 s) between two of them, which no
// distance can hold: the set closes every open interval and starts again
// from the later release. The peaks are what trying every release as a
// start gives, and the set stays in 8-byte entries.
func TestPeakSetLongGaps(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 100; trial++ {
		n := 1 + rng.IntN(3000)
		vs := []time.Duration{time.Duration(1 + rng.IntN(40*1024)), time.Duration(1 + rng.IntN(4*1024))}
		rs := make([]release, n)
		at := time.Duration(rng.Int64N(1 << 40))
		for i := range rs {
			switch x := rng.IntN(100); {
			case x < 2:
				at += math.MaxUint32 + time.Duration(rng.Int64N(1<<33))
			case x < 70:
				at += time.Duration(rng.IntN(50))
			}
			rs[i] = release{at, int64(1 + rng.IntN(3))}
		}
		p := newPeakSet(vs)
		for _, r := range rs {
			p.add(r.at, r.cost)
		}
		require.False(t, p.wide)
		got := p.finish()
		requireBruteForce(t, got, rs, vs, trial)
	}
}

// requireBruteForce checks the peaks a set found, got, against what trying
// every release of rs as a start gives, for each window of vs.
func requireBruteForce(t *testing.T, got, rs []release, vs []time.Duration, trial int) {
	t.Helper()
	for i, v := range vs {
		wantC, wantS := bruteForcePeak(rs, v)
		require.Equal(t, wantC, got[i].cost, "trial %d window %v", trial, v)
		require.Equal(t, wantS, got[i].at, "trial %d window %v", trial, v)
	}
}

// TestRingBlocks: a ring cuts its chunks from blocks that double, so that
// the chunks it makes (those in use and spare) are what it held at most
// plus two, as before, and the blocks hold at most twice them; no block
// passes ringSlabBytes; the chunks do not overlap: every entry reads back
// what was stored. Over a queue that grows past two blocks of the largest
// size, then shrinks and grows again.
func TestRingBlocks(t *testing.T) {
	t.Parallel()
	var r ring[keyRelease]
	const size = int(unsafe.Sizeof(keyRelease{}))
	most := ringSlabBytes / (ringChunk * size) // chunks in the largest block
	head, tail, held := 0, 0, 0
	push := func() {
		blocks := r.blocks
		r.push(head, tail, keyRelease{at: time.Duration(tail), key: uint32(tail)})
		// plain comparisons, not require's, in loops of a million entries
		if r.blocks-blocks > most*ringChunk {
			t.Fatalf("push %d: a block of %d entries, past ringSlabBytes (%d)", tail, r.blocks-blocks, most*ringChunk)
		}
		tail++
		held = max(held, tail-head)
	}
	check := func(what string) {
		for i := head; i < tail; i++ {
			if want, got := (keyRelease{at: time.Duration(i), key: uint32(i)}), *r.at(i); got != want {
				t.Fatalf("%s: entry %d: %+v, want %+v", what, i, got, want)
			}
		}
		require.LessOrEqual(t, r.held(), held/ringChunk+2, "%s: chunks for what it held at most", what)
		require.LessOrEqual(t, r.blocks, 2*r.held()*ringChunk, "%s: blocks at most twice the chunks", what)
	}
	for tail < (2*most+40)*ringChunk { // past a block of most chunks
		push()
	}
	check("grown")
	for head < tail-10*ringChunk {
		head += 7
		if head%3 == 0 {
			push()
		}
	}
	check("shrunk")
	for range 60 * ringChunk {
		push()
	}
	check("grown again")
}
