package algorithms

import "errors"

// newLeakyBucketLimiter is a placeholder until the algorithm is written.
func newLeakyBucketLimiter(p Params) (Limiter, error) {
	return nil, errors.New("not implemented yet")
}
