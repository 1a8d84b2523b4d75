package algorithms

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRadixHeapScript pushes and pops by hand and checks where each entry
// sits. Instants are compared as int64, so a negative instant is below every
// non-negative one.
func TestRadixHeapScript(t *testing.T) {
	var h radixHeap
	require.False(t, h.due(math.MaxInt64), "empty")
	// The zero heap's base is MinInt64, as radixOrd 0: every negative
	// instant differs from it first at bit 62 (bucket 63), every
	// non-negative one at bit 63 (bucket 64).
	for _, e := range []expiryEntry{{12, 3}, {5, 1}, {-10, 8}, {6, 2}, {5, 4}} {
		h.push(e.at, e.key)
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
	require.Equal(t, expiryEntry{-10, 8}, h.pop())
	require.Equal(t, time.Duration(-10), time.Duration(h.base^1<<63))
	require.Len(t, radixBucket(&h, 64), 4)
	require.Equal(t, time.Duration(5), h.min())

	// Next, the base moves to 5 and bucket 64 spreads: 5^5 = 0 (bucket 0,
	// twice), 6^5 = 0b11 (bucket 2), 12^5 = 0b1001 (bucket 4). Bucket 0
	// pops from its end: key 4, pushed after key 1.
	require.Equal(t, expiryEntry{5, 4}, h.pop())
	require.Equal(t, []expiryEntry{{5, 1}}, radixBucket(&h, 0))
	require.Equal(t, []expiryEntry{{6, 2}}, radixBucket(&h, 2))
	require.Equal(t, []expiryEntry{{12, 3}}, radixBucket(&h, 4))
	require.Empty(t, radixBucket(&h, 64))
	require.Equal(t, uint64(0b1010), h.full) // buckets 2 and 4

	// 7^5 = 0b10: bucket 2, whose least stays 6. 3 is below the base (the
	// last instant popped): it is pushed at 5, into bucket 0.
	h.push(7, 6)
	h.push(3, 7)
	require.Equal(t, []expiryEntry{{6, 2}, {7, 6}}, radixBucket(&h, 2))
	require.Equal(t, radixOrd(6), h.low[2])
	require.Equal(t, time.Duration(5), h.min())
	require.Equal(t, expiryEntry{5, 7}, h.pop())
	require.Equal(t, expiryEntry{5, 1}, h.pop())
	// Bucket 0 is empty: the least is bucket 2's, 6.
	require.Equal(t, time.Duration(6), h.min())
	require.False(t, h.due(5))

	// Base 6: 6 to bucket 0, 7^6 = 1 to bucket 1; then base 7; then
	// bucket 4 spreads at base 12.
	require.Equal(t, expiryEntry{6, 2}, h.pop())
	require.Equal(t, []expiryEntry{{7, 6}}, radixBucket(&h, 1))
	require.Equal(t, time.Duration(7), h.min())
	require.Equal(t, expiryEntry{7, 6}, h.pop())
	require.Equal(t, time.Duration(12), h.min())
	require.Equal(t, expiryEntry{12, 3}, h.pop())
	require.Zero(t, h.len())
	require.Zero(t, h.full)
	require.False(t, h.due(math.MaxInt64))

	// Extremes: MaxInt64 and the base itself.
	h.push(math.MaxInt64, 1)
	h.push(12, 2)
	require.Equal(t, expiryEntry{12, 2}, h.pop())
	require.Equal(t, expiryEntry{math.MaxInt64, 1}, h.pop())
}

// TestRadixHeapChunks: a bucket of more than radixChunkLen entries takes
// several chunks; emptied chunks are reused, so the heap holds at most one
// chunk per radixChunkLen entries plus one per bucket, and a heap at its
// steady size allocates nothing.
func TestRadixHeapChunks(t *testing.T) {
	var h radixHeap
	for i := range 130 {
		h.push(time.Duration(1000+i), Key(i))
	}
	// All 130 in bucket 64 (the zero base is MinInt64): 63 + 63 + 4.
	require.Equal(t, 3, radixChunks(h.top[64]))
	require.Zero(t, radixChunks(h.free))
	require.Len(t, radixBucket(&h, 64), 130)

	// Drain in order. Every chunk comes back to the free list.
	for i := range 130 {
		require.Equal(t, expiryEntry{time.Duration(1000 + i), Key(i)}, h.pop())
		require.LessOrEqual(t, radixHeld(&h), h.len()/radixChunkLen+radixBuckets)
	}
	held := radixHeld(&h)
	require.Equal(t, held, radixChunks(h.free))

	// A steady state of 100 entries rolling forward reuses those chunks.
	now := time.Duration(2000)
	for i := range 100 {
		h.push(now+time.Duration(i*37), Key(i))
	}
	allocs := testing.AllocsPerRun(100, func() {
		for range 1000 {
			e := h.pop()
			now = e.at
			h.push(now+100*37, e.key)
		}
	})
	require.Zero(t, allocs)
	require.Equal(t, 100, h.len())
	require.LessOrEqual(t, radixHeld(&h), 100/radixChunkLen+radixBuckets)
}

// radixChunks counts the chunks linked from c.
func radixChunks(c *radixChunk) int {
	n := 0
	for ; c != nil; c = c.next {
		n++
	}
	return n
}

// radixHeld counts every chunk of h, in its buckets and free.
func radixHeld(h *radixHeap) int {
	n := radixChunks(h.free)
	for _, c := range h.top {
		n += radixChunks(c)
	}
	return n
}

// radixBucket returns the entries of h's bucket i in the order they were
// added.
func radixBucket(h *radixHeap, i int) []expiryEntry {
	var chunks [][]expiryEntry
	for c := h.top[i]; c != nil; c = c.next {
		chunks = append(chunks, c.e[:c.n])
	}
	slices.Reverse(chunks)
	return slices.Concat(chunks...)
}

// cloneExpiryQueue returns a copy of q that shares no chunk or slice with
// it.
func cloneExpiryQueue(q expiryQueue) expiryQueue {
	q.cur = slices.Clone(q.cur)
	q.spare = nil
	for i, c := range q.wheel {
		var chunks []*wheelChunk
		for ; c != nil; c = c.next {
			cc := *c
			chunks = append(chunks, &cc)
		}
		for j := 0; j+1 < len(chunks); j++ {
			chunks[j].next = chunks[j+1]
		}
		q.wheel[i] = nil
		if len(chunks) > 0 {
			q.wheel[i] = chunks[0]
		}
	}
	q.free = nil
	q.far = cloneRadixHeap(q.far)
	return q
}

// cloneRadixHeap returns a copy of h that shares no chunk with it.
func cloneRadixHeap(h radixHeap) radixHeap {
	h.free = nil
	for i, c := range h.top {
		var below *radixChunk
		var stack []*radixChunk
		for ; c != nil; c = c.next {
			stack = append(stack, c)
		}
		for _, c := range slices.Backward(stack) {
			d := *c
			d.next = below
			below = &d
		}
		h.top[i] = below
	}
	return h
}

// monotoneQueue is what keyed needs of its release queue; radixHeap and
// expiryQueue both provide it, under the same contract.
type monotoneQueue interface {
	push(at time.Duration, key Key)
	pop() expiryEntry
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
		var ref []expiryEntry                // sorted by at
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
				key := Key(i)
				q.push(at, key)
				e := expiryEntry{max(at, last), key}
				j, _ := slices.BinarySearchFunc(ref, e.at, func(a expiryEntry, at time.Duration) int {
					return cmp.Compare(a.at, at+1) // after the entries of at
				})
				ref = slices.Insert(ref, j, e)
			} else {
				got := q.pop()
				require.Equal(t, ref[0].at, got.at, "spread %d pop %d", spread, i)
				j := slices.IndexFunc(ref, func(e expiryEntry) bool { return e == got })
				require.GreaterOrEqual(t, j, 0, "popped %v, not held", got)
				ref = slices.Delete(ref, j, j+1)
				last = got.at
			}
			require.Equal(t, len(ref), q.len())
			if len(ref) > 0 {
				require.Equal(t, ref[0].at, q.min())
				require.True(t, q.due(ref[0].at))
				if ref[0].at > math.MinInt64 {
					require.False(t, q.due(ref[0].at-1))
				}
			}
		}
	}
}

// TestRadixHeapRandom: checkQueueRandom on the radix heap.
func TestRadixHeapRandom(t *testing.T) {
	checkQueueRandom(t, func() monotoneQueue { return new(radixHeap) },
		[]int64{8, 1000, 1 << 40, math.MaxInt64}, 3)
}

// fakeState is a state whose fresh instant is set by the test.
type fakeState struct {
	until time.Duration
	n     int64
}

func TestKeyed(t *testing.T) {
	var asked []Key // the keys whose fresh instant keyed asked for, in order
	k := newKeyed(16, func(s *fakeState) time.Duration {
		asked = append(asked, Key(s.n))
		return s.until
	})

	s := k.get(0, 5) // the table grows to key 5; the state is fresh
	require.Equal(t, fakeState{}, *s)
	require.GreaterOrEqual(t, len(k.state), 6)
	require.False(t, k.isLive(5))
	s.until, s.n = 100, 5
	k.touch(5, 0)
	require.True(t, k.isLive(5))

	s = k.get(50, 2)
	s.until, s.n = 80, 2
	k.touch(2, 8) // 8 bytes of entries beyond the fixed 16
	require.Equal(t, []Key{5, 2}, asked, "pushed when they became live")
	require.Equal(t, Memory{BytesPerKeyMax: 24, KeysPeak: 2, BytesPeak: 32}, k.Memory())

	// Key 5 changes: its fresh instant moves to 200, while the heap still
	// holds 100 for it.
	s = k.get(60, 5)
	s.until = 200
	k.touch(5, 0)
	require.Equal(t, 2, k.heap.len()) // key 2 and key 5 once each
	require.Len(t, asked, 2, "a live key's change is only marked")

	requireLive(t, &k, 79, 2, 32)
	// Key 2 fresh at 80 exactly: released and zeroed without asking, as
	// it has not changed since it was pushed at 80.
	requireLive(t, &k, 80, 1, 16)
	require.Equal(t, fakeState{}, k.state[2])
	require.False(t, k.isLive(2))
	require.Len(t, asked, 2)
	// Key 5 changed since it was pushed at 100: asked at 100 and pushed
	// back to 200, where, unchanged since, it is released without asking.
	requireLive(t, &k, 100, 1, 16)
	require.Equal(t, []Key{5, 2, 5}, asked)
	require.Equal(t, 1, k.heap.len())
	require.Equal(t, time.Duration(200), k.heap.min())
	requireLive(t, &k, 199, 1, 16)
	requireLive(t, &k, 200, 0, 0)
	require.Equal(t, fakeState{}, k.state[5])
	require.Equal(t, []Key{5, 2, 5}, asked)

	// A released key comes back as a new one; entry bytes add to the peak.
	s = k.get(300, 5)
	s.until = 400
	k.touch(5, 0)
	k.addBytes(40)
	require.Equal(t, Memory{BytesPerKeyMax: 24, KeysPeak: 2, BytesPeak: 56}, k.Memory())
	k.addBytes(-40)

	// Growing the table to a far key keeps the states held.
	s = k.get(310, 1000)
	require.Equal(t, time.Duration(400), k.state[5].until)
	s.until = 500
	k.touch(1000, 0)
	requireLive(t, &k, 400, 1, 16)
	requireLive(t, &k, 500, 0, 0)
	require.Equal(t, Memory{BytesPerKeyMax: 24, KeysPeak: 2, BytesPeak: 56}, k.Memory())
}

// keyedChecker is implemented by every limiter that embeds keyed (the
// method below is promoted).
type keyedChecker interface {
	freshness(now time.Duration) (live, fresh []bool)
	keyCount() int
}

// freshness returns, for every key of the table, whether it holds state
// and whether its state is fresh at now (by the limiter's freshAt; a key
// without state is fresh), without releasing anything.
func (k *keyed[S]) freshness(now time.Duration) (live, fresh []bool) {
	live, fresh = make([]bool, len(k.state)), make([]bool, len(k.state))
	for key := range k.state {
		live[key] = k.isLive(Key(key))
		fresh[key] = !live[key] || k.freshAt(&k.state[key]) <= now
		if !live[key] {
			// A key without state has the zero state.
			if !reflect.ValueOf(k.state[key]).IsZero() {
				panic(fmt.Sprintf("key %d holds no state but %+v", key, k.state[key]))
			}
		}
	}
	return live, fresh
}

func (k *keyed[S]) keyCount() int { return int(k.keys) }

// TestReleaseExact: before every decision of random traces, over many keys
// that go fresh and come back, the release that liveAt (and so Decide)
// makes at now leaves exactly the keys whose state is not fresh at now, by
// each limiter's own freshAt asked of every key: none released early, none
// late. Every algorithm, with each of its options.
func TestReleaseExact(t *testing.T) {
	eachVariantOver40Keys(t, 9, func(t *testing.T, newL func() Limiter, pol Policy, v invVariant, calls []invCall, _ *rand.Rand) {
		l := newL()
		kc := l.(keyedChecker)
		for i, c := range calls {
			live, fresh := kc.freshness(c.at)
			keys, _ := l.(stateHolder).liveAt(c.at)
			after, _ := kc.freshness(c.at)
			want := 0
			for key := range live {
				if live[key] && !fresh[key] {
					want++
					require.True(t, after[key], "%s %s call %d: key %d released early", pol, v.name, i, key)
				} else {
					require.False(t, after[key], "%s %s call %d: key %d not released at %v", pol, v.name, i, key, c.at)
				}
			}
			require.Equal(t, int64(want), keys)
			require.Equal(t, want, kc.keyCount())
			l.Decide(c.at, c.key, c.cost)
		}
	})
}

// TestPrefetchChangesNothing: Prefetch is a hint. Every algorithm, with
// each of its options, decides random traces over 40 keys twice: once
// plainly and once told before a quarter of its decisions to prefetch
// random keys (some it has never seen) up to a random horizon, from now to
// three windows ahead (so that it reads releases long before they are
// due). The decisions, the keys and bytes alive before each decision
// (so no key is released early or late) and the Memory peaks are the same.
func TestPrefetchChangesNothing(t *testing.T) {
	eachVariantOver40Keys(t, 11, func(t *testing.T, newL func() Limiter, pol Policy, v invVariant, calls []invCall, r *rand.Rand) {
		plain, hinted := newL(), newL()
		pf := hinted.(Prefetcher)
		for i, c := range calls {
			if r.IntN(4) == 0 {
				keys := make([]Key, r.IntN(40))
				for j := range keys {
					keys[j] = Key(r.IntN(50))
				}
				pf.Prefetch(keys, c.at+time.Duration(r.Int64N(3*int64(pol.Per)+1)))
			}
			wantKeys, wantBytes := plain.(stateHolder).liveAt(c.at)
			keys, bytes := hinted.(stateHolder).liveAt(c.at)
			require.Equal(t, wantKeys, keys, "%s %s call %d: keys alive", pol, v.name, i)
			require.Equal(t, wantBytes, bytes, "%s %s call %d: bytes alive", pol, v.name, i)
			require.Equal(t, plain.Decide(c.at, c.key, c.cost), hinted.Decide(c.at, c.key, c.cost),
				"%s %s call %d", pol, v.name, i)
		}
		require.Equal(t, plain.Memory(), hinted.Memory(), "%s %s", pol, v.name)
	})
}

// eachVariantOver40Keys runs check for every algorithm (one subtest each,
// in parallel), with each of its options, under each policy of the
// invariant suite, on a random trace of 1,500 calls spread over 40 keys,
// so that many are live at once and go fresh at many instants. newL makes
// a limiter of the variant; r, seeded with seed, is the check's to use
// after the trace's.
func eachVariantOver40Keys(t *testing.T, seed uint64, check func(t *testing.T, newL func() Limiter, pol Policy, v invVariant, calls []invCall, r *rand.Rand)) {
	for _, info := range All() {
		t.Run(info.Name, func(t *testing.T) {
			t.Parallel()
			for pi, pol := range invPolicies {
				for _, v := range invVariants(info.Name, pol) {
					if _, err := info.New(v.p); err != nil && info.Name == "nginx" && pol.Per != time.Second && pol.Per != time.Minute {
						continue // nginx takes only per 1s or 1m
					}
					newL := func() Limiter {
						l, err := info.New(v.p)
						require.NoError(t, err)
						return l
					}
					calls := invTrace(uint64(pi+1), pol, 1500)
					r := rand.New(rand.NewPCG(uint64(pi), seed))
					for i := range calls {
						calls[i].key += 4 * Key(r.IntN(10))
					}
					check(t, newL, pol, v, calls, r)
				}
			}
		})
	}
}

// TestExpiryQueueRandom: checkQueueRandom on the timing wheel in front of
// a radixHeap, with spreads from within one slot to past the wheel's span
// (2^28 ns), so that entries go to the current slot, to the wheel and to
// the heap, and move from the heap to the wheel.
func TestExpiryQueueRandom(t *testing.T) {
	checkQueueRandom(t, func() monotoneQueue { return new(expiryQueue) },
		[]int64{8, 1000, 1 << 20, 1 << 28, 1 << 30, 1 << 40, math.MaxInt64}, 5)
}

// TestExpiryQueueSteady: entries rolling forward 100 ms ahead (keyed's
// common case) reuse the wheel's chunks and the current slot's slice: past
// the start, the queue allocates nothing.
// TestExpiryQueueGather: the entries of a wheel slot come out in order of
// instant whichever way gather sorts them: a few (no counting), hundreds
// spread over the slot's sub-slots (counted, then insertion within each),
// and thousands crowded on three instants of one sub-slot (pdqsort there),
// as a log stamped to the second sends them.
func TestExpiryQueueGather(t *testing.T) {
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
		var q expiryQueue
		q.push(base, 0) // the current slot
		var want []time.Duration
		for i := range tc.n {
			at := base + 5<<wheelShift + tc.in() // five slots on: in the wheel
			q.push(at, Key(i+1))
			want = append(want, at)
		}
		slices.Sort(want)
		require.Equal(t, base, q.pop().at)
		for i, w := range want {
			require.Equal(t, w, q.pop().at, "%s: pop %d", tc.name, i)
		}
		require.Zero(t, q.len())
	}
}

func TestExpiryQueueSteady(t *testing.T) {
	var q expiryQueue
	now := time.Duration(1e18)
	for i := range 4000 {
		q.push(now+100*time.Millisecond+time.Duration(i*25_000), Key(i))
	}
	roll := func() {
		for range 10_000 {
			e := q.pop()
			now = e.at
			q.push(now+100*time.Millisecond+time.Duration(e.key%7), e.key)
		}
	}
	roll()
	require.Zero(t, testing.AllocsPerRun(20, roll))
	require.Equal(t, 4000, q.len())
}

// TestExpiryQueueDueBy: dueBy lists, in order, the current slot's entries
// due by the horizon, at most as many as asked, and pops nothing.
func TestExpiryQueueDueBy(t *testing.T) {
	var q expiryQueue
	base := time.Duration(1) << 40 // the start of a slot
	for i, d := range []time.Duration{30, 10, 20, 15, 1 << 30} {
		q.push(base+d, Key(i))
	}
	require.Equal(t, []expiryEntry{{base + 10, 1}, {base + 15, 3}, {base + 20, 2}}, q.dueBy(base+25, 8))
	require.Equal(t, []expiryEntry{{base + 10, 1}, {base + 15, 3}}, q.dueBy(base+25, 2))
	require.Empty(t, q.dueBy(base+9, 8))
	// the entry 2^30 ns on is in a later slot: not listed, though due
	require.Len(t, q.dueBy(base+1<<31, 8), 4)
	require.Equal(t, 5, q.len())
}
