package algorithms

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/ratesim/ratesim/internal/pages"
	"github.com/ratesim/ratesim/internal/prefetch"
)

// Table holds one algorithm's per-key states apart from any node that
// decides on them, and applies the algorithm's rule to them: it is what a
// cluster's shared store holds (docs/cluster.md). Where a Limiter owns its
// states, a Table lets the caller decide on a copy of a key's state and
// write it back later (a read-modify-write without a script), take tokens
// in batches (leases), and forget everything at once (a flush).
//
// The rule is the algorithm's own: the Limiter and the Table of an
// algorithm call the same function of (state, now, cost), so that they
// decide alike (a test holds every algorithm's Table to its Limiter).
//
// Unlike a Limiter, a Table takes instants in any order: a script that is
// passed the calling node's clock (central with clock: node) can see time
// go back for a key. Each algorithm's doc comment says what its rule does
// then. A Table keeps every key it was asked about, as a store whose
// scripts set no expiry does; its Memory counts them all.
//
// x-time-rate, whose state is a library object in floating point, has no
// Table: it cannot run in a store. An all-of row's Table is its members'
// Tables under its commit mode (allOfTable).
type Table interface {
	// Decide applies the rule to key's state at now, and keeps the
	// result: one atomic script.
	Decide(now time.Duration, key Key, cost int64) Decision
	// DecideCopy decides on a copy of key's state, leaving the state in the
	// table as it is (a GET, then the node's decision on what it read).
	// When the decision changed the copy, it returns the changed copy as a
	// Copy to Write or Discard; otherwise it returns NoCopy.
	DecideCopy(now time.Duration, key Key, cost int64) (Decision, Copy)
	// Write stores c as key's whole state (a SET: the last writer wins)
	// and frees c.
	Write(key Key, c Copy)
	// Discard frees c unwritten (a SET that failed).
	Discard(c Copy)
	// Take takes up to want units from key's state at now, as many as the
	// rule admits at once as one request of that cost (the largest n <=
	// want that it accepts without delay), and returns them. When it
	// grants fewer than want, retryAfter is the rule's retry_after for a
	// request of cost need (<= want) on the state after the take: when
	// need more would be there (Never when need can never be admitted);
	// otherwise 0.
	Take(now time.Duration, key Key, want, need int64) (granted int64, retryAfter time.Duration)
	// Flush forgets every key: each is fresh again.
	Flush()
	// Memory reports the most state held: every key the table holds, as
	// a Limiter reports it.
	Memory() Memory
}

// Incrementer is the Table of an algorithm whose state is counters that a
// cost adds to (fixed-window, sliding-window): racy's write: incr sends
// INCRBY of the cost instead of the whole state, so no update is lost.
type Incrementer interface {
	// Incr adds cost to key's count of the window that holds at: the
	// count of at's window when the state holds it, a new count when the
	// state holds only older windows, and nothing when the state has moved
	// past at's window already (the window's count is no longer kept).
	Incr(at time.Duration, key Key, cost int64)
}

// WindowRule is the decision of a windowed counter (fixed-window,
// sliding-window) on counts held outside it: sync's nodes decide on the
// counts they believe, g + inflight + delta, for the request's window and
// the one before.
type WindowRule interface {
	// Window returns the window length W (for a calendar period, its
	// nominal duration).
	Window() time.Duration
	// WindowIndex returns the index k of the window that holds now:
	// floor(now/W), or the calendar month or year counted from January
	// 1970.
	WindowIndex(now time.Duration) int64
	// DecideCounts decides a request of cost at now, in window k =
	// floor(now/W), given the counts of windows k-1 (prev, which only
	// sliding-window reads) and k (cur). counted reports whether the cost
	// is to be added to window k's count: the request was admitted, or it
	// was rejected and the algorithm counts rejected requests.
	DecideCounts(now time.Duration, prev, cur, cost int64) (d Decision, counted bool)
}

// Copy is a state copied out of a Table, waiting to be written back.
type Copy int32

// NoCopy is the Copy of a decision that changed nothing.
const NoCopy Copy = -1

// NewTable returns the Table of the algorithm called name with params p.
// x-time-rate has none.
func NewTable(name string, p Params) (Table, error) {
	if _, err := New(name, p); err != nil {
		return nil, err
	}
	switch name {
	case "fixed-window":
		r := newFixedWindowRule(p)
		return &counterTable[fixedWindowState]{table: newTable[fixedWindowState](r), incr: r.incr}, nil
	case "sliding-window":
		r := newSlidingWindowRule(p)
		return &counterTable[slidingWindowState]{table: newTable[slidingWindowState](r), incr: r.incr}, nil
	case "sliding-log":
		r := newSlidingLogRule(p)
		r.anyOrder = true
		return newTable[costLog](r), nil
	case "token-bucket":
		return newTable[tokenBucketState](newTokenBucketRule(p)), nil
	case "gcra":
		return newTable[gcraState](newGCRARule(p)), nil
	case "leaky-bucket":
		return newTable[leakyBucketState](newLeakyBucketRule(p)), nil
	case "nginx":
		if p.NginxZone != 0 {
			return nil, &ParamError{Field: "zone", Found: fmt.Sprint(p.NginxZone),
				Want: "nginx's zone is one node's shared memory: it is not modelled in a cluster's store"}
		}
		return newTable[nginxState](newNginxRule(p)), nil
	case "concurrency":
		r := newConcurrencyRule(p)
		r.anyOrder = true
		return newTable[costLog](r), nil
	case "all-of":
		return newAllOfTable(p)
	}
	return nil, fmt.Errorf("%s cannot run in a store: it has no rule over a state held apart (it supports local and split only)", name)
}

// NewWindowRule returns the rule of a windowed counter for sync, or false
// for an algorithm that is not one. cloudflare-rate-limit's is a BlockRule.
func NewWindowRule(name string, p Params) (WindowRule, bool, error) {
	if _, err := New(name, p); err != nil {
		return nil, false, err
	}
	switch name {
	case "fixed-window":
		return newFixedWindowRule(p), true, nil
	case "sliding-window":
		return newSlidingWindowRule(p), true, nil
	case "cloudflare-rate-limit":
		return newCloudflareRule(p), true, nil // a BlockRule
	}
	return nil, false, nil
}

// rule is an algorithm's decision as one function of a key's state S, the
// instant and the cost: what its Limiter and its Table both call.
type rule[S any] interface {
	// decide decides a request of cost at now on s (the zero S for a key
	// that holds nothing; known reports whether the key holds state, which
	// only nginx reads) and reports whether it changed s in a way that
	// must be kept. now may be earlier than instants s has seen.
	decide(s *S, known bool, now time.Duration, cost int64) (Decision, bool)
	// extra returns the bytes s holds beyond its fixed size (log entries).
	extra(s *S) int64
	// clone makes dst (zero or released) a copy of src that shares
	// nothing with it.
	clone(dst, src *S)
	// free gives back what s holds outside itself (a ring) and leaves s
	// zero.
	free(s *S)
	// gauges returns s's gauges at now, for charts (Inspector).
	gauges(s *S, known bool, now time.Duration) []Gauge
}

// table is the Table over the states S of one rule: a slice by key, a bit
// per key for whether it holds state, and the copies waiting to be written.
type table[S any] struct {
	rule   rule[S]
	state  []S
	live   []uint64
	copies []S
	freed  []Copy    // copies free for reuse
	size   int64     // bytes of one S
	lines  []uintptr // Prefetch's addresses, reused

	keys, bytes int64
	mem         Memory
}

func newTable[S any](r rule[S]) *table[S] {
	var zero S
	return &table[S]{rule: r, size: int64(unsafe.Sizeof(zero))}
}

// Prefetch fetches the state of keys ahead of decisions on them
// (Prefetcher): a hint, which changes nothing.
func (t *table[S]) Prefetch(keys []Key, _ time.Duration) {
	lines := t.lines[:0]
	for _, key := range keys {
		if int(key) < len(t.state) {
			lines = append(lines, uintptr(unsafe.Pointer(&t.state[key])), uintptr(unsafe.Pointer(&t.live[key/64])))
		}
	}
	prefetch.Lines(lines)
	t.lines = lines
}

// Reserve makes room for the keys 0 to n-1 (Reserver); it changes no
// decision and no figure.
func (t *table[S]) Reserve(n int) {
	if n > len(t.state) {
		t.grow(n)
	}
}

// at returns key's state, growing the table as needed, and whether the key
// holds state.
func (t *table[S]) at(key Key) (*S, bool) {
	if int(key) >= len(t.state) {
		t.grow(max(int(key)+1, 2*len(t.state), 64))
	}
	return &t.state[key], t.live[key/64]>>(key%64)&1 != 0
}

// grow makes the table hold n keys.
func (t *table[S]) grow(n int) {
	st := pages.Make[S](n)
	copy(st, t.state)
	t.state = st
	lv := pages.Make[uint64]((n + 63) / 64)
	copy(lv, t.live)
	t.live = lv
}

// changed accounts for key's state s after a change: the key is live, and
// its bytes are what it holds now (before: what it held before the change,
// 0 for a key that held nothing).
func (t *table[S]) changed(key Key, s *S, wasLive bool, before int64) {
	if !wasLive {
		t.live[key/64] |= 1 << (key % 64)
		t.keys++
		t.bytes += t.size
		t.mem.KeysPeak = max(t.mem.KeysPeak, t.keys)
	}
	after := t.rule.extra(s)
	t.bytes += after - before
	t.mem.BytesPeak = max(t.mem.BytesPeak, t.bytes)
	t.mem.BytesPerKeyMax = max(t.mem.BytesPerKeyMax, t.size+after)
}

func (t *table[S]) Decide(now time.Duration, key Key, cost int64) Decision {
	s, known := t.at(key)
	before := t.rule.extra(s)
	d, ch := t.rule.decide(s, known, now, cost)
	if ch || t.rule.extra(s) != before {
		t.changed(key, s, known, before)
	}
	return d
}

func (t *table[S]) DecideCopy(now time.Duration, key Key, cost int64) (Decision, Copy) {
	s, known := t.at(key)
	c := t.copy()
	cp := &t.copies[c]
	t.rule.clone(cp, s)
	d, ch := t.rule.decide(cp, known, now, cost)
	if !ch {
		t.Discard(c)
		return d, NoCopy
	}
	return d, c
}

// copy returns a free Copy slot.
func (t *table[S]) copy() Copy {
	if n := len(t.freed); n > 0 {
		c := t.freed[n-1]
		t.freed = t.freed[:n-1]
		return c
	}
	var zero S
	t.copies = append(t.copies, zero)
	return Copy(len(t.copies) - 1)
}

func (t *table[S]) Write(key Key, c Copy) {
	s, known := t.at(key)
	before := t.rule.extra(s)
	t.rule.free(s)
	*s, t.copies[c] = t.copies[c], *new(S) // the copy's ring moves to the state
	t.freed = append(t.freed, c)
	t.changed(key, s, known, before)
}

func (t *table[S]) Discard(c Copy) {
	t.rule.free(&t.copies[c])
	t.freed = append(t.freed, c)
}

func (t *table[S]) Take(now time.Duration, key Key, want, need int64) (int64, time.Duration) {
	s, known := t.at(key)
	// The rule admits a request of cost n iff n is at most what it holds:
	// find the largest such n <= want by bisection, each probe a decision
	// on a copy.
	admits := func(n int64) (Decision, bool) {
		var cp S
		t.rule.clone(&cp, s)
		d, _ := t.rule.decide(&cp, known, now, n)
		t.rule.free(&cp)
		return d, d.Verdict == Accept
	}
	lo, hi := int64(0), want // admits(lo) holds (taking nothing); find the largest
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if _, ok := admits(mid); ok {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo > 0 {
		t.Decide(now, key, lo)
		s, known = t.at(key)
	}
	if lo == want {
		return lo, 0
	}
	d, ok := admits(need)
	if ok {
		return lo, 0 // unreachable: need <= want would have been granted
	}
	return lo, d.RetryAfter
}

func (t *table[S]) Flush() {
	for i := range t.state {
		if t.live[i/64]>>(i%64)&1 != 0 {
			t.rule.free(&t.state[i])
		}
	}
	clear(t.live)
	t.keys, t.bytes = 0, 0
}

func (t *table[S]) Memory() Memory { return t.mem }

// Inspect returns key's gauges at now (Inspector), as the algorithm's
// Limiter gives them, from the state the table holds.
func (t *table[S]) Inspect(now time.Duration, key Key) []Gauge {
	s, known := t.at(key)
	return t.rule.gauges(s, known, now)
}

// counterTable is the Table of a windowed counter, which also takes
// increments.
type counterTable[S any] struct {
	*table[S]
	incr func(s *S, known bool, at time.Duration, cost int64) bool
}

var (
	_ Incrementer = (*counterTable[fixedWindowState])(nil)
	_ Prefetcher  = (*table[gcraState])(nil)
	_ Inspector   = (*table[gcraState])(nil)
	_ Reserver    = (*table[gcraState])(nil)
)

func (t *counterTable[S]) Incr(at time.Duration, key Key, cost int64) {
	s, known := t.at(key)
	if t.incr(s, known, at, cost) {
		t.changed(key, s, known, 0)
	}
}

// plainState implements the rule methods of a state that holds nothing
// outside itself, for the rules to embed.
type plainState[S any] struct{}

func (plainState[S]) extra(*S) int64    { return 0 }
func (plainState[S]) clone(dst, src *S) { *dst = *src }
func (plainState[S]) free(s *S)         { *s = *new(S) }
