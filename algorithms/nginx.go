package algorithms

import "errors"

// newNginxLimiter is a placeholder until the algorithm is written.
func newNginxLimiter(p Params) (Limiter, error) {
	return nil, errors.New("not implemented yet")
}
