package algorithms

import "errors"

// newConcurrencyLimiter is a placeholder until the algorithm is written.
func newConcurrencyLimiter(p Params) (Limiter, error) {
	return nil, errors.New("not implemented yet")
}
