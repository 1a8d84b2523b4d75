package algorithms

import (
	"time"
	"unsafe"
)

// GCRA is the generic cell rate algorithm of ATM traffic policing (ITU-T
// I.371, the virtual scheduling form), as redis_rate and throttled run it on
// Redis and as Brandur Leach's "Rate limiting, cells, and GCRA" explains it:
// a token bucket kept as a single instant.
//
// Rule: T = W/L is the emission interval. Each key keeps its theoretical
// arrival time TAT, the instant at which its bucket would be full again. A
// request of cost c at t is admitted iff
//
//	max(TAT, t) + c*T - t <= B*T
//
// and then TAT = max(TAT, t) + c*T. This is redis_rate's convention (its
// burst is the tolerance): B requests pass at once on a fresh key, then one
// every T, exactly as a token bucket of B tokens. T need not be a whole
// number of nanoseconds: TAT is kept exactly (see fracTime), so 3/s and 7/m
// never drift.
//
// RetryAfter: max(TAT, t) + c*T - B*T - t, rounded up to a nanosecond; Never
// when c > B.
//
// max-delay D (shaping, as x/time/rate's ReserveN): a request is admitted
// when its excess max(TAT, t) + c*T - t - B*T is at most D, with Delay = the
// excess rounded up (0 when it is not positive), and moves TAT as any
// admitted request; a rejected request's RetryAfter is the excess minus D,
// rounded up. TAT then runs up to B*T + D ahead of t, so D is at most the
// exact range.
//
// State per key: TAT, whole nanoseconds plus a remainder over L, two int64,
// 16 bytes. A key's state is released at the first whole nanosecond >= TAT,
// when max(TAT, t) = t and the key is indistinguishable from a fresh one (as
// redis_rate lets the key expire at TAT).
//
// Redis: redislua/lua/gcra.lua is this rule as a Lua script, decision for
// decision (`ratesim lua gcra` prints it; redislua's tests hold it to
// this type on randomised traces).
type GCRA struct {
	keyed[gcraState]
	gcraRule
}

// gcraRule is GCRA's rule over one key's state, which its Limiter and its
// Table (a cluster's store) both call.
//
// Time going back (a store passed the nodes' clocks) needs nothing more: a
// request stamped before others finds TAT further ahead of it, max(TAT, t)
// = TAT, and is judged by a longer wait; TAT never moves back.
type gcraRule struct {
	burst    int64
	interval fracRate // T = W/L
	maxDelay time.Duration
	plainState[gcraState]
}

// gcraState is one key's theoretical arrival time; the zero value (TAT 0, in
// the past of every instant) is a fresh key.
type gcraState struct {
	tat fracTime
}

var (
	_ Limiter     = (*GCRA)(nil)
	_ Reserver    = (*GCRA)(nil)
	_ stateHolder = (*GCRA)(nil)
	_ Inspector   = (*GCRA)(nil)
)

func newGCRALimiter(p Params) (Limiter, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("gcra", p, "max-delay"); err != nil {
		return nil, err
	}
	if err := bucketMaxDelayCheck(p.MaxDelay, maxExact, "TAT stays exact"); err != nil {
		return nil, err
	}
	g := &GCRA{gcraRule: *newGCRARule(p)}
	g.keyed = newKeyed(int64(unsafe.Sizeof(gcraState{})), func(s *gcraState) time.Duration {
		return s.tat.ceil()
	})
	return g, nil
}

func newGCRARule(p Params) *gcraRule {
	return &gcraRule{burst: p.Burst, interval: newFracRate(p.Rate, p.Per), maxDelay: p.MaxDelay}
}

// Decide admits the request iff it conforms to key's TAT (within max-delay).
func (g *GCRA) Decide(now time.Duration, key Key, cost int64) Decision {
	s := g.get(now, key)
	// a fresh key's zero TAT is in the past of every instant from 0 on;
	// before 0 (a node's clock skewed back) the key must say it is fresh
	d, moved := g.decide(s, now >= 0 || g.isLive(key), now, cost)
	if moved {
		g.touch(key, 0)
	}
	return d
}

func (g *gcraRule) decide(s *gcraState, known bool, now time.Duration, cost int64) (Decision, bool) {
	if cost > g.burst {
		return Decision{Verdict: Reject, RetryAfter: Never}, false
	}
	r := g.interval
	t := fracAt(now)
	base := t // a fresh key conforms at once
	if known {
		base = fracMax(s.tat, t)
	}
	// ahead = max(TAT,t) - t; the request conforms iff
	// ahead <= (B-c)*T, and is shaped iff ahead <= (B-c)*T + D.
	ahead := r.sub(base, t)
	slack := r.times(g.burst - cost)
	limit := slack
	limit.ns += g.maxDelay
	if ahead.after(limit) {
		return Decision{Verdict: Reject, RetryAfter: r.sub(ahead, limit).ceil()}, false
	}
	s.tat = r.add(base, r.times(cost))
	if ahead.after(slack) {
		return Decision{Verdict: Delay, Delay: r.sub(ahead, slack).ceil()}, true
	}
	return Decision{Verdict: Accept}, true
}

// Inspect returns key's gauges at now: "tokens", the equivalent token count
// B - (max(TAT, now) - now)/T (negative while max-delay has TAT more than
// B*T ahead), and "burst", B. It releases what is fresh by now and changes
// no live key's state.
func (g *GCRA) Inspect(now time.Duration, key Key) []Gauge {
	g.expire(now)
	s, known := g.stateOf(key)
	return g.gauges(&s, known, now)
}

func (g *gcraRule) gauges(s *gcraState, known bool, now time.Duration) []Gauge {
	t := fracAt(now)
	var ahead fracTime
	if known || now >= 0 {
		ahead = g.interval.sub(fracMax(s.tat, t), t)
	}
	tokens := float64(g.burst) - g.interval.count(ahead)
	return []Gauge{{"tokens", tokens}, {"burst", float64(g.burst)}}
}

// count returns the duration d as a number of intervals, d/(num/den) =
// (d.ns*den + d.rem)/num, in floating point (for charts only: d.ns*den may
// not fit an int64).
func (r fracRate) count(d fracTime) float64 {
	return (float64(float64(d.ns)*float64(r.den)) + float64(d.rem)) / float64(r.num) // the product rounded: no FMA
}
