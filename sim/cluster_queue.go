package sim

import (
	"time"

	"github.com/ratesim/ratesim/internal/queue"
)

// The classes of a cluster run's events: at one instant, events of a lower
// class come first. Releases of delayed requests wait in the run's release
// queue, the backend's events in the backend (which orders its own at one
// instant: see package backend), first attempts come from the feed and
// retries from the run's retry queue; the others wait in the cluster's
// own queue.
const (
	classRelease      = iota // a delayed request reaches the backend
	classFault               // a fault begins or ends; a store flush
	classStoreArrival        // an operation reaches the store
	classStoreExec           // a queued operation executes at the store
	classReply               // a reply reaches its node; then timeouts
	classBackend             // the backend's next event (Config.Backend)
	classArrival             // a first attempt reaches the balancer
	classRetry               // a retry reaches the balancer
	classSync                // a node synchronises its counters
)

// Kinds of the cluster queue's events.
const (
	evFault uint8 = iota
	evStoreArrival
	evStoreExec
	evReply
	evSync
	evTimeout
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

// cevQueue is a min-heap of cev.
type cevQueue = queue.Heap[cev, *cev]
