package algorithms

import "errors"

// newSlidingWindowLimiter is a placeholder until the algorithm is written.
func newSlidingWindowLimiter(p Params) (Limiter, error) {
	return nil, errors.New("not implemented yet")
}
