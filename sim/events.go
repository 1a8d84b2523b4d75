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

// eventQueue holds retries by (time, insertion sequence), so that retries
// at one instant keep the order they were scheduled in. Clients that wait
// the same time (a Retry-After of whole seconds) schedule their retries
// in the order they come due: those go to the back of a run kept in
// order, and only a retry due before the run's last goes to the heap.
// The next retry is the earlier of the run's front and the heap's top, so
// the order is the heap's alone, and a retry storm's hundreds of pending
// retries cost a comparison each rather than a heap's sift.
type eventQueue struct {
	run queue.Deque[event]
	h   queue.Heap[event, *event]
	seq uint64
}

func (q *eventQueue) len() int { return q.run.Len() + q.h.Len() }

// fromRun reports whether the next retry is the run's front.
func (q *eventQueue) fromRun() bool {
	return q.h.Len() == 0 || q.run.Len() > 0 && q.run.Front().Less(q.h.Peek())
}

func (q *eventQueue) peek() *event {
	if q.fromRun() {
		return q.run.Front()
	}
	return q.h.Peek()
}

func (q *eventQueue) pop() event {
	if q.fromRun() {
		return q.run.PopFront()
	}
	return q.h.Pop()
}

func (q *eventQueue) push(ev event) {
	ev.seq = q.seq
	q.seq++
	if q.run.Len() == 0 || !ev.Less(q.run.Back()) {
		q.run.PushBack(ev)
		return
	}
	q.h.Push(ev)
}
