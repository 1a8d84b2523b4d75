package algorithms

import (
	"math/bits"
	"time"
	"unsafe"

	"github.com/ratesim/ratesim/internal/prefetch"
)

// keyed holds the per-key state S of one limiter in a slice indexed by Key,
// counts the keys and bytes alive, and releases a key's state once it is
// indistinguishable from a fresh key's.
//
// Release is lazy but exact for the peaks: every key that has state sits in
// a min-priority queue (an expiryQueue) once, at the instant it was last
// known to become fresh. Before each decision, expire pops the entries that
// are due, asks the limiter for the key's current fresh instant, and either
// releases the key or pushes it back at that later instant. Keys and bytes only grow
// inside a decision, so peaks measured right after each decision are the
// true peaks. The entries due at one decision are checked in no particular
// order: a release only lowers the keys and bytes alive, so the order
// changes no peak.
//
// A key whose state has not changed since it was pushed (touch marks every
// change) is released without asking for its fresh instant: it is still
// the one it was pushed at, which is due. Over many keys most are touched
// once per life, and a release then costs no cache miss on the state table
// (only the zeroing store), unless the limiter has a release hook, which
// reads the state on the line the zeroing store writes anyway.
//
// Contract: a key's fresh instant never moves earlier when its state
// changes (admitting more only postpones freshness), and every change of
// state that can change it is followed by touch. The heap rechecks a key only
// at the instant it was pushed for, so a fresh instant that moved earlier
// would be released late and overstate the peaks.
type keyed[S any] struct {
	state []S
	// flags holds two bits per key, in word key/32 at bit 2*(key%32): the
	// low one is set while the key holds state (live), the high one while
	// its state has changed since the key was last pushed on the heap
	// (changed).
	flags []uint64
	heap  expiryQueue
	lines []uintptr // Prefetch's addresses, reused
	// held, when not nil, returns the address of what a decision reads
	// outside key's state (a ring's oldest entry, a Limiter), or 0;
	// Prefetch asks it of the keys of its previous call, whose states
	// it fetched then.
	held func(s *S) uintptr
	prev []Key
	// freshAt returns the first instant at which s is indistinguishable from
	// the zero (fresh) state if nothing else arrives.
	freshAt func(s *S) time.Duration
	// release, when not nil, is given a key's state right before expire
	// zeroes it, so that a limiter can take back what the state holds
	// outside the table (a ring, a Limiter) for its next keys. It must not
	// change anything a decision or a figure reads.
	release func(s *S)
	size    int64 // bytes of one S, from its Go type

	keys, bytes int64
	mem         Memory
}

func newKeyed[S any](size int64, freshAt func(*S) time.Duration) keyed[S] {
	return keyed[S]{size: size, freshAt: freshAt}
}

// get expires what is due at now and returns key's state, growing the table
// as needed. A key with no state has the zero S.
func (k *keyed[S]) get(now time.Duration, key Key) *S {
	if k.heap.due(now) || int(key) >= len(k.state) {
		return k.getSlow(now, key)
	}
	return &k.state[key]
}

// getSlow is get when something is due or the table is too small.
func (k *keyed[S]) getSlow(now time.Duration, key Key) *S {
	k.expire(now)
	if int(key) >= len(k.state) {
		k.grow(int(key)+1, true)
	}
	return &k.state[key]
}

// Reserve makes room in the state table for the keys 0 to n-1, so that no
// decision on them grows it. It changes no decision and no Memory figure;
// it implements Reserver for every limiter that embeds keyed.
func (k *keyed[S]) Reserve(n int) {
	if n > len(k.state) {
		k.grow(n, false)
	}
}

// grow makes the table hold at least n slots. With slack, it grows as
// append does (doubling while small, then by a quarter), so that tables
// grown one key at a time are copied a bounded number of times per slot;
// without, to exactly n.
func (k *keyed[S]) grow(n int, slack bool) {
	if old := len(k.state); slack && old > 0 {
		if old < 256 {
			n = max(n, 2*old)
		} else {
			n = max(n, old+(old+3*256)/4)
		}
	}
	st := make([]S, n)
	copy(st, k.state)
	k.state = st
	fl := make([]uint64, (n+31)/32)
	copy(fl, k.flags)
	k.flags = fl
}

// The bits of a key in its flags word, shifted by keyShift(key).
const (
	keyLive    = 1 // the key holds state
	keyChanged = 2 // its state has changed since it was pushed
)

// keyShift returns the position of key's two bits in flags[key/32].
func keyShift(key Key) uint { return 2 * uint(key%32) }

// isLive reports whether key holds state (get must have been called).
func (k *keyed[S]) isLive(key Key) bool { return k.flags[key/32]>>keyShift(key)&keyLive != 0 }

// touch records that key's state changed at now: a key that was fresh
// becomes alive, and the peaks are updated with extra bytes of live entries
// (sliding-log entries, in-flight requests) held by this key beyond its
// fixed state.
func (k *keyed[S]) touch(key Key, extra int64) {
	if w, sh := &k.flags[key/32], keyShift(key); *w>>sh&keyLive == 0 {
		*w |= keyLive << sh
		k.keys++
		k.bytes += k.size
		// A fresh instant at or before now is due at the next expire,
		// as is the heap's base, where push moves one that is below it.
		k.heap.push(k.freshAt(&k.state[key]), key)
		// Keys and bytes grow only here and in addBytes, which updates
		// its own peak.
		k.mem.KeysPeak = max(k.mem.KeysPeak, k.keys)
		k.mem.BytesPeak = max(k.mem.BytesPeak, k.bytes)
	} else {
		*w |= keyChanged << sh
	}
	k.mem.BytesPerKeyMax = max(k.mem.BytesPerKeyMax, k.size+extra)
}

// addBytes adjusts the bytes held by live entries outside the fixed state
// (positive when entries are added, negative when they expire).
func (k *keyed[S]) addBytes(delta int64) {
	k.bytes += delta
	k.mem.BytesPeak = max(k.mem.BytesPeak, k.bytes)
}

// expire releases every key whose state is fresh at now.
func (k *keyed[S]) expire(now time.Duration) {
	for k.heap.due(now) {
		key := k.heap.pop().key
		w, sh := &k.flags[key/32], keyShift(key)
		if *w>>sh&keyChanged != 0 {
			// Changed since it was pushed: ask for its fresh instant.
			// (Unchanged, it is fresh: its fresh instant is the one
			// it was pushed at, or before the heap's base, <= now.)
			if f := k.freshAt(&k.state[key]); f > now {
				*w &^= keyChanged << sh
				k.heap.push(f, key) // still alive: recheck at f
				continue
			}
		}
		if k.release != nil {
			k.release(&k.state[key])
		}
		var zero S
		k.state[key] = zero
		*w &^= (keyLive | keyChanged) << sh
		k.keys--
		k.bytes -= k.size
	}
}

// dueAhead bounds the releases Prefetch prepares at once.
const dueAhead = 256

// Prefetch prepares the decisions on keys, which come at instants up to
// horizon: it prefetches the flags word and state of each of keys and of
// the keys the queue will release by horizon (those its current slot
// holds, up to dueAhead), so that the decisions and releases that follow
// find them in cache. It reads the queue and changes nothing: no decision,
// no release, no figure.
func (k *keyed[S]) Prefetch(keys []Key, horizon time.Duration) {
	lines := k.lines[:0]
	if k.held != nil {
		for _, key := range k.prev {
			if int(key) < len(k.state) {
				if a := k.held(&k.state[key]); a != 0 {
					lines = append(lines, a)
				}
			}
		}
		k.prev = append(k.prev[:0], keys...)
	}
	for _, e := range k.heap.dueBy(horizon, dueAhead) {
		lines = k.addLines(lines, e.key)
	}
	for _, key := range keys {
		if int(key) < len(k.state) {
			lines = k.addLines(lines, key)
		}
	}
	prefetch.Lines(lines)
	k.lines = lines
}

// addLines appends the addresses of key's flags word and of its state: its
// first byte, and its last when that is on the next cache line.
func (k *keyed[S]) addLines(lines []uintptr, key Key) []uintptr {
	p := uintptr(unsafe.Pointer(&k.state[key]))
	lines = append(lines, uintptr(unsafe.Pointer(&k.flags[key/32])), p)
	if last := p + unsafe.Sizeof(k.state[0]) - 1; last/64 != p/64 {
		lines = append(lines, last)
	}
	return lines
}

// Memory returns the peaks; a limiter that embeds keyed gets it as its
// Limiter.Memory.
func (k *keyed[S]) Memory() Memory { return k.mem }

// liveAt expires what is due at now and returns the keys and bytes alive,
// for tests of release. A limiter whose entries expire outside keyed (a
// sliding log's) overrides it.
func (k *keyed[S]) liveAt(now time.Duration) (keys, bytes int64) {
	k.expire(now)
	return k.keys, k.bytes
}

// expiryEntry is one key's scheduled check for freshness.
type expiryEntry struct {
	at  time.Duration
	key Key
}

// radixBuckets is the number of buckets of a radixHeap: bucket 0 for the
// entries equal to its base, and one per bit of an instant.
const radixBuckets = 65

// radixHeap is a monotone min-priority queue of expiryEntry by instant: a
// radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) over the 64 bits of
// an instant. It suits keyed, whose instants only move forward: no entry is
// ever pushed before the last instant popped.
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
// pushed at the base (keyed only pushes such an instant for a key that is
// already due, see keyed.touch). pop takes from bucket 0; when bucket 0 is
// empty, it first moves the base up to the least instant, that of the first
// non-empty bucket i, and spreads bucket i over the buckets below i (the
// others keep their index, as the new base agrees with the old one above bit
// i-1). An entry only ever moves to a lower bucket, so it is moved at most
// 64 times, a few in practice, and the buckets are read and written in
// order, where a comparison heap (binary or 4-ary) over hundreds of
// thousands of entries pays a cache miss per level. Entries of one instant
// pop in no particular order (keyed's figures do not depend on it).
//
// Each bucket is a stack of chunks of radixChunkLen entries, every chunk
// but the top one full; a chunk emptied by pop or spread goes to a free
// list that every bucket draws from. So the heap holds at most one chunk
// per entries-held/radixChunkLen plus one per bucket (about 1 KiB each) at
// its peak, however the entries are spread over the buckets over time,
// and once it has reached its peak it allocates nothing.
//
// The zero value is an empty heap.
type radixHeap struct {
	queueHead // the base moves up to the least instant when bucket 0 is empty
	// full has bit i-1 set while bucket i >= 1 holds entries; low[i] is
	// the least of them, as radixOrd.
	full uint64
	low  [radixBuckets]uint64
	top  [radixBuckets]*radixChunk // each bucket's top chunk, nil when empty
	free *radixChunk               // chunks not in use, linked by next
}

// radixChunkLen is the number of entries of a radixChunk: 63 entries of 16
// bytes and the chunk's header make 1 KiB.
const radixChunkLen = 63

// radixChunk is a block of entries of one bucket of a radixHeap.
type radixChunk struct {
	// next is the chunk below in the bucket's stack, or the next free
	// chunk. It comes first so that the garbage collector, which scans an
	// object only up to its last pointer, reads one word of a chunk.
	next *radixChunk
	n    int // entries held, e[:n]
	e    [radixChunkLen]expiryEntry
}

// radixOrd maps an instant to a uint64 of the same order (the sign bit
// flipped): math.MinInt64 is 0.
func radixOrd(at time.Duration) uint64 { return uint64(at) ^ 1<<63 }

// queueHead is what keyed's two queues (radixHeap, expiryQueue) keep of
// their entries as a whole: how many, the least instant while there are
// any, and the base, below which no entry is.
type queueHead struct {
	base  uint64 // as radixOrd
	n     int    // entries held
	least time.Duration
}

func (q *queueHead) len() int { return q.n }

// min returns the least instant held; the queue must not be empty.
func (q *queueHead) min() time.Duration { return q.least }

// due reports whether the least entry is due at now.
func (q *queueHead) due(now time.Duration) bool { return q.n > 0 && q.least <= now }

// raise returns at, or the base when at is below it, as an instant and as
// radixOrd: where push puts it.
func (q *queueHead) raise(at time.Duration) (time.Duration, uint64) {
	if u := radixOrd(at); u >= q.base {
		return at, u
	}
	return time.Duration(q.base ^ 1<<63), q.base
}

// push adds key at instant at, or at the base when at is below it.
func (h *radixHeap) push(at time.Duration, key Key) {
	at, u := h.raise(at)
	h.put(u, expiryEntry{at, key})
	if h.n == 0 || at < h.least {
		h.least = at
	}
	h.n++
}

// put adds e, whose instant is u (as radixOrd, not below the base), to its
// bucket.
func (h *radixHeap) put(u uint64, e expiryEntry) {
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
func (h *radixHeap) chunk(below *radixChunk) *radixChunk {
	c := h.free
	if c != nil {
		h.free = c.next
	} else {
		c = new(radixChunk)
	}
	c.next, c.n = below, 0
	return c
}

// release puts the emptied chunk c on the free list.
func (h *radixHeap) release(c *radixChunk) {
	c.next = h.free
	h.free = c
}

// pop removes and returns an entry of the least instant; the heap must not
// be empty.
func (h *radixHeap) pop() expiryEntry {
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
func (h *radixHeap) spread() {
	i := bits.TrailingZeros64(h.full) + 1
	h.base = h.low[i]
	h.full &^= 1 << (i - 1)
	c := h.top[i]
	h.top[i] = nil
	for c != nil {
		for _, e := range c.e[:c.n] {
			h.put(radixOrd(e.at), e) // to a bucket below i: c is not reused
		}
		next := c.next
		h.release(c)
		c = next
	}
}

// ceilPow2 returns the least power of two >= n, for n >= 1.
func ceilPow2(n uint64) uint64 { return 1 << bits.Len64(n-1) }
