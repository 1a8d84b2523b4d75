// Package queue holds the two queues the engine, the cluster, the backend
// model and the Redis replay share: a binary min-heap and a double-ended
// queue on a circular buffer. Both reuse their storage and clear a slot
// when they give it back, so that what it held can be collected.
package queue

// Heap is a binary min-heap of T by T's Less. Elements that compare equal
// come out in no particular order: a caller that needs one puts a sequence
// number in Less.
type Heap[T any, P interface {
	*T
	Less(*T) bool
}] struct {
	e []T
}

// Len returns the number of elements.
func (q *Heap[T, P]) Len() int { return len(q.e) }

// Cap returns the elements its storage holds room for.
func (q *Heap[T, P]) Cap() int { return cap(q.e) }

// Peek returns the least element (Len must be > 0).
func (q *Heap[T, P]) Peek() *T { return &q.e[0] }

// Push adds x. It moves the elements on x's way up one place each and
// puts x once, rather than swapping it along: the same comparisons and
// the same order as a swap at each step, with half the writes.
func (q *Heap[T, P]) Push(x T) {
	q.e = append(q.e, x)
	e := q.e
	i := len(e) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !P(&x).Less(&e[p]) {
			break
		}
		e[i] = e[p]
		i = p
	}
	e[i] = x
}

// Pop removes and returns the least element (Len must be > 0). The last
// element sifts down from the top as Push sifts up: the children on its
// way move up, and it is written once.
func (q *Heap[T, P]) Pop() T {
	e := q.e
	top := e[0]
	n := len(e) - 1
	x := e[n]
	var zero T
	e[n] = zero
	q.e = e[:n]
	if n == 0 {
		return top
	}
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && P(&e[r]).Less(&e[l]) {
			c = r
		}
		if !P(&e[c]).Less(&x) {
			break
		}
		e[i] = e[c]
		i = c
	}
	e[i] = x
	return top
}

// Deque is a double-ended queue on a circular buffer that doubles when
// full and never shrinks: it holds at most its peak length. Its length is
// a power of two, so that an index wraps with a mask.
type Deque[T any] struct {
	buf  []T
	head int // index of the front
	n    int
}

// Len returns the number of elements.
func (d *Deque[T]) Len() int { return d.n }

// Cap returns the elements its storage holds room for.
func (d *Deque[T]) Cap() int { return len(d.buf) }

// PushBack adds x at the back.
func (d *Deque[T]) PushBack(x T) {
	if d.n == len(d.buf) {
		bigger := make([]T, max(16, 2*len(d.buf)))
		for i := range d.n {
			bigger[i] = d.buf[(d.head+i)&(len(d.buf)-1)]
		}
		d.buf, d.head = bigger, 0
	}
	d.buf[(d.head+d.n)&(len(d.buf)-1)] = x
	d.n++
}

// Front returns the front element (Len must be > 0).
func (d *Deque[T]) Front() *T { return &d.buf[d.head] }

// At returns the i-th element from the front (0 <= i < Len).
func (d *Deque[T]) At(i int) *T { return &d.buf[(d.head+i)&(len(d.buf)-1)] }

// Back returns the back element (Len must be > 0).
func (d *Deque[T]) Back() *T { return &d.buf[(d.head+d.n-1)&(len(d.buf)-1)] }

// PopFront removes and returns the front element (Len must be > 0).
func (d *Deque[T]) PopFront() T {
	var zero T
	x := d.buf[d.head]
	d.buf[d.head] = zero
	d.head = (d.head + 1) & (len(d.buf) - 1)
	d.n--
	return x
}

// DropFront removes the front element without returning it (Len must be
// > 0): for a caller that has read it through Front.
func (d *Deque[T]) DropFront() {
	var zero T
	d.buf[d.head] = zero
	d.head = (d.head + 1) & (len(d.buf) - 1)
	d.n--
}

// PopBack removes and returns the back element (Len must be > 0).
func (d *Deque[T]) PopBack() T {
	var zero T
	i := (d.head + d.n - 1) & (len(d.buf) - 1)
	x := d.buf[i]
	d.buf[i] = zero
	d.n--
	return x
}
