package sim

import (
	"math"
	"time"

	"github.com/ratesim/ratesim/algorithms"
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
type peakSet struct {
	wins    []peakWin
	longest int  // the index in wins of the longest window
	wide    bool // releases are held whole
	short   ring[shortRelease]
	whole   ring[release]
	// the releases held, by sequence number: [head, tail); head is the
	// longest window's front
	head, tail int
	backAt     time.Duration // the latest release's instant (tail > head)
}

// peakWin is one window of a peakSet: the releases in it are those from
// front to the set's tail.
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

func (s *peakSet) add(at time.Duration, cost int64) {
	if s.wide || !s.addShort(at, cost) {
		s.addWhole(at, cost)
	}
}

// addShort adds a release in 8 bytes, or reports that it cannot (the
// windows have then passed at, as addWhole does again to no effect).
func (s *peakSet) addShort(at time.Duration, cost int64) bool {
	for i := range s.wins {
		w := &s.wins[i]
		for w.front < s.tail && w.frontAt+w.v <= at {
			if w.sum > w.best {
				w.best, w.start = w.sum, w.frontAt
			}
			w.sum -= int64(s.short.at(w.front).cost)
			if w.front++; w.front < s.tail {
				w.frontAt += time.Duration(s.short.at(w.front).dt)
			}
		}
	}
	if len(s.wins) == 0 {
		return true
	}
	s.head = s.wins[s.longest].front
	if s.tail > s.head && s.backAt == at {
		// the latest release is in every window (it is not before at-V)
		last := s.short.at(s.tail - 1)
		c := int64(last.cost) + cost
		if c > math.MaxUint32 {
			s.widen()
			return false
		}
		last.cost = uint32(c)
		for i := range s.wins {
			s.wins[i].sum += cost
		}
		return true
	}
	if cost > math.MaxUint32 {
		s.widen()
		return false
	}
	// the latest release held is within the longest V of at (else it left
	// above), and that V fits in 32 bits
	dt := uint32(at - s.backAt)
	if s.tail == s.head {
		dt = 0
	}
	s.short.push(s.head, s.tail, shortRelease{dt, uint32(cost)})
	s.pushed(at, cost)
	return true
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

// widen moves the releases held to 16-byte entries, for good.
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
	out := make([]release, len(s.wins))
	for i := range s.wins {
		w := &s.wins[i]
		// every release from the front on starts an interval that ends
		// after the latest release
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
		out[i] = release{w.start, w.best}
	}
	return out
}

// held is how many releases the set holds.
func (s *peakSet) held() int { return s.tail - s.head }

// peaks closes the windows and reports them with their ratio to the
// policy.
func (s *peakSet) peaks(p algorithms.Policy) []Peak {
	out := make([]Peak, 0, len(s.wins))
	for i, r := range s.finish() {
		count, v := r.cost, s.wins[i].v
		out = append(out, Peak{
			WindowNs: int64(v),
			Count:    count,
			StartNs:  int64(r.at),
			// peak / (L*V/W), for the report only
			Ratio: Ratio(float64(count) * float64(p.Per) / (float64(p.Rate) * float64(v))),
		})
	}
	return out
}

// ring holds the entries of a queue by sequence number, in chunks of
// ringChunk entries: entry i is in chunk i/ringChunk. It grows by a chunk,
// never copying what it holds, and keeps the chunks emptied at its front
// for reuse, so it holds what the queue held at most, plus a chunk or two.
// The queue's bounds are its owner's (head and tail, see push).
type ring[E any] struct {
	chunks []*[ringChunk]E // chunks[k] is chunk number first+k
	first  int
	spare  []*[ringChunk]E
}

// ringChunk is how many entries a chunk of a ring holds (8 KiB of 8-byte
// releases).
const ringChunk = 1024

// at is entry i (held: head <= i < tail).
func (r *ring[E]) at(i int) *E { return &r.chunks[i/ringChunk-r.first][i%ringChunk] }

// push stores x as entry tail of the queue [head, tail), first setting
// aside the chunks wholly before head.
func (r *ring[E]) push(head, tail int, x E) {
	if i := tail % ringChunk; i != 0 && len(r.chunks) > 0 {
		// within the last chunk
		r.chunks[tail/ringChunk-r.first][i] = x
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
	} else {
		c = new([ringChunk]E)
	}
	r.chunks = append(r.chunks, c)
	c[tail%ringChunk] = x
}

// held is how many chunks the ring holds, in use or spare.
func (r *ring[E]) held() int { return len(r.chunks) + len(r.spare) }
