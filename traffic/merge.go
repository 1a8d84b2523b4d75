package traffic

import (
	"container/heap"
	"io"
)

// Merge interleaves streams into one in time order. The merged stream is
// an io.Closer: closing it closes the streams that are. Arrivals at the same
// instant come in the order of the streams given (sources in file order),
// and within one stream in the order it produced them. When a stream fails,
// the merge ends after the arrivals already drawn from it, and Err returns
// the first error.
func Merge(streams ...Stream) Stream {
	if len(streams) == 1 {
		return streams[0]
	}
	m := &merged{streams: streams}
	for i, s := range streams {
		var a Arrival
		if s.Next(&a) {
			m.heads = append(m.heads, head{a, i})
		} else if err := s.Err(); err != nil && m.err == nil {
			m.err = err
		}
	}
	heap.Init(&m.heads)
	return m
}

type head struct {
	a Arrival
	i int // stream index
}

// heads is a heap (container/heap) of the streams' next arrivals, by time
// then stream: no two are equal, so the order is the same whatever the
// heap does.
type heads []head

func (h heads) Len() int { return len(h) }
func (h heads) Less(x, y int) bool {
	a, b := &h[x], &h[y]
	return a.a.At < b.a.At || (a.a.At == b.a.At && a.i < b.i)
}
func (h heads) Swap(x, y int) { h[x], h[y] = h[y], h[x] }
func (h *heads) Push(x any)   { *h = append(*h, x.(head)) }
func (h *heads) Pop() any {
	n := len(*h) - 1
	x := (*h)[n]
	*h = (*h)[:n]
	return x
}

type merged struct {
	streams []Stream
	heads   heads
	err     error
}

func (m *merged) Err() error { return m.err }

// Close closes every stream that has a Close method (a replay's file),
// and returns the first error.
func (m *merged) Close() error {
	var first error
	for _, s := range m.streams {
		if c, ok := s.(io.Closer); ok {
			if err := c.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

func (m *merged) Next(a *Arrival) bool {
	if len(m.heads) == 0 || m.err != nil {
		return false
	}
	top := &m.heads[0]
	*a = top.a
	if m.streams[top.i].Next(&top.a) {
		heap.Fix(&m.heads, 0)
		return true
	}
	if err := m.streams[top.i].Err(); err != nil {
		// a was produced before the error: deliver it, as the stream
		// alone would, and stop at the next call.
		m.err = err
		return true
	}
	heap.Pop(&m.heads)
	return true
}
