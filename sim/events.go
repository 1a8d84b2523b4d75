package sim

import (
	"time"

	"github.com/ratesim/ratesim/internal/queue"
)

// event is a retry scheduled on the virtual clock: a client tries a
// rejected request again.
type event struct {
	at      time.Duration
	seq     uint64
	id      uint64 // the request's: its first attempt's place in the traffic
	cost    int64
	key     uint32
	source  int32
	attempt int32
	attrs   uint32 // traffic.Arrival.Attrs
}

// Less orders retries by time, then by the order they were scheduled in.
func (a *event) Less(b *event) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

// eventQueue is a min-heap of retries by (time, insertion sequence), so
// that retries at one instant keep the order they were scheduled in.
type eventQueue struct {
	h   queue.Heap[event, *event]
	seq uint64
}

func (q *eventQueue) len() int     { return q.h.Len() }
func (q *eventQueue) peek() *event { return q.h.Peek() }
func (q *eventQueue) pop() event   { return q.h.Pop() }

func (q *eventQueue) push(ev event) {
	ev.seq = q.seq
	q.seq++
	q.h.Push(ev)
}
