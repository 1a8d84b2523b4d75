package traffic

// fifo is a first-in first-out queue held in chunks of fifoChunk entries:
// it grows by a chunk and never copies what it holds (a slice grown by
// append copies everything at each growth, and a reorder window of
// minutes holds millions of lines), and it keeps one emptied chunk for
// reuse, so what it holds follows what is queued (plus up to two chunks).
type fifo[E any] struct {
	chunks []*[fifoChunk]E // oldest first; the front is chunks[0][head]
	spare  *[fifoChunk]E   // an emptied chunk, or nil
	head   int             // the front entry's index in chunks[0]
	tail   int             // where the next entry goes in the last chunk
	n      int             // entries queued
}

// fifoChunk is how many entries a chunk holds (16 KiB of 32-byte lines).
const fifoChunk = 512

func (q *fifo[E]) len() int { return q.n }

// front and back are the oldest and the latest entry (the queue is not
// empty).
func (q *fifo[E]) front() *E { return &q.chunks[0][q.head] }
func (q *fifo[E]) back() *E  { return &q.chunks[len(q.chunks)-1][q.tail-1] }

func (q *fifo[E]) push(e E) {
	if len(q.chunks) == 0 || q.tail == fifoChunk {
		c := q.spare
		if c == nil {
			c = new([fifoChunk]E)
		}
		q.spare = nil
		q.chunks = append(q.chunks, c)
		q.tail = 0
	}
	q.chunks[len(q.chunks)-1][q.tail] = e
	q.tail++
	q.n++
}

// pop removes and returns the oldest entry (the queue is not empty).
func (q *fifo[E]) pop() E {
	c := q.chunks[0]
	e := c[q.head]
	var zero E
	c[q.head] = zero
	q.head++
	q.n--
	switch {
	case q.n == 0:
		// empty: start again at the front of the chunk in hand
		q.head, q.tail = 0, 0
		q.chunks = q.chunks[:1]
	case q.head == fifoChunk:
		// the front chunk is used up and another follows it
		q.spare = c
		q.chunks[0] = nil
		q.chunks = q.chunks[1:]
		q.head = 0
	}
	return e
}

// held is how many chunks the queue holds, in use or spare.
func (q *fifo[E]) held() int {
	n := len(q.chunks)
	if q.spare != nil {
		n++
	}
	return n
}
