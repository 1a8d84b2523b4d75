package algorithms

import "errors"

// newXTimeRateLimiter is a placeholder until the algorithm is written.
func newXTimeRateLimiter(p Params) (Limiter, error) {
	return nil, errors.New("not implemented yet")
}
