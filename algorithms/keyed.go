package algorithms

import "time"

// keyed holds the per-key state S of one limiter in a slice indexed by Key,
// counts the keys and bytes alive, and releases a key's state once it is
// indistinguishable from a fresh key's.
//
// Release is lazy but exact for the peaks: every key that has state sits in a
// min-heap once, at the instant it was last known to become fresh. Before
// each decision, expire pops the entries that are due, asks the limiter for
// the key's current fresh instant, and either releases the key or pushes it
// back at that later instant. Keys and bytes only grow inside a decision, so
// peaks measured right after each decision are the true peaks.
//
// Contract: a key's fresh instant never moves earlier when its state
// changes (admitting more only postpones freshness). The heap rechecks a key
// only at the instant it was pushed for, so a fresh instant that moved
// earlier would be released late and overstate the peaks.
type keyed[S any] struct {
	state []S
	live  []bool
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
	k.expire(now)
	if int(key) >= len(k.state) {
		n := max(int(key)+1, 2*len(k.state))
		st := make([]S, n)
		copy(st, k.state)
		k.state = st
		lv := make([]bool, n)
		copy(lv, k.live)
		k.live = lv
	}
	return &k.state[key]
}

// isLive reports whether key holds state (get must have been called).
func (k *keyed[S]) isLive(key Key) bool { return k.live[key] }

// touch records that key's state changed at now: a key that was fresh
// becomes alive, and the peaks are updated with extra bytes of live entries
// (sliding-log entries, in-flight requests) held by this key beyond its
// fixed state.
func (k *keyed[S]) touch(key Key, extra int64) {
	if !k.live[key] {
		k.live[key] = true
		k.keys++
		k.bytes += k.size
		k.heap.push(k.freshAt(&k.state[key]), key)
	}
	k.mem.BytesPerKeyMax = max(k.mem.BytesPerKeyMax, k.size+extra)
	k.mem.KeysPeak = max(k.mem.KeysPeak, k.keys)
	k.mem.BytesPeak = max(k.mem.BytesPeak, k.bytes)
}

// addBytes adjusts the bytes held by live entries outside the fixed state
// (positive when entries are added, negative when they expire).
func (k *keyed[S]) addBytes(delta int64) {
	k.bytes += delta
	k.mem.BytesPeak = max(k.mem.BytesPeak, k.bytes)
}

// expire releases every key whose state is fresh at now.
func (k *keyed[S]) expire(now time.Duration) {
	for k.heap.len() > 0 && k.heap.min().at <= now {
		e := k.heap.pop()
		s := &k.state[e.key]
		if f := k.freshAt(s); f > now {
			k.heap.push(f, e.key)
			continue
		}
		var zero S
		*s = zero
		k.live[e.key] = false
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

// expiryHeap is a binary min-heap of expiryEntry by (at, key), written out
// rather than through container/heap to avoid interface calls on the hot
// path.
type expiryHeap struct{ e []expiryEntry }

func (h *expiryHeap) len() int         { return len(h.e) }
func (h *expiryHeap) min() expiryEntry { return h.e[0] }
func less(a, b expiryEntry) bool       { return a.at < b.at || (a.at == b.at && a.key < b.key) }
func (h *expiryHeap) push(at time.Duration, key Key) {
	h.e = append(h.e, expiryEntry{at, key})
	i := len(h.e) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(h.e[i], h.e[p]) {
			break
		}
		h.e[i], h.e[p] = h.e[p], h.e[i]
		i = p
	}
}

func (h *expiryHeap) pop() expiryEntry {
	top := h.e[0]
	n := len(h.e) - 1
	h.e[0] = h.e[n]
	h.e = h.e[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && less(h.e[r], h.e[l]) {
			m = r
		}
		if !less(h.e[m], h.e[i]) {
			break
		}
		h.e[i], h.e[m] = h.e[m], h.e[i]
		i = m
	}
	return top
}

// expiryQueue counts entries that expire at non-decreasing instants (sliding
// log entries at s+W, in-flight requests at release+service), so a limiter
// can keep an exact count of live entries over all keys without visiting each
// key. It is a FIFO ring of expiry instants.
type expiryQueue struct {
	at         []time.Duration
	head, size int
}

func (q *expiryQueue) push(at time.Duration) {
	if q.size == len(q.at) {
		n := max(16, 2*len(q.at))
		a := make([]time.Duration, n)
		for i := 0; i < q.size; i++ {
			a[i] = q.at[(q.head+i)%len(q.at)]
		}
		q.at, q.head = a, 0
	}
	q.at[(q.head+q.size)%len(q.at)] = at
	q.size++
}

// popDue removes the entries that have expired by now and returns how many.
func (q *expiryQueue) popDue(now time.Duration) int {
	n := 0
	for q.size > 0 && q.at[q.head] <= now {
		q.head = (q.head + 1) % len(q.at)
		q.size--
		n++
	}
	return n
}
