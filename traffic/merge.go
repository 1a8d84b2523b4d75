package traffic

import "io"

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
			m.heap = append(m.heap, head{a, i})
		} else if err := s.Err(); err != nil && m.err == nil {
			m.err = err
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m
}

type head struct {
	a Arrival
	i int // stream index
}

type merged struct {
	streams []Stream
	heap    []head
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
	if len(m.heap) == 0 || m.err != nil {
		return false
	}
	top := &m.heap[0]
	*a = top.a
	if m.streams[top.i].Next(&top.a) {
		m.down(0)
		return true
	}
	if err := m.streams[top.i].Err(); err != nil {
		// a was produced before the error: deliver it, as the stream
		// alone would, and stop at the next call.
		m.err = err
		return true
	}
	n := len(m.heap) - 1
	m.heap[0] = m.heap[n]
	m.heap = m.heap[:n]
	m.down(0)
	return true
}

func (m *merged) less(x, y int) bool {
	a, b := &m.heap[x], &m.heap[y]
	return a.a.At < b.a.At || (a.a.At == b.a.At && a.i < b.i)
}

func (m *merged) down(i int) {
	n := len(m.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && m.less(r, l) {
			c = r
		}
		if !m.less(c, i) {
			return
		}
		m.heap[i], m.heap[c] = m.heap[c], m.heap[i]
		i = c
	}
}
