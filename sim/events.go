package sim

import "time"

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
