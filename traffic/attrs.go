package traffic

import (
	"encoding/binary"
	"io"
	"math"
	"slices"
	"sync"
)

// NoValue is the value id of an attribute that a request does not carry.
const NoValue = math.MaxUint32

// attrSpace holds the attributes that requests carry beside their key
// (Plan.Attrs): the values of each attribute, interned to dense ids from 0
// per attribute, and the distinct combinations of values (tuples) that
// requests carry, interned too. Arrival.Attrs is a tuple's id; tuple 0 is
// the empty one. It grows with the distinct tuples, never with the requests.
type attrSpace struct {
	mu     sync.RWMutex
	names  []string
	values []map[string]uint32 // by attribute
	texts  [][]string          // by attribute, by value id
	tuples [][]uint32          // by tuple id: a value id per attribute, or NoValue
	byText map[string]uint32   // a tuple's values joined, to its id
	// scratch and buf are tupleOf's, reused from line to line
	scratch []uint32
	buf     []byte
}

func newAttrSpace(names []string) *attrSpace {
	s := &attrSpace{names: names, values: make([]map[string]uint32, len(names)),
		texts: make([][]string, len(names)), byText: map[string]uint32{}}
	empty := make([]uint32, len(names))
	for i := range empty {
		empty[i] = NoValue
		s.values[i] = map[string]uint32{}
	}
	s.tuples = [][]uint32{empty}
	s.byText[tupleText(empty)] = 0
	return s
}

// tuple returns the id of the tuple that gives each attribute of attrs its
// value there (and the others none), interning what is new.
func (s *attrSpace) tuple(attrs map[string]string) uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := make([]uint32, len(s.names))
	for i, n := range s.names {
		t[i] = NoValue
		v, ok := attrs[n]
		if !ok {
			continue
		}
		id, ok := s.values[i][v]
		if !ok {
			id = uint32(len(s.values[i]))
			s.values[i][v] = id
			s.texts[i] = append(s.texts[i], v)
		}
		t[i] = id
	}
	text := tupleText(t)
	if id, ok := s.byText[text]; ok {
		return id
	}
	id := uint32(len(s.tuples))
	s.tuples = append(s.tuples, t)
	s.byText[text] = id
	return id
}

// name interns the values of named (Plan.Named) that are new, attribute
// by attribute in the order of s.names, each attribute's in its order.
func (s *attrSpace) name(named map[string][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, n := range s.names {
		for _, v := range named[n] {
			if _, ok := s.values[i][v]; !ok {
				s.values[i][v] = uint32(len(s.values[i]))
				s.texts[i] = append(s.texts[i], v)
			}
		}
	}
}

// tupleOf returns the id of the tuple that gives attribute at[i] the value
// vals[i] (none for an empty one, or at[i] < 0) and the others none,
// interning what is new: tuple for values read from a line, without a
// map per line.
func (s *attrSpace) tupleOf(at []int, vals [][]byte) uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.scratch[:0]
	for range s.names {
		t = append(t, NoValue)
	}
	for i, a := range at {
		if a < 0 || i >= len(vals) || len(vals[i]) == 0 {
			continue
		}
		id, ok := s.values[a][string(vals[i])]
		if !ok {
			v := string(vals[i])
			id = uint32(len(s.values[a]))
			s.values[a][v] = id
			s.texts[a] = append(s.texts[a], v)
		}
		t[a] = id
	}
	s.scratch = t
	s.buf = s.buf[:0]
	for _, v := range t {
		s.buf = binary.LittleEndian.AppendUint32(s.buf, v)
	}
	if id, ok := s.byText[string(s.buf)]; ok {
		return id
	}
	id := uint32(len(s.tuples))
	s.tuples = append(s.tuples, slices.Clone(t))
	s.byText[string(s.buf)] = id
	return id
}

// tupleText is t's value ids as bytes, for looking a tuple up.
func tupleText(t []uint32) string {
	b := make([]byte, 0, 4*len(t))
	for _, v := range t {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return string(b)
}

// Attrs is the view of a key space's attributes that the engine reads:
// which attributes requests carry, and the values of one request's.
type Attrs struct{ s *attrSpace }

// Attrs returns the key space's attributes: none before Plan.Open.
func (k *Keys) Attrs() Attrs { return Attrs{k.attrs} }

// Names lists the attributes, as Plan.Attributes does.
func (a Attrs) Names() []string {
	if a.s == nil {
		return nil
	}
	return a.s.names
}

// Values returns the value ids of tuple id's attributes, one per name
// (NoValue for an attribute the tuple lacks); the slice is shared, not to
// be changed, and a tuple never changes once made, so a reader may keep it.
func (a Attrs) Values(id uint32) []uint32 {
	if a.s == nil {
		return nil
	}
	a.s.mu.RLock()
	defer a.s.mu.RUnlock()
	return a.s.tuples[id]
}

// Value returns the text of attribute i's value id v.
func (a Attrs) Value(i int, v uint32) string {
	a.s.mu.RLock()
	defer a.s.mu.RUnlock()
	return a.s.texts[i][v]
}

// attributed gives every arrival of a source the source's attributes.
type attributed struct {
	Stream
	id uint32
}

func (s *attributed) Next(a *Arrival) bool {
	if !s.Stream.Next(a) {
		return false
	}
	a.Attrs = s.id
	return true
}

// Close closes the source's stream if it has a Close method.
func (s *attributed) Close() error {
	if c, ok := s.Stream.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
