package adaptive

import (
	"time"
)

// ThrottleConfig holds the parameters of sre-throttle, named as a scenario
// spells them. DefaultThrottleConfig gives the book's values:
//
//	k       2   the multiplier K: a client lets through up to about K times
//	            what the backend accepts (the book: "typically 2"; > 0)
//	window  2m  the history each client keeps ("the last two minutes"), a
//	            whole number of seconds
type ThrottleConfig struct {
	K      float64
	Window time.Duration
}

// DefaultThrottleConfig returns the SRE book's K = 2 over two minutes.
func DefaultThrottleConfig() ThrottleConfig {
	return ThrottleConfig{K: 2, Window: 2 * time.Minute}
}

// Key identifies a client of sre-throttle: the dense ids, from 0, that the
// engine gives its keys (as algorithms.Key).
type Key uint32

// Throttle is the client-side adaptive throttling of the Google SRE book
// (Site Reliability Engineering, O'Reilly 2016, chapter 21 "Handling
// Overload", section "Client-side throttling"): each client rejects
// requests locally, before they reach the backend, with probability
//
//	p = max(0, (requests - K*accepts) / (requests + 1))
//
// where, over the client's last two minutes, requests is "the number of
// requests attempted by the application layer" (every request the client
// tried to send, those it rejected itself included) and accepts "the number
// of requests accepted by the backend".
//
// Choices the book leaves open, made here:
//
//   - The window is a ring of one-second buckets aligned to whole seconds
//     from time 0 (SPEC section 1): at instant t the counts are those of the
//     buckets of seconds floor(t/1s)-W+1 to floor(t/1s), W = window/1s
//     (120), so between W-1 and W seconds of history.
//   - Admit(now, key, u) computes p from the counts before this request,
//     then counts the request (admitted or not) in now's bucket, and admits
//     iff u >= p, u being a uniform draw in [0, 1) the caller takes from the
//     scenario's seeded source for every request. p < 1 always, so some
//     requests always get through to probe the backend.
//   - OnResult(now, key, accepted) is reported for each request Admit let
//     through, when its outcome is known; an accept counts in the bucket of
//     that instant. What "accepted by the backend" means is the caller's:
//     SPEC section 11 calls a shed, an error or a timeout a drop, and the
//     engine should report those as not accepted.
//   - The arithmetic: p's numerator is float64(requests) -
//     float64(K*float64(accepts)), the product rounded on its own, then
//     divided by float64(requests+1); the draw is compared as is.
//
// gRPC's adaptive throttler (grpc-go balancer/rls/internal/adaptive), after
// the same formula, differs: it counts a request when its response comes
// back (throttles + accepts), pads the denominator by 8 and keeps 30s; this
// follows the book.
//
// State per key: the ring of W buckets (a request count and an accept
// count, 8 bytes each bucket) and their sums, 16 + 8*W bytes; keys get their
// state at their first call and keep it.
type Throttle struct {
	k       float64
	buckets int64
	keys    []*throttleKey
	n       int // keys with state
}

type throttleKey struct {
	sec            int64    // the second of the newest bucket
	req, acc       []uint32 // by second mod buckets
	reqSum, accSum uint64
}

// NewThrottle returns an sre-throttle, or an error naming the first invalid
// parameter: k > 0, window a whole number of seconds, at least 1s.
func NewThrottle(c ThrottleConfig) (*Throttle, error) {
	if !(c.K > 0) {
		return nil, paramErr("sre-throttle", "k", c.K, "want a multiplier greater than 0 (the book: 2)")
	}
	if c.Window < time.Second || c.Window%time.Second != 0 {
		return nil, paramErr("sre-throttle", "window", c.Window, "want a whole number of seconds, at least 1s (the book: 2m)")
	}
	return &Throttle{k: c.K, buckets: int64(c.Window / time.Second)}, nil
}

// Admit decides on a request of key at now with the uniform draw u in [0,
// 1): false means the client rejects it locally. The request counts as
// attempted either way.
func (t *Throttle) Admit(now time.Duration, key Key, u float64) bool {
	s := t.state(now, key)
	p := t.probability(s)
	s.req[t.slot(s.sec)]++
	s.reqSum++
	return !(u < p)
}

// RejectProbability returns the probability with which key's next request
// at now would be rejected, without counting anything: for charts and
// tests.
func (t *Throttle) RejectProbability(now time.Duration, key Key) float64 {
	return t.probability(t.state(now, key))
}

// OnResult reports the outcome, at now, of a request of key that Admit let
// through: accepted says the backend accepted it.
func (t *Throttle) OnResult(now time.Duration, key Key, accepted bool) {
	s := t.state(now, key)
	if accepted {
		s.acc[t.slot(s.sec)]++
		s.accSum++
	}
}

func (t *Throttle) probability(s *throttleKey) float64 {
	p := (float64(s.reqSum) - float64(t.k*float64(s.accSum))) / float64(s.reqSum+1)
	return max(0, p)
}

// state returns key's counts with the window moved to now.
func (t *Throttle) state(now time.Duration, key Key) *throttleKey {
	if int(key) >= len(t.keys) {
		t.keys = append(t.keys, make([]*throttleKey, int(key)+1-len(t.keys))...)
	}
	sec := int64(now / time.Second)
	if now < 0 && now%time.Second != 0 {
		sec-- // floor, for instants before time 0
	}
	s := t.keys[key]
	if s == nil {
		s = &throttleKey{sec: sec, req: make([]uint32, t.buckets), acc: make([]uint32, t.buckets)}
		t.keys[key] = s
		t.n++
		return s
	}
	d := sec - s.sec
	if d <= 0 {
		return s
	}
	if d >= t.buckets {
		clear(s.req)
		clear(s.acc)
		s.reqSum, s.accSum = 0, 0
	} else {
		for i := int64(1); i <= d; i++ {
			b := t.slot(s.sec + i)
			s.reqSum -= uint64(s.req[b])
			s.accSum -= uint64(s.acc[b])
			s.req[b], s.acc[b] = 0, 0
		}
	}
	s.sec = sec
	return s
}

// Keys returns how many keys have state (every key seen, from its first
// call).
func (t *Throttle) Keys() int { return t.n }

// slot is the ring index of second sec.
func (t *Throttle) slot(sec int64) int64 {
	return ((sec % t.buckets) + t.buckets) % t.buckets
}
