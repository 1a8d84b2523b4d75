package timeq

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type entry = Entry[uint32]

// wheelQueue is a Queue with the lowercase push and pop of a heap, so that
// one test drives both.
type wheelQueue struct{ Queue[uint32] }

func (q *wheelQueue) push(at time.Duration, v uint32) { q.Push(at, v) }
func (q *wheelQueue) pop() entry                      { return q.Pop() }

// TestHeapScript pushes and pops by hand and checks where each entry
// sits. Instants are compared as int64, so a negative instant is below every
// non-negative one.
func TestHeapScript(t *testing.T) {
	var h heap[uint32]
	require.False(t, h.due(math.MaxInt64), "empty")
	// The zero heap's base is MinInt64, as ord 0: every negative
	// instant differs from it first at bit 62 (bucket 63), every
	// non-negative one at bit 63 (bucket 64).
	for _, e := range []entry{{12, 3}, {5, 1}, {-10, 8}, {6, 2}, {5, 4}} {
		h.push(e.At, e.V)
	}
	require.Len(t, radixBucket(&h, 63), 1)
	require.Len(t, radixBucket(&h, 64), 4)
	require.Equal(t, uint64(1<<62|1<<63), h.full)
	require.Equal(t, 5, h.len())
	require.Equal(t, time.Duration(-10), h.min())
	require.False(t, h.due(-11))
	require.True(t, h.due(-10))

	// The first pop moves the base to -10, bucket 63's least; -10 goes to
	// bucket 0 and is popped. The others still differ from -10 first at
	// bit 63 and stay in bucket 64.
	require.Equal(t, entry{-10, 8}, h.pop())
	require.Equal(t, time.Duration(-10), time.Duration(h.base^1<<63))
	require.Len(t, radixBucket(&h, 64), 4)
	require.Equal(t, time.Duration(5), h.min())

	// Next, the base moves to 5 and bucket 64 spreads: 5^5 = 0 (bucket 0,
	// twice), 6^5 = 0b11 (bucket 2), 12^5 = 0b1001 (bucket 4). Bucket 0
	// pops from its end: key 4, pushed after key 1.
	require.Equal(t, entry{5, 4}, h.pop())
	require.Equal(t, []entry{{5, 1}}, radixBucket(&h, 0))
	require.Equal(t, []entry{{6, 2}}, radixBucket(&h, 2))
	require.Equal(t, []entry{{12, 3}}, radixBucket(&h, 4))
	require.Empty(t, radixBucket(&h, 64))
	require.Equal(t, uint64(0b1010), h.full) // buckets 2 and 4

	// 7^5 = 0b10: bucket 2, whose least stays 6. 3 is below the base (the
	// last instant popped): it is pushed at 5, into bucket 0.
	h.push(7, 6)
	h.push(3, 7)
	require.Equal(t, []entry{{6, 2}, {7, 6}}, radixBucket(&h, 2))
	require.Equal(t, ord(6), h.low[2])
	require.Equal(t, time.Duration(5), h.min())
	require.Equal(t, entry{5, 7}, h.pop())
	require.Equal(t, entry{5, 1}, h.pop())
	// Bucket 0 is empty: the least is bucket 2's, 6.
	require.Equal(t, time.Duration(6), h.min())
	require.False(t, h.due(5))

	// Base 6: 6 to bucket 0, 7^6 = 1 to bucket 1; then base 7; then
	// bucket 4 spreads at base 12.
	require.Equal(t, entry{6, 2}, h.pop())
	require.Equal(t, []entry{{7, 6}}, radixBucket(&h, 1))
	require.Equal(t, time.Duration(7), h.min())
	require.Equal(t, entry{7, 6}, h.pop())
	require.Equal(t, time.Duration(12), h.min())
	require.Equal(t, entry{12, 3}, h.pop())
	require.Zero(t, h.len())
	require.Zero(t, h.full)
	require.False(t, h.due(math.MaxInt64))

	// Extremes: MaxInt64 and the base itself.
	h.push(math.MaxInt64, 1)
	h.push(12, 2)
	require.Equal(t, entry{12, 2}, h.pop())
	require.Equal(t, entry{math.MaxInt64, 1}, h.pop())
}

// TestHeapChunks: a bucket of more than radixChunkLen entries takes
// several chunks; emptied chunks are reused, so the heap holds at most one
// chunk per radixChunkLen entries plus one per bucket, and a heap at its
// steady size allocates nothing.
func TestHeapChunks(t *testing.T) {
	var h heap[uint32]
	for i := range 130 {
		h.push(time.Duration(1000+i), uint32(i))
	}
	// All 130 in bucket 64 (the zero base is MinInt64): 63 + 63 + 4.
	require.Equal(t, 3, radixChunks(h.top[64]))
	require.Zero(t, radixChunks(h.free))
	require.Len(t, radixBucket(&h, 64), 130)

	// Drain in order. Every chunk comes back to the free list.
	for i := range 130 {
		require.Equal(t, entry{time.Duration(1000 + i), uint32(i)}, h.pop())
		require.LessOrEqual(t, radixHeld(&h), h.len()/radixChunkLen+radixBuckets)
	}
	held := radixHeld(&h)
	require.Equal(t, held, radixChunks(h.free))

	// A steady state of 100 entries rolling forward reuses those chunks.
	now := time.Duration(2000)
	for i := range 100 {
		h.push(now+time.Duration(i*37), uint32(i))
	}
	allocs := testing.AllocsPerRun(100, func() {
		for range 1000 {
			e := h.pop()
			now = e.At
			h.push(now+100*37, e.V)
		}
	})
	require.Zero(t, allocs)
	require.Equal(t, 100, h.len())
	require.LessOrEqual(t, radixHeld(&h), 100/radixChunkLen+radixBuckets)
}

// radixChunks counts the chunks linked from c.
func radixChunks(c *radixChunk[uint32]) int {
	n := 0
	for ; c != nil; c = c.next {
		n++
	}
	return n
}

// radixHeld counts every chunk of h, in its buckets and free.
func radixHeld(h *heap[uint32]) int {
	n := radixChunks(h.free)
	for _, c := range h.top {
		n += radixChunks(c)
	}
	return n
}

// radixBucket returns the entries of h's bucket i in the order they were
// added.
func radixBucket(h *heap[uint32], i int) []entry {
	var chunks [][]entry
	for c := h.top[i]; c != nil; c = c.next {
		chunks = append(chunks, c.e[:c.n])
	}
	slices.Reverse(chunks)
	return slices.Concat(chunks...)
}

// monotoneQueue is what the tests need of a queue; heap and Queue (as
// wheelQueue) both provide it, under the same contract.
type monotoneQueue interface {
	push(at time.Duration, v uint32)
	pop() entry
	len() int
	min() time.Duration
	due(now time.Duration) bool
}

// checkQueueRandom checks a queue made by newQ against a slice kept sorted
// by instant, over random pushes (some below the last instant popped, which
// the queue raises to it) and pops, with many ties and instants from spread
// above the last pop up to the whole int64 range. Entries of one instant
// may pop in any order, so a pop must return the least instant and a key
// held at that instant.
func checkQueueRandom(t *testing.T, newQ func() monotoneQueue, spreads []int64, seed uint64) {
	for _, spread := range spreads {
		r := rand.New(rand.NewPCG(uint64(spread), seed))
		q := newQ()
		var ref []entry                      // sorted by at
		last := time.Duration(math.MinInt64) // the last instant popped
		for i := range 20_000 {
			if len(ref) == 0 || r.IntN(5) < 3 {
				// From a little below the last pop to spread above it.
				at := last - time.Duration(r.Int64N(4))
				if at > last { // wrapped below MinInt64
					at = last
				}
				if d := time.Duration(r.Int64N(spread)); at <= math.MaxInt64-d {
					at += d
				}
				key := uint32(i)
				q.push(at, key)
				e := entry{max(at, last), key}
				j, _ := slices.BinarySearchFunc(ref, e.At, func(a entry, at time.Duration) int {
					return cmp.Compare(a.At, at+1) // after the entries of at
				})
				ref = slices.Insert(ref, j, e)
			} else {
				// plain comparisons, not require's: this loop runs 20,000
				// times a spread
				got := q.pop()
				if got.At != ref[0].At {
					t.Fatalf("spread %d pop %d: popped %v, want the instant %v", spread, i, got, ref[0].At)
				}
				j := slices.IndexFunc(ref, func(e entry) bool { return e == got })
				if j < 0 {
					t.Fatalf("popped %v, not held", got)
				}
				ref = slices.Delete(ref, j, j+1)
				last = got.At
			}
			if q.len() != len(ref) {
				t.Fatalf("spread %d step %d: len %d, want %d", spread, i, q.len(), len(ref))
			}
			if len(ref) > 0 {
				if q.min() != ref[0].At || !q.due(ref[0].At) {
					t.Fatalf("spread %d step %d: min %v due %v, want %v due", spread, i, q.min(), q.due(ref[0].At), ref[0].At)
				}
				if ref[0].At > math.MinInt64 && q.due(ref[0].At-1) {
					t.Fatalf("spread %d step %d: due before its least instant %v", spread, i, ref[0].At)
				}
			}
		}
	}
}

// TestHeapRandom: checkQueueRandom on the radix heap.
func TestHeapRandom(t *testing.T) {
	checkQueueRandom(t, func() monotoneQueue { return new(heap[uint32]) },
		[]int64{8, 1000, 1 << 40, math.MaxInt64}, 3)
}

// TestQueueRandom: checkQueueRandom on the timing wheel in front of
// a radix heap, with spreads from within one slot to past the wheel's span
// (2^28 ns), so that entries go to the current slot, to the wheel and to
// the heap, and move from the heap to the wheel.
func TestQueueRandom(t *testing.T) {
	checkQueueRandom(t, func() monotoneQueue { return &wheelQueue{} },
		[]int64{8, 1000, 1 << 20, 1 << 28, 1 << 30, 1 << 40, math.MaxInt64}, 5)
}

// TestQueueGather: the entries of a wheel slot come out in order of
// instant whichever way gather sorts them: a few (no counting), hundreds
// spread over the slot's sub-slots (counted, then insertion within each),
// and thousands crowded on three instants of one sub-slot (pdqsort there),
// as a log stamped to the second sends them.
func TestQueueGather(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	base := time.Duration(1) << 40 // the start of a slot
	cases := []struct {
		name string
		n    int
		in   func() time.Duration // where in the slot
	}{
		{"few", 5, func() time.Duration { return time.Duration(r.IntN(1 << wheelShift)) }},
		{"spread", 500, func() time.Duration { return time.Duration(r.IntN(1 << wheelShift)) }},
		{"crowded", 2000, func() time.Duration { return 3<<subShift + time.Duration(r.IntN(3)) }},
	}
	for _, tc := range cases {
		var q wheelQueue
		q.push(base, 0) // the current slot
		var want []time.Duration
		for i := range tc.n {
			at := base + 5<<wheelShift + tc.in() // five slots on: in the wheel
			q.push(at, uint32(i+1))
			want = append(want, at)
		}
		slices.Sort(want)
		require.Equal(t, base, q.pop().At)
		for i, w := range want {
			require.Equal(t, w, q.pop().At, "%s: pop %d", tc.name, i)
		}
		require.Zero(t, q.len())
	}
}

// TestQueueEarlierThanCurrentSlot: after the queue has moved to a slot a
// second away (its only entry), entries pushed before that slot in no
// order, as delays of a burst are, pop in order, and wait in the early
// heap rather than in the current slot's sorted slice, where each would
// cost an insertion among the others.
func TestQueueEarlierThanCurrentSlot(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	var q wheelQueue
	q.push(time.Second, 0)
	var want []time.Duration
	for i := range 10_000 {
		at := time.Duration(r.Int64N(int64(time.Second)))
		q.push(at, uint32(i+1))
		want = append(want, at)
	}
	require.Len(t, q.cur, 1, "the current slot holds only its own entry")
	require.Equal(t, 10_000, q.early.len())
	slices.Sort(want)
	want = append(want, time.Second)
	for i, w := range want {
		require.Equal(t, w, q.min())
		require.Equal(t, w, q.pop().At, "pop %d", i)
	}
	require.Zero(t, q.len())
}

// TestQueueSteady: entries rolling forward 100 ms ahead (the algorithms'
// common case) reuse the wheel's chunks and the current slot's slice: past
// the start, the queue allocates nothing.
func TestQueueSteady(t *testing.T) {
	var q wheelQueue
	now := time.Duration(1e18)
	for i := range 4000 {
		q.push(now+100*time.Millisecond+time.Duration(i*25_000), uint32(i))
	}
	roll := func() {
		for range 10_000 {
			e := q.pop()
			now = e.At
			q.push(now+100*time.Millisecond+time.Duration(e.V%7), e.V)
		}
	}
	roll()
	require.Zero(t, testing.AllocsPerRun(20, roll))
	require.Equal(t, 4000, q.len())
}

// TestQueueDueBy: DueBy lists, in order, the current slot's entries
// due by the horizon, at most as many as asked, and pops nothing.
func TestQueueDueBy(t *testing.T) {
	var q wheelQueue
	base := time.Duration(1) << 40 // the start of a slot
	for i, d := range []time.Duration{30, 10, 20, 15, 1 << 30} {
		q.push(base+d, uint32(i))
	}
	require.Equal(t, []entry{{base + 10, 1}, {base + 15, 3}, {base + 20, 2}}, q.DueBy(base+25, 8))
	require.Equal(t, []entry{{base + 10, 1}, {base + 15, 3}}, q.DueBy(base+25, 2))
	require.Empty(t, q.DueBy(base+9, 8))
	// the entry 2^30 ns on is in a later slot: not listed, though due
	require.Len(t, q.DueBy(base+1<<31, 8), 4)
	require.Equal(t, 5, q.len())
}

// TestQueueClone: a clone pops what the queue held, in order, from the
// current slot, the wheel and the radix heap alike, while the queue it was
// cloned from goes on: popping, and pushing into the slots and chunks that
// frees. The two share nothing.
func TestQueueClone(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var q Queue[uint32]
	base := time.Duration(1) << 40
	var held []entry
	for i := range 3000 {
		e := entry{base + time.Duration(r.Int64N(1<<30)), uint32(i)} // up to 1 s on: wheel and heap
		q.Push(e.At, e.V)
		held = append(held, e)
	}
	slices.SortFunc(held, func(a, b entry) int { return cmp.Compare(a.At, b.At) })
	held = held[1:]
	q.Pop() // a current slot, sorted
	c := q.Clone()
	for q.Len() > 0 {
		e := q.Pop()
		if e.V < 1<<20 { // the queue's own go on, a little later
			q.Push(e.At+time.Duration(r.Int64N(1<<20)), e.V+1<<20)
		}
	}
	var got []entry
	for c.Len() > 0 {
		got = append(got, c.Pop())
	}
	require.Equal(t, len(held), len(got))
	for i := range held {
		require.Equal(t, held[i].At, got[i].At, "pop %d", i)
	}
	require.ElementsMatch(t, held, got)
}
