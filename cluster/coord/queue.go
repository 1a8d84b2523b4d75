package coord

import (
	"math/bits"
	"time"

	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/internal/queue"
)

// Kinds of the cluster queue's events.
const (
	evFault uint8 = iota
	evStoreArrival
	evStoreExec
	evReply
	evSync
	evTimeout
	evDirectReply // the reply to a script run when sent (clusterRun.direct)
)

// cev is one event of a cluster run's queue, ordered by (at, class, sub,
// seq): sub is an operation's send time for its arrival at the store
// (docs/cluster.md: ops arriving at one instant are taken by send time, then in
// processing order), 1 for a timeout (after the replies of its instant)
// and 0 otherwise; seq is the order the engine made them in.
type cev struct {
	at    time.Duration
	sub   time.Duration
	seq   uint64
	class uint8
	kind  uint8
	id    uint32 // an operation's slot, a node, a fault's index
}

func cevLess(a, b *cev) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.class != b.class {
		return a.class < b.class
	}
	if a.sub != b.sub {
		return a.sub < b.sub
	}
	return a.seq < b.seq
}

func (a *cev) Less(b *cev) bool { return cevLess(a, b) }

// cevHeap is a min-heap of cev.
type cevHeap = queue.Heap[cev, *cev]

// storeEvents are a cluster row's own events (faults, operations reaching
// the store and executing there, replies and timeouts, syncs), taken in
// cevLess order. Most wait in a timing wheel (cevWheel) that spans a round
// trip: with jitter, each operation's arrival at the store and its reply
// wait there, a one-way trip ahead of now, over a thousand at once under
// heavy traffic, which a binary heap sifted each through all its levels.
// Those made in the order they come wait in FIFOs instead, which the
// wheel would order the same: executions from the store's queue always
// (FIFO, at non-decreasing instants), and, when every trip takes the same
// time (fixed: no jitter, no store-slow fault), arrivals at the store and
// replies too. The FIFOs make a central row without jitter more than
// twice as quick as a heap alone; TestClusterFIFOsMatchQueue holds them
// to it.
type storeEvents struct {
	wheel   *cevWheel // see trips
	seq     uint64    // the next event's and operation's sequence number
	fixed   bool
	fifos   [3]queue.Deque[cev] // by fifoArrivals, fifoExecs, fifoReplies
	inFifos int                 // the events in fifos (most often none, with jitter)
	// the first event and where it waits, as peek found it, while known:
	// until the next push or pop (the agenda reads the first event after
	// each of its events, and the event that fires next is most often
	// that one)
	head  *cev
	where int
	known bool
}

// The FIFOs of storeEvents; inHeap stands for the wheel.
const (
	fifoArrivals = iota
	fifoExecs
	fifoReplies
	inHeap = -1
)

// trips sizes the wheel for cl's round trips (see storeEvents): its
// wheelSlots slots span the longest, jitter and store-slow faults
// included, so that an operation's arrival at the store and its reply, a
// one-way trip ahead each, fall in it. It must be called before the first
// push.
func (s *storeEvents) trips(cl *cluster.Config) {
	d := cl.Store.RTT
	for _, f := range cl.Faults {
		if f.Type == cluster.StoreSlow {
			d = max(d, f.RTT)
		}
	}
	d += 2 * cl.Store.Jitter
	shift := 0
	if per := d / wheelSlots; per > 1 {
		shift = bits.Len64(uint64(per - 1))
	}
	s.wheel = newCevWheel(uint(shift), wheelBits)
}

// The wheel of storeEvents has 1 << wheelBits slots.
const (
	wheelBits  = 10
	wheelSlots = 1 << wheelBits
)

// nextSeq returns the next sequence number.
func (s *storeEvents) nextSeq() uint64 {
	s.seq++
	return s.seq - 1
}

// push adds ev to the wheel with the next sequence number.
func (s *storeEvents) push(ev cev) {
	ev.seq = s.nextSeq()
	s.known = false
	s.wheel.Push(ev)
}

// pushNumbered adds ev, numbered already (a timeout takes its
// operation's number), to the wheel.
func (s *storeEvents) pushNumbered(ev cev) {
	s.known = false
	s.wheel.Push(ev)
}

// pushTrip adds ev, an arrival at the store (fifoArrivals) or a reply
// (fifoReplies), with the next sequence number: to its FIFO when the trips
// are fixed, else to the wheel.
func (s *storeEvents) pushTrip(ev cev, fifo int) {
	ev.seq = s.nextSeq()
	s.known = false
	if s.fixed {
		s.inFifos++
		s.fifos[fifo].PushBack(ev)
		return
	}
	s.wheel.Push(ev)
}

// pushExec adds ev, an execution from the store's queue, with the next
// sequence number.
func (s *storeEvents) pushExec(ev cev) {
	ev.seq = s.nextSeq()
	s.known = false
	s.inFifos++
	s.fifos[fifoExecs].PushBack(ev)
}

// peek returns the first event and where it waits (a FIFO or inHeap), or
// nil.
func (s *storeEvents) peek() (*cev, int) {
	if s.known {
		return s.head, s.where
	}
	var best *cev
	where := inHeap
	if s.wheel.Len() > 0 {
		best = s.wheel.Peek()
	}
	for i := 0; i < len(s.fifos) && s.inFifos > 0; i++ {
		if f := &s.fifos[i]; f.Len() > 0 {
			if e := f.Front(); best == nil || cevLess(e, best) {
				best, where = e, i
			}
		}
	}
	s.head, s.where, s.known = best, where, true
	return best, where
}

// pop takes the first event of where (as peek gave it).
func (s *storeEvents) pop(where int) cev {
	s.known = false
	if where == inHeap {
		return s.wheel.Pop()
	}
	s.inFifos--
	return s.fifos[where].PopFront()
}
