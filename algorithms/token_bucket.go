package algorithms

import "errors"

// newTokenBucketLimiter is a placeholder until the algorithm is written.
func newTokenBucketLimiter(p Params) (Limiter, error) {
	return nil, errors.New("not implemented yet")
}
