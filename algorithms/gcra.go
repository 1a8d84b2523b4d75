package algorithms

import "errors"

// newGCRALimiter is a placeholder until the algorithm is written.
func newGCRALimiter(p Params) (Limiter, error) {
	return nil, errors.New("not implemented yet")
}
