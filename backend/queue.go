package backend

import (
	"cmp"
	"math/bits"
	"slices"
	"time"

	"github.com/ratesim/ratesim/internal/timeq"
)

// entry is an internal event: at an instant, of a kind, for a request's
// slot (or a fault's index), in the order ord = kind<<56 | seq, seq the
// order it was scheduled in. Events are processed by (at, ord): by time,
// then kind, then scheduling order.
type entry struct {
	at   time.Duration
	ord  uint64
	slot uint32
	gen  uint32 // the slot's generation when scheduled (timeouts)
}

// The kinds of internal events, in their order at one instant.
const (
	evFaultEnd = iota // a pause or a workers cut ends: idle workers start
	evComplete        // a service ends
	evTimeout         // a client gives up
	evAdmit           // a request reaches the backend
)

const kindShift = 56

func (e *entry) kind() int { return int(e.ord >> kindShift) }

func (a *entry) Less(b *entry) bool { return a.at < b.at || (a.at == b.at && a.ord < b.ord) }

// evHeap is a 4-ary min-heap of entries by (at, ord): the backend's own,
// so that the comparison is inlined (queue.Heap calls Less through its
// type parameter's dictionary, a call per comparison). Four children a
// node halve the levels of a binary heap: a shaper's row holds thousands
// of admissions to come, seldom in the cache, and a level costs a miss
// whatever its width (four entries are 96 bytes).
type evHeap struct{ e []entry }

func (h *evHeap) Len() int { return len(h.e) }

// Cap returns the entries its storage holds room for.
func (h *evHeap) Cap() int { return cap(h.e) }

// Peek returns the least entry (Len must be > 0).
func (h *evHeap) Peek() *entry { return &h.e[0] }

// Push adds x.
func (h *evHeap) Push(x entry) {
	h.e = append(h.e, x)
	siftUp(h.e, len(h.e)-1, x)
}

// siftUp puts x at the hole i of the heap e, or above it: each parent
// after x moves down into the hole, and x takes the last.
func siftUp(e []entry, i int, x entry) {
	for i > 0 {
		p := (i - 1) / 4
		if !x.Less(&e[p]) {
			break
		}
		e[i] = e[p]
		i = p
	}
	e[i] = x
}

// Pop removes and returns the least entry (Len must be > 0). It moves the
// hole left by the least down to a leaf along the least children, then
// the last entry up from there (Floyd's bottom-up heap): the least of
// four children is chosen without a branch (before128), and the last
// entry, which nearly always belongs near the bottom, seldom goes up,
// where the classic sift-down's test at each level went either way (a
// mispredicted branch a level). The entries come out in the same order:
// (at, ord) is unique.
func (h *evHeap) Pop() entry {
	e := h.e
	top := e[0]
	n := len(e) - 1
	x := e[n]
	e = e[:n]
	h.e = e
	if n == 0 {
		return top
	}
	i := 0
	for {
		c := 4*i + 1
		if c+3 < n {
			a := c + int(before128(&e[c+1], &e[c]))
			b := c + 2 + int(before128(&e[c+3], &e[c+2]))
			c = a + (b-a)*int(before128(&e[b], &e[a]))
		} else if c < n {
			for j := c + 1; j < n; j++ {
				if e[j].Less(&e[c]) {
					c = j
				}
			}
		} else {
			break
		}
		e[i] = e[c]
		i = c
	}
	siftUp(e, i, x)
	return top
}

// completions holds the completions scheduled, at most the workers (one
// per request in service), by (at, ord). Up to sortedMax workers they are
// an array kept sorted latest first: the next completion is the last
// entry, taken without moving any, and a new one moves the entries that
// come before it up one place, a short copy with one mispredicted branch
// where a heap's sift-down mispredicts at each of its levels (half the
// time of a binary heap for a push and a pop, measured at 1 to 32
// entries). Past sortedMax the copies grow with the workers, and the
// entries go to an evHeap (as fast as a binary heap at 33 entries, faster
// from 64 on).
type completions struct {
	sorted []entry // latest first (!heaped)
	heap   evHeap  // heaped
	heaped bool
}

// sortedMax is the most workers whose completions are kept sorted.
const sortedMax = 32

// newCompletions returns the completions of a backend of workers workers.
func newCompletions(workers int) completions {
	if workers > sortedMax {
		return completions{heaped: true}
	}
	return completions{sorted: make([]entry, 0, workers)}
}

func (c *completions) Len() int {
	if c.heaped {
		return c.heap.Len()
	}
	return len(c.sorted)
}

// Cap returns the entries its storage holds room for.
func (c *completions) Cap() int {
	if c.heaped {
		return c.heap.Cap()
	}
	return cap(c.sorted)
}

// Peek returns the least entry (Len must be > 0).
func (c *completions) Peek() *entry {
	if c.heaped {
		return c.heap.Peek()
	}
	return &c.sorted[len(c.sorted)-1]
}

// Push adds x.
func (c *completions) Push(x entry) {
	if c.heaped {
		c.heap.Push(x)
		return
	}
	c.pushSorted(x)
}

// pushSorted is Push into a sorted array (!heaped).
func (c *completions) pushSorted(x entry) {
	c.sorted = append(c.sorted, x)
	e := c.sorted
	i := len(e) - 1
	for i > 0 && e[i-1].Less(&x) {
		e[i] = e[i-1]
		i--
	}
	e[i] = x
}

// Pop removes and returns the least entry (Len must be > 0).
func (c *completions) Pop() entry {
	if c.heaped {
		return c.heap.Pop()
	}
	return c.popSorted()
}

// popSorted is Pop of a sorted array (!heaped), small enough to be
// inlined where the usual case is known.
func (c *completions) popSorted() entry {
	n := len(c.sorted) - 1
	x := c.sorted[n]
	c.sorted = c.sorted[:n]
	return x
}

// before128 is 1 when a comes before b by (at, ord), else 0, without a
// branch: the borrow of the 128-bit subtraction a - b, at (its sign bit
// flipped, so that unsigned order is signed order) the high word.
func before128(a, b *entry) uint64 {
	const sign = 1 << 63
	_, borrow := bits.Sub64(a.ord, b.ord, 0)
	_, borrow = bits.Sub64(uint64(a.at)^sign, uint64(b.at)^sign, borrow)
	return borrow
}

// lateAdmits holds the admissions scheduled out of the order of their
// queue (a shaper's delays, a request held a different time for each
// key): thousands at once, each pushed a few milliseconds to a window
// ahead, which a heap moved up and down its levels, seldom in the cache.
// Here a monotone time queue (internal/timeq: a timing wheel) holds them,
// and the entries of its least instant are taken out together (the
// group) and ordered by ord, which the time queue does not keep among the
// entries of one instant. An entry pushed before the group's instant
// cannot go back into the time queue, whose clock has passed it: push
// refuses it, and the backend keeps it among its other events.
type lateAdmits struct {
	q      timeq.Queue[entry]
	group  []entry // group[gi:]: the entries of instant base not yet taken, by ord
	gi     int
	base   time.Duration // the instant of the last group taken (pulled: one was)
	pulled bool
}

// push adds e and reports whether it did: not when e comes before the
// last group taken.
func (l *lateAdmits) push(e entry) bool {
	if l.pulled && e.at < l.base {
		return false
	}
	if l.pulled && e.at == l.base && l.gi < len(l.group) {
		l.group = append(l.group, e)
		for i := len(l.group) - 1; i > l.gi && e.ord < l.group[i-1].ord; i-- {
			l.group[i], l.group[i-1] = l.group[i-1], e
		}
		return true
	}
	l.q.Push(e.at, e)
	return true
}

func (l *lateAdmits) len() int { return len(l.group) - l.gi + l.q.Len() }

// peek returns the least entry (len must be > 0), taking the next group
// from the time queue when the last one is spent.
func (l *lateAdmits) peek() *entry {
	if l.gi == len(l.group) {
		l.group, l.gi = l.group[:0], 0
		at := l.q.Min()
		for l.q.Len() > 0 && l.q.Min() == at {
			l.group = append(l.group, l.q.Pop().V)
		}
		l.base, l.pulled = at, true
		if len(l.group) > 1 {
			slices.SortFunc(l.group, func(a, b entry) int { return cmp.Compare(a.ord, b.ord) })
		}
	}
	return &l.group[l.gi]
}

// pop removes and returns the least entry (len must be > 0).
func (l *lateAdmits) pop() entry {
	e := *l.peek()
	l.gi++
	return e
}
