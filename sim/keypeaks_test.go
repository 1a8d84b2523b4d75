package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/testenv"
	"github.com/ratesim/ratesim/traffic"
	"github.com/stretchr/testify/require"
)

// keyRel is a release of a key, for the tests.
type keyRel struct {
	at   time.Duration
	cost int64
	key  uint32
}

// keyName names key id k in the tests' reports.
func keyName(k uint32) string { return fmt.Sprintf("k%d", k) }

// runKeyPeaks feeds rs to a new keyPeaks of windows vs (its totals sized
// for reserve keys first, the others grown as keys come) and returns what
// it reports, the ratios left out: the key peaks and the peaks of every
// key together.
func runKeyPeaks(rs []keyRel, vs []time.Duration, reserve int) ([]KeyPeak, []Peak) {
	k := newKeyPeaks(vs)
	k.reserve(reserve)
	for _, r := range rs {
		k.add(r.at, r.cost, r.key)
	}
	keys, all := k.peaks(algorithms.Policy{Rate: 1, Per: time.Second}, keyName)
	for i := range keys {
		keys[i].Ratio, all[i].Ratio = 0, 0
	}
	return keys, all
}

// bruteForcePeaks tries every release, in the stream's order, as the start
// a of [a, a+v), and sums the releases in it: of its key, for the key
// peak, and of every key, for the peak of every key together. The first
// largest sum wins, which is the earliest start and, for the key peak, of
// one start, the key whose release came first. (The stream is in time
// order, so the releases in [a, a+v) are found from the first one at a's
// instant on, rather than among all of them.)
func bruteForcePeaks(rs []keyRel, v time.Duration) (KeyPeak, Peak) {
	key := KeyPeak{WindowNs: int64(v)}
	all := Peak{WindowNs: int64(v)}
	lo := 0 // the first release at a's instant
	for i, a := range rs {
		if rs[lo].at != a.at {
			lo = i
		}
		var sum, sumAll int64
		for _, r := range rs[lo:] {
			if r.at >= a.at+v {
				break
			}
			sumAll += r.cost
			if r.key == a.key {
				sum += r.cost
			}
		}
		if sum > key.Count {
			key.Count, key.Key, key.StartNs = sum, keyName(a.key), int64(a.at)
		}
		if sumAll > all.Count {
			all.Count, all.StartNs = sumAll, int64(a.at)
		}
	}
	return key, all
}

// requireKeyBruteForce: the key peaks and the peaks of every key together
// are bruteForcePeaks', window by window.
func requireKeyBruteForce(t *testing.T, keys []KeyPeak, all []Peak, rs []keyRel, vs []time.Duration, trial any) {
	t.Helper()
	require.Len(t, keys, len(vs))
	require.Len(t, all, len(vs))
	for i, v := range vs {
		wantKey, wantAll := bruteForcePeaks(rs, v)
		require.Equal(t, wantKey, keys[i], "%v: window %v (%d releases): key peak", trial, v, len(rs))
		require.Equal(t, wantAll, all[i], "%v: window %v (%d releases): every key together", trial, v, len(rs))
	}
}

// TestKeyPeaksByHand: small streams whose key peaks are worked out by
// hand, each case saying why. Keys are ids: a=0, b=1, c=2, d=3.
func TestKeyPeaksByHand(t *testing.T) {
	t.Parallel()
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
			name: "an interval that ends where a release comes",
			vs:   []time.Duration{time.Second},
			rs:   []keyRel{rel(0, a), rel(time.Second, a), rel(1500*ms, b), rel(2400*ms, b)},
			want: []want{{2, b, 1500 * ms}},
			why: "a's [0,1s) ends at its release at 1s: 1 each; b's [1.5s,2.5s) holds both of " +
				"b's (2)",
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
			keys, all := runKeyPeaks(tc.rs, tc.vs, 4)
			require.Len(t, keys, len(tc.want))
			for i, w := range tc.want {
				want := KeyPeak{WindowNs: int64(tc.vs[i]), Count: w.count, StartNs: int64(w.start)}
				if w.count > 0 {
					want.Key = keyName(w.key)
				}
				require.Equal(t, want, keys[i], "window %v: %s", tc.vs[i], tc.why)
			}
			requireKeyBruteForce(t, keys, all, tc.rs, tc.vs, "by hand")
		})
	}
}

// TestKeyPeaksReport: what peaks reports, by name and rated: the ratio is
// count / (L*V/W) as for peaks; an empty window names no key.
func TestKeyPeaksReport(t *testing.T) {
	t.Parallel()
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

// randomStream is a random stream of releases for the tests: n releases
// over key ids below keys, a third of them at the instant of the one
// before, the gaps up to gap, and costs drawn by cost.
func randomStream(rng *rand.Rand, n, keys, gap int, cost func() int64) []keyRel {
	rs := make([]keyRel, n)
	var at time.Duration
	for i := range rs {
		if rng.IntN(3) > 0 {
			at += time.Duration(rng.IntN(gap))
		}
		rs[i] = keyRel{at, cost(), uint32(rng.IntN(keys))}
	}
	return rs
}

// TestKeyPeaksMatchesBruteForce: random streams give what trying every
// release as a start gives, key peaks and peaks of every key together.
// The streams are short and long (thousands of releases, counted in
// batches), over one key to thousands (the totals reserved for them, or
// grown as they come), some skewed so that a few keys are busy, dense
// (hundreds of releases a window) and sparse, through one to three
// windows; their costs are 1, 1 to 3, or mostly 1 with some past 32 bits
// or some that add up past 2^31 in a window.
// Some streams have a gap past 2^32 ns, some a window past it, and some
// fall on a grid with their windows, so that many intervals end at the
// very instant of a release (which they leave out).
func TestKeyPeaksMatchesBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	costs := []func() int64{
		func() int64 { return 1 },
		func() int64 { return 1 + rng.Int64N(3) },
		func() int64 {
			if rng.IntN(20) == 0 {
				return math.MaxUint32 + rng.Int64N(1<<40)
			}
			return 1
		},
		func() int64 {
			if rng.IntN(50) == 0 {
				return 1<<29 + rng.Int64N(1<<31)
			}
			return 1
		},
	}
	for trial := range testenv.Runs(150, 400) {
		n, vmax, keys, gap := rng.IntN(80), 150, 1+rng.IntN(6), 50
		switch {
		case trial >= 350: // many keys
			n, vmax, keys = 1+rng.IntN(3000), 20_000, 1+rng.IntN(5000)
		case trial >= 250: // long streams, dense or sparse
			n, vmax, keys = 1+rng.IntN(3000), 20_000, 1+rng.IntN(300)
			gap = []int{4, 50, 4000}[trial%3]
		}
		vs := make([]time.Duration, 1+rng.IntN(3))
		for i := range vs {
			vs[i] = time.Duration(1 + rng.IntN(vmax))
		}
		rs := randomStream(rng, n, keys, gap, costs[trial%len(costs)])
		if trial%4 == 3 { // skewed: half the releases from key 0
			for i := range rs {
				if rng.IntN(2) == 0 {
					rs[i].key = 0
				}
			}
		}
		switch trial % 7 {
		case 4: // on a grid of 7 ns, windows too: intervals end where releases come
			for i := range rs {
				rs[i].at *= 7
			}
			for i := range vs {
				vs[i] *= 7
			}
		case 5: // a gap past 2^32 ns midway
			for i := rng.IntN(n + 1); i < n; i++ {
				rs[i].at += 5 * time.Second
			}
		case 6: // a window past 2^32 ns
			vs[0] = 5*time.Second + time.Duration(rng.IntN(1000))
		}
		reserve := 0
		if trial%2 == 0 {
			reserve = keys
		}
		keyPeaks, all := runKeyPeaks(rs, vs, reserve)
		requireKeyBruteForce(t, keyPeaks, all, rs, vs, trial)
	}
}

// TestKeyPeaksIntervalsEndAtReleases: a key released every 10 ns, 3000
// times, through windows of 12 µs and 6 µs: each interval [f, f+V) ends at
// the very instant of a release, which it leaves out, so every one holds
// V/10 releases (1200 and 600), and the first, from 0, is the peak; a
// second key's releases, one every 100 ns from 5 ns, hold 120 and 60.
// Every key together, the window from 0 holds both: 1320 and 660.
func TestKeyPeaksIntervalsEndAtReleases(t *testing.T) {
	t.Parallel()
	var rs []keyRel
	for i := range 3000 {
		rs = append(rs, keyRel{time.Duration(10 * i), 1, 0})
		if i%10 == 0 {
			rs = append(rs, keyRel{time.Duration(10*i + 5), 1, 1})
		}
	}
	vs := []time.Duration{12_000, 6_000}
	keys, all := runKeyPeaks(rs, vs, 0)
	require.Equal(t, []KeyPeak{
		{WindowNs: 12_000, Count: 1200, Key: "k0"},
		{WindowNs: 6_000, Count: 600, Key: "k0"},
	}, keys)
	require.Equal(t, []Peak{{WindowNs: 12_000, Count: 1320}, {WindowNs: 6_000, Count: 660}}, all)
	requireKeyBruteForce(t, keys, all, rs, vs, "every 10 ns")
}

// TestKeyPeaksOneKeyIsPeaks: with one key, the key peak is the peak of
// every key together, window by window, count and start, over random
// streams long and short.
func TestKeyPeaksOneKeyIsPeaks(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := range 100 {
		n := rng.IntN(100)
		if trial >= 70 {
			n = 1 + rng.IntN(20_000)
		}
		vs := []time.Duration{time.Duration(1 + rng.IntN(20_000)), time.Duration(1 + rng.IntN(2_000))}
		rs := randomStream(rng, n, 1, 40, func() int64 { return 1 + rng.Int64N(3) })
		keys, all := runKeyPeaks(rs, vs, 1)
		for i := range vs {
			require.Equal(t, all[i].Count, keys[i].Count, "trial %d window %d", trial, i)
			require.Equal(t, all[i].StartNs, keys[i].StartNs, "trial %d window %d", trial, i)
		}
	}
}

// TestKeyPeaksTotalsWrap: a key's running total passes 2^64 over a long
// stream of large costs; the figures, which fit in an int64, are still
// those of trying every start. Two keys take turns, costs 2^59 to 2^60
// (each key's total comes round every 16 to 32 releases), about two
// releases a window, so that no window's sum passes 2^63-1.
func TestKeyPeaksTotalsWrap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(33, 34))
	vs := []time.Duration{1000, 333}
	for trial := range 10 {
		var rs []keyRel
		var at time.Duration
		for i := range 2000 + rng.IntN(2000) {
			at += time.Duration(500 + rng.IntN(500))
			rs = append(rs, keyRel{at, 1<<59 + rng.Int64N(1<<59), uint32(i % 2)})
		}
		keys, all := runKeyPeaks(rs, vs, 2)
		requireKeyBruteForce(t, keys, all, rs, vs, trial)
	}
}

// TestKeyPeaksMemoryFlat: ten times the releases over the same keys at the
// same rate take no more memory: a key peak holds the releases of its
// longest window and a total per key, not the stream.
func TestKeyPeaksMemoryFlat(t *testing.T) {
	alloc := func(n int) uint64 {
		rng := rand.New(rand.NewPCG(41, 42))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		k := newKeyPeaks([]time.Duration{time.Second, 100 * ms})
		k.reserve(10_000)
		var at time.Duration
		for range n {
			at += time.Duration(rng.ExpFloat64() * float64(10*time.Microsecond)) // 100,000 a second
			k.add(at, 1, uint32(rng.IntN(10_000)))
		}
		k.finish()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(200_000), alloc(2_000_000)
	t.Logf("allocated %d bytes for 200,000 releases, %d for 2,000,000", small, large)
	require.Less(t, large, small+small/2, "memory for a second of releases, not for all of them")
}

// TestRunKeyPeaksOfShapedReleases: the engine counts the key peaks of
// delayed requests at their release, with their key. leaky-bucket at 4
// per 1s (D = 250ms), burst 4: alice's four requests at 0 are released at
// 0, 250, 500 and 750ms; bob's two at 100ms at 100 and 350ms
// (the rule of docs/algorithms.md, worked example 2). gcra admits the same requests at once.
func TestRunKeyPeaksOfShapedReleases(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
