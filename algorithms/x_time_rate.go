package algorithms

import (
	"math"
	"time"
	"unsafe"

	"golang.org/x/time/rate"
)

// XTimeRate runs the real golang.org/x/time/rate Limiter (rate.go), one per
// key, as the production reference beside the exact token bucket. It is the
// one row that decides in floating point: the library keeps its tokens in a
// float64 and converts between tokens and durations in float64, so its
// verdicts at an exact refill boundary, and its delays, may differ from
// token-bucket's by the library's rounding.
//
// Rule: a key's Limiter is rate.NewLimiter(rate.Limit(L / W.Seconds()), B),
// a bucket of B tokens that starts full and refills at L per W, and a request
// of cost c at virtual instant t is decided by AllowN(time.Unix(0, t), c).
// The virtual instant is the only clock: the wall clock is never read.
//
// RetryAfter: ReserveN(t, c).DelayFrom(t), the library's wait until c tokens
// are there, truncated to a nanosecond as the library truncates; Never when
// c > B. It is computed without touching the Limiter (a reserve followed by
// CancelAt would restore the tokens only up to float rounding and move the
// Limiter's last update): TokensAt(t) is the library's own refill, and the
// wait is converted from the missing tokens with the library's arithmetic
// (float64(c) - tokens) / limit * 1e9, truncated. Tests check it against
// ReserveN on a Limiter with the same history, to the nanosecond.
//
// max-delay D: when that wait is at most D the request is taken with
// ReserveN(t, c) (or AllowN(t, c) when the wait is 0, which updates the
// Limiter in the same way) and admitted with Delay = DelayFrom(t) (0 means
// accept); otherwise it is rejected without touching the Limiter, and its
// RetryAfter is the wait minus D, the first instant at which the library
// would reserve it within D. D is at most the exact range.
//
// State per key: one *rate.Limiter; the figure reported is
// unsafe.Sizeof(rate.Limiter{}), the library's own state (its mutex, limit,
// burst, tokens and two time.Time: 80 bytes on 64-bit platforms); the
// pointer to it, the instant of the key's last admission that this row
// keeps to compute the release time, a shadow of its tokens that saves
// library calls and the release time once computed (32 bytes in all) are
// not counted. A key's state is released at the first instant at which
// TokensAt(t) >= B (a float test, for this row only), when a fresh Limiter
// would decide the same.
//
// A released key's Limiter is kept for the next key that needs one (see
// newLimiter), so that a run allocates one Limiter per key of KeysPeak and
// no more (a key gets a Limiter and becomes live in the same decision).
type XTimeRate struct {
	keyed[xTimeRateState]
	limit    rate.Limit
	burst    int64
	maxDelay time.Duration
	// free holds the Limiters of released keys, the last released taken
	// first: at most KeysPeak minus the keys alive.
	free []*rate.Limiter
}

// xTimeRateState is one key's Limiter (nil for a fresh key), the instant of
// its last admission, which is the Limiter's last update, and a shadow of
// the tokens the Limiter held after it. The shadow is the library's own
// count when Decide read it (TokensAt) or the library's formula applied to
// the previous shadow; it only guesses which call to make first and never
// decides anything.
//
// fresh is the Limiter's release time (see freshAt) once computed since the
// last admission, xTimeRateUnknown until then. Only an admission changes the
// Limiter (the library updates it only when it grants tokens; TokensAt reads
// it), so the release time computed from the library stays exact until the
// next admission. It is computed when a key becomes live, right after the
// Limiter's own call, and a key released without a second admission is
// released without reading its Limiter again.
type xTimeRateState struct {
	lim    *rate.Limiter
	last   time.Duration
	tokens float64
	fresh  time.Duration
}

// xTimeRateUnknown is xTimeRateState.fresh before it is computed.
const xTimeRateUnknown = time.Duration(math.MinInt64)

var (
	_ Limiter     = (*XTimeRate)(nil)
	_ Reserver    = (*XTimeRate)(nil)
	_ stateHolder = (*XTimeRate)(nil)
	_ Inspector   = (*XTimeRate)(nil)
)

func newXTimeRateLimiter(p Params) (Limiter, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("x-time-rate", p, "max-delay"); err != nil {
		return nil, err
	}
	if err := bucketMaxDelayCheck(p.MaxDelay, maxExact, "release times stay within range"); err != nil {
		return nil, err
	}
	x := &XTimeRate{
		limit:    rate.Limit(float64(p.Rate) / p.Per.Seconds()),
		burst:    p.Burst,
		maxDelay: p.MaxDelay,
	}
	x.keyed = newKeyed(int64(unsafe.Sizeof(rate.Limiter{})), x.freshAt)
	x.keyed.release = x.release
	x.keyed.held = func(s *xTimeRateState) uintptr { return uintptr(unsafe.Pointer(s.lim)) }
	return x, nil
}

// Decide asks key's Limiter for cost tokens at now.
//
// Each library call takes the Limiter's mutex, so Decide makes one call
// where it can, guided by a shadow of the library's token count (see
// xTimeRateState). When the shadow says the tokens are there (always on a
// fresh Limiter), it calls AllowN(t, c) first: the library admits exactly
// when the wait is 0, and when it refuses it changes nothing in the Limiter
// (it updates its state only on success). Otherwise, or when AllowN
// refused, the wait is computed from TokensAt as above, and the Limiter is
// asked to take the tokens only when the request is admitted. The order of
// the calls changes no verdict, delay or retry_after, which are always the
// library's: a wrong guess only costs a second call.
func (x *XTimeRate) Decide(now time.Duration, key Key, cost int64) Decision {
	s := x.get(now, key)
	if cost > x.burst {
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	at := time.Unix(0, int64(now))
	if s.lim == nil {
		s.lim = x.newLimiter()
		if s.lim.AllowN(at, int(cost)) { // a fresh Limiter holds B >= cost tokens
			return x.admitted(s, now, key, float64(x.burst)-float64(cost), 0)
		}
	} else if tokens := x.shadowAt(s, now); tokens >= float64(cost) && s.lim.AllowN(at, int(cost)) {
		return x.admitted(s, now, key, tokens-float64(cost), 0)
	}
	tokens := s.lim.TokensAt(at)
	wait := x.waitFrom(tokens, cost)
	if wait > x.maxDelay {
		return Decision{Verdict: Reject, RetryAfter: max(wait-x.maxDelay, 1)}
	}
	var delay time.Duration
	if x.maxDelay == 0 {
		if !s.lim.AllowN(at, int(cost)) {
			// Unreachable: AllowN admits exactly when wait is 0.
			return Decision{Verdict: Reject, RetryAfter: max(wait, 1)}
		}
	} else {
		delay = s.lim.ReserveN(at, int(cost)).DelayFrom(at)
	}
	return x.admitted(s, now, key, tokens-float64(cost), delay)
}

// newLimiter returns rate.NewLimiter(limit, B), or a released key's Limiter
// set to the same value.
//
// A pooled Limiter is overwritten whole with the value of a new one: same
// limit and burst, B tokens, zero last and lastEvent, an unlocked mutex
// (no call is in progress: Decide's calls return before it does). The
// Limiter is then the value NewLimiter returns, at another address, which
// the library never reads; so every later call answers and updates it
// exactly as a new Limiter's. (Even without the reset it would decide the
// same: it was released at an instant where TokensAt gave B, refill from
// last only grows with the instant and is clamped to B, and the first call,
// AllowN of cost <= B, overwrites tokens, last and lastEvent. The reset
// makes that argument unnecessary.)
func (x *XTimeRate) newLimiter() *rate.Limiter {
	n := len(x.free)
	if n == 0 {
		return rate.NewLimiter(x.limit, int(x.burst))
	}
	lim := x.free[n-1]
	x.free[n-1] = nil
	x.free = x.free[:n-1]
	*lim = *rate.NewLimiter(x.limit, int(x.burst)) // inlined: no allocation
	return lim
}

// release keeps the Limiter of a key whose state is released (keyed's
// release hook) for newLimiter.
func (x *XTimeRate) release(s *xTimeRateState) {
	if s.lim != nil {
		x.free = append(x.free, s.lim)
	}
}

// admitted records an admission at now that left tokens in the Limiter,
// released after delay.
func (x *XTimeRate) admitted(s *xTimeRateState, now time.Duration, key Key, tokens float64, delay time.Duration) Decision {
	s.last, s.tokens, s.fresh = now, tokens, xTimeRateUnknown
	x.touch(key, 0)
	if delay > 0 {
		return Decision{Verdict: Delay, Delay: delay}
	}
	return Decision{Verdict: Accept}
}

// shadowAt returns the shadow's token count at now, refilled from the last
// admission as the library's advance does: min(B, tokens + elapsed.Seconds()
// * limit).
func (x *XTimeRate) shadowAt(s *xTimeRateState, now time.Duration) float64 {
	return min(float64(x.burst), s.tokens+(now-s.last).Seconds()*float64(x.limit))
}

// wait returns the library's ReserveN(at, cost).DelayFrom(at) without
// reserving: the time for the missing tokens to arrive, converted as the
// library converts tokens to a duration, 0 when the tokens are there.
func (x *XTimeRate) wait(lim *rate.Limiter, at time.Time, cost int64) time.Duration {
	return x.waitFrom(lim.TokensAt(at), cost)
}

// waitFrom is wait for a Limiter that holds tokens.
func (x *XTimeRate) waitFrom(tokens float64, cost int64) time.Duration {
	missing := float64(cost) - tokens
	if !(missing > 0) {
		return 0
	}
	d := missing / float64(x.limit) * float64(time.Second)
	if d > float64(math.MaxInt64) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}

// freshAt is the first instant at which the key's Limiter holds B tokens:
// an estimate from the tokens at its last update, moved later while the
// library's float refill still falls short. It is computed once per
// admission and kept in s.fresh.
func (x *XTimeRate) freshAt(s *xTimeRateState) time.Duration {
	if s.lim == nil {
		return 0
	}
	if s.fresh == xTimeRateUnknown {
		s.fresh = x.releaseAt(s)
	}
	return s.fresh
}

// releaseAt computes freshAt with the library.
func (x *XTimeRate) releaseAt(s *xTimeRateState) time.Duration {
	full := float64(x.burst)
	at := s.last + x.wait(s.lim, time.Unix(0, int64(s.last)), x.burst)
	for step := time.Duration(1); s.lim.TokensAt(time.Unix(0, int64(at))) < full; step *= 2 {
		at += step
	}
	return at
}

// Inspect returns key's gauges at now: "tokens", the library's own
// TokensAt(now) (B for a fresh key), which reads the Limiter without
// updating it, and "burst", B. It releases what is fresh by now and changes
// no live key's state.
func (x *XTimeRate) Inspect(now time.Duration, key Key) []Gauge {
	x.expire(now)
	tokens := float64(x.burst)
	if int(key) < len(x.state) {
		if lim := x.state[key].lim; lim != nil {
			tokens = lim.TokensAt(time.Unix(0, int64(now)))
		}
	}
	return []Gauge{{"tokens", tokens}, {"burst", float64(x.burst)}}
}
