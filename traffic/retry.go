package traffic

import "time"

// RetryPolicy is how a client reacts to a rejection (SPEC section 3). The
// engine applies it; the zero value is policy "none".
type RetryPolicy struct {
	// Policy is none, immediate, fixed, backoff or retry-after.
	Policy string
	// Delay is the fixed policy's wait and the backoff policy's base.
	Delay time.Duration
	// Factor is the backoff multiplier as an exact fraction Num/Den (a
	// scenario's 1.5 is 3/2), so that no float decides a retry time.
	Factor Fraction
	// Cap bounds a backoff wait (0: no cap).
	Cap time.Duration
	// Jitter is none, full or equal (backoff only).
	Jitter string
	// Resolution rounds a retry-after wait up to a multiple of it, as an
	// HTTP Retry-After header carries whole seconds; 0 means exact.
	Resolution time.Duration
	// MaxAttempts counts the first try; 0 means no limit.
	MaxAttempts int
}

// Fraction is an exact rational Num/Den with Den > 0.
type Fraction struct {
	Num, Den int64
}
