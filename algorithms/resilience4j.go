package algorithms

import (
	"math"
	"time"
	"unsafe"
)

// Resilience4j is resilience4j's AtomicRateLimiter (resilience4j-ratelimiter,
// internal/AtomicRateLimiter.java), the library's default RateLimiter, one
// per key: limitForPeriod permissions per limitRefreshPeriod cycle, and a
// request that may borrow the permissions of cycles to come.
//
// Rule: the cycle of t is floor(t/P) (P = W, limitRefreshPeriod; the
// policy's rate L is limitForPeriod). A key keeps its active cycle and its
// permissions (a key never seen has L). At t, the permissions are
// refreshed: with n cycles passed, min(permissions + n*L, L). A request of
// cost c then waits
//
//	0                                  if permissions >= c
//	fullCycles*P + ((cycle+1)*P - t)   otherwise, fullCycles = divCeil(c - permissions - L, L)
//
// (Java's divCeil, (x + L - 1)/L, truncated), and it is admitted iff that
// wait is at most timeoutDuration (the row's max-delay; 0 by default, as
// acquirePermission with Duration.ZERO: resilience4j's own default is
// 5s). An admitted request takes c permissions, which may go below 0: the
// request borrows from the cycles to come, and the requests after it wait
// for the debt to be repaid. So a cost above L is admitted when its wait
// fits the timeout (reserveManyCyclesIfWegithgreaterThenLimitPerPeriod), and
// a rejected request changes nothing but the refresh.
//
// Cycles: resilience4j counts nanoTime from the limiter's creation, or
// from its startedTime when the configuration sets one; this row counts
// cycles from the virtual clock's 0 (the Unix epoch), as a startedTime
// there would, so that every key's cycles line up.
//
// Delay: the wait (the caller sleeps it in waitForPermissionIfNecessary).
// RetryAfter: the first instant at which the wait fits the timeout, minus
// t: within a cycle the wait falls one for one with time, and from cycle
// to cycle it is continuous while the permissions are below L, so the
// instant is (cycle+1+fullCycles)*P - timeout or the next cycle's start;
// once the permissions are capped at L a cost that does not fit then never
// will: Never.
//
// State per key: the active cycle and the permissions used (L minus the
// permissions), two int64, 16 bytes. A key is released at the start of the
// cycle that refreshes it to L, when it decides as a new one would.
type Resilience4j struct {
	keyed[resilience4jState]
	limit   int64
	period  time.Duration
	timeout time.Duration
}

// resilience4jState: the zero value is a key never seen (L permissions).
type resilience4jState struct {
	cycle int64
	used  int64 // L - permissions
}

var (
	_ Limiter     = (*Resilience4j)(nil)
	_ Reserver    = (*Resilience4j)(nil)
	_ stateHolder = (*Resilience4j)(nil)
	_ Inspector   = (*Resilience4j)(nil)
)

func newResilience4jLimiter(p Params) (Limiter, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("resilience4j", p, "max-delay"); err != nil {
		return nil, err
	}
	if err := bucketMaxDelayCheck(p.MaxDelay, maxExact, "waits stay within range"); err != nil {
		return nil, err
	}
	r := &Resilience4j{limit: p.Rate, period: p.Per, timeout: p.MaxDelay}
	r.keyed = newKeyed(int64(unsafe.Sizeof(resilience4jState{})), func(s *resilience4jState) time.Duration {
		if s.used <= 0 {
			return math.MinInt64 // full: fresh at once
		}
		n := (s.used + r.limit - 1) / r.limit // cycles to refill
		return time.Duration(s.cycle+n) * r.period
	})
	return r, nil
}

// cycleOf is floor(t/P).
func (r *Resilience4j) cycleOf(t time.Duration) int64 {
	c := int64(t / r.period)
	if t%r.period < 0 {
		c--
	}
	return c
}

// refreshed returns the permissions of s in cycle c (c >= s.cycle).
func (r *Resilience4j) refreshed(s *resilience4jState, c int64) int64 {
	perms := r.limit - s.used
	if c != s.cycle && perms < r.limit {
		if n := c - s.cycle; n >= (r.limit-perms+r.limit-1)/r.limit {
			perms = r.limit
		} else {
			perms += n * r.limit
		}
	}
	return perms
}

// fullCycles is nanosToWaitForPermission's divCeil(-(perms + L - c), L).
func (r *Resilience4j) fullCycles(perms, cost int64) int64 {
	return (cost - perms - r.limit + r.limit - 1) / r.limit
}

// waitAt is the wait of a request of cost at t, in cycle c with perms.
func (r *Resilience4j) waitAt(t time.Duration, c, perms, cost int64) (time.Duration, bool) {
	if perms >= cost {
		return 0, true
	}
	f := r.fullCycles(perms, cost)
	if f > int64(maxExact/r.period) || c+1 > int64(maxExact/r.period)-f {
		return 0, false // beyond the range of the virtual clock
	}
	return time.Duration(f)*r.period + time.Duration(c+1)*r.period - t, true
}

// Decide is acquirePermission(cost) with timeoutDuration max-delay.
func (r *Resilience4j) Decide(now time.Duration, key Key, cost int64) Decision {
	s := r.get(now, key)
	c := max(r.cycleOf(now), s.cycle)
	perms := r.refreshed(s, c)
	wait, ok := r.waitAt(now, c, perms, cost)
	if !ok || wait > r.timeout {
		return Decision{Verdict: Reject, RetryAfter: r.retryAfter(s, now, cost)}
	}
	s.cycle, s.used = c, r.limit-(perms-cost)
	r.touch(key, 0)
	if wait > 0 {
		return Decision{Verdict: Delay, Delay: wait}
	}
	return Decision{Verdict: Accept}
}

// retryAfter is the first t' >= now at which the wait of cost fits the
// timeout, minus now, or Never.
func (r *Resilience4j) retryAfter(s *resilience4jState, now time.Duration, cost int64) time.Duration {
	k := max(r.cycleOf(now), s.cycle)
	// the cycle from which the permissions are capped at L
	capAt := s.cycle + (s.used+r.limit-1)/r.limit
	for range 4 {
		start := max(now, time.Duration(k)*r.period)
		perms := r.refreshed(s, k)
		if perms >= cost {
			return start - now
		}
		f := r.fullCycles(perms, cost)
		if f > int64(maxExact/r.period) || k+1 > int64(maxExact/r.period)-f {
			return Never
		}
		thr := time.Duration(k+1+f)*r.period - r.timeout
		if at := max(start, thr); at < time.Duration(k+1)*r.period {
			return at - now
		}
		if perms == r.limit {
			return Never // capped: the wait is the same in every cycle from here
		}
		// below the cap the threshold stays where it is: go to its cycle,
		// or to the first capped one if that comes first
		k = max(k+1, min(r.cycleOf(thr), capAt))
	}
	return Never
}

// Inspect returns key's gauges at now: "permissions" (negative while
// borrowed) and "limit", L.
func (r *Resilience4j) Inspect(now time.Duration, key Key) []Gauge {
	r.expire(now)
	s, _ := r.stateOf(key)
	perms := r.refreshed(&s, max(r.cycleOf(now), s.cycle))
	return []Gauge{{"permissions", float64(perms)}, {"limit", float64(r.limit)}}
}
