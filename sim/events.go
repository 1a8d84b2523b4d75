package sim

import "time"

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
}

// less orders retries by time, then by the order they were scheduled in.
func (a *event) less(b *event) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

// eventQueue is a min-heap of retries by (time, insertion sequence), so
// that retries at one instant keep the order they were scheduled in.
type eventQueue struct {
	h   minHeap[event, *event]
	seq uint64
}

func (q *eventQueue) len() int     { return q.h.len() }
func (q *eventQueue) peek() *event { return q.h.peek() }
func (q *eventQueue) pop() event   { return q.h.pop() }

func (q *eventQueue) push(ev event) {
	ev.seq = q.seq
	q.seq++
	q.h.push(ev)
}

// minHeap is a binary min-heap of T by T's less. A popped slot is cleared.
type minHeap[T any, P interface {
	*T
	less(*T) bool
}] struct {
	e []T
}

func (q *minHeap[T, P]) len() int { return len(q.e) }
func (q *minHeap[T, P]) peek() *T { return &q.e[0] }

func (q *minHeap[T, P]) push(x T) {
	q.e = append(q.e, x)
	i := len(q.e) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !P(&q.e[i]).less(&q.e[p]) {
			break
		}
		q.e[i], q.e[p] = q.e[p], q.e[i]
		i = p
	}
}

func (q *minHeap[T, P]) pop() T {
	top := q.e[0]
	n := len(q.e) - 1
	q.e[0] = q.e[n]
	var zero T
	q.e[n] = zero
	q.e = q.e[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && P(&q.e[r]).less(&q.e[l]) {
			c = r
		}
		if !P(&q.e[c]).less(&q.e[i]) {
			break
		}
		q.e[i], q.e[c] = q.e[c], q.e[i]
		i = c
	}
	return top
}
