package sim

import (
	"math"
	"time"
	"unsafe"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/pages"
)

// peakSet finds, over one stream of releases in non-decreasing time order,
// for each of several window lengths V, the largest total cost in any
// half-open interval [a, a+V) and the earliest release time a that starts
// one. When a release at x arrives, every release f held with f+V <= x can
// no longer gain company, so the interval starting at f is complete and
// its sum is a candidate. Releases at one instant are held as one entry.
//
// The windows share one queue of the releases of the longest window; each
// window keeps its own front in it (a shorter window's front is never
// behind a longer one's), so a release is stored once however many windows
// count it (a scenario's defaults are W and W/10).
//
// While the longest window is at most 2^32-1 ns (4.29s) a release is held
// in 8 bytes: its distance to the one before and its cost, 32 bits each. A
// longer window, or a cost past 32 bits, holds them whole (16 bytes): the
// set switches for good the first time it needs to.
//
// Held in 8 bytes, releases are counted lazily: add only stores them, and
// every peakFlush releases (and before finishing) flush counts the stored
// ones, window by window, in one loop over them. The windows see the same
// releases in the same order as if each were counted as it came, so the
// peaks are the same; the loop keeps one window's state in registers and
// the releases in cache, where counting each release as it came walked
// every window for each.
type peakSet struct {
	wins    []peakWin
	longest int  // the index in wins of the longest window
	wide    bool // releases are held whole
	short   ring[shortRelease]
	whole   ring[release]
	// the releases held, by sequence number: [head, tail); head is the
	// longest window's front. Held in 8 bytes, those from done on are
	// stored but not yet counted by the windows.
	head, tail, done int
	backAt           time.Duration // the latest release's instant (tail > head)
	// doneAt is the instant of release done-1, from which the next one's
	// distance counts (after restart, the instant of release done itself,
	// whose distance is 0)
	doneAt time.Duration
	// pending is the cost stored since done, not yet counted (8-byte
	// releases only); skips counts the window flushes that took the
	// bound (see flushWin), for tests.
	pending int64
	skips   int
}

// peakFlush is how many releases a peakSet stores before it counts them.
const peakFlush = 512

// peakWin is one window of a peakSet: the releases in it are those from
// front to the set's tail (to done, while releases wait to be counted).
type peakWin struct {
	v       time.Duration
	front   int           // the sequence number of its oldest release
	frontAt time.Duration // that release's instant (front < tail)
	sum     int64         // the cost of the releases in it
	best    int64
	start   time.Duration
}

// shortRelease is a release held as its distance dt to the release held
// before it (the oldest one's is meaningless) and its cost.
type shortRelease struct {
	dt, cost uint32
}

type release struct {
	at   time.Duration
	cost int64
}

// newPeakSet returns the peak windows of lengths vs (each > 0).
func newPeakSet(vs []time.Duration) peakSet {
	s := peakSet{wins: make([]peakWin, len(vs))}
	for i, v := range vs {
		s.wins[i].v = v
		if v > s.wins[s.longest].v {
			s.longest = i
		}
	}
	if len(vs) > 0 && s.wins[s.longest].v > math.MaxUint32 {
		s.wide = true
	}
	return s
}

// add stores a release of cost at at. The common case, a release in 8
// bytes after the latest one held, is the few lines here (inlined in the
// run's hot path); addSlow takes the rest.
func (s *peakSet) add(at time.Duration, cost int64) {
	if !s.wide && s.tail > s.head && at != s.backAt && at-s.backAt <= math.MaxUint32 && uint64(cost) <= math.MaxUint32 {
		s.push(uint32(at-s.backAt), at, cost)
		return
	}
	s.addSlow(at, cost)
}

// addSlow is add's general case.
func (s *peakSet) addSlow(at time.Duration, cost int64) {
	if s.wide || !s.addShort(at, cost) {
		s.addWhole(at, cost)
	}
}

// addShort stores a release in 8 bytes, or reports that it cannot (it
// has then counted what it held and widened, for addWhole to add it).
func (s *peakSet) addShort(at time.Duration, cost int64) bool {
	if len(s.wins) == 0 {
		return true
	}
	if s.tail > s.head && s.backAt == at {
		// the latest release is at the same instant: one entry
		last := s.short.at(s.tail - 1)
		c := int64(last.cost) + cost
		if c > math.MaxUint32 {
			s.flush()
			s.widen()
			return false
		}
		last.cost = uint32(c)
		if s.done == s.tail {
			// already counted, and in every window (it is not
			// before at-V)
			for i := range s.wins {
				s.wins[i].sum += cost
			}
		} else {
			s.pending += cost
		}
		return true
	}
	if cost > math.MaxUint32 {
		s.flush()
		s.widen()
		return false
	}
	var dt uint32
	switch {
	case s.tail == s.head:
		// empty: this release is the base the next ones count from
		s.doneAt = at
	case at-s.backAt > math.MaxUint32:
		// further from the latest than any window: every interval
		// open is complete, and the windows start again from at
		s.flush()
		s.closeAll()
		s.head = s.tail
		s.doneAt = at
	default:
		dt = uint32(at - s.backAt)
	}
	s.push(dt, at, cost)
	return true
}

// push stores a release at at of cost (at most 2^32-1) in 8 bytes, dt
// after the latest one held, and counts the stored ones once there are
// peakFlush of them.
func (s *peakSet) push(dt uint32, at time.Duration, cost int64) {
	s.short.push(s.head, s.tail, shortRelease{dt, uint32(cost)})
	s.tail++
	s.backAt = at
	s.pending += cost
	if s.tail-s.done >= peakFlush {
		s.flush()
	}
}

// flush counts the releases stored since the last flush, in order, in
// every window: before each release x, the window's oldest releases f
// with f+V <= x close their intervals; then x joins the window.
func (s *peakSet) flush() {
	if s.done == s.tail || s.wide {
		return
	}
	for i := range s.wins {
		if w := &s.wins[i]; !s.skip(w) {
			s.flushWin(w)
		}
	}
	s.done = s.tail
	s.doneAt = s.backAt
	s.pending = 0
	s.head = s.wins[s.longest].front
}

// skip counts the releases from done to tail in window w the short way
// when no interval that they close can beat the window's best, and
// reports whether it did.
//
// An interval that closes while they join holds releases of the window
// as it is (sum) and releases among those joining (pending) at most, so
// when sum+pending <= best none beats best (a tie keeps the earlier
// start, as flushWin does). flushWin would then change only the window's
// front, frontAt and sum: its front moves to the first release f with
// f+V past the latest release, backAt, and its sum gains pending and loses
// the releases it leaves behind. skip walks the front there, without the
// comparisons and the branches that mispredict as arrivals and
// departures interleave. It leaves the window as it is (and flushWin
// counts) when the window is empty or the front would pass every release
// counted (the one before done, at doneAt, among them), where flushWin's
// order matters: with sparse releases, whose flush spans more than the
// window.
func (s *peakSet) skip(w *peakWin) bool {
	last := s.backAt - w.v // the front moves past the releases up to last
	if w.front >= s.done || w.sum+s.pending > w.best || s.doneAt <= last {
		return false
	}
	r := &s.short
	front, frontAt, sum := w.front, w.frontAt, w.sum
	fc, fi := r.chunk(front), front%ringChunk
	for frontAt <= last { // stops by done-1, at doneAt > last
		sum -= int64(fc[fi].cost)
		front++
		if fi++; fi == ringChunk {
			fc, fi = r.chunk(front), 0
		}
		frontAt += time.Duration(fc[fi].dt)
	}
	w.front, w.frontAt, w.sum = front, frontAt, sum+s.pending
	s.skips++
	return true
}

// flushWin counts the releases from done to tail in window w. It walks two
// cursors through the ring's chunks: j, the release that joins, and the
// window's front.
func (s *peakSet) flushWin(w *peakWin) {
	r := &s.short
	j, end := s.done, s.tail
	jc, ji := r.chunk(j), j%ringChunk
	front := w.front
	fc, fi := r.chunk(front), front%ringChunk
	frontAt, sum, best, start, v := w.frontAt, w.sum, w.best, w.start, w.v
	x := s.doneAt
	for {
		e := jc[ji]
		x += time.Duration(e.dt) // 0 for a base, see doneAt
		for front < j && frontAt+v <= x {
			if sum > best {
				best, start = sum, frontAt
			}
			sum -= int64(fc[fi].cost)
			front++
			if fi++; fi == ringChunk {
				fc, fi = r.chunk(front), 0
			}
			frontAt += time.Duration(fc[fi].dt) // front <= j: held
		}
		if front == j { // empty: x is its oldest
			frontAt = x
		}
		sum += int64(e.cost)
		if j++; j == end {
			break
		}
		if ji++; ji == ringChunk {
			jc, ji = r.chunk(j), 0
		}
	}
	w.front, w.frontAt, w.sum, w.best, w.start = front, frontAt, sum, best, start
}

// pushed accounts for a release just stored at sequence number tail.
func (s *peakSet) pushed(at time.Duration, cost int64) {
	for i := range s.wins {
		w := &s.wins[i]
		if w.front == s.tail { // empty: the release is its oldest
			w.frontAt = at
		}
		w.sum += cost
	}
	s.tail++
	s.backAt = at
}

// widen moves the releases held, all counted, to 16-byte entries, for good.
func (s *peakSet) widen() {
	if s.tail > s.head {
		at := s.wins[s.longest].frontAt
		for i := s.head; i < s.tail; i++ {
			if i > s.head {
				at += time.Duration(s.short.at(i).dt)
			}
			s.whole.push(s.head, i, release{at, int64(s.short.at(i).cost)})
		}
	}
	s.short = ring[shortRelease]{}
	s.wide = true
}

func (s *peakSet) addWhole(at time.Duration, cost int64) {
	for i := range s.wins {
		w := &s.wins[i]
		for w.front < s.tail && w.frontAt+w.v <= at {
			if w.sum > w.best {
				w.best, w.start = w.sum, w.frontAt
			}
			w.sum -= s.whole.at(w.front).cost
			if w.front++; w.front < s.tail {
				w.frontAt = s.whole.at(w.front).at
			}
		}
	}
	if len(s.wins) == 0 {
		return
	}
	s.head = s.wins[s.longest].front
	if s.tail > s.head && s.backAt == at {
		s.whole.at(s.tail - 1).cost += cost
		for i := range s.wins {
			s.wins[i].sum += cost
		}
		return
	}
	s.whole.push(s.head, s.tail, release{at, cost})
	s.pushed(at, cost)
}

// finish closes every interval still open and returns each window's peak
// and the earliest start of one, in the order of the windows.
func (s *peakSet) finish() []release {
	s.flush()
	s.closeAll()
	out := make([]release, len(s.wins))
	for i, w := range s.wins {
		out[i] = release{w.start, w.best}
	}
	return out
}

// closeAll closes every interval still open, all releases counted: every
// release from a window's front on starts an interval that ends after the
// latest release (or, when a release comes further than any window from
// the latest, before it).
func (s *peakSet) closeAll() {
	for i := range s.wins {
		w := &s.wins[i]
		for ; w.front < s.tail; w.front++ {
			if w.sum > w.best {
				w.best, w.start = w.sum, w.frontAt
			}
			if s.wide {
				w.sum -= s.whole.at(w.front).cost
				if w.front+1 < s.tail {
					w.frontAt = s.whole.at(w.front + 1).at
				}
			} else {
				w.sum -= int64(s.short.at(w.front).cost)
				if w.front+1 < s.tail {
					w.frontAt += time.Duration(s.short.at(w.front + 1).dt)
				}
			}
		}
	}
}

// held is how many releases the set holds once it has counted them.
func (s *peakSet) held() int {
	s.flush()
	return s.tail - s.head
}

// peaks closes the windows and reports them with their ratio to the
// policy.
func (s *peakSet) peaks(p algorithms.Policy) []Peak {
	out := make([]Peak, 0, len(s.wins))
	for i, r := range s.finish() {
		out = append(out, newPeak(r.cost, r.at, s.wins[i].v, p))
	}
	return out
}

// newPeak is the peak of count from start in a window of v, rated against
// policy p.
func newPeak(count int64, start, v time.Duration, p algorithms.Policy) Peak {
	return Peak{WindowNs: int64(v), Count: count, StartNs: int64(start), Ratio: peakRatio(count, v, p)}
}

// peakRatio is count / (L*V/W) for a window of v under policy p: how many
// times the limit over v got through. For the report only (a float).
func peakRatio(count int64, v time.Duration, p algorithms.Policy) Ratio {
	return Ratio(float64(count) * float64(p.Per) / (float64(p.Rate) * float64(v)))
}

// ring holds the entries of a queue by sequence number, in chunks of
// ringChunk entries: entry i is in chunk i/ringChunk. It grows by a chunk,
// never copying what it holds, and keeps the chunks emptied at its front
// for reuse, so it holds what the queue held at most, plus a chunk or two.
// The queue's bounds are its owner's (head and tail, see push).
//
// New chunks are cut from blocks (slab) that double in size, from one
// chunk to about ringSlabBytes, made by internal/pages: a ring that holds
// a second of a million releases a second takes its 16 MiB in a few
// system calls and huge pages, where a chunk at a time faulted in every
// 4 KiB page of it and walked the ring through as many translations. The
// blocks hold at most twice what the chunks in use and spare would.
type ring[E any] struct {
	chunks []*[ringChunk]E // chunks[k] is chunk number first+k
	first  int
	spare  []*[ringChunk]E
	slab   []E // what is left of the last block, for new chunks
	blocks int // the entries of every block made
}

// ringSlabBytes is about the most a ring's block of chunks holds.
const ringSlabBytes = 8 << 20

// newChunk cuts a chunk from the block, making the next block first when
// it is used up.
func (r *ring[E]) newChunk() *[ringChunk]E {
	if len(r.slab) < ringChunk {
		var zero E
		most := max(1, ringSlabBytes/(ringChunk*int(unsafe.Sizeof(zero))))
		r.slab = pages.Make[E](ringChunk * min(max(1, r.held()), most)) // as many as are cut
		r.blocks += len(r.slab)
	}
	c := (*[ringChunk]E)(r.slab[:ringChunk])
	r.slab = r.slab[ringChunk:]
	return c
}

// ringChunk is how many entries a chunk of a ring holds (8 KiB of 8-byte
// releases).
const ringChunk = 1024

// chunk is the chunk that holds entry i (held).
func (r *ring[E]) chunk(i int) *[ringChunk]E { return r.chunks[int(uint(i)/ringChunk)-r.first] }

// at is entry i (held: head <= i < tail).
func (r *ring[E]) at(i int) *E {
	return &r.chunks[int(uint(i)/ringChunk)-r.first][uint(i)%ringChunk]
}

// span is the entries from i (held) on, at most n, within i's chunk: a
// walk through the queue takes them a span at a time, with no check of
// the chunk's end for each.
func (r *ring[E]) span(i, n int) []E {
	j := int(uint(i) % ringChunk)
	return r.chunk(i)[j:min(j+n, ringChunk)]
}

// push stores x as entry tail of the queue [head, tail), first setting
// aside the chunks wholly before head.
func (r *ring[E]) push(head, tail int, x E) {
	if i := uint(tail) % ringChunk; i != 0 && len(r.chunks) > 0 {
		// within the last chunk
		r.chunks[int(uint(tail)/ringChunk)-r.first][i] = x
		return
	}
	// a new chunk: at the start of one, or in an empty ring (a set that
	// widens starts its ring where its releases are)
	for len(r.chunks) > 0 && r.first < head/ringChunk {
		r.spare = append(r.spare, r.chunks[0])
		r.chunks[0] = nil
		r.chunks = r.chunks[1:]
		r.first++
	}
	if len(r.chunks) == 0 {
		r.first = tail / ringChunk
	}
	var c *[ringChunk]E
	if n := len(r.spare); n > 0 {
		c, r.spare = r.spare[n-1], r.spare[:n-1]
		c[tail%ringChunk] = x
	} else {
		// stored here, where c is known not to be nil: the store
		// elsewhere checks it by a load, and a fresh chunk's first
		// touch must be a write where its block was too small to be
		// backed when made (internal/pages says why)
		c = r.newChunk()
		c[tail%ringChunk] = x
	}
	r.chunks = append(r.chunks, c)
}

// pushAll stores xs as the entries from tail on of the queue [head, tail),
// a chunk's worth at a time.
func (r *ring[E]) pushAll(head, tail int, xs []E) {
	for len(xs) > 0 {
		r.push(head, tail, xs[0]) // makes the chunk, when tail starts one
		n := 1
		if j := uint(tail) % ringChunk; j+1 < ringChunk {
			n += copy(r.chunk(tail)[j+1:], xs[1:])
		}
		tail += n
		xs = xs[n:]
	}
}

// held is how many chunks the ring holds, in use or spare.
func (r *ring[E]) held() int { return len(r.chunks) + len(r.spare) }
