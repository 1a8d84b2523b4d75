package algorithms

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// Benchmarks of one decision, each beside the same decisions on
// golang.org/x/time/rate, so that every figure is also a ratio taken in one
// run. BENCHMARKS.md gives the figures and the commands.
//
// Two shapes of traffic, both precomputed as one cycle of arrivals that
// repeats shifted in time (so any number of decisions runs in increasing
// time from a fixed table):
//
//   - hot key: one key, arrivals at twice the limit, 5ms apart plus a
//     seeded jitter of up to 2.5ms, so that about half are admitted;
//   - many keys: a sequence of 1<<20 keys drawn from K (uniform, or Zipf
//     with s = 1.1 over a seeded permutation of the ids, so that hot keys
//     are scattered over the state table), one arrival every W/(2*L*K): the
//     offered load is twice the aggregate limit. One cycle spans 5.2s of
//     virtual time at 1k keys, so keys' state expires and comes back, but
//     5.2ms at 1M keys: there a run stays within its first second (the
//     window algorithms admit nearly every uniform draw), state
//     accumulates, and the keys touched are those of one cycle (649,356 of
//     1M for uniform, 142,287 for zipf).
//
// Two kinds of benchmark per shape:
//
//   - plain (BenchmarkDecideHotKey, BenchmarkDecideManyKeys): one op is one
//     decision of one limiter, for -benchmem and profiles; the reference is
//     a sub-benchmark of its own;
//   - ratio (BenchmarkDecideHotKeyRatio, BenchmarkDecideManyKeysRatio): one
//     op is one decision of the algorithm and one of the reference on the
//     same arrival. The two loops run interleaved in chunks of benchChunk
//     decisions, alternating which goes first, and each is timed on its own
//     with the monotonic clock, so that a noisy neighbour slows both alike.
//     They report ns/decision (the algorithm), ref-ns/decision (the
//     reference) and x-ref, their quotient; ns/op, which would be the sum,
//     is suppressed.
//
// Before timing, every benchmark makes min(b.N, cycle) decisions on the
// same limiter (warm-up: tables, heaps and logs reach their size), so set-up
// is proportional to b.N and `-benchtime 100x` stays fast. The 1<<20-draw key
// sequences are built lazily, once per process, on first use.

// benchPolicy is the policy of every decision benchmark: 100 per second,
// bursts of 10.
var benchPolicy = Policy{Rate: 100, Per: time.Second, Burst: 10}

// benchEpoch puts the arrivals near today's instants, as replayed traces
// carry them.
const benchEpoch = 1_700_000_000 * time.Second

// benchChunk is how many decisions a ratio benchmark makes on one side
// before switching to the other. Each switch leaves the caches to the side
// that ran last, and the first decisions of a chunk pay to win them back: at
// 1M keys, chunks of 1<<14 made fixed-window and gcra look 10-25% slower
// beside the map than chunks of 1<<18 or 1<<20, which agree within the
// noise. 1<<18 decisions are 3ms on a hot key and 30ms on 1M keys: still
// many switches a second.
const benchChunk = 1 << 18

// benchSink keeps the verdicts alive.
var benchSink int

func benchParams(name string) Params {
	p := Params{Policy: benchPolicy}
	if name == "concurrency" {
		// Service W*B/L: at twice the rate, twice max would be in flight.
		p.Service = time.Duration(int64(benchPolicy.Per) * benchPolicy.Burst / benchPolicy.Rate)
	}
	return p
}

func benchLimiter(tb testing.TB, name string) Limiter {
	tb.Helper()
	l, err := New(name, benchParams(name))
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func benchLimit() rate.Limit {
	return rate.Limit(float64(benchPolicy.Rate) / benchPolicy.Per.Seconds())
}

// benchWorkload is one cycle of arrivals: instant at[i] for key keys[i].
// The cycle repeats, shifted by span each time.
type benchWorkload struct {
	at   []time.Duration
	keys []Key
	span time.Duration
	// distinct[i] is the number of distinct keys among keys[:i+1].
	distinct []int32
}

// benchCursor walks a workload's arrivals in time order, for ever.
type benchCursor struct {
	w     *benchWorkload
	i     int
	off   time.Duration
	drawn int // arrivals drawn so far
}

func (c *benchCursor) next() (time.Duration, Key) {
	t, k := c.off+c.w.at[c.i], c.w.keys[c.i]
	c.i++
	if c.i == len(c.w.at) {
		c.i, c.off = 0, c.off+c.w.span
	}
	c.drawn++
	return t, k
}

// touched is the number of distinct keys drawn so far.
func (c *benchCursor) touched() int {
	if c.drawn == 0 {
		return 0
	}
	return int(c.w.distinct[min(c.drawn, len(c.w.keys))-1])
}

var benchHotKey = sync.OnceValue(func() *benchWorkload {
	const n = 1 << 16
	gap := benchPolicy.Per / time.Duration(2*benchPolicy.Rate) // 5ms
	r := rand.New(rand.NewPCG(1, 6))
	w := &benchWorkload{at: make([]time.Duration, n), keys: make([]Key, n), span: n * gap}
	for i := range w.at {
		// jitter < gap/2: instants stay increasing, across cycles too
		w.at[i] = benchEpoch + time.Duration(i)*gap + time.Duration(r.Int64N(int64(gap/2)))
	}
	w.distinct = make([]int32, n)
	for i := range w.distinct {
		w.distinct[i] = 1
	}
	return w
})

var benchManyKeys struct {
	sync.Mutex
	m map[string]*benchWorkload
}

// benchKeysWorkload returns the many-keys workload over k keys drawn by
// dist ("zipf" or "uniform"), building it on first use.
func benchKeysWorkload(dist string, k int) *benchWorkload {
	benchManyKeys.Lock()
	defer benchManyKeys.Unlock()
	name := fmt.Sprint(dist, k)
	if w, ok := benchManyKeys.m[name]; ok {
		return w
	}
	const n = 1 << 20
	step := benchPolicy.Per / time.Duration(2*benchPolicy.Rate*int64(k)) // 5ns for 1M keys
	r := rand.New(rand.NewPCG(uint64(k), 7))
	w := &benchWorkload{at: make([]time.Duration, n), keys: make([]Key, n), span: n * step, distinct: make([]int32, n)}
	var draw func() Key
	switch dist {
	case "uniform":
		draw = func() Key { return Key(r.IntN(k)) }
	case "zipf":
		perm := r.Perm(k)
		z := rand.NewZipf(r, 1.1, 1, uint64(k-1))
		draw = func() Key { return Key(perm[z.Uint64()]) }
	default:
		panic("unknown key distribution " + dist)
	}
	seen := make([]bool, k)
	var distinct int32
	for i := range n {
		w.at[i] = benchEpoch + time.Duration(i)*step
		w.keys[i] = draw()
		if !seen[w.keys[i]] {
			seen[w.keys[i]] = true
			distinct++
		}
		w.distinct[i] = distinct
	}
	if benchManyKeys.m == nil {
		benchManyKeys.m = map[string]*benchWorkload{}
	}
	benchManyKeys.m[name] = w
	return w
}

// benchDecide makes n decisions of l and returns how many were admitted.
func benchDecide(l Limiter, c *benchCursor, n int) (admitted int) {
	for range n {
		t, k := c.next()
		if l.Decide(t, k, 1).Verdict != Reject {
			admitted++
		}
	}
	return admitted
}

// benchPrefetchLen is how many arrivals benchDecidePrefetch prefetches at
// once, and how far ahead: as the engine does (sim's prefetchLen).
const benchPrefetchLen = 32

// benchDecidePrefetch makes n decisions of l as the engine makes them:
// before each chunk of benchPrefetchLen arrivals, it tells the limiter of
// the next chunk's keys (Prefetcher).
func benchDecidePrefetch(l Limiter, c *benchCursor, n int) (admitted int) {
	pf := l.(Prefetcher)
	var keys [benchPrefetchLen]Key
	tell := func(ahead int) { // the chunk that starts ahead arrivals on
		i, off := c.i+ahead, c.off
		for i >= len(c.w.at) {
			i, off = i-len(c.w.at), off+c.w.span
		}
		var last time.Duration
		for j := range keys {
			keys[j], last = c.w.keys[i], off+c.w.at[i]
			if i++; i == len(c.w.at) {
				i, off = 0, off+c.w.span
			}
		}
		pf.Prefetch(keys[:], last)
	}
	tell(0)
	for done := 0; done < n; done += benchPrefetchLen {
		tell(benchPrefetchLen)
		for range min(benchPrefetchLen, n-done) {
			t, k := c.next()
			if l.Decide(t, k, 1).Verdict != Reject {
				admitted++
			}
		}
	}
	return admitted
}

// benchAllowDirect makes n decisions on one bare *rate.Limiter, the hot-key
// reference.
func benchAllowDirect(lim *rate.Limiter, c *benchCursor, n int) (admitted int) {
	for range n {
		t, _ := c.next()
		if lim.AllowN(time.Unix(0, int64(t)), 1) {
			admitted++
		}
	}
	return admitted
}

// benchRefMap is the many-keys reference: one *rate.Limiter per key in a
// map, made on the key's first request and never released.
type benchRefMap map[uint32]*rate.Limiter

func (m benchRefMap) allow(c *benchCursor, n int) (admitted int) {
	limit, burst := benchLimit(), int(benchPolicy.Burst)
	for range n {
		t, k := c.next()
		lim := m[uint32(k)]
		if lim == nil {
			lim = rate.NewLimiter(limit, burst)
			m[uint32(k)] = lim
		}
		if lim.AllowN(time.Unix(0, int64(t)), 1) {
			admitted++
		}
	}
	return admitted
}

// benchPlain times b.N decisions of run after warming it up with
// min(b.N, cycle) decisions, and reports ns/decision (the same as ns/op) and
// admitted, the fraction of the timed decisions that were admitted.
func benchPlain(b *testing.B, cycle int, run func(n int) int) {
	benchSink += run(min(b.N, cycle))
	b.ReportAllocs()
	b.ResetTimer()
	admitted := run(b.N)
	b.StopTimer()
	benchSink += admitted
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/decision")
	b.ReportMetric(float64(admitted)/float64(b.N), "admitted")
}

// benchRatio makes b.N decisions with alg and b.N with ref on the same
// arrivals, after warming both up with min(b.N, cycle) decisions. The two
// run in alternating chunks of benchChunk decisions, the first of each pair
// alternating too, and each side is timed on its own: ns/decision,
// ref-ns/decision and their quotient x-ref come from one run, under the
// same load. ns/op (the two sides together) is not reported.
func benchRatio(b *testing.B, cycle int, alg, ref func(n int) int) {
	benchSink += alg(min(b.N, cycle))
	benchSink += ref(min(b.N, cycle))
	timed := func(f func(int) int, n int) time.Duration {
		start := time.Now()
		benchSink += f(n)
		return time.Since(start)
	}
	var ta, tr time.Duration
	b.ResetTimer()
	for done, pair := 0, 0; done < b.N; pair++ {
		n := min(benchChunk, b.N-done)
		if pair%2 == 0 {
			ta += timed(alg, n)
			tr += timed(ref, n)
		} else {
			tr += timed(ref, n)
			ta += timed(alg, n)
		}
		done += n
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(ta.Nanoseconds())/float64(b.N), "ns/decision")
	b.ReportMetric(float64(tr.Nanoseconds())/float64(b.N), "ref-ns/decision")
	if tr > 0 {
		b.ReportMetric(float64(ta)/float64(tr), "x-ref")
	}
}

// BenchmarkDecideHotKey: one decision on one key, for each algorithm, and
// x-time-rate-AllowN-direct, the same arrivals on one bare *rate.Limiter.
func BenchmarkDecideHotKey(b *testing.B) {
	for _, info := range All() {
		b.Run(info.Name, func(b *testing.B) {
			w := benchHotKey()
			l, c := benchLimiter(b, info.Name), &benchCursor{w: w}
			benchPlain(b, len(w.at), func(n int) int { return benchDecide(l, c, n) })
		})
	}
	b.Run("x-time-rate-AllowN-direct", func(b *testing.B) {
		w := benchHotKey()
		lim, c := rate.NewLimiter(benchLimit(), int(benchPolicy.Burst)), &benchCursor{w: w}
		benchPlain(b, len(w.at), func(n int) int { return benchAllowDirect(lim, c, n) })
	})
}

// BenchmarkDecideHotKeyRatio: the hot-key decisions of each algorithm timed
// against x/time/rate's AllowN on one bare *rate.Limiter in the same run;
// x-ref is the algorithm's time over AllowN's.
func BenchmarkDecideHotKeyRatio(b *testing.B) {
	for _, info := range All() {
		b.Run(info.Name, func(b *testing.B) {
			w := benchHotKey()
			l, c := benchLimiter(b, info.Name), &benchCursor{w: w}
			lim, rc := rate.NewLimiter(benchLimit(), int(benchPolicy.Burst)), &benchCursor{w: w}
			benchRatio(b, len(w.at),
				func(n int) int { return benchDecide(l, c, n) },
				func(n int) int { return benchAllowDirect(lim, rc, n) })
		})
	}
}

var benchDists = []string{"zipf", "uniform"}

// benchManyKeysRun is one sub-benchmark of BenchmarkDecideManyKeys (and, with
// reserve, of BenchmarkDecideManyKeysReserved): algorithm name on keys
// drawn from keys by dist.
func benchManyKeysRun(b *testing.B, name, dist string, keys int, reserve bool) {
	w := benchKeysWorkload(dist, keys)
	heap := benchHeapFrom(b, len(w.keys))
	l, c := benchLimiter(b, name), &benchCursor{w: w}
	if reserve {
		l.(Reserver).Reserve(keys)
	}
	benchPlain(b, len(w.at), func(n int) int { return benchDecide(l, c, n) })
	b.ReportMetric(float64(l.Memory().BytesPerKeyMax), "B/key")
	heap.report(l, c)
}

// BenchmarkDecideManyKeys: one decision on keys drawn from 1,000,000, for
// each algorithm, and x-time-rate-map, one *rate.Limiter per key in a map.
// B/key is Memory().BytesPerKeyMax (the state the algorithm accounts for);
// heap-B/key, reported when b.N >= 1<<20, is the growth of the live heap
// (after a GC) over the run, divided by the distinct keys drawn: what a key
// costs in fact, tables and heaps included.
func BenchmarkDecideManyKeys(b *testing.B) {
	const keys = 1_000_000
	for _, dist := range benchDists {
		b.Run(dist, func(b *testing.B) {
			for _, info := range All() {
				b.Run(info.Name, func(b *testing.B) { benchManyKeysRun(b, info.Name, dist, keys, false) })
			}
			b.Run("x-time-rate-map", func(b *testing.B) {
				w := benchKeysWorkload(dist, keys)
				heap := benchHeapFrom(b, len(w.keys))
				m, c := benchRefMap{}, &benchCursor{w: w}
				benchPlain(b, len(w.at), func(n int) int { return m.allow(c, n) })
				heap.report(m, c)
			})
		})
	}
}

// benchHeap measures the live heap's growth over a benchmark.
type benchHeap struct {
	b      *testing.B
	before uint64
	on     bool
}

// benchHeapFrom records the live heap now when b.N >= cycle (a shorter run
// draws too few keys for a figure per key to mean anything).
func benchHeapFrom(b *testing.B, cycle int) benchHeap {
	h := benchHeap{b: b, on: b.N >= cycle}
	if h.on {
		h.before = benchLiveHeap()
	}
	return h
}

// report reports heap-B/key; state is what holds the keys' state and must
// stay alive until the heap is measured.
func (h benchHeap) report(state any, c *benchCursor) {
	if !h.on {
		return
	}
	after := benchLiveHeap()
	runtime.KeepAlive(state)
	h.b.ReportMetric((float64(after)-float64(h.before))/float64(c.touched()), "heap-B/key")
}

func benchLiveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// benchScaled are the algorithms BenchmarkDecideManyKeysRatio runs at every
// key count (all nine run at 1M): the smallest fixed state, the one with a
// division, the log, and the wrapped library.
var benchScaled = map[string]bool{"gcra": true, "token-bucket": true, "sliding-log": true, "x-time-rate": true}

// BenchmarkDecideManyKeysRatio: decisions on keys drawn from 1k, 100k and
// 1M, timed against x/time/rate with one *rate.Limiter per key in a map, in
// the same run. Every algorithm runs at 1M keys; those of benchScaled at
// every size, to show how the cost grows with the keys.
func BenchmarkDecideManyKeysRatio(b *testing.B) {
	for _, dist := range benchDists {
		for _, keys := range []int{1_000, 100_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/%s", dist, benchKeysLabel(keys)), func(b *testing.B) {
				for _, info := range All() {
					if keys != 1_000_000 && !benchScaled[info.Name] {
						continue
					}
					ratio := func(name string, decide func(Limiter, *benchCursor, int) int) {
						b.Run(name, func(b *testing.B) {
							w := benchKeysWorkload(dist, keys)
							l, c := benchLimiter(b, info.Name), &benchCursor{w: w}
							m, rc := benchRefMap{}, &benchCursor{w: w}
							benchRatio(b, len(w.at),
								func(n int) int { return decide(l, c, n) },
								func(n int) int { return m.allow(rc, n) })
						})
					}
					ratio(info.Name, benchDecide)
					if keys == 1_000_000 {
						// As the engine decides: told of the keys ahead.
						ratio(info.Name+"+prefetch", benchDecidePrefetch)
					}
				}
			})
		}
	}
}

func benchKeysLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1_000 && n%1_000 == 0:
		return fmt.Sprintf("%dk", n/1_000)
	}
	return fmt.Sprint(n)
}

// TestBenchWorkloadsMixVerdicts checks that the benchmarks' traffic makes
// every algorithm both admit and reject, so that no benchmark times only
// one path.
func TestBenchWorkloadsMixVerdicts(t *testing.T) {
	for _, info := range All() {
		t.Run(info.Name, func(t *testing.T) {
			// 1<<18 draws over 1k keys span 1.3s: the window algorithms
			// reject only once a key has sent L in a window of 1s.
			for _, shape := range []struct {
				name string
				w    *benchWorkload
			}{{"hot-key", benchHotKey()}, {"zipf-1k", benchKeysWorkload("zipf", 1_000)}, {"uniform-1k", benchKeysWorkload("uniform", 1_000)}} {
				const n = 1 << 18
				l, c := benchLimiter(t, info.Name), &benchCursor{w: shape.w}
				admitted := benchDecide(l, c, n)
				if admitted == 0 || admitted == n {
					t.Errorf("%s: %d of %d admitted: the benchmark would time one verdict only", shape.name, admitted, n)
				}
				t.Logf("%s: %.1f%% admitted", shape.name, 100*float64(admitted)/n)
			}
		})
	}
}
