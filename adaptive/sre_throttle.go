package adaptive

import (
	"math/bits"
	"time"
	"unsafe"
)

// ThrottleConfig holds the parameters of sre-throttle, named as a scenario
// spells them. DefaultThrottleConfig gives the book's values:
//
//	k       2   the multiplier K: a client lets through up to about K times
//	            what the backend accepts (the book: "typically 2"; > 0)
//	window  2m  the history each client keeps ("the last two minutes"), a
//	            whole number of seconds
type ThrottleConfig struct {
	K      float64
	Window time.Duration
}

// DefaultThrottleConfig returns the SRE book's K = 2 over two minutes.
func DefaultThrottleConfig() ThrottleConfig {
	return ThrottleConfig{K: 2, Window: 2 * time.Minute}
}

// Key identifies a client of sre-throttle: the dense ids, from 0, that the
// engine gives its keys (as algorithms.Key).
type Key uint32

// Throttle is the client-side adaptive throttling of the Google SRE book
// (Site Reliability Engineering, O'Reilly 2016, chapter 21 "Handling
// Overload", section "Client-side throttling"): each client rejects
// requests locally, before they reach the backend, with probability
//
//	p = max(0, (requests - K*accepts) / (requests + 1))
//
// where, over the client's last two minutes, requests is "the number of
// requests attempted by the application layer" (every request the client
// tried to send, those it rejected itself included) and accepts "the number
// of requests accepted by the backend".
//
// Choices the book leaves open, made here:
//
//   - The window is a ring of one-second buckets aligned to whole seconds
//     from time 0 (docs/metrics.md): at instant t the counts are those of the
//     buckets of seconds floor(t/1s)-W+1 to floor(t/1s), W = window/1s
//     (120), so between W-1 and W seconds of history.
//   - Admit(now, key, u) computes p from the counts before this request,
//     then counts the request (admitted or not) in now's bucket, and admits
//     iff u >= p, u being a uniform draw in [0, 1) the caller takes from the
//     scenario's seeded source for every request. p < 1 always, so some
//     requests always get through to probe the backend.
//   - OnResult(now, key, accepted) is reported for each request Admit let
//     through, when its outcome is known; an accept counts in the bucket of
//     that instant. What "accepted by the backend" means is the caller's:
//     docs/adaptive.md calls a shed, an error or a timeout a drop, and the
//     engine should report those as not accepted.
//   - The arithmetic: p's numerator is float64(requests) -
//     float64(K*float64(accepts)), the product rounded on its own, then
//     divided by float64(requests+1); the draw is compared as is.
//
// gRPC's adaptive throttler (grpc-go balancer/rls/internal/adaptive), after
// the same formula, differs: it counts a request when its response comes
// back (throttles + accepts), pads the denominator by 8 and keeps 30s; this
// follows the book.
//
// State per key: the sums (16 bytes), where its seconds are and how many
// (16 bytes), and the seconds of the window that hold counts, each 16
// bytes (its number, a request count and an accept count): the buckets of
// a ring, but only those with counts, so that a key that made a few
// requests costs a few entries, not W. At most W entries; keys get their
// state at their first call and keep it.
//
// The layout holds no pointer, so that the garbage collector has nothing
// to scan in a table of a million keys, and a key's counts are one
// aligned half of a cache line: the seconds of every key are in one
// shared pool, a key holding the index of its run of seconds there (a
// block of a power of two entries; a key that outgrows its block moves to
// one twice as large, and the block it leaves is kept for another key).
type Throttle struct {
	k       float64
	buckets int64
	keys    []throttleKey
	n       int   // keys with state
	entries int64 // seconds held over every key
	most    int   // the most seconds one key has held
	// the seconds of every key, in blocks of 1<<c entries
	pool []throttleSec
	// free[c]: 1 + the index of a free block of 1<<c entries, 0 for
	// none; a free block's first entry holds the next one's (as sec)
	free [33]uint32
}

type throttleKey struct {
	reqSum, accSum uint64
	off            uint32 // the key's oldest second: pool[off]
	n              uint32 // seconds held, pool[off:off+n], oldest first
	room           uint32 // entries of the key's block; 0 before the key's first call
	_              uint32
}

// throttleSec is one second of a key's window with counts.
type throttleSec struct {
	sec      int64
	req, acc uint32
}

// KeyBytes, EntryBytes: the bytes of a key's state, and of each second it
// holds (Throttle's doc).
const (
	KeyBytes   = int64(unsafe.Sizeof(throttleKey{}))
	EntryBytes = int64(unsafe.Sizeof(throttleSec{}))
)

// NewThrottle returns an sre-throttle, or an error naming the first invalid
// parameter: k > 0, window a whole number of seconds, at least 1s.
func NewThrottle(c ThrottleConfig) (*Throttle, error) {
	if !(c.K > 0) {
		return nil, paramErr("sre-throttle", "k", c.K, "want a multiplier greater than 0 (the book: 2)")
	}
	if c.Window < time.Second || c.Window%time.Second != 0 {
		return nil, paramErr("sre-throttle", "window", c.Window, "want a whole number of seconds, at least 1s (the book: 2m)")
	}
	return &Throttle{k: c.K, buckets: int64(c.Window / time.Second)}, nil
}

// Admit decides on a request of key at now with the uniform draw u in [0,
// 1): false means the client rejects it locally. The request counts as
// attempted either way.
func (t *Throttle) Admit(now time.Duration, key Key, u float64) bool {
	s, sec := t.state(now, key)
	p := t.probability(s)
	t.bucket(s, sec).req++
	s.reqSum++
	return !(u < p)
}

// RejectProbability returns the probability with which key's next request
// at now would be rejected, without counting anything: for charts and
// tests.
func (t *Throttle) RejectProbability(now time.Duration, key Key) float64 {
	s, _ := t.state(now, key)
	return t.probability(s)
}

// OnResult reports the outcome, at now, of a request of key that Admit let
// through: accepted says the backend accepted it.
func (t *Throttle) OnResult(now time.Duration, key Key, accepted bool) {
	s, sec := t.state(now, key)
	if accepted {
		t.bucket(s, sec).acc++
		s.accSum++
	}
}

func (t *Throttle) probability(s *throttleKey) float64 {
	p := (float64(s.reqSum) - float64(t.k*float64(s.accSum))) / float64(s.reqSum+1)
	return max(0, p)
}

// state returns key's counts with the window moved to now, and now's
// second.
func (t *Throttle) state(now time.Duration, key Key) (*throttleKey, int64) {
	if int(key) >= len(t.keys) {
		t.keys = append(t.keys, make([]throttleKey, int(key)+1-len(t.keys))...)
	}
	sec := int64(now / time.Second)
	if now < 0 && now%time.Second != 0 {
		sec-- // floor, for instants before time 0
	}
	s := &t.keys[key]
	if s.room == 0 {
		s.off, s.room = t.alloc(0), 1
		t.n++
		return s, sec
	}
	// the seconds before sec-W+1 leave the window
	secs := t.pool[s.off : s.off+s.n]
	k := 0
	for k < len(secs) && secs[k].sec <= sec-t.buckets {
		s.reqSum -= uint64(secs[k].req)
		s.accSum -= uint64(secs[k].acc)
		k++
	}
	if k > 0 {
		s.n = uint32(copy(secs, secs[k:]))
		t.entries -= int64(k)
	}
	return s, sec
}

// bucket returns the counts of second sec of s, the newest, adding it.
func (t *Throttle) bucket(s *throttleKey, sec int64) *throttleSec {
	if s.n > 0 && t.pool[s.off+s.n-1].sec == sec {
		return &t.pool[s.off+s.n-1]
	}
	if s.n == s.room {
		// move to a block twice as large
		c := uint(bits.TrailingZeros32(s.room))
		off := t.alloc(c + 1)
		copy(t.pool[off:off+s.n], t.pool[s.off:s.off+s.n])
		t.release(s.off, c)
		s.off, s.room = off, s.room<<1
	}
	e := &t.pool[s.off+s.n]
	*e = throttleSec{sec: sec}
	s.n++
	t.entries++
	t.most = max(t.most, int(s.n))
	return e
}

// alloc returns the index of a block of 1<<c entries of the pool.
func (t *Throttle) alloc(c uint) uint32 {
	if head := t.free[c]; head != 0 {
		off := head - 1
		t.free[c] = uint32(t.pool[off].sec)
		return off
	}
	off := len(t.pool)
	t.pool = append(t.pool, make([]throttleSec, 1<<c)...)
	return uint32(off)
}

// release keeps the block of 1<<c entries at off for a later alloc.
func (t *Throttle) release(off uint32, c uint) {
	t.pool[off].sec = int64(t.free[c])
	t.free[c] = off + 1
}

// Reserve makes room for the keys 0 to n-1, so that no later call grows
// (and copies) the table of keys; it changes no decision and no figure.
func (t *Throttle) Reserve(n int) {
	if n > len(t.keys) {
		t.keys = append(t.keys, make([]throttleKey, n-len(t.keys))...)
	}
}

// AppendAddrs appends to dst the addresses that calls on key will read
// first, for a caller that prefetches them (a hint to the processor: the
// addresses are never dereferenced through dst): its counts, and, with
// seconds, the oldest of its seconds (reading it reads the counts: call
// it for seconds once the counts are in cache). A key without state yet
// has none.
func (t *Throttle) AppendAddrs(dst []uintptr, key Key, seconds bool) []uintptr {
	if int(key) >= len(t.keys) {
		return dst
	}
	s := &t.keys[key]
	if !seconds {
		return append(dst, uintptr(unsafe.Pointer(s)))
	}
	if s.n == 0 {
		return dst
	}
	return append(dst, uintptr(unsafe.Pointer(&t.pool[s.off])))
}

// Keys returns how many keys have state (every key seen, from its first
// call).
func (t *Throttle) Keys() int { return t.n }

// Entries returns the seconds with counts held now over every key, and
// the most one key has held at once.
func (t *Throttle) Entries() (now int64, most int) { return t.entries, t.most }
