// Package timeq holds ratesim's monotone time queue: a min-priority queue
// of values by instant on a clock that only moves forward, as a discrete-
// event simulation's does. The algorithms keep the instants their keys'
// states go fresh in one; the engine keeps the delayed requests waiting
// for their release in another.
package timeq

import (
	"cmp"
	"math/bits"
	"slices"
	"time"
)

// Entry is a value at an instant.
type Entry[V any] struct {
	At time.Duration
	V  V
}

// Queue is a monotone min-priority queue of values V by instant: no entry
// is ever popped before the least one, an entry pushed below the last
// instant popped (the base) is pushed at the base, and entries of one
// instant pop in no particular order (its users' figures do not depend on
// it; the order is still the same from run to run).
//
// It is a timing wheel in front of a radix heap. Time is cut into slots of
// 2^wheelShift ns (65.536 µs). The current slot's entries are held sorted,
// and popped from the front. The next wheelSlots-1 slots (268 ms) each
// hold their entries unsorted, in a stack of small chunks; a bitmap says
// which slots hold any. Entries further ahead wait in the radix heap. When
// the current slot is emptied, the queue moves to the first slot that
// holds an entry (the wheel's next occupied slot, or the heap's least),
// moves the heap's entries that the wheel now reaches into it, and sorts
// that slot. As it moves past empty slots, an entry pushed afterwards can
// come before the current slot: such entries wait in a second radix heap,
// early, and pop before all the others.
//
// Why: the algorithms push each key's fresh instant, mostly a few
// milliseconds to a window ahead of now, and the engine each delayed
// request's release, at most the largest delay ahead. A radix heap alone
// moves such an entry from bucket to bucket about ten times before it pops
// (measured over 4M keys pushed 100 ms ahead); here it is stored once,
// sorted with the few entries of its slot, and popped.
//
// The zero value is an empty queue.
type Queue[V any] struct {
	head         // everywhere; the base is the last instant popped, least is cur[curAt].At
	slot  uint64 // the current slot: ord >> wheelShift
	cur   []Entry[V]
	curAt int        // cur[curAt:] are the current slot's entries, sorted
	spare []Entry[V] // gather's other buffer
	// the slots after the current one, by slot % wheelSlots: a stack of
	// chunks each, and how many entries its top chunk holds (the chunks
	// below it are full), kept apart so that put reads no chunk
	wheel [wheelSlots]*wheelChunk[V]
	fill  [wheelSlots]uint8
	occ   [wheelSlots / 64]uint64 // bit s%wheelSlots set while slot s holds entries
	words uint64                  // bit w set while occ[w] != 0
	far   heap[V]                 // the entries at slots >= slot+wheelSlots
	early heap[V]                 // the entries at slots before the current one (see Push)
	free  *wheelChunk[V]          // chunks not in use, linked by next
}

const (
	// wheelShift is the log2 of a slot's length in ns.
	wheelShift = 16
	// wheelSlots is how many slots the wheel spans, the current one
	// included (a power of two).
	wheelSlots = 4096
	// wheelChunkLen entries of 16 bytes and the link make 248 bytes.
	wheelChunkLen = 15
	// subShift cuts a slot into 64 sub-slots of 2^subShift ns, by which
	// gather counts entries.
	subShift = wheelShift - 6
)

// wheelChunk is a block of entries of one slot of the wheel.
type wheelChunk[V any] struct {
	next *wheelChunk[V] // the chunk below in the slot's stack, or the next free one
	e    [wheelChunkLen]Entry[V]
}

// Push adds v at instant at, or at the base when at is below it.
func (q *Queue[V]) Push(at time.Duration, v V) {
	at, u := q.raise(at)
	e := Entry[V]{at, v}
	q.n++
	switch s := u >> wheelShift; {
	case q.n == 1:
		// the only entry: its slot becomes the current one
		q.slot, q.cur, q.curAt, q.least = s, append(q.cur[:0], e), 0, at
		return
	case s < q.slot:
		// before the current slot, which the queue moved to past empty
		// slots (its least entry then): before every entry of it and
		// of the wheel. Into the current slot's sorted slice, entries
		// pushed in no order would each cost an insertion among the
		// slot's (quadratic over a burst).
		q.early.push(at, v)
	case s == q.slot:
		// in order, after the entries of at
		i := len(q.cur)
		q.cur = append(q.cur, e)
		for i > q.curAt && q.cur[i-1].At > at {
			q.cur[i] = q.cur[i-1]
			i--
		}
		q.cur[i] = e
	case s < q.slot+wheelSlots:
		q.put(s, e)
	default:
		q.far.push(at, v)
	}
	q.least = min(q.least, at)
}

// DueBy returns the first entries, at most most of them, that the queue
// will pop by horizon, among those of its current slot (which it holds
// sorted), for a caller that prepares for them: it reads and changes
// nothing.
func (q *Queue[V]) DueBy(horizon time.Duration, most int) []Entry[V] {
	due := q.cur[q.curAt:min(q.curAt+most, len(q.cur))]
	for i, e := range due {
		if e.At > horizon {
			return due[:i]
		}
	}
	return due
}

// put adds e to the wheel's slot s (after the current one, within the
// wheel's span).
func (q *Queue[V]) put(s uint64, e Entry[V]) {
	i := s % wheelSlots
	c, n := q.wheel[i], q.fill[i]
	if n == 0 || n == wheelChunkLen { // empty, or its top chunk full
		c, n = q.chunk(c), 0
		q.wheel[i] = c
	}
	c.e[n] = e
	q.fill[i] = n + 1
	q.occ[i/64] |= 1 << (i % 64)
	q.words |= 1 << (i / 64)
}

// chunk returns an empty chunk, from the free list when it has one, that
// sits on below.
func (q *Queue[V]) chunk(below *wheelChunk[V]) *wheelChunk[V] {
	if c := q.free; c != nil {
		q.free = c.next
		c.next = below
		return c
	}
	// made with its link: a store after the branch would check the chunk
	// for nil by loading it, and a fresh chunk's first touch must be a
	// write (see internal/pages)
	return &wheelChunk[V]{next: below}
}

// release puts the emptied chunk c on the free list.
func (q *Queue[V]) release(c *wheelChunk[V]) {
	c.next = q.free
	q.free = c
}

// Pop removes and returns an entry of the least instant; the queue must
// not be empty.
func (q *Queue[V]) Pop() Entry[V] {
	var e Entry[V]
	if q.early.len() > 0 {
		e = q.early.pop()
	} else {
		e = q.cur[q.curAt]
		q.curAt++
	}
	q.n--
	q.base = ord(e.At)
	switch {
	case q.early.len() > 0:
		q.least = q.early.min()
	case q.curAt < len(q.cur):
		q.least = q.cur[q.curAt].At
	default:
		q.cur, q.curAt = q.cur[:0], 0
		if q.n > 0 {
			q.advance()
		}
	}
	return e
}

// advance moves the empty current slot to the first slot that holds an
// entry, which the queue must hold: it takes the far entries the wheel
// then reaches into it, and sorts the new current slot's entries.
func (q *Queue[V]) advance() {
	next := uint64(1<<64 - 1)
	if d, ok := q.nextOccupied(); ok {
		next = q.slot + d
	}
	if q.far.len() > 0 {
		next = min(next, ord(q.far.min())>>wheelShift)
	}
	q.slot = next
	for q.far.len() > 0 && ord(q.far.min())>>wheelShift < q.slot+wheelSlots {
		e := q.far.pop()
		if s := ord(e.At) >> wheelShift; s == q.slot {
			q.cur = append(q.cur, e)
		} else {
			q.put(s, e)
		}
	}
	i := q.slot % wheelSlots
	var top *wheelChunk[V] // the slot's chunks, if it holds any
	if q.occ[i/64]&(1<<(i%64)) != 0 {
		if q.occ[i/64] &^= 1 << (i % 64); q.occ[i/64] == 0 {
			q.words &^= 1 << (i / 64)
		}
		top = q.wheel[i]
	}
	if top != nil || len(q.cur) > 1 {
		q.gather(top, int(q.fill[i]))
		q.wheel[i], q.fill[i] = nil, 0
	}
	q.least = q.cur[0].At
}

// gather makes cur the current slot's entries sorted by instant: those cur
// holds (from the far heap) and those of the slot's stack of chunks from
// top, whose top chunk holds n. All are in the slot, so a counting sort by
// sub-slot (the 6 bits of an instant below the slot's) puts them in order
// but within a sub-slot; then each sub-slot is sorted, by insertion when it
// holds a few entries (as a slot's entries spread over it mostly do), else
// by pdqsort (a replayed log stamped to the second sends thousands of keys
// to a few instants). The chunks go to the free list. Entries of one
// instant keep no particular order.
func (q *Queue[V]) gather(top *wheelChunk[V], n int) {
	if (top == nil || top.next == nil) && len(q.cur)+n <= 16 {
		// a few entries (a sparse wheel, as in most replays): the
		// sub-slot counts would cost more than sorting them
		if top != nil {
			q.cur = append(q.cur, top.e[:n]...)
			q.release(top)
		}
		insertionSort(q.cur)
		return
	}
	var count, start [64]int32
	for _, e := range q.cur {
		count[ord(e.At)>>subShift&63]++
	}
	for c, k := top, n; c != nil; c, k = c.next, wheelChunkLen {
		for _, e := range c.e[:k] {
			count[ord(e.At)>>subShift&63]++
		}
	}
	var total int32
	for b, c := range count {
		start[b] = total
		total += c
	}
	out := slices.Grow(q.spare[:0], int(total))[:total]
	at := start
	for _, e := range q.cur {
		b := ord(e.At) >> subShift & 63
		out[at[b]] = e
		at[b]++
	}
	for c, k := top, n; c != nil; k = wheelChunkLen {
		for _, e := range c.e[:k] {
			b := ord(e.At) >> subShift & 63
			out[at[b]] = e
			at[b]++
		}
		next := c.next
		q.release(c)
		c = next
	}
	for b, c := range count {
		switch sub := out[start[b] : start[b]+c]; {
		case c > 16:
			slices.SortFunc(sub, func(x, y Entry[V]) int { return cmp.Compare(x.At, y.At) })
		case c > 1:
			insertionSort(sub)
		}
	}
	q.cur, q.spare = out, q.cur[:0]
}

// insertionSort sorts a few entries by instant.
func insertionSort[V any](es []Entry[V]) {
	for i := 1; i < len(es); i++ {
		e, j := es[i], i
		for ; j > 0 && es[j-1].At > e.At; j-- {
			es[j] = es[j-1]
		}
		es[j] = e
	}
}

// nextOccupied returns how many slots after the current one the first
// occupied slot of the wheel is, if any is: the first set bit of occ from
// the slot after the current one, wrapping around, found through words.
func (q *Queue[V]) nextOccupied() (uint64, bool) {
	if q.words == 0 {
		return 0, false
	}
	from := (q.slot + 1) % wheelSlots
	w := from / 64
	var i uint64
	if m := q.occ[w] >> (from % 64); m != 0 {
		return 1 + uint64(bits.TrailingZeros64(m)), true
	} else if after := q.words &^ (1<<(w+1) - 1); after != 0 {
		// a word after w (w+1 <= 63 here: bit 63 of words has no word after it)
		wi := uint64(bits.TrailingZeros64(after))
		i = wi*64 + uint64(bits.TrailingZeros64(q.occ[wi]))
	} else {
		// wrapped: the first word that holds any, w itself included
		// (its bits below from)
		wi := uint64(bits.TrailingZeros64(q.words))
		i = wi*64 + uint64(bits.TrailingZeros64(q.occ[wi]))
	}
	return 1 + (i+wheelSlots-from)%wheelSlots, true
}

// Len returns how many entries the queue holds.
func (q *Queue[V]) Len() int { return q.len() }

// Min returns the least instant held; the queue must not be empty.
func (q *Queue[V]) Min() time.Duration { return q.min() }

// Due reports whether the least entry is due at now.
func (q *Queue[V]) Due(now time.Duration) bool { return q.due(now) }

// ord maps an instant to a uint64 of the same order (the sign bit
// flipped): math.MinInt64 is 0.
func ord(at time.Duration) uint64 { return uint64(at) ^ 1<<63 }

// head is what the two queues (heap, Queue) keep of their entries as a
// whole: how many, the least instant while there are any, and the base,
// below which no entry is.
type head struct {
	base  uint64 // as ord
	n     int    // entries held
	least time.Duration
}

func (q *head) len() int { return q.n }

// min returns the least instant held; the queue must not be empty.
func (q *head) min() time.Duration { return q.least }

// due reports whether the least entry is due at now.
func (q *head) due(now time.Duration) bool { return q.n > 0 && q.least <= now }

// raise returns at, or the base when at is below it, as an instant and as
// ord: where push puts it.
func (q *head) raise(at time.Duration) (time.Duration, uint64) {
	if u := ord(at); u >= q.base {
		return at, u
	}
	return time.Duration(q.base ^ 1<<63), q.base
}

// Clone returns a copy of q that shares no chunk or slice with it (for
// tests that run a limiter twice from one state).
func (q *Queue[V]) Clone() Queue[V] {
	c := *q
	c.cur = slices.Clone(q.cur)
	c.spare = nil
	for i, top := range q.wheel {
		c.wheel[i] = cloneStack(top, func(c *wheelChunk[V]) **wheelChunk[V] { return &c.next })
	}
	c.free = nil
	c.far = q.far.clone()
	c.early = q.early.clone()
	return c
}

// cloneStack returns a copy of the stack of chunks from top, each linked to
// the one below by the field link returns, that shares no chunk with it.
func cloneStack[C any](top *C, link func(*C) **C) *C {
	var stack []*C
	for c := top; c != nil; c = *link(c) {
		stack = append(stack, c)
	}
	var below *C
	for _, c := range slices.Backward(stack) {
		cc := *c
		*link(&cc) = below
		below = &cc
	}
	return below
}
