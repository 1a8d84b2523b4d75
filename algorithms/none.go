package algorithms

import "time"

// None is no limiter at all: it admits every request at once. It is the
// baseline row of a scenario whose backend has workers (docs/backend.md):
// what the backend does with all the traffic, unprotected. It keeps no
// state.
type None struct{}

var _ Limiter = None{}

func newNoneLimiter(p Params) (Limiter, error) {
	if err := checkOptions("none", p); err != nil {
		return nil, err
	}
	return None{}, nil
}

// Decide admits the request.
func (None) Decide(time.Duration, Key, int64) Decision { return Decision{Verdict: Accept} }

// Memory reports no state.
func (None) Memory() Memory { return Memory{} }
