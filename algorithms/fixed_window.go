package algorithms

import "errors"

// newFixedWindowLimiter is a placeholder until the algorithm is written.
func newFixedWindowLimiter(p Params) (Limiter, error) {
	return nil, errors.New("not implemented yet")
}
