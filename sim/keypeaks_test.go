package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
	"github.com/stretchr/testify/require"
)

// keyRel is a release of a key, for the tests.
type keyRel struct {
	at   time.Duration
	cost int64
	key  uint32
}

// runKeyPeaks feeds rs to a new keyPeaks of windows vs (its counts sized
// for reserve keys first) and returns what it finds.
func runKeyPeaks(rs []keyRel, vs []time.Duration, reserve int) ([]keyPeakRaw, *keyPeaks) {
	k := newKeyPeaks(vs)
	k.reserve(reserve)
	for _, r := range rs {
		k.add(r.at, r.cost, r.key)
	}
	return k.finish(), &k
}

// requireAllPeaks: after finish, k's peaks of every key together are
// peakSet's over the same releases rs, window by window, count and start.
func requireAllPeaks(t *testing.T, k *keyPeaks, rs []keyRel, vs []time.Duration, trial int) {
	t.Helper()
	p := newPeakSet(vs)
	for _, r := range rs {
		p.add(r.at, r.cost)
	}
	for i, want := range p.finish() {
		w := k.wins[i]
		require.Equal(t, want, release{w.aStart, w.aBest}, "trial %d window %d: every key together", trial, i)
	}
}

// bruteForceKeyPeak tries every release, in the stream's order, as the
// start a of [a, a+v) for its key, and sums that key's releases in it: the
// first largest sum wins, which is the earliest start and, of one start,
// the key whose release came first. (The stream is in time order, so the
// releases in [a, a+v) are found from the first one at a's instant on,
// rather than among all of them.)
func bruteForceKeyPeak(rs []keyRel, v time.Duration) keyPeakRaw {
	var best keyPeakRaw
	lo := 0 // the first release at a's instant
	for i, a := range rs {
		if rs[lo].at != a.at {
			lo = i
		}
		var sum int64
		for _, r := range rs[lo:] {
			if r.at >= a.at+v {
				break
			}
			if r.key == a.key {
				sum += r.cost
			}
		}
		if sum > best.count {
			best = keyPeakRaw{sum, a.key, a.at}
		}
	}
	return best
}

func requireKeyBruteForce(t *testing.T, got []keyPeakRaw, rs []keyRel, vs []time.Duration, trial int) {
	t.Helper()
	for i, v := range vs {
		require.Equal(t, bruteForceKeyPeak(rs, v), got[i], "trial %d window %v (%d releases)", trial, v, len(rs))
	}
}

// TestKeyPeaksByHand: small streams whose key peaks are worked out by
// hand, each case saying why. Keys are ids: a=0, b=1, c=2, d=3.
func TestKeyPeaksByHand(t *testing.T) {
	const a, b, c, d = 0, 1, 2, 3
	rel := func(at time.Duration, key uint32) keyRel { return keyRel{at, 1, key} }
	type want struct {
		count int64
		key   uint32
		start time.Duration
	}
	cases := []struct {
		name string
		vs   []time.Duration
		rs   []keyRel
		want []want
		why  string
	}{
		{
			name: "interleaved keys, the busier one wins",
			vs:   []time.Duration{time.Second},
			rs: []keyRel{rel(0, a), rel(100*ms, b), rel(200*ms, a), rel(300*ms, b), rel(400*ms, b),
				rel(1100*ms, a), rel(1200*ms, b)},
			want: []want{{3, b, 100 * ms}},
			why: "a's intervals hold 2 ([0,1s): 0 and 200ms; [200ms,1.2s): 200ms and 1.1s); b's " +
				"[100ms,1.1s) holds 100, 300 and 400ms (3), as does [300ms,1.3s) later; every key " +
				"together [0,1s) holds 5, which is not one key's figure",
		},
		{
			name: "a tie across keys goes to the earliest start",
			vs:   []time.Duration{100 * ms},
			rs:   []keyRel{rel(5*ms, b), rel(10*ms, a), rel(20*ms, a), rel(50*ms, b), rel(200*ms, c), rel(210*ms, c)},
			want: []want{{2, b, 5 * ms}},
			why:  "b [5ms,105ms), a [10ms,110ms) and c [200ms,300ms) each hold 2: b's starts first",
		},
		{
			name: "a tie at one start goes to the key released first",
			vs:   []time.Duration{100 * ms},
			rs:   []keyRel{rel(0, d), rel(0, c), rel(30*ms, c), rel(40*ms, d)},
			want: []want{{2, d, 0}},
			why:  "c and d both hold 2 in [0,100ms); d's release at 0 came first (though its id is larger)",
		},
		{
			name: "releases of one key at one instant count together",
			vs:   []time.Duration{100 * ms},
			rs:   []keyRel{rel(0, b), rel(10*ms, b), rel(50*ms, a), rel(50*ms, a), rel(50*ms, a)},
			want: []want{{3, a, 50 * ms}},
			why:  "a's three releases at 50ms are one interval of 3; b holds 2",
		},
		{
			name: "costs above 1, two windows",
			vs:   []time.Duration{time.Second, 100 * ms},
			rs: []keyRel{{0, 5, a}, {10 * ms, 2, b}, {20 * ms, 2, b}, {30 * ms, 2, b},
				{150 * ms, 1, a}},
			want: []want{{6, a, 0}, {6, b, 10 * ms}},
			why: "in 1s a holds 5+1 from 0 and b 2+2+2 from 10ms: a's starts first; in 100ms a " +
				"holds 5 from 0 (150ms is out) and b 6 from 10ms",
		},
		{
			name: "a gap longer than the windows",
			vs:   []time.Duration{time.Second, 100 * ms},
			rs: []keyRel{rel(0, a), rel(10*ms, a), rel(5*time.Second, b), rel(5050*ms, b),
				rel(5090*ms, b), rel(5100*ms, a)},
			want: []want{{3, b, 5 * time.Second}, {3, b, 5 * time.Second}},
			why: "a's [0,1s) holds 0 and 10ms only (5.1s is far past it); b's [5s,5.1s) holds 5s, " +
				"5.05s and 5.09s, and so does [5s,6s)",
		},
		{
			name: "intervals are half-open",
			vs:   []time.Duration{100 * ms},
			rs:   []keyRel{rel(0, a), rel(100*ms, a), rel(200*ms, a)},
			want: []want{{1, a, 0}},
			why:  "[0,100ms) ends before the release at 100ms: one release in every interval",
		},
		{
			name: "windows of different lengths find different keys",
			vs:   []time.Duration{time.Second, 10 * ms, 100 * ms},
			rs: []keyRel{rel(0, a), rel(1*ms, a), rel(2*ms, a), rel(300*ms, b), rel(350*ms, b),
				rel(390*ms, b), rel(395*ms, b), rel(600*ms, c), rel(700*ms, c), rel(800*ms, c),
				rel(900*ms, c), rel(999*ms, c)},
			want: []want{{5, c, 600 * ms}, {3, a, 0}, {4, b, 300 * ms}},
			why: "1s: c's five from 600ms beat b's four; 10ms: a's three within 2ms; 100ms: b's " +
				"four within 95ms",
		},
		{
			name: "nothing released",
			vs:   []time.Duration{time.Second, 100 * ms},
			want: []want{{0, 0, 0}, {0, 0, 0}},
			why:  "no interval holds anything: 0 from 0, and no key",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := runKeyPeaks(tc.rs, tc.vs, 4)
			require.Len(t, got, len(tc.want))
			for i, w := range tc.want {
				require.Equal(t, keyPeakRaw{w.count, w.key, w.start}, got[i], "window %v: %s", tc.vs[i], tc.why)
			}
			requireKeyBruteForce(t, got, tc.rs, tc.vs, 0)
		})
	}
}

// TestKeyPeaksReport: what peaks reports, by name and rated: the ratio is
// count / (L*V/W) as for peaks; an empty window names no key.
func TestKeyPeaksReport(t *testing.T) {
	k := newKeyPeaks([]time.Duration{time.Second, 100 * ms})
	k.add(0, 1, 1)
	k.add(10*ms, 1, 1)
	names := map[uint32]string{0: "alice", 1: "bob"}
	got, _ := k.peaks(algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}, func(id uint32) string { return names[id] })
	require.Equal(t, []KeyPeak{
		// 2 against 10 per 1s is 0.2 of the limit; against 1 per 100ms, 2.0
		{WindowNs: 1e9, Count: 2, Key: "bob", StartNs: 0, Ratio: 0.2},
		{WindowNs: 1e8, Count: 2, Key: "bob", StartNs: 0, Ratio: 2},
	}, got)
	empty := newKeyPeaks([]time.Duration{time.Second})
	keys, all := empty.peaks(algorithms.Policy{Rate: 10, Per: time.Second}, nil)
	require.Equal(t, []KeyPeak{{WindowNs: 1e9}}, keys, "no release: no key, 0 from 0")
	require.Equal(t, []Peak{{WindowNs: 1e9}}, all, "no release: 0 from 0")
}

// randomKeyStream is n releases over keys ids below keys, a third sharing
// the instant of the one before, gaps up to gap, costs 1 to 3.
func randomKeyStream(rng *rand.Rand, n, keys, gap int) []keyRel {
	rs := make([]keyRel, n)
	var at time.Duration
	for i := range rs {
		if rng.IntN(3) > 0 {
			at += time.Duration(rng.IntN(gap))
		}
		rs[i] = keyRel{at, int64(1 + rng.IntN(3)), uint32(rng.IntN(keys))}
	}
	return rs
}

// TestKeyPeaksMatchesBruteForce: random streams (short ones, then ones of
// thousands of releases that flush many times, over one to 300 keys, some
// with a Zipf-like skew so that a few keys are busy) through one to three
// random windows give what trying every release as a start gives; the set
// holds only the releases of its longest window. Both ways of counting
// are taken: streams denser than their shortest window in two passes
// (flushBatch), sparser ones release by release (flushEach).
func TestKeyPeaksMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var passes [2]int
	defer func() {
		require.Positive(t, passes[0], "some flushes in two passes")
		require.Positive(t, passes[1], "some flushes release by release")
	}()
	for trial := 0; trial < 400; trial++ {
		n, vmax, keys := rng.IntN(80), 150, 1+rng.IntN(6)
		if trial >= 300 {
			n, vmax, keys = 1+rng.IntN(5000), 20_000, 1+rng.IntN(300)
		}
		vs := make([]time.Duration, 1+rng.IntN(3))
		for i := range vs {
			vs[i] = time.Duration(1 + rng.IntN(vmax))
		}
		rs := randomKeyStream(rng, n, keys, 50)
		if trial%4 == 3 { // skewed: half the releases from key 0
			for i := range rs {
				if rng.IntN(2) == 0 {
					rs[i].key = 0
				}
			}
		}
		k := newKeyPeaks(vs)
		if trial%2 == 0 {
			k.reserve(keys) // else grown as keys come
		}
		// every third trial looks at what is held after each release
		// (which counts it at once); the others leave the set to count
		// in batches of keyFlush
		most := 0
		for _, r := range rs {
			k.add(r.at, r.cost, r.key)
			if trial%3 == 0 {
				most = max(most, k.heldReleases())
			}
		}
		// at most the releases of the longest window, plus the one that
		// closed the oldest intervals
		span := int(slices.Max(vs))
		perInstant := 0
		for i := range rs {
			j := i
			for j < len(rs) && rs[j].at < rs[i].at+time.Duration(span) {
				j++
			}
			perInstant = max(perInstant, j-i)
		}
		require.LessOrEqual(t, most, perInstant+1, "trial %d: holds only the last V of releases", trial)
		require.False(t, k.wide, "trial %d: small costs stay in 32 bits", trial)
		requireKeyBruteForce(t, k.finish(), rs, vs, trial)
		requireAllPeaks(t, &k, rs, vs, trial)
		passes[0] += k.passes[0]
		passes[1] += k.passes[1]
	}
}

// TestKeyPeaksUnitCosts: a stream whose costs are all 1 holds none (its
// releases take 16 bytes each), and gives what trying every start gives;
// a stream whose costs are 1 for up to thousands of releases, over many
// flushes, then 2 and then 1 to 3, starts holding costs there, the
// releases held until then costing 1, and gives the same too; so do
// streams of unit costs whose totals widen (their room cut, as if 2^31
// had been held, which takes 2^31 releases of cost 1). Both ways of
// counting run (the gaps and windows as TestKeyPeaksMatchesBruteForce's).
func TestKeyPeaksUnitCosts(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	var passes [2]int
	widenedHolding := 0
	for trial := 0; trial < 200; trial++ {
		n, keys := 1+rng.IntN(5000), 1+rng.IntN(300)
		vs := make([]time.Duration, 1+rng.IntN(3))
		for i := range vs {
			vs[i] = time.Duration(1 + rng.IntN(20_000))
		}
		rs := randomKeyStream(rng, n, keys, 50)
		first := n // the first release of another cost than 1
		if trial%2 == 1 {
			first = rng.IntN(n)
			rs[first].cost = 2
		}
		for i := range rs[:first] {
			rs[i].cost = 1
		}
		k := newKeyPeaks(vs)
		k.reserve(keys)
		room := int64(-1) // not cut
		if trial%4 == 2 {
			// as if nearly 2^31 were held: the totals widen when more
			// than 0 to 2 are, every cost 1 (first == n)
			room = int64(rng.IntN(3))
			k.room = room
		}
		for _, r := range rs {
			k.add(r.at, r.cost, r.key)
		}
		require.Equal(t, first < n, k.costly, "trial %d: costs held from the first other than 1 on", trial)
		if room < 0 {
			require.False(t, k.wide, "trial %d: unit costs stay in 32 bits", trial)
		}
		if room == 0 {
			require.True(t, k.wide, "trial %d: room 0 widens at the first release", trial)
		}
		if k.wide && room > 0 {
			widenedHolding++ // releases were held when the totals widened
		}
		requireKeyBruteForce(t, k.finish(), rs, vs, trial)
		requireAllPeaks(t, &k, rs, vs, trial)
		passes[0] += k.passes[0]
		passes[1] += k.passes[1]
	}
	require.Positive(t, passes[0], "some flushes in two passes")
	require.Positive(t, passes[1], "some flushes release by release")
	require.Positive(t, widenedHolding, "some totals widened with releases held")
}

// TestKeyPeaksBatchNumbersWrap: with batch numbers that come round every
// other batch indexed, the peaks are still those of trying every start
// (TestKeyPeaksStaleStamps shows the case that the wrap's freeing of every
// slot is for), over dense streams whose keys come back
// batch after batch (every other one denser and denser, so that batch
// after batch is indexed).
func TestKeyPeaksBatchNumbersWrap(t *testing.T) {
	defer func(n uint32) { keyBatches = n }(keyBatches)
	keyBatches = 3
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := 0; trial < 30; trial++ {
		vs := []time.Duration{time.Duration(5_000 + rng.IntN(20_000)), time.Duration(1_000 + rng.IntN(4_000))}
		rs := randomKeyStream(rng, 3000+rng.IntN(3000), 1+rng.IntN(20), 4)
		if trial%2 == 1 {
			// denser and denser, so that counts keep beating the best
			// and batch after batch is indexed
			var at time.Duration
			for i := range rs {
				at += time.Duration(rng.IntN(1 + 16*(len(rs)-i)/len(rs)))
				rs[i].at = at
			}
		}
		got, k := runKeyPeaks(rs, vs, 20)
		require.Positive(t, k.passes[0], "trial %d: counted in two passes", trial)
		if trial%2 == 1 {
			require.GreaterOrEqual(t, k.passes[2], 3, "trial %d: indexed batches enough for the numbers to wrap", trial)
		}
		requireKeyBruteForce(t, got, rs, vs, trial)
		requireAllPeaks(t, k, rs, vs, trial)
	}
}

// TestKeyPeaksStaleStamps: a batch indexed after the batch numbers wrap
// must not take a slot left by an earlier batch of the same number for its
// own. Batches are indexed only when a leaving key's count, with the whole
// batch joined, beats the best: here three times, in flushes C, D and E
// of 512 releases each (V = 2000 ns, so that the releases of a flush leave
// two flushes later), and with numbers that come round every second batch
// (keyBatches 3) the third has the first one's number.
//   - A (0-511 ns): key 0 at 0-99, then keys of one release each.
//   - B (1000-1511): key 1 at 1000-1149, then single keys.
//   - C (2000-2511): key 2 at 2000-2199, then single keys. A leaves: key 0
//     with 100 beats 0, C is indexed (number 1); best 100.
//   - D (3000-3511): single keys. B leaves: key 1 with 150, D is indexed
//     (number 2); best 150.
//   - E (4000-4511): single keys. C leaves: key 2 with 200, E is indexed
//     (number 1 again); best 200, key 2's, from 2000.
//
// Key 2's slot from C (D has no key 2 to take it), taken for E's, would
// take E's release 199 (at 4199, not before 2000+V) off key 2's count: 199.
func TestKeyPeaksStaleStamps(t *testing.T) {
	defer func(n uint32) { keyBatches = n }(keyBatches)
	keyBatches = 3
	var rs []keyRel
	single := uint32(100) // the keys of one release each
	for f, hot := range []struct {
		key uint32
		n   int
	}{{0, 100}, {1, 150}, {2, 200}, {3, 0}, {3, 0}} {
		for i := range keyFlush {
			key := hot.key
			if i >= hot.n {
				key, single = single, single+1
			}
			rs = append(rs, keyRel{time.Duration(1000*f + i), 1, key})
		}
	}
	got, k := runKeyPeaks(rs, []time.Duration{2000}, int(single))
	require.Equal(t, 5, k.passes[0], "five flushes of 512, in two passes")
	require.Equal(t, 3, k.passes[2], "three of them indexed")
	require.Equal(t, keyPeakRaw{200, 2, 2000}, got[0])
	requireKeyBruteForce(t, got, rs, []time.Duration{2000}, 0)
}

// TestKeyPeaksBatchEndsWhereAnIntervalEnds: a release f whose interval
// [f, f+V) ends at the very instant of the last release of the next batch
// leaves in that batch's pass, its count without that release. a is
// released at 0 and at 1s, each counted in a batch of its own (flush): the
// release at 1s is outside [0, 1s), so a's peak is 1, from 0 (a walk that
// kept f, to leave in a later batch or at finish, would count both: 2).
// b's two releases in [1.5s, 2.5s) then make the peak 2.
func TestKeyPeaksBatchEndsWhereAnIntervalEnds(t *testing.T) {
	const a, b = 0, 1
	rs := []keyRel{{0, 1, a}, {time.Second, 1, a}}
	k := newKeyPeaks([]time.Duration{time.Second})
	for _, r := range rs {
		k.add(r.at, r.cost, r.key)
		k.flush()
	}
	require.Equal(t, 2, k.passes[0], "two batches of one, in two passes")
	require.Equal(t, []keyPeakRaw{{1, a, 0}}, k.finish())
	requireKeyBruteForce(t, []keyPeakRaw{{1, a, 0}}, rs, []time.Duration{time.Second}, 0)

	rs = append(rs, keyRel{1500 * ms, 1, b}, keyRel{2400 * ms, 1, b})
	k = newKeyPeaks([]time.Duration{time.Second})
	for _, r := range rs {
		k.add(r.at, r.cost, r.key)
		k.flush()
	}
	require.Equal(t, []keyPeakRaw{{2, b, 1500 * ms}}, k.finish())
	requireKeyBruteForce(t, []keyPeakRaw{{2, b, 1500 * ms}}, rs, []time.Duration{time.Second}, 1)
}

// TestKeyPeaksOneKeyIsPeaks: with one key, the key peak is the peak of
// peakSet, window by window, count and start, over random streams long and
// short.
func TestKeyPeaksOneKeyIsPeaks(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 200; trial++ {
		n := rng.IntN(100)
		if trial >= 150 {
			n = 1 + rng.IntN(20_000)
		}
		vs := []time.Duration{time.Duration(1 + rng.IntN(20_000)), time.Duration(1 + rng.IntN(2_000))}
		rs := randomKeyStream(rng, n, 1, 40)
		p := newPeakSet(vs)
		for _, r := range rs {
			p.add(r.at, r.cost)
		}
		want := p.finish()
		got, _ := runKeyPeaks(rs, vs, 1)
		for i := range vs {
			require.Equal(t, want[i].cost, got[i].count, "trial %d window %d", trial, i)
			require.Equal(t, want[i].at, got[i].start, "trial %d window %d", trial, i)
		}
	}
}

// TestKeyPeaksAllKeysArePeaks: the peaks of every key together that a
// keyPeaks counts beside the key peaks are peakSet's, count and start,
// window by window, over streams of many keys: dense ones (counted in two
// passes, with batches where no interval can beat the best so far and
// batches where one can), sparse ones (release by release), ones with
// gaps longer than 2^32 ns (after which peakSet starts its windows again),
// and windows longer than 2^32 ns (where peakSet holds releases whole).
func TestKeyPeaksAllKeysArePeaks(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for trial := 0; trial < 120; trial++ {
		n := 1 + rng.IntN(100)
		if trial%2 == 1 {
			n = 1 + rng.IntN(10_000)
		}
		vs := []time.Duration{time.Duration(1 + rng.IntN(20_000)), time.Duration(1 + rng.IntN(2_000))}
		gap := []int{4, 40, 4000}[trial%3]
		rs := randomKeyStream(rng, n, 1+rng.IntN(200), gap)
		switch trial % 5 {
		case 3: // a gap past 2^32 ns midway
			for i := rng.IntN(n); i < n; i++ {
				rs[i].at += 5 * time.Second
			}
		case 4: // a window past 2^32 ns
			vs[0] = 5*time.Second + time.Duration(rng.IntN(1000))
		}
		got, k := runKeyPeaks(rs, vs, 0)
		requireKeyBruteForce(t, got, rs, vs, trial)
		requireAllPeaks(t, k, rs, vs, trial)
	}
}

// TestKeyPeaksWide: costs whose sum passes 32 bits widen the counts, for
// good, midway; a cost past 32 bits is held aside; both give what trying
// every start gives, and nothing is left aside once the windows close.
func TestKeyPeaksWide(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for trial := 0; trial < 100; trial++ {
		n := 1 + rng.IntN(3000)
		vs := []time.Duration{time.Duration(1 + rng.IntN(20_000)), time.Duration(1 + rng.IntN(2_000))}
		rs := randomKeyStream(rng, n, 1+rng.IntN(20), 50)
		at := rng.IntN(n)
		switch trial % 3 {
		case 0: // costs that add up past 2^31-1 within a window
			for i := at; i < min(at+4, n); i++ {
				rs[i].cost = math.MaxInt32/2 + int64(rng.IntN(1000))
			}
		case 1: // one cost past 32 bits
			rs[at].cost = math.MaxUint32 + int64(rng.IntN(3))
		case 2: // costs past 32 bits on one key at one instant
			for i := at; i < min(at+3, n); i++ {
				rs[i] = keyRel{rs[at].at, 1 << 40, rs[at].key}
			}
		}
		got, k := runKeyPeaks(rs, vs, 0)
		require.True(t, k.wide, "trial %d", trial)
		require.Empty(t, k.big, "trial %d: the costs held aside went with their releases", trial)
		requireKeyBruteForce(t, got, rs, vs, trial)
		requireAllPeaks(t, k, rs, vs, trial)
	}
}

// TestKeyPeaksTotalsWrap: a key's total is kept modulo 2^32 while the cost
// held (counted in a window, or stored and waiting: up to keyFlush) is
// under 2^31, so over a long stream of large costs it comes round; counts,
// differences of totals, stay exact, and stay so when the totals widen
// after coming round (each odd trial's second half holds more than 2^31 in
// a window). Two keys take turns, costs 2^20 to 3*2^20 (515 of them held
// at most: under 2^31), so each key's total passes 2^32 two to three
// times, and the releases come two or three a window, so both ways of
// counting run.
func TestKeyPeaksTotalsWrap(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	vs := []time.Duration{1000, 333}
	for trial := 0; trial < 10; trial++ {
		var rs []keyRel
		var at time.Duration
		n := 10_000 + rng.IntN(2000)
		for i := 0; i < n; i++ {
			if rng.IntN(4) > 0 {
				at += time.Duration(300 + rng.IntN(400))
			}
			cost := int64(1<<20 + rng.IntN(1<<21))
			if trial%2 == 1 && i == n/2 { // four at once, past 2^31
				for range 3 {
					rs = append(rs, keyRel{at, 1<<30 - 1, uint32(i % 2)})
				}
			}
			rs = append(rs, keyRel{at, cost, uint32(i % 2)})
		}
		got, k := runKeyPeaks(rs, vs, 2)
		require.Equal(t, trial%2 == 1, k.wide, "trial %d: wide only past 2^31 held", trial)
		requireKeyBruteForce(t, got, rs, vs, trial)
		requireAllPeaks(t, k, rs, vs, trial)
	}
}

// TestKeyPeaksMemoryIndependentOfReleases: ten times the releases over the
// same keys at the same rate hold the same: as many releases at most (those
// of the last window), as many ring chunks and the same counts.
func TestKeyPeaksMemoryIndependentOfReleases(t *testing.T) {
	held := func(n int) (most, chunks, counts int) {
		rng := rand.New(rand.NewPCG(41, 42))
		k := newKeyPeaks([]time.Duration{time.Second, 100 * ms})
		k.reserve(10_000)
		var at time.Duration
		for i := 0; i < n; i++ {
			at += time.Duration(rng.ExpFloat64() * float64(10*time.Microsecond)) // 100,000 a second
			k.add(at, 1, uint32(rng.IntN(10_000)))
			if i%1000 == 0 {
				most = max(most, k.heldReleases())
			}
		}
		k.finish()
		return most, k.ring.held(), len(k.counts)
	}
	m1, c1, k1 := held(300_000)
	m2, c2, k2 := held(3_000_000)
	t.Logf("held at most %d and %d releases, %d and %d chunks", m1, m2, c1, c2)
	require.Less(t, m2, 110_000, "the releases of the last second, about 100,000")
	require.LessOrEqual(t, m2, m1+m1/10)
	require.LessOrEqual(t, c2, c1+2, "the ring's chunks follow what it held at most")
	require.Equal(t, k1, k2, "counts for the keys, not the releases")
}

// TestRunKeyPeaksOfShapedReleases: the engine counts the key peaks of
// delayed requests at their release, with their key. leaky-bucket at 4
// per 1s (D = 250ms), burst 4: alice's four requests at 0 are released at
// 0, 250, 500 and 750ms; bob's two at 100ms at 100 and 350ms
// (the rule of docs/algorithms.md, worked example 2). gcra admits the same requests at once.
func TestRunKeyPeaksOfShapedReleases(t *testing.T) {
	p := algorithms.Policy{Rate: 4, Per: time.Second, Burst: 4}
	plan := traffic.Plan{Sources: []traffic.Source{
		&traffic.Times{Common: traffic.Common{Clients: traffic.Clients{Key: "alice"}, Cost: 1}, At: []time.Duration{0, 0, 0, 0}},
		&traffic.Times{Common: traffic.Common{Clients: traffic.Clients{Key: "bob"}, Cost: 1}, At: []time.Duration{100 * ms, 100 * ms}},
	}}
	cfg := baseConfig(plan,
		Algorithm{Name: "leaky-bucket", Label: "leaky-bucket", Params: algorithms.Params{Policy: p}},
		Algorithm{Name: "gcra", Label: "gcra", Params: algorithms.Params{Policy: p}})
	cfg.Limit = p
	cfg.Windows = []time.Duration{time.Second, 200 * ms}
	rep, err := Run(cfg)
	require.NoError(t, err)
	lb, gcra := rep.Results[0], rep.Results[1]
	require.Equal(t, int64(4), lb.Delayed, "alice's last three and bob's second wait")
	require.Equal(t, []KeyPeak{
		// alice's four releases are within [0,1s): 4 against 4, 1.0x
		{WindowNs: 1e9, Count: 4, Key: "alice", StartNs: 0, Ratio: 1},
		// 250ms apart, no 200ms holds two of alice's; bob's 100 and 350ms
		// neither: 1 against 0.8, and alice's interval at 0 is the first
		{WindowNs: 2e8, Count: 1, Key: "alice", StartNs: 0, Ratio: 1.25},
	}, lb.KeyPeaks)
	require.Equal(t, []KeyPeak{
		{WindowNs: 1e9, Count: 4, Key: "alice", StartNs: 0, Ratio: 1},
		// all four at 0: 4 against 0.8, 5.0x
		{WindowNs: 2e8, Count: 4, Key: "alice", StartNs: 0, Ratio: 5},
	}, gcra.KeyPeaks)
	// every key together: [0,200ms) holds alice's 0 and bob's 100ms
	require.Equal(t, int64(2), lb.Peaks[1].Count)
}

// TestRunKeyPeaksOneKeyArePeaks: with one key, every algorithm's key peaks
// are its peaks (the double burst of docs/algorithms.md, with a shaper's delays
// and rejections).
func TestRunKeyPeaksOneKeyArePeaks(t *testing.T) {
	var at []time.Duration
	for i := 0; i < 10; i++ {
		at = append(at, 900*ms+time.Duration(i)*10*ms, time.Second+time.Duration(i)*10*ms)
	}
	slices.Sort(at)
	p := algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}
	cfg := baseConfig(timesPlan(at...), allAlgorithms(p)...)
	cfg.Duration = 3 * time.Second
	rep, err := Run(cfg)
	require.NoError(t, err)
	for _, res := range rep.Results {
		require.Len(t, res.KeyPeaks, len(res.Peaks))
		for i, pk := range res.Peaks {
			require.Equal(t, KeyPeak{WindowNs: pk.WindowNs, Count: pk.Count, Key: "alice", StartNs: pk.StartNs, Ratio: pk.Ratio},
				res.KeyPeaks[i], res.Label)
		}
	}
}
