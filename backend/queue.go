package backend

import "time"

// entry is an internal event: at an instant, of a kind, for a request's
// slot (or a fault's index), in the order ord = kind<<56 | seq, seq the
// order it was scheduled in. Events are processed by (at, ord): by time,
// then kind, then scheduling order.
type entry struct {
	at   time.Duration
	ord  uint64
	slot uint32
	gen  uint32 // the slot's generation when scheduled (timeouts)
}

// The kinds of internal events, in their order at one instant.
const (
	evFaultEnd = iota // a pause or a workers cut ends: idle workers start
	evComplete        // a service ends
	evTimeout         // a client gives up
	evAdmit           // a request reaches the backend
)

const kindShift = 56

func (e *entry) kind() int { return int(e.ord >> kindShift) }

func (a *entry) less(b *entry) bool { return a.at < b.at || (a.at == b.at && a.ord < b.ord) }

// eventHeap is a binary min-heap of entries by (at, ord). A popped slot is
// cleared.
type eventHeap struct{ e []entry }

func (h *eventHeap) len() int     { return len(h.e) }
func (h *eventHeap) peek() *entry { return &h.e[0] }

func (h *eventHeap) push(x entry) {
	h.e = append(h.e, x)
	i := len(h.e) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.e[i].less(&h.e[p]) {
			break
		}
		h.e[i], h.e[p] = h.e[p], h.e[i]
		i = p
	}
}

func (h *eventHeap) pop() entry {
	top := h.e[0]
	n := len(h.e) - 1
	h.e[0] = h.e[n]
	h.e[n] = entry{}
	h.e = h.e[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h.e[r].less(&h.e[l]) {
			c = r
		}
		if !h.e[c].less(&h.e[i]) {
			break
		}
		h.e[i], h.e[c] = h.e[c], h.e[i]
		i = c
	}
	return top
}

// ring is a double-ended queue on a circular buffer that doubles when
// full and never shrinks: it holds at most its peak length.
type ring[T any] struct {
	buf  []T
	head int // index of the front
	n    int
}

func (r *ring[T]) len() int { return r.n }

func (r *ring[T]) pushBack(x T) {
	if r.n == len(r.buf) {
		bigger := make([]T, max(8, 2*len(r.buf)))
		for i := range r.n {
			bigger[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = bigger, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = x
	r.n++
}

func (r *ring[T]) front() *T { return &r.buf[r.head] }

func (r *ring[T]) back() *T { return &r.buf[(r.head+r.n-1)%len(r.buf)] }

func (r *ring[T]) popFront() T {
	var zero T
	x := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return x
}

func (r *ring[T]) popBack() T {
	var zero T
	i := (r.head + r.n - 1) % len(r.buf)
	x := r.buf[i]
	r.buf[i] = zero
	r.n--
	return x
}
