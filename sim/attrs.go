package sim

import (
	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
)

// decideByAttrs decides a on a limiter whose limits count by different
// attributes (run.byAttrs): attrs[0] is a's key, attrs[j] the value of its
// attribute j-1 in the key space (traffic.Keys.Attrs), algorithms.NoKey
// where a carries none.
func (r *run) decideByAttrs(a *traffic.Arrival) algorithms.Decision {
	return r.byAttrs.DecideAttrs(a.At, r.attrsOf(a), a.Cost)
}

// attrsOf returns a's key and attributes as algorithms.Attributed takes
// them: attrs[0] is a's key, attrs[j] the value of its attribute j-1 in
// the key space, algorithms.NoKey where a carries none. The slice is the
// run's buffer, valid until the next call.
func (r *run) attrsOf(a *traffic.Arrival) []algorithms.Key {
	values := r.tuple(a.Attrs)
	r.attrs = append(r.attrs[:0], algorithms.Key(a.Key))
	for _, v := range values {
		if v == traffic.NoValue {
			r.attrs = append(r.attrs, algorithms.NoKey)
		} else {
			r.attrs = append(r.attrs, algorithms.Key(v))
		}
	}
	return r.attrs
}

// tuple returns the values of attribute tuple id. A tuple never changes
// once made: each is looked up (under the key space's lock) once per run.
func (r *run) tuple(id uint32) []uint32 {
	for int(id) >= len(r.tuples) {
		r.tuples = append(r.tuples, r.keys.Attrs().Values(uint32(len(r.tuples))))
	}
	return r.tuples[id]
}

// Attrs returns the key and attributes of a, an attempt of the row, as
// algorithms.Attributed and algorithms.AttrTable take them (run.attrsOf):
// for a coordinator whose limits count by different attributes of a
// request. The slice is valid until the next call.
func (e *Row) Attrs(a *traffic.Arrival) []algorithms.Key { return e.acct.attrsOf(a) }
