package traffic

// fifo is a first-in first-out queue held in chunks of fifoChunk entries:
// it grows by a chunk and never copies what it holds (a slice grown by
// append copies everything at each growth, and a reorder window of
// minutes holds millions of lines), and it keeps up to fifoSpares emptied
// chunks for reuse, so what it holds follows what is queued (plus the
// spares and one partly used chunk). A replay pushes a second's lines and
// pops the lines that left the window in turns, a few chunks each way: with
// one spare, all but one of the chunks a turn freed went to the garbage
// collector and the next turn allocated them again.
type fifo[E any] struct {
	chunks []*[fifoChunk]E // oldest first; the front is chunks[0][head]
	spares []*[fifoChunk]E // emptied chunks, at most fifoSpares
	head   int             // the front entry's index in chunks[0]
	tail   int             // where the next entry goes in the last chunk
	n      int             // entries queued
}

// fifoChunk is how many entries a chunk holds (16 KiB of 32-byte lines);
// fifoSpares is the most emptied chunks kept for reuse (1 MiB of them: the
// lines of a few seconds of a busy log).
const (
	fifoChunk  = 512
	fifoSpares = 64
)

func (q *fifo[E]) len() int { return q.n }

// front and back are the oldest and the latest entry (the queue is not
// empty).
func (q *fifo[E]) front() *E { return &q.chunks[0][q.head] }
func (q *fifo[E]) back() *E  { return &q.chunks[len(q.chunks)-1][q.tail-1] }

func (q *fifo[E]) push(e E) {
	if len(q.chunks) == 0 || q.tail == fifoChunk {
		var c *[fifoChunk]E
		if n := len(q.spares); n > 0 {
			c = q.spares[n-1]
			q.spares[n-1] = nil
			q.spares = q.spares[:n-1]
		} else {
			c = new([fifoChunk]E)
		}
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
		if len(q.spares) < fifoSpares {
			q.spares = append(q.spares, c)
		}
		q.chunks[0] = nil
		q.chunks = q.chunks[1:]
		q.head = 0
	}
	return e
}

// held is how many chunks the queue holds, in use or spare.
func (q *fifo[E]) held() int {
	return len(q.chunks) + len(q.spares)
}
