package algorithms

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestCostLogRing drives a costLog and a plain slice model with the same
// random pushes and prunes, across the ring's wrap-around, growth and
// shrinking: same entries in the same order, same sum, same waits.
func TestCostLogRing(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var q costLog
	p := &ringPool{first: 4}
	var model []costEntry
	now := time.Duration(0)
	maxSlots, shrunk := 0, false
	for step := range 20_000 {
		// Phases of growth and of decay, so that the ring grows past 64
		// slots and shrinks back.
		grow := (step/2000)%2 == 0
		now += time.Duration(r.IntN(3))
		if (grow && r.IntN(4) > 0) || r.IntN(8) == 0 {
			until := now + time.Duration(1+r.IntN(300))
			if grow {
				until += 200
			}
			if len(model) > 0 {
				until = max(until, model[len(model)-1].until) // non-decreasing
			}
			cost := 1 + r.Int64N(3)
			q.push(until, cost, p)
			model = append(model, costEntry{until, cost})
		}
		if !grow || r.IntN(8) == 0 {
			q.prune(now, p)
			for len(model) > 0 && model[0].until <= now {
				model = model[1:]
			}
		}
		if len(model) == 0 && r.IntN(4) == 0 {
			p.release(&q) // released, as keyed releases a fresh key's state
			q = costLog{}
		}
		require.Equal(t, len(model), int(q.len()), "step %d", step)
		maxSlots = max(maxSlots, int(q.pos.mask())+1)
		if maxSlots >= 64 && int(q.pos.mask())+1 < maxSlots {
			shrunk = true
		}
		if step%17 != 0 {
			continue
		}
		var sum int64
		for i, e := range model {
			require.Equal(t, e, q.at(uint32(i)), "step %d entry %d", step, i)
			sum += e.cost
		}
		require.Equal(t, sum, q.sum, "step %d", step)
		slots := int(q.pos.mask()) + 1
		require.Equal(t, 0, slots&(slots-1), "a power of two")
		require.LessOrEqual(t, len(model), slots)
		if len(model) > 0 {
			require.Equal(t, model[len(model)-1].until, q.freshAt())
			if q.first <= now {
				require.Equal(t, model[0].until, q.first, "step %d: first, after a prune", step)
			}
			var counting int64
			for _, e := range model {
				if e.until > now {
					counting += e.cost
				}
			}
			require.Equal(t, counting, q.sumAt(now))
			// The wait for a cost that needs the oldest half to go.
			limit := sum
			cost := sum/2 + 1
			want := time.Duration(0)
			over := sum - (limit - cost)
			for _, e := range model {
				if over -= e.cost; over <= 0 {
					want = e.until - now
					break
				}
			}
			require.Equal(t, want, q.waitFor(now, cost, limit), "step %d", step)
		}
	}
	require.GreaterOrEqual(t, maxSlots, 256, "the ring grew")
	require.True(t, shrunk, "the ring shrank")
}

// TestCostLogOneEntry: a log that has held one entry since it was fresh
// keeps it in its state, as (first, sum), and makes its ring at the second.
func TestCostLogOneEntry(t *testing.T) {
	var q costLog
	p := &ringPool{first: 8}
	q.push(100, 3, p) // counts until 100, cost 3
	require.Nil(t, q.entries)
	require.Equal(t, uint32(1), q.len())
	require.Equal(t, costEntry{100, 3}, q.at(0))
	require.Equal(t, time.Duration(100), q.freshAt())
	require.Equal(t, int64(3), q.sumAt(99))
	require.Zero(t, q.sumAt(100))
	// Limit 5, cost 4: 3+4 > 5, and the one entry must go: wait 100-40.
	require.Equal(t, time.Duration(60), q.waitFor(40, 4, 5))
	q.prune(99, p) // still counts
	require.Equal(t, uint32(1), q.len())
	require.Equal(t, int64(3), q.sum)
	q.prune(100, p) // stops counting at 100 exactly
	require.Zero(t, q.len())
	require.Zero(t, q.sum)
	require.Nil(t, q.entries)

	// Again one entry without a ring, then a second: a ring of 8 slots
	// (first) holding both, oldest first.
	q.push(150, 1, p)
	q.push(160, 2, p)
	require.NotNil(t, q.entries)
	require.Equal(t, uint32(7), q.pos.mask())
	require.Equal(t, []costEntry{{150, 1}, {160, 2}}, []costEntry{q.at(0), q.at(1)})
	require.Equal(t, time.Duration(150), q.first)
	require.Equal(t, int64(3), q.sum)
	require.Equal(t, time.Duration(160), q.freshAt())
	// Limit 3, cost 2: 3+2 exceeds 3 by 2: both must go, wait 160-100.
	require.Equal(t, time.Duration(60), q.waitFor(100, 2, 3))
	// The oldest stops counting at 150: one entry left, in the ring.
	q.prune(150, p)
	require.Equal(t, uint32(1), q.len())
	require.Equal(t, time.Duration(160), q.first)
	require.Equal(t, time.Duration(160), q.freshAt())
	require.Equal(t, costEntry{160, 2}, q.at(0))

	// A first ring of 1 slot (a log that holds at most one entry) still
	// gets 2 when a second comes.
	var one costLog
	p1 := &ringPool{first: 1}
	one.push(10, 1, p1)
	one.push(20, 1, p1)
	require.Equal(t, uint32(1), one.pos.mask())
	require.Equal(t, []costEntry{{10, 1}, {20, 1}}, []costEntry{one.at(0), one.at(1)})
}

// TestCostLogRingSize: the ring doubles when full, keeps its array while the
// log stays within its size, and shrinks once the log is an eighth of it.
func TestCostLogRingSize(t *testing.T) {
	var q costLog
	p := &ringPool{first: 2}
	require.Equal(t, time.Duration(-1<<63), q.freshAt(), "empty log: fresh")
	for i := range 100 {
		q.push(time.Duration(i), 1, p)
	}
	require.Equal(t, uint32(127), q.pos.mask())
	first := q.entries
	// A log of a steady size wraps around its ring without reallocating.
	for i := 100; i < 10_000; i++ {
		q.push(time.Duration(i), 1, p)
		q.prune(time.Duration(i-100), p)
	}
	require.Same(t, first, q.entries)
	require.Equal(t, uint32(100), q.len())
	// Down to 17 entries of 128 slots: still more than an eighth.
	q.prune(10_000-18, p)
	require.Equal(t, uint32(17), q.len())
	require.Equal(t, uint32(127), q.pos.mask())
	// 16, an eighth: shrinks to twice that.
	q.prune(10_000-17, p)
	require.Equal(t, uint32(31), q.pos.mask())
	for i := range uint32(16) {
		require.Equal(t, costEntry{time.Duration(10_000 - 16 + int(i)), 1}, q.at(i))
	}
	require.Equal(t, int64(16), q.sum)
	// Rings of fewer than 64 slots do not shrink.
	q.prune(10_000-2, p)
	require.Equal(t, uint32(1), q.len())
	require.Equal(t, uint32(31), q.pos.mask())
}

// TestReserve: Reserve sizes the state table for keys it is given, without
// changing decisions or Memory; every limiter implements Reserver.
func TestReserve(t *testing.T) {
	for _, info := range All() {
		t.Run(info.Name, func(t *testing.T) {
			plain, reserved := benchLimiter(t, info.Name), benchLimiter(t, info.Name)
			rs, ok := reserved.(Reserver)
			require.True(t, ok, "%s implements Reserver", info.Name)
			rs.Reserve(1000)
			rs.Reserve(10) // never shrinks
			c1, c2 := &benchCursor{w: benchKeysWorkload("zipf", 1_000)}, &benchCursor{w: benchKeysWorkload("zipf", 1_000)}
			for range 20_000 {
				t1, k1 := c1.next()
				t2, k2 := c2.next()
				require.Equal(t, plain.Decide(t1, k1, 1), reserved.Decide(t2, k2, 1))
			}
			require.Equal(t, plain.Memory(), reserved.Memory())
		})
	}
}

// TestReserveTableSize: a reserved table is sized exactly; one grown key by
// key grows as append does, so the slots never exceed 1.25x the largest
// key plus a constant once past 256.
func TestReserveTableSize(t *testing.T) {
	k := newKeyed(16, func(s *fakeState) time.Duration { return s.until })
	k.Reserve(1_000_000)
	require.Len(t, k.state, 1_000_000)
	require.Len(t, k.flags, (1_000_000+31)/32)
	k.get(0, 999_999)
	require.Len(t, k.state, 1_000_000)

	k = newKeyed(16, func(s *fakeState) time.Duration { return s.until })
	grows := 0
	for key := range Key(300_000) {
		n := len(k.state)
		k.get(0, key)
		if len(k.state) != n {
			grows++
			require.LessOrEqual(t, len(k.state), max(2*int(key), int(key)+int(key)/4+192+1), "key %d", key)
		}
		if key%64 == 0 {
			s := k.get(0, key)
			s.until = 1
			k.touch(key, 0)
			require.True(t, k.isLive(key))
		}
	}
	require.Less(t, grows, 60)
	require.Len(t, k.flags, (len(k.state)+31)/32)
}

func TestFirstRing(t *testing.T) {
	for most, want := range map[int64]uint64{1: 1, 2: 2, 3: 4, 5: 8, 8: 8, 100: 8, math.MaxInt64: 8} {
		require.Equal(t, want, firstRing(most), "most %d", most)
	}
	// A concurrency limiter of max 3 holds at most 3 requests in flight:
	// its first ring of 4 never grows.
	l := mustLimiter(t, "concurrency", Params{Policy: Policy{Rate: 10, Per: time.Second, Burst: 3}, Service: time.Second})
	for i := range 100 {
		l.Decide(time.Duration(i)*time.Millisecond, 0, 1)
	}
	require.Equal(t, uint32(3), l.(*Concurrency).state[0].pos.mask())
}

// TestRingPool: hand-computed get and put, slots counted in live, peak and
// pooled.
func TestRingPool(t *testing.T) {
	p := &ringPool{first: 8}
	a := p.get(8) // pool empty: a new ring; 8 slots live
	b := p.get(16)
	require.Equal(t, [3]uint64{24, 24, 0}, [3]uint64{p.live, p.peak, p.pooled}, "8+16 live, the peak")
	p.put(a, 8) // 8 pooled <= peak 24: kept
	require.Equal(t, [3]uint64{16, 24, 8}, [3]uint64{p.live, p.peak, p.pooled})
	c := p.get(8)
	require.Same(t, a, c, "the ring of 8 put back serves the next 8")
	require.Equal(t, [3]uint64{24, 24, 0}, [3]uint64{p.live, p.peak, p.pooled})
	p.put(b, 16) // 16 pooled <= 24
	p.put(c, 8)  // 24 pooled <= 24: the pool may hold what was live at the peak
	require.Equal(t, [3]uint64{0, 24, 24}, [3]uint64{p.live, p.peak, p.pooled})
	d := p.get(32) // no ring of 32 pooled: a new one; the peak is now 32
	require.NotSame(t, a, d)
	require.NotSame(t, b, d)
	require.Equal(t, [3]uint64{32, 32, 24}, [3]uint64{p.live, p.peak, p.pooled})
	p.put(d, 32) // 24+32 = 56 pooled would exceed the peak 32: dropped
	require.Equal(t, [3]uint64{0, 32, 24}, [3]uint64{p.live, p.peak, p.pooled})
	require.Empty(t, p.free[5])
	// Last in, first out within a size; each size apart.
	require.Same(t, b, p.get(16))
	require.Same(t, a, p.get(8))
	require.Equal(t, [3]uint64{24, 32, 0}, [3]uint64{p.live, p.peak, p.pooled})
}

// TestCostLogReusedRing: a ring that one log gave back serves another log,
// which reads only the entries it wrote, not the ones left in the slots.
func TestCostLogReusedRing(t *testing.T) {
	p := &ringPool{first: 2}
	var a, b costLog
	for i := range 3 { // 2 entries make a ring of 2, the third one of 4
		a.push(time.Duration(10+i), 5, p)
	}
	require.Len(t, p.free[1], 1)
	old := p.free[1][0] // the ring of 2 that a left: entries (10,5), (11,5)
	require.Equal(t, costEntry{11, 5}, unsafe.Slice(old, 2)[1], "the old entries are still there")
	b.push(20, 1, p) // no ring: (first, sum)
	b.push(21, 2, p) // the pooled ring of 2, now (20,1), (21,2)
	require.Same(t, old, b.entries)
	require.Empty(t, p.free[1])
	require.Equal(t, []costEntry{{20, 1}, {21, 2}}, []costEntry{b.at(0), b.at(1)})
	b.prune(20, p) // (20,1) stops counting: (21,2) left at slot 1
	require.Equal(t, uint32(1), b.len())
	require.Equal(t, int64(2), b.sum)
	require.Equal(t, time.Duration(21), b.freshAt())
	// Released: both rings go back, a's ring of 4 and b's of 2.
	p.release(&a)
	p.release(&b)
	require.Equal(t, [3]uint64{0, 6, 6}, [3]uint64{p.live, p.peak, p.pooled}, "peak: a's 4 and b's 2")
}

// TestExpiryFIFO: hand-computed pushes and pops across the chunks of an
// expiryFIFO, and the reuse of emptied chunks.
func TestExpiryFIFO(t *testing.T) {
	require.Equal(t, uintptr(4096-8), unsafe.Sizeof(expiryChunk{}), "4 KiB with the malloc header")
	var q expiryFIFO
	require.Zero(t, q.popDue(100), "empty")
	for i := range 10 {
		q.push(time.Duration(i)) // 0..9
	}
	require.Equal(t, 4, q.popDue(3)) // 0, 1, 2, 3 are due at 3
	require.Zero(t, q.popDue(3))
	// 4..9 left; fill the first chunk (510 instants) and start a second:
	// instants 10..599, the last 90 in the second chunk.
	for i := 10; i < 600; i++ {
		q.push(time.Duration(i))
	}
	first := q.head
	require.NotSame(t, first, q.tail)
	require.Same(t, q.tail, first.next)
	require.Equal(t, 90, q.end)
	require.Equal(t, 596, q.size)
	require.Equal(t, 501, q.popDue(504)) // 4..504, all in the first chunk
	require.Same(t, first, q.head)
	require.Equal(t, 505, q.next)
	// 505..509 end the first chunk, which goes to the free list; 510..520
	// are the second's first 11.
	require.Equal(t, 16, q.popDue(520))
	require.Same(t, first, q.free)
	require.Same(t, q.head, q.tail)
	require.Equal(t, 11, q.next)
	// Equal instants are due together.
	for range 3 {
		q.push(600)
	}
	require.Equal(t, 79, q.popDue(599)) // 521..599
	require.Equal(t, 3, q.popDue(600))
	require.Zero(t, q.size)
	require.Equal(t, 93, q.next, "empty, the next push is read next")
	require.Same(t, first, q.free)

	// 417 instants at 1000 end the second chunk, and the 418th takes the
	// free one; popping all of them frees the second chunk.
	for range 418 {
		q.push(1000)
	}
	require.Same(t, first, q.tail)
	require.Nil(t, q.free)
	require.Equal(t, 1, q.end)
	require.Equal(t, 418, q.popDue(1000))
	require.Same(t, first, q.head)
	require.Equal(t, 1, q.next)
	require.NotNil(t, q.free)

	// A chunk that is the only one starts over once read to its end.
	for range expiryChunkLen - 1 {
		q.push(2000)
	}
	require.Equal(t, expiryChunkLen-1, q.popDue(2000))
	require.Same(t, first, q.tail)
	require.Zero(t, q.next)
	require.Zero(t, q.end)

	// A long run at a steady size (about 9 due at once) allocates nothing.
	now := time.Duration(3000)
	allocs := testing.AllocsPerRun(1, func() { // run twice: once to warm up
		for range 100_000 {
			q.push(now)
			q.popDue(now - 8)
			now++
		}
	})
	require.Zero(t, allocs)
}
