package algorithms

import (
	"math/bits"
	"time"
)

// keyed holds the per-key state S of one limiter in a slice indexed by Key,
// counts the keys and bytes alive, and releases a key's state once it is
// indistinguishable from a fresh key's.
//
// Release is lazy but exact for the peaks: every key that has state sits in a
// min-heap once, at the instant it was last known to become fresh. Before
// each decision, expire pops the entries that are due, asks the limiter for
// the key's current fresh instant, and either releases the key or moves it
// to that later instant. Keys and bytes only grow inside a decision, so
// peaks measured right after each decision are the true peaks.
//
// Contract: a key's fresh instant never moves earlier when its state
// changes (admitting more only postpones freshness). The heap rechecks a key
// only at the instant it was pushed for, so a fresh instant that moved
// earlier would be released late and overstate the peaks.
type keyed[S any] struct {
	state []S
	live  []uint64 // bit key%64 of word key/64 is set while key holds state
	heap  expiryHeap
	// freshAt returns the first instant at which s is indistinguishable from
	// the zero (fresh) state if nothing else arrives.
	freshAt func(s *S) time.Duration
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
	if k.heap.due(now) {
		k.expire(now)
	}
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
	lv := make([]uint64, (n+63)/64)
	copy(lv, k.live)
	k.live = lv
}

// isLive reports whether key holds state (get must have been called).
func (k *keyed[S]) isLive(key Key) bool { return k.live[key/64]&(1<<(key%64)) != 0 }

// touch records that key's state changed at now: a key that was fresh
// becomes alive, and the peaks are updated with extra bytes of live entries
// (sliding-log entries, in-flight requests) held by this key beyond its
// fixed state.
func (k *keyed[S]) touch(key Key, extra int64) {
	if w, b := &k.live[key/64], uint64(1)<<(key%64); *w&b == 0 {
		*w |= b
		k.keys++
		k.bytes += k.size
		k.heap.push(k.freshAt(&k.state[key]), key)
		// Keys and bytes grow only here and in addBytes, which updates
		// its own peak.
		k.mem.KeysPeak = max(k.mem.KeysPeak, k.keys)
		k.mem.BytesPeak = max(k.mem.BytesPeak, k.bytes)
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
		key := k.heap.e[0].key
		s := &k.state[key]
		if f := k.freshAt(s); f > now {
			// Still alive: recheck at f. Each key is in the heap once,
			// so the order of the entries is total and moving the top
			// pops them in the same order as a pop and a push would.
			k.heap.fixMin(f)
			continue
		}
		k.heap.pop()
		var zero S
		*s = zero
		k.live[key/64] &^= 1 << (key % 64)
		k.keys--
		k.bytes -= k.size
	}
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

// expiryHeap is a 4-ary min-heap of expiryEntry by (at, key), written out
// rather than through container/heap to avoid interface calls on the hot
// path. It is half as deep as a binary heap, and a node's four children of
// 16 bytes lie in one or two cache lines: a sift down over a million keys
// visits 10 levels instead of 20, which matters once the heap outgrows the
// caches.
type expiryHeap struct{ e []expiryEntry }

// heapArity is the number of children of a node.
const heapArity = 4

func (h *expiryHeap) len() int         { return len(h.e) }
func (h *expiryHeap) min() expiryEntry { return h.e[0] }
func less(a, b expiryEntry) bool       { return a.at < b.at || (a.at == b.at && a.key < b.key) }

// due reports whether the least entry is due at now.
func (h *expiryHeap) due(now time.Duration) bool { return len(h.e) > 0 && h.e[0].at <= now }

func (h *expiryHeap) push(at time.Duration, key Key) {
	h.e = append(h.e, expiryEntry{at, key})
	e := h.e
	i := len(e) - 1
	x := e[i]
	for i > 0 {
		p := (i - 1) / heapArity
		if !less(x, e[p]) {
			break
		}
		e[i] = e[p]
		i = p
	}
	e[i] = x
}

func (h *expiryHeap) pop() expiryEntry {
	top := h.e[0]
	n := len(h.e) - 1
	last := h.e[n]
	h.e = h.e[:n]
	if n > 0 {
		h.down(last)
	}
	return top
}

// fixMin moves the least entry to instant at, which must not be earlier.
func (h *expiryHeap) fixMin(at time.Duration) {
	x := h.e[0]
	x.at = at
	h.down(x)
}

// down puts x at the root and sifts it down to its place.
func (h *expiryHeap) down(x expiryEntry) {
	e := h.e
	n := len(e)
	i := 0
	for {
		c := heapArity*i + 1
		if c >= n {
			break
		}
		// m: the least of the up to four children of i.
		m := c
		for j := c + 1; j < min(c+heapArity, n); j++ {
			if less(e[j], e[m]) {
				m = j
			}
		}
		if !less(e[m], x) {
			break
		}
		e[i] = e[m]
		i = m
	}
	e[i] = x
}

// expiryQueue counts entries that expire at non-decreasing instants (sliding
// log entries at s+W, in-flight requests at release+service), so a limiter
// can keep an exact count of live entries over all keys without visiting each
// key. It is a FIFO ring of expiry instants whose size is a power of two, so
// that a slot is found with a mask rather than a division.
type expiryQueue struct {
	at         []time.Duration // len 0 or a power of two
	head, size int
}

func (q *expiryQueue) push(at time.Duration) {
	if q.size == len(q.at) {
		q.grow()
	}
	q.at[(q.head+q.size)&(len(q.at)-1)] = at
	q.size++
}

// grow doubles the ring, copying its entries in order to the front.
func (q *expiryQueue) grow() {
	a := make([]time.Duration, max(16, 2*len(q.at)))
	n := copy(a, q.at[q.head:])
	copy(a[n:], q.at[:q.head])
	q.at, q.head = a, 0
}

// popDue removes the entries that have expired by now and returns how many.
func (q *expiryQueue) popDue(now time.Duration) int {
	n, mask := 0, len(q.at)-1
	for q.size > 0 && q.at[q.head] <= now {
		q.head = (q.head + 1) & mask
		q.size--
		n++
	}
	return n
}

// ceilPow2 returns the least power of two >= n, for n >= 1.
func ceilPow2(n uint64) uint64 { return 1 << bits.Len64(n-1) }
