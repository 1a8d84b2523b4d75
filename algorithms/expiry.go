package algorithms

import (
	"cmp"
	"math/bits"
	"slices"
	"time"
)

// expiryQueue is keyed's monotone min-priority queue of expiryEntry by
// instant, with radixHeap's contract: no entry is ever popped before the
// least one, an entry pushed below the last instant popped (the base) is
// pushed at the base, and entries of one instant pop in no particular
// order.
//
// It is a timing wheel in front of a radixHeap. Time is cut into slots of
// 2^wheelShift ns (65.536 µs). The current slot's entries are held sorted,
// and popped from the front. The next wheelSlots-1 slots (268 ms) each
// hold their entries unsorted, in a stack of small chunks; a bitmap says
// which slots hold any. Entries further ahead wait in the radixHeap. When
// the current slot is emptied, the queue moves to the first slot that
// holds an entry (the wheel's next occupied slot, or the heap's least),
// moves the heap's entries that the wheel now reaches into it, and sorts
// that slot.
//
// Why: keyed pushes each key's fresh instant, mostly a few milliseconds
// to a window ahead of now. A radixHeap alone moves such an entry from
// bucket to bucket about ten times before it pops (measured over 4M keys
// pushed 100 ms ahead); here it is stored once, sorted with the few
// entries of its slot, and popped.
//
// The zero value is an empty queue.
type expiryQueue struct {
	queueHead        // everywhere; the base is the last instant popped, least is cur[curAt].at
	slot      uint64 // the current slot: radixOrd >> wheelShift
	cur       []expiryEntry
	curAt     int           // cur[curAt:] are the current slot's entries, sorted
	spare     []expiryEntry // sortCur's other buffer
	// the slots after the current one, by slot % wheelSlots: a stack of
	// chunks each, and how many entries its top chunk holds (the chunks
	// below it are full), kept apart so that put reads no chunk
	wheel [wheelSlots]*wheelChunk
	fill  [wheelSlots]uint8
	occ   [wheelSlots / 64]uint64 // bit s%wheelSlots set while slot s holds entries
	words uint64                  // bit w set while occ[w] != 0
	far   radixHeap               // the entries at slots >= slot+wheelSlots
	free  *wheelChunk             // chunks not in use, linked by next
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
	// sortCur counts entries.
	subShift = wheelShift - 6
)

// wheelChunk is a block of entries of one slot of the wheel.
type wheelChunk struct {
	next *wheelChunk // the chunk below in the slot's stack, or the next free one
	e    [wheelChunkLen]expiryEntry
}

// push adds key at instant at, or at the base when at is below it.
func (q *expiryQueue) push(at time.Duration, key Key) {
	at, u := q.raise(at)
	e := expiryEntry{at, key}
	q.n++
	switch s := u >> wheelShift; {
	case s <= q.slot:
		// in the current slot (or an empty one before it, which the
		// queue has moved past): in order, after the entries of at
		i := len(q.cur)
		q.cur = append(q.cur, e)
		for i > q.curAt && q.cur[i-1].at > at {
			q.cur[i] = q.cur[i-1]
			i--
		}
		q.cur[i] = e
		if i == q.curAt {
			q.least = at
		}
		return
	case s < q.slot+wheelSlots:
		q.put(s, e)
	default:
		q.far.push(at, key)
	}
	if q.n == 1 {
		// the only entry, not in the current slot: move to it
		q.advance()
	}
}

// dueBy returns the first entries, at most most of them, that the queue
// will pop by horizon, among those of its current slot (which it holds
// sorted): for Prefetch, which reads and changes nothing.
func (q *expiryQueue) dueBy(horizon time.Duration, most int) []expiryEntry {
	due := q.cur[q.curAt:min(q.curAt+most, len(q.cur))]
	for i, e := range due {
		if e.at > horizon {
			return due[:i]
		}
	}
	return due
}

// put adds e to the wheel's slot s (after the current one, within the
// wheel's span).
func (q *expiryQueue) put(s uint64, e expiryEntry) {
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
func (q *expiryQueue) chunk(below *wheelChunk) *wheelChunk {
	c := q.free
	if c != nil {
		q.free = c.next
	} else {
		c = new(wheelChunk)
	}
	c.next = below
	return c
}

// pop removes and returns an entry of the least instant; the queue must
// not be empty.
func (q *expiryQueue) pop() expiryEntry {
	e := q.cur[q.curAt]
	q.curAt++
	q.n--
	q.base = radixOrd(e.at)
	if q.curAt < len(q.cur) {
		q.least = q.cur[q.curAt].at
	} else {
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
func (q *expiryQueue) advance() {
	next := uint64(1<<64 - 1)
	if d, ok := q.nextOccupied(); ok {
		next = q.slot + d
	}
	if q.far.len() > 0 {
		next = min(next, radixOrd(q.far.min())>>wheelShift)
	}
	q.slot = next
	for q.far.len() > 0 && radixOrd(q.far.min())>>wheelShift < q.slot+wheelSlots {
		e := q.far.pop()
		if s := radixOrd(e.at) >> wheelShift; s == q.slot {
			q.cur = append(q.cur, e)
		} else {
			q.put(s, e)
		}
	}
	i := q.slot % wheelSlots
	var top *wheelChunk // the slot's chunks, if it holds any
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
	q.least = q.cur[0].at
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
func (q *expiryQueue) gather(top *wheelChunk, n int) {
	if (top == nil || top.next == nil) && len(q.cur)+n <= 16 {
		// a few entries (a sparse wheel, as in most replays): the
		// sub-slot counts would cost more than sorting them
		if top != nil {
			q.cur = append(q.cur, top.e[:n]...)
			top.next = q.free
			q.free = top
		}
		insertionSort(q.cur)
		return
	}
	var count, start [64]int32
	for _, e := range q.cur {
		count[radixOrd(e.at)>>subShift&63]++
	}
	for c, k := top, n; c != nil; c, k = c.next, wheelChunkLen {
		for _, e := range c.e[:k] {
			count[radixOrd(e.at)>>subShift&63]++
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
		b := radixOrd(e.at) >> subShift & 63
		out[at[b]] = e
		at[b]++
	}
	for c, k := top, n; c != nil; k = wheelChunkLen {
		for _, e := range c.e[:k] {
			b := radixOrd(e.at) >> subShift & 63
			out[at[b]] = e
			at[b]++
		}
		next := c.next
		c.next = q.free
		q.free = c
		c = next
	}
	for b, c := range count {
		switch sub := out[start[b] : start[b]+c]; {
		case c > 16:
			slices.SortFunc(sub, func(x, y expiryEntry) int { return cmp.Compare(x.at, y.at) })
		case c > 1:
			insertionSort(sub)
		}
	}
	q.cur, q.spare = out, q.cur[:0]
}

// insertionSort sorts a few entries by instant.
func insertionSort(es []expiryEntry) {
	for i := 1; i < len(es); i++ {
		e, j := es[i], i
		for ; j > 0 && es[j-1].at > e.at; j-- {
			es[j] = es[j-1]
		}
		es[j] = e
	}
}

// nextOccupied returns how many slots after the current one the first
// occupied slot of the wheel is, if any is: the first set bit of occ from
// the slot after the current one, wrapping around, found through words.
func (q *expiryQueue) nextOccupied() (uint64, bool) {
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
