package sim

import (
	"time"

	"github.com/ratesim/ratesim/internal/timeq"
)

// event is a retry scheduled on the virtual clock: a client tries a
// rejected request again.
type event struct {
	at      time.Duration
	seq     uint64
	cost    int64
	key     uint32
	source  int32
	attempt int32
}

// eventQueue is a binary min-heap of retries by (time, insertion sequence),
// so that retries at one instant keep the order they were scheduled in.
type eventQueue struct {
	e   []event
	seq uint64
}

func (q *eventQueue) len() int     { return len(q.e) }
func (q *eventQueue) peek() *event { return &q.e[0] }
func evLess(a, b *event) bool      { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

func (q *eventQueue) push(ev event) {
	ev.seq = q.seq
	q.seq++
	q.e = append(q.e, ev)
	i := len(q.e) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !evLess(&q.e[i], &q.e[p]) {
			break
		}
		q.e[i], q.e[p] = q.e[p], q.e[i]
		i = p
	}
}

func (q *eventQueue) pop() event {
	top := q.e[0]
	n := len(q.e) - 1
	q.e[0] = q.e[n]
	q.e[n] = event{}
	q.e = q.e[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && evLess(&q.e[r], &q.e[l]) {
			c = r
		}
		if !evLess(&q.e[c], &q.e[i]) {
			break
		}
		q.e[i], q.e[c] = q.e[c], q.e[i]
		i = c
	}
	return top
}

// releaseQueue holds the delayed requests waiting for their release to the
// backend, by release instant: a timeq.Queue of their costs. Releases at one
// instant are not ordered among themselves: nothing a release counts (peaks,
// the admitted series, the latest release) depends on their order within an
// instant, and no limiter sees them. The queue takes no release before the
// last one it gave (it would raise it to that one), and none comes: a
// release is a decision's instant plus its delay, decisions come in time
// order, and a release is popped only once the clock has reached it.
type releaseQueue struct{ q timeq.Queue[int64] }

func (q *releaseQueue) len() int { return q.q.Len() }

// next is the instant of the earliest release (the queue is not empty).
func (q *releaseQueue) next() time.Duration { return q.q.Min() }

func (q *releaseQueue) push(at time.Duration, cost int64) { q.q.Push(at, cost) }

func (q *releaseQueue) pop() release {
	e := q.q.Pop()
	return release{e.At, e.V}
}
