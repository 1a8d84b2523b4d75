package backend

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/internal/portable"
	"github.com/ratesim/ratesim/internal/testenv"
)

// TestEvHeapOrder: the event heap gives back its entries by (at, ord),
// with pushes and pops mixed as the backend does them.
func TestEvHeapOrder(t *testing.T) {
	var h evHeap
	r := rand.New(rand.NewPCG(5, 6))
	var n int
	var last entry
	for i := range 200000 {
		if h.Len() == 0 || r.IntN(3) > 0 && h.Len() < 40 {
			h.Push(entry{at: last.at + time.Duration(r.IntN(50)), ord: uint64(i)})
			continue
		}
		e := h.Pop()
		if e.at < last.at || e.at == last.at && e.ord < last.ord {
			t.Fatalf("out of order: %v after %v", e, last)
		}
		last = e
		n++
	}
}

// TestBefore128: the branch-free comparison that Pop uses agrees with
// Less on every pair, negative instants, equal instants and the extremes
// of both words included (the sign bit of at is flipped for the unsigned
// subtraction; ord is compared only when the instants are equal).
func TestBefore128(t *testing.T) {
	ats := []time.Duration{math.MinInt64, -5, -1, 0, 1, 7, math.MaxInt64}
	ords := []uint64{0, 1, 1 << 56, math.MaxUint64}
	for _, a1 := range ats {
		for _, o1 := range ords {
			for _, a2 := range ats {
				for _, o2 := range ords {
					a, b := entry{at: a1, ord: o1}, entry{at: a2, ord: o2}
					want := uint64(0)
					if a.Less(&b) {
						want = 1
					}
					if got := before128(&a, &b); got != want {
						t.Fatalf("before128(%v, %v) = %d, Less says %d", a, b, got, want)
					}
				}
			}
		}
	}
}

// TestEvHeapSorts: for the heap and for the completions, sorted (up to
// sortedMax workers) or heaped (more), pushed in random order (instants
// from -1000 on, many equal, each ord unique) and then with pops mixed in,
// every pop gives the least entry left, checked against a sorted copy, at
// every size up to the limit of each (300 for a heap, the workers for
// completions, which never hold more).
func TestEvHeapSorts(t *testing.T) {
	t.Run("four children", func(t *testing.T) { testHeapSorts(t, &evHeap{}, 300) })
	for _, workers := range []int{1, 2, 16, sortedMax, sortedMax + 1, 300} {
		c := newCompletions(workers)
		if c.heaped != (workers > sortedMax) {
			t.Fatalf("%d workers: heaped %v", workers, c.heaped)
		}
		t.Run(fmt.Sprintf("completions of %d workers", workers), func(t *testing.T) { testHeapSorts(t, &c, workers) })
	}
}

type heapOfEntries interface {
	Push(entry)
	Pop() entry
	Len() int
}

func testHeapSorts(t *testing.T, h heapOfEntries, most int) {
	r := rand.New(rand.NewPCG(8, 1))
	for size := 1; size <= most; size += 1 + most/40 {
		var all []entry
		seq := uint64(0)
		push := func() {
			seq++
			e := entry{at: time.Duration(r.IntN(60) - 1000), ord: seq ^ uint64(r.IntN(2))<<56}
			h.Push(e)
			all = append(all, e)
		}
		for range size {
			push()
		}
		for h.Len() > 0 {
			slices.SortFunc(all, func(a, b entry) int {
				if a.Less(&b) {
					return -1
				}
				return 1
			})
			if got := h.Pop(); got != all[0] {
				t.Fatalf("size %d: popped %v, least is %v", size, got, all[0])
			}
			all = all[1:]
			if r.IntN(3) == 0 && len(all) < size {
				push()
			}
		}
	}
}

// TestLateAdmitsOrder: the late admissions, with the entries they refuse
// kept in a heap beside them as the backend keeps them among its other
// events, give back every entry by (at, ord), against one heap of them
// all: pushes at or after the clock (many at one instant, some before the
// group already taken, which next() takes when it looks for the next
// event), pops mixed in, the clock moving to each entry popped.
func TestLateAdmitsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 3))
	for k := range 20 {
		var l lateAdmits
		var side, all evHeap
		now, seq := time.Duration(0), uint64(0)
		refused := 0
		for range 20000 {
			if l.len() > 0 && r.IntN(3) == 0 {
				l.peek() // as next() does, before the clock reaches it
			}
			if all.Len() == 0 || r.IntN(5) < 3 {
				seq++
				e := entry{at: now + time.Duration(r.IntN(200*(k+1))), ord: uint64(evAdmit)<<kindShift | seq}
				if r.IntN(4) == 0 {
					e.at = now // often at the clock's instant
				}
				if !l.push(e) {
					side.Push(e)
					refused++
				}
				all.Push(e)
				continue
			}
			var got entry
			switch {
			case side.Len() == 0 || l.len() > 0 && l.peek().Less(side.Peek()):
				got = l.pop()
			default:
				got = side.Pop()
			}
			if want := all.Pop(); got != want {
				t.Fatalf("case %d: popped %v, want %v", k, got, want)
			}
			now = got.at
		}
		if l.len()+side.Len() != all.Len() {
			t.Fatalf("case %d: %d held, want %d", k, l.len()+side.Len(), all.Len())
		}
		if k == 0 && refused == 0 {
			t.Fatalf("no entry refused: the test misses the case")
		}
	}
}

// TestCompletionsKeptEitherWay: a backend gives the same events and the
// same result whether its completions are kept sorted (up to sortedMax
// workers) or in the heap (more), each checked against the other kind put
// in its place: 24 workers (sorted by default) and 40 (heaped), a bounded
// FIFO queue, timeouts, one request in four held by a shaper, a workers
// cut and a pause, at 90% load, so that most workers are busy at once and
// many completions share an instant (with constant service, most do).
func TestCompletionsKeptEitherWay(t *testing.T) {
	// 100,000 requests at 90% load of 24 workers reach past the pause at
	// 40s (2,160 a second: 46s)
	n := testenv.Runs(100_000, 200_000)
	for _, c := range []struct {
		workers int
		dist    Dist
	}{{24, Exponential}, {40, Exponential}, {24, Constant}, {40, Constant}} {
		workers := c.workers
		// the first run records its events; the second, with the other
		// kind of completions, is held to them as they come
		var evs []Event
		run := func(swap bool) Result {
			cfg := Config{Workers: workers, Service: Service{Dist: c.dist, Mean: 10 * ms}, Queue: 50,
				Timeout: 60 * ms, Seed: 3, Bucket: 100 * ms,
				Faults: []Fault{{Type: Workers, At: 20 * time.Second, For: 5 * time.Second, Count: workers / 2},
					{Type: Pause, At: 40 * time.Second, For: 300 * ms}}}
			seen, differ := 0, ""
			b, err := New(cfg, func(e Event) {
				switch {
				case !swap:
					evs = append(evs, e)
				case differ != "":
				case seen >= len(evs):
					differ = fmt.Sprintf("event %d, %+v, is one too many", seen, e)
				case e != evs[seen]:
					differ = fmt.Sprintf("event %d: %+v, with the other kind %+v", seen, evs[seen], e)
				}
				seen++
			})
			require.NoError(t, err)
			if swap {
				if b.done.heaped {
					b.done = completions{sorted: make([]entry, 0, workers)}
				} else {
					b.done = completions{heaped: true}
				}
			}
			rng := rand.New(rand.NewPCG(uint64(workers), 11))
			gap := float64(time.Second) / (0.9 * float64(workers) * 100) // 90% of workers/10ms
			var at time.Duration
			for i := range n {
				u := float64(rng.Uint64()>>11+1) / (1 << 53)
				at += toDuration(float64(-portable.Log(u) * gap))
				b.Until(at)
				r := Request{ID: uint64(i), Attempt: 1, Arrived: at, Admitted: at}
				if i%4 == 0 {
					r.Admitted += time.Duration(i%9) * ms
				}
				if err := b.Submit(&r); err != nil {
					t.Fatal(err) // not require: it is slow in a loop
				}
			}
			b.Until(math.MaxInt64)
			if swap {
				require.Empty(t, differ, "%d workers", workers)
				require.Equal(t, len(evs), seen, "%d workers: events", workers)
			}
			return b.Result(0, at)
		}
		res := run(false)
		res2 := run(true)
		require.Equal(t, res, res2, "%d workers: result", workers)
		require.Greater(t, res.Started, int64(n*3/4), "%d workers: most requests served", workers)
	}
}
