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
// max-delay and Traefik: Traefik's ratelimiter middleware
// (pkg/middlewares/ratelimiter/rate_limiter.go, New and ServeHTTP; v3's
// in_memory_limiter.go, Allow) calls Reserve() on the source's Limiter and,
// when the reservation's Delay() exceeds its maxDelay, Cancel()s it and
// answers 429; otherwise it sleeps the delay. This row with max-delay D
// gives the same verdicts and delays: a request is rejected iff its wait
// exceeds D. Traefik's Cancel at the reservation's own instant gives the
// tokens back with one float addition, (tokens - c) + c, and moves the
// Limiter's last update to t, where this row never reserves a request it
// rejects (as the library's own WaitN with a deadline, which never
// reserves beyond it): the two differ only by float rounding. Traefik does
// not take max-delay from its configuration: it computes it from the rate,
// TraefikMaxDelay, which a Traefik row writes as max-delay.
//
// idle-reset D (a whole number of seconds): Traefik keeps one Limiter per
// source in a TTL map (github.com/mailgun/ttlmap, maxSources 65536) and
// sets the source's entry with ttl seconds on every request, admitted or
// not, before it reserves (ServeHTTP: "We Set even in the case where the
// source already exists"), so every decision, a rejection included,
// refreshes it. ttlmap keeps expiry times in whole Unix seconds: Set at t
// expires at floor(t/1s) + ttl seconds, and Get finds the entry expired
// when that is <= now's whole seconds (expireItem), after which the source
// gets a new, full Limiter. So with idle-reset D, a key whose last
// decision was at s has its Limiter forgotten at the first instant whose
// Unix second is at least floor(s/1s) + D/1s: after an idle time of
// between D-1s and D, depending on where s falls in its second. The
// eviction of the least recently set sources beyond 65536 is not
// modelled. Traefik's ttl is TraefikTTL of the rate.
//
// State per key: one *rate.Limiter; the figure reported is
// unsafe.Sizeof(rate.Limiter{}), the library's own state (its mutex, limit,
// burst, tokens and two time.Time: 80 bytes on 64-bit platforms); the
// pointer to it, the instant of the key's last admission that this row
// keeps to compute the release time, a shadow of its tokens that saves
// library calls and the release time once computed (32 bytes in all) are
// not counted. A key's state is released at the first instant at which
// TokensAt(t) >= B (a float test, for this row only), when a fresh Limiter
// would decide the same, or, with idle-reset, when its Limiter is
// forgotten if that is earlier (the instant of the last decision, which
// idle-reset keeps, is not counted either).
//
// A released key's Limiter is kept for the next key that needs one (see
// newLimiter), so that a run allocates one Limiter per key of KeysPeak and
// no more (a key gets a Limiter and becomes live in the same decision).
type XTimeRate struct {
	keyed[xTimeRateState]
	limit    rate.Limit
	burst    int64
	maxDelay time.Duration
	// idle is idle-reset in whole seconds, 0 without.
	idle int64
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
	// expires is, with idle-reset, the instant from which the Limiter is
	// forgotten: (floor(s/1s) + idle) seconds for the last decision s.
	expires time.Duration
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
	if err := checkOptions("x-time-rate", p, "max-delay", "idle-reset"); err != nil {
		return nil, err
	}
	if p.IdleReset < 0 || p.IdleReset%time.Second != 0 {
		return nil, &ParamError{Field: "idle-reset", Found: p.IdleReset.String(),
			Want: "want a whole number of seconds >= 1s (Traefik's TTL map counts whole seconds)"}
	}
	if err := bucketMaxDelayCheck(p.MaxDelay, maxExact, "release times stay within range"); err != nil {
		return nil, err
	}
	x := &XTimeRate{
		limit:    rate.Limit(float64(p.Rate) / p.Per.Seconds()),
		burst:    p.Burst,
		maxDelay: p.MaxDelay,
		idle:     int64(p.IdleReset / time.Second),
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
	if x.idle > 0 && s.lim != nil {
		// idle-reset: a Limiter idle since its expiry is forgotten (expire
		// has released it already when due; this keeps the rule here).
		if now >= s.expires {
			x.release(s)
			*s = xTimeRateState{}
		}
	}
	if cost > x.burst {
		// With idle-reset the decision refreshes the key's expiry; a key
		// with no Limiter stays fresh (Traefik's new Limiter is full).
		if x.idle > 0 && s.lim != nil {
			x.seen(s, now, key)
		}
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	d := x.decide(s, now, key, cost)
	if x.idle > 0 && d.Verdict == Reject {
		x.seen(s, now, key)
	}
	return d
}

// seen records a decision that admitted nothing at now on a key that has
// a Limiter: its idle-reset expiry moves (never earlier, as decisions come
// in time order).
func (x *XTimeRate) seen(s *xTimeRateState, now time.Duration, key Key) {
	s.expires = x.expiry(now)
	x.touch(key, 0)
}

// expiry is the instant from which a Limiter last used at now is
// forgotten: (floor(now/1s) + idle) whole seconds, saturating.
func (x *XTimeRate) expiry(now time.Duration) time.Duration {
	k, _ := windowAt(now, time.Second)
	if k > math.MaxInt64/int64(time.Second)-x.idle {
		return math.MaxInt64
	}
	return time.Duration(k+x.idle) * time.Second
}

// decide is Decide on a key's state, for a cost <= B.
func (x *XTimeRate) decide(s *xTimeRateState, now time.Duration, key Key, cost int64) Decision {
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
	if x.idle > 0 {
		s.expires = x.expiry(now)
	}
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
	return min(float64(x.burst), s.tokens+float64((now-s.last).Seconds()*float64(x.limit))) // the product rounded, as the library's delta is
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
	if x.idle > 0 {
		return min(s.fresh, s.expires)
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
		if lim := x.state[key].lim; lim != nil && (x.idle == 0 || now < x.state[key].expires) {
			tokens = lim.TokensAt(time.Unix(0, int64(now)))
		}
	}
	return []Gauge{{"tokens", tokens}, {"burst", float64(x.burst)}}
}

// TraefikMaxDelay is the maxDelay Traefik's ratelimiter middleware
// computes for a rate of average requests per period
// (pkg/middlewares/ratelimiter/rate_limiter.go, New): with the rate r =
// average*1s/period in requests per second (a float64), 1s/(2*int(r)) for
// r >= 1 (the rate truncated to whole requests per second: 2.5/s gives
// 250ms), else 500ms; 0 for average 0 (no limit). It is float64 as
// Traefik's; no decision computes it.
func TraefikMaxDelay(average int64, period time.Duration) time.Duration {
	if average <= 0 {
		return 0
	}
	if period <= 0 {
		period = time.Second // Traefik's default
	}
	rtl := float64(average*int64(time.Second)) / float64(period)
	if rtl < 1 {
		return 500 * time.Millisecond
	}
	return time.Second / (time.Duration(rtl) * 2)
}

// TraefikTTL is the ttl of Traefik's bucket map for the same rate (New):
// 2s for r >= 1, 1s + int(1/r) seconds for 0 < r < 1, and 1s for no
// limit: the idle-reset of a Traefik row.
func TraefikTTL(average int64, period time.Duration) time.Duration {
	if period <= 0 {
		period = time.Second
	}
	rtl := 0.0
	if average > 0 {
		rtl = float64(average*int64(time.Second)) / float64(period)
	}
	ttl := 1
	if rtl >= 1 {
		ttl++
	} else if rtl > 0 {
		ttl += int(1 / rtl)
	}
	return time.Duration(ttl) * time.Second
}
