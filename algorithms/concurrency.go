package algorithms

import (
	"fmt"
	"time"
)

// Concurrency limits the requests in flight per key, as a gateway's
// concurrent-request limiter (a semaphore per key) does, rather than their
// rate.
//
// Rule: a request of cost c counts as c units (c concurrent requests, or c
// slots of the semaphore). This limiter never delays, so a request admitted
// at t is in flight during [t, t+S), S being the backend's service time
// (Params.Service); one that completes at exactly t no longer counts at t. A
// request is admitted iff the units in flight at t, plus c, are at most max
// (Params.Max, Burst when 0). With S = 0 nothing is ever in flight: every
// request with c <= max is admitted and no state is kept.
//
// RetryAfter: the wait until enough of the earliest in-flight requests have
// completed for c to fit, always in (0, S]. Never when c > max.
//
// State per key: the FIFO of (completion time, cost) of the requests in
// flight, which complete in admission order, and the units in flight, 32
// bytes, plus 16 bytes per request in flight (completion times are needed for
// an exact retry_after; a count alone would do for the decision). The live
// entries of all keys are counted at every instant. A key's state is
// released, and its FIFO's ring given back to the limiter's ringPool, once
// its last request completes.
//
// Redis: redislua/lua/concurrency.lua is this rule as a Lua script, decision for
// decision (`ratesim lua concurrency` prints it; redislua's tests hold it to
// this type on randomised traces).
type Concurrency struct {
	logKeyed // the completion of every request in flight
	concurrencyRule
}

// concurrencyRule is Concurrency's rule over one key's requests in flight,
// which its Limiter and its Table (a cluster's store) both call. In a
// store, the script keeps each admitted request's completion instant, now +
// S with now the script's now.
//
// Time going back (a store passed the nodes' clocks): the requests in
// flight at t are those that complete after t, as a sorted set of
// completion instants trimmed to (t, +inf) counts them, including any
// admitted at a later instant; a completion earlier than the newest is kept
// in order.
type concurrencyRule struct {
	max     int64         // the most units in flight per key
	service time.Duration // S
	logRule
}

var (
	_ Limiter     = (*Concurrency)(nil)
	_ Reserver    = (*Concurrency)(nil)
	_ stateHolder = (*Concurrency)(nil)
	_ Inspector   = (*Concurrency)(nil)
)

func newConcurrencyLimiter(p Params) (Limiter, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("concurrency", p, "max"); err != nil {
		return nil, err
	}
	if p.Max < 0 {
		return nil, &ParamError{"max", fmt.Sprint(p.Max), "want at least 1 request in flight per key (0 means the burst)"}
	}
	if p.Service < 0 || p.Service > maxExact {
		return nil, &ParamError{"service", p.Service.String(),
			fmt.Sprintf("want a service time from 0 to %v", time.Duration(maxExact))}
	}
	l := &Concurrency{concurrencyRule: *newConcurrencyRule(p)}
	l.keyed = newLogKeyed(&l.rings)
	return l, nil
}

func newConcurrencyRule(p Params) *concurrencyRule {
	r := &concurrencyRule{max: p.Max, service: p.Service}
	if r.max == 0 {
		r.max = p.Burst
	}
	r.rings.first = firstRing(r.max) // at most max requests of cost >= 1 in flight
	return r
}

// Decide admits the request iff the units in flight leave room for cost.
func (l *Concurrency) Decide(now time.Duration, key Key, cost int64) Decision {
	if cost > l.max {
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	if l.service == 0 {
		return Decision{Verdict: Accept}
	}
	l.flush(now)
	s := l.get(now, key)
	d, added := l.decide(s, true, now, cost)
	if added {
		l.logged(key, s, now+l.service)
	}
	return d
}

func (l *concurrencyRule) decide(s *costLog, _ bool, now time.Duration, cost int64) (Decision, bool) {
	if cost > l.max {
		return Decision{Verdict: Reject, RetryAfter: Never}, false
	}
	if l.service == 0 {
		return Decision{Verdict: Accept}, false
	}
	s.prune(now, &l.rings)
	if s.sum > l.max-cost {
		return Decision{Verdict: Reject, RetryAfter: s.waitFor(now, cost, l.max)}, false
	}
	l.log(s, now+l.service, cost)
	return Decision{Verdict: Accept}, true
}

// Inspect returns key's gauges at now: "in flight", the units of the
// requests not yet completed at now, and "max". It releases what is fresh by
// now (as liveAt does) and does not prune a live key's FIFO.
func (l *Concurrency) Inspect(now time.Duration, key Key) []Gauge {
	s, known := l.inspect(now, key)
	return l.gauges(s, known, now)
}

func (l *concurrencyRule) gauges(s *costLog, _ bool, now time.Duration) []Gauge {
	return []Gauge{{"in flight", float64(s.sumAt(now))}, {"max", float64(l.max)}}
}
