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
// Releases are held in groups: an entry is a run of n releases of one
// cost, each dt after the one before (the first dt after the entry
// before's last), so that evenly spaced releases of one cost, a steady
// source's, take one entry however many of them the window holds
// (docs/metrics.md, "Peaks"). What it holds is then bounded by the
// distinct instants of the longest window and by the runs among them,
// whichever is less. A window's front is a release inside an entry (the
// entry and the release's place in its run).
//
// The windows share one queue of the releases of the longest window; each
// window keeps its own front in it (a shorter window's front is never
// behind a longer one's), so a release is stored once however many windows
// count it (a scenario's defaults are W and W/10).
//
// While the longest window is at most 2^32-1 ns (4.29s) an entry is held
// in 12 bytes: its distance to the release before, its cost and its
// length, 32 bits each. A longer window, or a cost past 32 bits, holds
// them whole (24 bytes): the set switches for good the first time it
// needs to.
//
// Held in 12 bytes, releases are counted lazily: add only stores them, and
// every peakFlush entries (and before finishing) flush counts the stored
// ones, window by window, in one loop over them. The windows see the same
// releases in the same order as if each were counted as it came, so the
// peaks are the same; the loop keeps one window's state in registers and
// the releases in cache, where counting each release as it came walked
// every window for each. Only entries not yet counted grow.
type peakSet struct {
	wins    []peakWin
	longest int  // the index in wins of the longest window
	wide    bool // releases are held whole
	short   ring[shortRelease]
	whole   ring[wholeRelease]
	// the entries held, by sequence number: [head, tail); head is the
	// longest window's front. Held in 12 bytes, those from done on are
	// stored but not yet counted by the windows.
	head, tail, done int
	backAt           time.Duration // the latest release's instant (tail > head)
	// last is entry tail-1 while held in 12 bytes (tail > head)
	last *shortRelease
	// doneAt is the instant of the last release of entry done-1, from
	// which the next one's distance counts (after restart, the instant of
	// release done itself, whose distance is 0)
	doneAt time.Duration
	// pending is the cost stored since done, not yet counted (12-byte
	// entries only); skips counts the window flushes that took the
	// bound (see flushWin), for tests.
	pending int64
	skips   int
}

// peakFlush is how many entries a peakSet stores before it counts them.
const peakFlush = 512

// peakWin is one window of a peakSet: the releases in it are those from
// its front to the set's tail (to done, while releases wait to be
// counted). Its front is release off of the run of entry front.
type peakWin struct {
	v       time.Duration
	front   int           // the sequence number of its oldest release's entry
	off     uint32        // that release's place in the entry's run
	frontAt time.Duration // that release's instant (front < tail)
	sum     int64         // the cost of the releases in it
	best    int64
	start   time.Duration
}

// shortRelease is a run of n releases of cost each, each dt after the one
// before; the first is dt after the last release of the entry held before
// it (the oldest entry's dt is meaningless). n > 1 only where dt > 0.
type shortRelease struct {
	dt, cost, n uint32
}

// wholeRelease is a run of n releases of cost each, from at, dt apart.
type wholeRelease struct {
	at    time.Duration
	cost  int64
	dt, n uint32
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

// add stores a release of cost at at. The common case, a release in 12
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

// addShort stores a release in 12 bytes, or reports that it cannot (it
// has then counted what it held and widened, for addWhole to add it).
func (s *peakSet) addShort(at time.Duration, cost int64) bool {
	if len(s.wins) == 0 {
		return true
	}
	if s.tail > s.head && s.backAt == at {
		// the latest release is at the same instant: one release
		last := s.last
		c := int64(last.cost) + cost
		if c > math.MaxUint32 {
			s.flushAll()
			s.widen()
			return false
		}
		// not yet counted (see flush)
		switch {
		case cost == 0:
		case last.n == 1:
			last.cost = uint32(c)
			s.join()
		default:
			// the run's last release leaves it for an entry of its own
			s.split(uint32(c))
		}
		s.pending += cost
		return true
	}
	if cost > math.MaxUint32 {
		s.flushAll()
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
		s.flushAll()
		s.closeAll()
		s.head = s.tail
		s.doneAt = at
	default:
		dt = uint32(at - s.backAt)
	}
	s.push(dt, at, cost)
	return true
}

// join makes entry tail-1 (a lone release) one more of the run before
// it, when it is one more of it and neither is counted (flush leaves
// both): as repeated instants add up, they may make a run (two requests
// a nanosecond).
func (s *peakSet) join() {
	last := s.last
	if s.tail-2 < s.done || s.tail-2 < s.head || last.dt == 0 {
		return
	}
	if p := s.short.at(s.tail - 2); p.dt == last.dt && p.cost == last.cost && p.n < math.MaxUint32 {
		p.n++
		s.short.pop(s.tail)
		s.tail--
		s.last = p
	}
}

// split moves the last release of the run of entry tail-1 (n > 1, not
// yet counted) to an entry of its own, of cost c.
func (s *peakSet) split(c uint32) {
	last := s.last
	last.n--
	s.last = s.short.push(s.head, s.tail, shortRelease{last.dt, c, 1})
	s.tail++
}

// push stores a release at at of cost (at most 2^32-1), dt after the
// latest one held: in the last entry's run when it is one more of it
// (the last entry is not counted but by flushAll, after which an entry of
// its own follows), else in an entry of its own; it counts the stored
// entries once there are peakFlush of them.
func (s *peakSet) push(dt uint32, at time.Duration, cost int64) {
	s.backAt = at
	s.pending += cost
	if l := s.last; s.tail > s.done && l.dt == dt && l.cost == uint32(cost) && l.n < math.MaxUint32 {
		l.n++
		return
	}
	s.last = s.short.push(s.head, s.tail, shortRelease{dt, uint32(cost), 1})
	s.tail++
	if s.tail-s.done >= peakFlush {
		s.flush()
	}
}

// flush counts the entries stored since the last flush but the last two:
// the last's run may still grow, and the one before may take the last in
// (see join). Their releases wait for the next.
func (s *peakSet) flush() {
	if s.tail-s.done < 3 || s.wide {
		return
	}
	l, p := s.last, s.short.at(s.tail-2)
	at := s.backAt - time.Duration(l.n)*time.Duration(l.dt) - time.Duration(p.n)*time.Duration(p.dt)
	s.count(s.tail-2, at, s.pending-int64(l.n)*int64(l.cost)-int64(p.n)*int64(p.cost))
}

// flushAll counts every entry stored since the last flush.
func (s *peakSet) flushAll() {
	if s.done == s.tail || s.wide {
		return
	}
	s.count(s.tail, s.backAt, s.pending)
}

// count counts the releases of entries done to end, the latest of them at
// endAt and of cost in all, in order, in every window: before each
// release x, the window's oldest releases f with f+V <= x close their
// intervals; then x joins the window.
func (s *peakSet) count(end int, endAt time.Duration, cost int64) {
	for i := range s.wins {
		if w := &s.wins[i]; !s.skip(w, end, endAt, cost) {
			s.flushWin(w, end)
		}
	}
	s.done = end
	s.doneAt = endAt
	s.pending -= cost
	s.head = s.wins[s.longest].front
}

// skip counts the releases from done to end in window w the short way
// when no interval that they close can beat the window's best, and
// reports whether it did.
//
// An interval that closes while they join holds releases of the window
// as it is (sum) and releases among those joining (cost) at most, so
// when sum+cost <= best none beats best (a tie keeps the earlier
// start, as flushWin does). flushWin would then change only the window's
// front, frontAt and sum: its front moves to the first release f with
// f+V past the latest release joining, at endAt, and its sum gains their
// cost and loses
// the releases it leaves behind. skip walks the front there, a run's
// releases at once, without the comparisons and the branches that
// mispredict as arrivals and departures interleave. It leaves the window
// as it is (and flushWin counts) when the window is empty or the front
// would pass every release counted (the one before done, at doneAt, among
// them), where flushWin's order matters: with sparse releases, whose
// flush spans more than the window.
func (s *peakSet) skip(w *peakWin, end int, endAt time.Duration, cost int64) bool {
	last := endAt - w.v // the front moves past the releases up to last
	if w.front >= s.done || w.sum+cost > w.best || s.doneAt <= last {
		return false
	}
	r := &s.short
	front, off, frontAt, sum := w.front, w.off, w.frontAt, w.sum
	fc, fi := r.chunk(front), front%ringChunk
	e := &fc[fi]
	for frontAt <= last { // stops by done-1's last, at doneAt > last
		if e.n-off > 1 {
			// a run: it passes those of its releases up to last
			k := uint32(min(int64(e.n-off), int64(last-frontAt)/int64(e.dt)+1))
			sum -= int64(k) * int64(e.cost)
			frontAt += time.Duration(k-1) * time.Duration(e.dt)
			if off += k; off < e.n {
				frontAt += time.Duration(e.dt)
				continue
			}
		} else {
			sum -= int64(e.cost)
		}
		front, off = front+1, 0
		if fi++; fi == ringChunk {
			fc, fi = r.chunk(front), 0
		}
		e = &fc[fi]
		frontAt += time.Duration(e.dt)
	}
	w.front, w.off, w.frontAt, w.sum = front, off, frontAt, sum+cost
	s.skips++
	return true
}

// flushWin counts the releases of entries done to end in window w. It
// walks two cursors through the ring's chunks: j (and k in its run), the
// release that joins, and the window's front (and off in its run).
//
// A run's releases are counted a stretch at a time where the outcome is
// plain: those that join before the front's release leaves (the window
// fills) together, and, once the window holds just the q = ceil(V/dt)
// releases of the run before the one joining (front and join in the run),
// the rest of the run at once: each release of it that joins makes one
// leave, every interval that closes holds q releases, and the first of
// them is the only candidate (equal sums keep the earlier start). So a
// steady source's run costs a few steps however many releases it holds.
func (s *peakSet) flushWin(w *peakWin, end int) {
	r := &s.short
	j := s.done
	jc, ji := r.chunk(j), j%ringChunk
	front, off := w.front, w.off
	fc, fi := r.chunk(front), front%ringChunk
	fe := fc[fi] // the front's entry
	frontAt, sum, best, start, v := w.frontAt, w.sum, w.best, w.start, w.v
	x := s.doneAt
	for {
		e := jc[ji]
		if e.n == 1 {
			// a lone release (off is 0 where front is j)
			x += time.Duration(e.dt) // 0 for a base, see doneAt
			for front < j && frontAt+v <= x {
				if sum > best {
					best, start = sum, frontAt
				}
				sum -= int64(fe.cost)
				if off++; off == fe.n {
					front, off = front+1, 0
					if fi++; fi == ringChunk {
						fc, fi = r.chunk(front), 0
					}
					fe = fc[fi] // front <= j: held
				}
				frontAt += time.Duration(fe.dt)
			}
			if front == j { // empty: x is its oldest
				frontAt = x
			}
			sum += int64(e.cost)
		} else {
			w.front, w.off, w.frontAt, w.sum, w.best, w.start = front, off, frontAt, sum, best, start
			x = s.joinRun(w, e, j, x)
			front, off, frontAt, sum, best, start = w.front, w.off, w.frontAt, w.sum, w.best, w.start
			fc, fi = r.chunk(front), front%ringChunk
			fe = fc[fi]
		}
		if j++; j == end {
			break
		}
		if ji++; ji == ringChunk {
			jc, ji = r.chunk(j), 0
		}
	}
	w.front, w.off, w.frontAt, w.sum, w.best, w.start = front, off, frontAt, sum, best, start
}

// joinRun counts the releases of run e, entry j, in window w for
// flushWin, the last release before them at x. It returns the last
// release's instant.
func (s *peakSet) joinRun(w *peakWin, e shortRelease, j int, x time.Duration) time.Duration {
	r := &s.short
	front, off, frontAt, sum, best, start, v := w.front, w.off, w.frontAt, w.sum, w.best, w.start, w.v
	fc, fi := r.chunk(front), front%ringChunk
	fe := fc[fi]                      // the front's entry
	q := (int64(v)-1)/int64(e.dt) + 1 // dt > 0 in a run
	for k := uint32(0); k < e.n; k++ {
		if front == j && int64(k-off) == q {
			// the window holds q releases of this run: the rest of
			// it joins, as many leave
			if sum > best {
				best, start = sum, frontAt
			}
			rest := time.Duration(e.n-k) * time.Duration(e.dt)
			off += e.n - k
			frontAt += rest
			x += rest
			break
		}
		x += time.Duration(e.dt)
		for (front < j || off < k) && frontAt+v <= x {
			if sum > best {
				best, start = sum, frontAt
			}
			sum -= int64(fe.cost)
			if off++; off == fe.n {
				front, off = front+1, 0
				if fi++; fi == ringChunk {
					fc, fi = r.chunk(front), 0
				}
				fe = fc[fi] // front <= j: held
			}
			frontAt += time.Duration(fe.dt)
		}
		if front == j && off == k { // empty: x is its oldest
			frontAt = x
		}
		sum += int64(e.cost)
		if e.n-k > 2 && frontAt+v-x > time.Duration(e.dt) {
			// the next m releases of the run join before the
			// front's leaves
			m := min(int64(e.n-k-1), int64(frontAt+v-x-1)/int64(e.dt))
			sum += m * int64(e.cost)
			x += time.Duration(m) * time.Duration(e.dt)
			k += uint32(m)
		}
	}
	w.front, w.off, w.frontAt, w.sum, w.best, w.start = front, off, frontAt, sum, best, start
	return x
}

// widen moves the entries held, all counted, to whole entries, for good.
func (s *peakSet) widen() {
	if s.tail > s.head {
		lw := &s.wins[s.longest] // its front is in entry head
		at := lw.frontAt - time.Duration(lw.off)*time.Duration(s.short.at(s.head).dt)
		for i := s.head; i < s.tail; i++ {
			e := s.short.at(i)
			if i > s.head {
				at += time.Duration(e.dt)
			}
			s.whole.push(s.head, i, wholeRelease{at, int64(e.cost), e.dt, e.n})
			at += time.Duration(e.n-1) * time.Duration(e.dt) // its last
		}
	}
	s.short = ring[shortRelease]{}
	s.last = nil
	s.wide = true
}

// addWhole counts a release at once in every window and stores it whole:
// in the last entry's run when it is one more of it.
func (s *peakSet) addWhole(at time.Duration, cost int64) {
	for i := range s.wins {
		w := &s.wins[i]
		for w.front < s.tail && w.frontAt+w.v <= at {
			if w.sum > w.best {
				w.best, w.start = w.sum, w.frontAt
			}
			e := s.whole.at(w.front)
			w.sum -= e.cost
			if w.off++; w.off < e.n {
				w.frontAt += time.Duration(e.dt)
			} else if w.front, w.off = w.front+1, 0; w.front < s.tail {
				w.frontAt = s.whole.at(w.front).at
			}
		}
	}
	if len(s.wins) == 0 {
		return
	}
	s.head = s.wins[s.longest].front
	if s.tail > s.head {
		l := s.whole.at(s.tail - 1)
		if s.backAt == at {
			if l.n > 1 {
				// the run's last release leaves it for an entry of
				// its own
				n := l.n
				l.n--
				s.whole.push(s.head, s.tail, wholeRelease{at, l.cost, 0, 1})
				for i := range s.wins {
					if w := &s.wins[i]; w.front == s.tail-1 && w.off == n-1 {
						w.front, w.off = s.tail, 0
					}
				}
				s.tail++
				l = s.whole.at(s.tail - 1)
			}
			l.cost += cost
			for i := range s.wins {
				s.wins[i].sum += cost
			}
			s.joinWhole()
			return
		}
		gap := at - s.backAt
		if l.cost == cost && l.n < math.MaxUint32 && ((l.n == 1 && gap <= math.MaxUint32) || (l.n > 1 && gap == time.Duration(l.dt))) {
			l.dt = uint32(gap)
			l.n++
			for i := range s.wins {
				w := &s.wins[i]
				if w.front == s.tail { // empty: the release is its oldest
					w.front, w.off, w.frontAt = s.tail-1, l.n-1, at
				}
				w.sum += cost
			}
			s.backAt = at
			return
		}
	}
	s.whole.push(s.head, s.tail, wholeRelease{at, cost, 0, 1})
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

// joinWhole makes entry tail-1 (a lone release) one more of the run
// before it, when it is one more of it: a window whose front it was
// follows it.
func (s *peakSet) joinWhole() {
	if s.tail-2 < s.head {
		return
	}
	l, p := s.whole.at(s.tail-1), s.whole.at(s.tail-2)
	if l.n != 1 || p.cost != l.cost || p.n == math.MaxUint32 {
		return
	}
	gap := l.at - (p.at + time.Duration(p.n-1)*time.Duration(p.dt))
	if gap <= 0 || (p.n == 1 && gap > math.MaxUint32) || (p.n > 1 && gap != time.Duration(p.dt)) {
		return
	}
	p.dt = uint32(gap)
	p.n++
	for i := range s.wins {
		if w := &s.wins[i]; w.front == s.tail-1 {
			w.front, w.off = s.tail-2, p.n-1
		}
	}
	s.whole.pop(s.tail)
	s.tail--
}

// finish closes every interval still open and returns each window's peak
// and the earliest start of one, in the order of the windows.
func (s *peakSet) finish() []release {
	s.flushAll()
	s.closeAll()
	out := make([]release, len(s.wins))
	for i, w := range s.wins {
		out[i] = release{w.start, w.best}
	}
	return out
}

// closeAll closes every interval still open, all releases counted. Every
// release from a window's front on starts an interval that ends after the
// latest release (or, when a release comes further than any window from
// the latest, before it), so each holds the releases from it on: the
// front's holds the most, and the later ones, counting fewer, replace
// nothing.
func (s *peakSet) closeAll() {
	for i := range s.wins {
		w := &s.wins[i]
		if w.front < s.tail && w.sum > w.best {
			w.best, w.start = w.sum, w.frontAt
		}
		w.front, w.off, w.sum = s.tail, 0, 0
	}
}

// held is how many entries the set holds once it has counted them (all but
// the last two).
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

// ringChunk is how many entries a chunk of a ring holds (12 KiB of 12-byte
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
// aside the chunks wholly before head, and returns where it is (it stays
// there while held).
func (r *ring[E]) push(head, tail int, x E) *E {
	if i := uint(tail) % ringChunk; i != 0 && len(r.chunks) > 0 {
		// within the last chunk
		c := r.chunks[int(uint(tail)/ringChunk)-r.first]
		c[i] = x
		return &c[i]
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
	return &c[tail%ringChunk]
}

// pop drops entry tail-1 of the queue [head, tail), setting its chunk
// aside when it was the chunk's first.
func (r *ring[E]) pop(tail int) {
	if (tail-1)%ringChunk == 0 {
		n := len(r.chunks) - 1
		r.spare = append(r.spare, r.chunks[n])
		r.chunks[n] = nil
		r.chunks = r.chunks[:n]
	}
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
