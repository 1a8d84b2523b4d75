package timeq

import (
	"math/bits"
	"time"
)

// radixBuckets is the number of buckets of a heap: bucket 0 for the
// entries equal to its base, and one per bit of an instant.
const radixBuckets = 65

// heap is a monotone min-priority queue of Entries by instant: a radix
// heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) over the 64 bits of an
// instant. It suits a clock that only moves forward: no entry is ever
// pushed before the last instant popped.
//
// Structure: a base instant, the last instant popped (the least instant of
// an int64 before the first pop), which no entry is below, and 65 buckets.
// Bucket 0 holds the entries equal to the base; bucket i >= 1 those whose
// highest bit that differs from the base's is bit i-1, i.e. bits.Len64 of
// their XOR with it (instants are compared as int64, and XOR-ing both with
// the sign bit, which maps that order to the unsigned one, leaves the XOR
// unchanged). Every entry of bucket i is below every entry of bucket j > i,
// as they agree with the base above bit j-1, where bucket j's entries have a
// 1 and bucket i's the base's 0. So the least entry is in bucket 0 or else
// in the first non-empty bucket, whose least instant each bucket keeps.
//
// push adds to the entry's bucket, O(1); an instant below the base is
// pushed at the base. pop takes from bucket 0; when bucket 0 is empty, it
// first moves the base up to the least instant, that of the first
// non-empty bucket i, and spreads bucket i over the buckets below i (the
// others keep their index, as the new base agrees with the old one above bit
// i-1). An entry only ever moves to a lower bucket, so it is moved at most
// 64 times, a few in practice, and the buckets are read and written in
// order, where a comparison heap (binary or 4-ary) over hundreds of
// thousands of entries pays a cache miss per level. Entries of one instant
// pop in no particular order (see Queue).
//
// Each bucket is a stack of chunks of radixChunkLen entries, every chunk
// but the top one full; a chunk emptied by pop or spread goes to a free
// list that every bucket draws from. So the heap holds at most one chunk
// per entries-held/radixChunkLen plus one per bucket (about 1 KiB each) at
// its peak, however the entries are spread over the buckets over time,
// and once it has reached its peak it allocates nothing.
//
// The zero value is an empty heap.
type heap[V any] struct {
	head // the base moves up to the least instant when bucket 0 is empty
	// full has bit i-1 set while bucket i >= 1 holds entries; low[i] is
	// the least of them, as ord.
	full uint64
	low  [radixBuckets]uint64
	top  [radixBuckets]*radixChunk[V] // each bucket's top chunk, nil when empty
	free *radixChunk[V]               // chunks not in use, linked by next
}

// radixChunkLen is the number of entries of a radixChunk: 63 entries of 16
// bytes and the chunk's header make 1 KiB.
const radixChunkLen = 63

// radixChunk is a block of entries of one bucket of a heap.
type radixChunk[V any] struct {
	// next is the chunk below in the bucket's stack, or the next free
	// chunk. It comes first so that the garbage collector, which scans an
	// object only up to its last pointer, reads one word of a chunk.
	next *radixChunk[V]
	n    int // entries held, e[:n]
	e    [radixChunkLen]Entry[V]
}

// push adds v at instant at, or at the base when at is below it.
func (h *heap[V]) push(at time.Duration, v V) {
	at, u := h.raise(at)
	h.put(u, Entry[V]{at, v})
	if h.n == 0 || at < h.least {
		h.least = at
	}
	h.n++
}

// put adds e, whose instant is u (as ord, not below the base), to its
// bucket.
func (h *heap[V]) put(u uint64, e Entry[V]) {
	i := bits.Len64(u ^ h.base)
	c := h.top[i]
	if c == nil || c.n == radixChunkLen {
		c = h.chunk(c)
		h.top[i] = c
	}
	c.e[c.n] = e
	c.n++
	if i > 0 {
		if bit := uint64(1) << (i - 1); h.full&bit == 0 || u < h.low[i] {
			h.low[i] = u
			h.full |= bit
		}
	}
}

// chunk returns an empty chunk, from the free list when it has one, that
// sits on below.
func (h *heap[V]) chunk(below *radixChunk[V]) *radixChunk[V] {
	c := h.free
	if c != nil {
		h.free = c.next
	} else {
		c = new(radixChunk[V])
	}
	c.next, c.n = below, 0
	return c
}

// release puts the emptied chunk c on the free list.
func (h *heap[V]) release(c *radixChunk[V]) {
	c.next = h.free
	h.free = c
}

// pop removes and returns an entry of the least instant; the heap must not
// be empty.
func (h *heap[V]) pop() Entry[V] {
	if h.top[0] == nil {
		h.spread()
	}
	c := h.top[0]
	c.n--
	e := c.e[c.n]
	if c.n == 0 {
		h.top[0] = c.next
		h.release(c)
	}
	h.n--
	if h.top[0] == nil && h.full != 0 {
		// Bucket 0 is empty: the least is the first non-empty bucket's.
		h.least = time.Duration(h.low[bits.TrailingZeros64(h.full)+1] ^ 1<<63)
	}
	return e
}

// spread moves the base up to the least instant, that of the first
// non-empty bucket i >= 1, and moves bucket i's entries to the buckets
// below it (bucket 0 for those at the new base). Bucket 0 must be empty.
func (h *heap[V]) spread() {
	i := bits.TrailingZeros64(h.full) + 1
	h.base = h.low[i]
	h.full &^= 1 << (i - 1)
	c := h.top[i]
	h.top[i] = nil
	for c != nil {
		for _, e := range c.e[:c.n] {
			h.put(ord(e.At), e) // to a bucket below i: c is not reused
		}
		next := c.next
		h.release(c)
		c = next
	}
}

// clone returns a copy of h that shares no chunk with it.
func (h *heap[V]) clone() heap[V] {
	c := *h
	c.free = nil
	for i, top := range h.top {
		c.top[i] = cloneStack(top, func(c *radixChunk[V]) **radixChunk[V] { return &c.next })
	}
	return c
}
