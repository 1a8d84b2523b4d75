package algorithms

import "errors"

// newSlidingLogLimiter is a placeholder until the algorithm is written.
func newSlidingLogLimiter(p Params) (Limiter, error) {
	return nil, errors.New("not implemented yet")
}
