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
	// a tuple never changes once made: each is looked up (under the key
	// space's lock) once per run
	for int(a.Attrs) >= len(r.tuples) {
		r.tuples = append(r.tuples, r.keys.Attrs().Values(uint32(len(r.tuples))))
	}
	values := r.tuples[a.Attrs]
	r.attrs = append(r.attrs[:0], algorithms.Key(a.Key))
	for _, v := range values {
		if v == traffic.NoValue {
			r.attrs = append(r.attrs, algorithms.NoKey)
		} else {
			r.attrs = append(r.attrs, algorithms.Key(v))
		}
	}
	return r.byAttrs.DecideAttrs(a.At, r.attrs, a.Cost)
}
