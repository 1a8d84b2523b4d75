package algorithms

import (
	"fmt"
	"math"
	"time"
	"unsafe"
)

// Uber is go.uber.org/ratelimit's Limiter (limiter_atomic_int64.go, the
// library's default since v0.3), one per key: a leaky bucket that a
// caller's Take blocks on, which starts empty and keeps a slack of unused
// time.
//
// Rule: perRequest = W / L in whole nanoseconds (Go's integer division,
// as the library: 7/m is 8571428571ns, a little faster than the rate),
// maxSlack = slack * perRequest (slack 10 unless set; 0 is
// WithoutSlack). A key keeps the instant of its next permission, state
// (0 for a key never seen). Take at t sets it to
//
//	t                       if state is 0, or maxSlack is 0 and t - state > perRequest
//	t - maxSlack            if maxSlack > 0 and t - state > maxSlack + perRequest
//	state + perRequest      otherwise
//
// and the caller sleeps until it: Delay = new state - t when positive,
// else Accept. So the first request of a key passes at once and the next
// waits perRequest (no stored permits: the bucket starts empty), while a
// key idle for long lets slack + 1 requests through at once. A request of
// cost c is c Takes at t, one after the other (the library's Take takes
// one permit; a caller's loop after the first sleep would start from the
// same state). Nothing is ever rejected: Take always returns. A cost whose
// wait would leave the virtual clock's range is rejected with Never.
//
// To the letter: a state of 0 means a key never seen, so a Take at the
// instant 0 of the virtual clock (the Unix epoch) leaves the next Take a
// first call too, as it does the library's (its tests set a clock away
// from 0 for that reason).
//
// State per key: the next permission's instant, one int64, 8 bytes.
// Without slack a key is released perRequest + 1ns after it, when the
// next Take is a first call's; with slack never (an idle key lets slack +
// 1 requests through at once, a new one one).
type Uber struct {
	keyed[uberState]
	per, maxSlack time.Duration
}

type uberState struct {
	next time.Duration
}

var (
	_ Limiter     = (*Uber)(nil)
	_ Reserver    = (*Uber)(nil)
	_ stateHolder = (*Uber)(nil)
	_ Inspector   = (*Uber)(nil)
)

// UberSlack is go.uber.org/ratelimit's default slack.
const UberSlack = 10

func newUberLimiter(p Params) (Limiter, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("uber-ratelimit", p, "slack"); err != nil {
		return nil, err
	}
	per := p.Per / time.Duration(p.Rate)
	if per < 1 {
		return nil, &ParamError{Field: "rate", Found: fmt.Sprintf("%d per %v", p.Rate, p.Per),
			Want: "want per/rate of at least 1ns (the library's perRequest would be 0: no limit)"}
	}
	slack := int64(UberSlack)
	if p.SlackSet {
		slack = p.Slack
	}
	if slack < 0 || slack > int64(maxExact/per) {
		return nil, &ParamError{Field: "slack", Found: fmt.Sprint(slack),
			Want: fmt.Sprintf("want 0 to %d (slack * per/rate within 2^61 ns)", int64(maxExact/per))}
	}
	u := &Uber{per: per, maxSlack: time.Duration(slack) * per}
	fresh := func(*uberState) time.Duration { return math.MaxInt64 }
	if u.maxSlack == 0 {
		fresh = func(s *uberState) time.Duration { return s.next + u.per + 1 }
	}
	u.keyed = newKeyed(int64(unsafe.Sizeof(uberState{})), fresh)
	return u, nil
}

// take is one Take at now on state: the new state.
func (u *Uber) take(state, now time.Duration) time.Duration {
	switch {
	case state == 0 || (u.maxSlack == 0 && now-state > u.per):
		return now
	case u.maxSlack > 0 && now-state > u.maxSlack+u.per:
		return now - u.maxSlack
	}
	return state + u.per
}

// Decide takes cost permits for key at now.
func (u *Uber) Decide(now time.Duration, key Key, cost int64) Decision {
	s := u.get(now, key)
	n := u.take(s.next, now)
	for k := cost - 1; k > 0; k-- {
		if n != 0 {
			// every later Take adds perRequest
			if k > int64(maxExact/u.per) || n > maxExact-time.Duration(k)*u.per {
				return Decision{Verdict: Reject, RetryAfter: Never}
			}
			n += time.Duration(k) * u.per
			break
		}
		n = now // state 0: a first call again
		if n == 0 {
			break // and so is every later one
		}
	}
	s.next = n
	u.touch(key, 0)
	if n > now {
		return Decision{Verdict: Delay, Delay: n - now}
	}
	return Decision{Verdict: Accept}
}

// Inspect returns key's gauges at now: "wait", the seconds a Take at now
// would sleep, and "slack", the seconds of unused time a Take would spend
// (up to maxSlack).
func (u *Uber) Inspect(now time.Duration, key Key) []Gauge {
	u.expire(now)
	s, _ := u.stateOf(key)
	n := u.take(s.next, now)
	return []Gauge{{"wait", max(n-now, 0).Seconds()}, {"slack", max(now-n, 0).Seconds()}}
}
