package algorithms

import (
	"math/bits"
	"time"
	"unsafe"

	"github.com/ratesim/ratesim/internal/pages"
	"github.com/ratesim/ratesim/internal/prefetch"
	"github.com/ratesim/ratesim/internal/timeq"
)

// keyed holds the per-key state S of one limiter in a slice indexed by Key,
// counts the keys and bytes alive, and releases a key's state once it is
// indistinguishable from a fresh key's.
//
// Release is lazy but exact for the peaks: every key that has state sits in
// a min-priority queue (a timeq.Queue) once, at the instant it was last
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
	heap  timeq.Queue[Key]
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
	if k.heap.Due(now) || int(key) >= len(k.state) {
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
	st := pages.Make[S](n)
	copy(st, k.state)
	k.state = st
	fl := pages.Make[uint64]((n + 31) / 32)
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
		k.heap.Push(k.freshAt(&k.state[key]), key)
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
	for k.heap.Due(now) {
		key := k.heap.Pop().V
		w, sh := &k.flags[key/32], keyShift(key)
		if *w>>sh&keyChanged != 0 {
			// Changed since it was pushed: ask for its fresh instant.
			// (Unchanged, it is fresh: its fresh instant is the one
			// it was pushed at, or before the heap's base, <= now.)
			if f := k.freshAt(&k.state[key]); f > now {
				*w &^= keyChanged << sh
				k.heap.Push(f, key) // still alive: recheck at f
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
	for _, e := range k.heap.DueBy(horizon, dueAhead) {
		lines = k.addLines(lines, e.V)
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

// stateOf returns a copy of key's state (the zero S for a key beyond the
// table) and whether the key holds state, for Inspect.
func (k *keyed[S]) stateOf(key Key) (S, bool) {
	var s S
	if int(key) >= len(k.state) {
		return s, false
	}
	return k.state[key], k.isLive(key)
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

// ceilPow2 returns the least power of two >= n, for n >= 1.
func ceilPow2(n uint64) uint64 { return 1 << bits.Len64(n-1) }
