package algorithms

import (
	"time"
	"unsafe"
)

// RedisRateAtMost is go-redis/redis_rate's AllowAtMost (lua.go, the
// allowAtMost script; rate.go, AllowAtMost): GCRA that admits at most the
// cost asked, and less when less is left: a partial admission.
//
// Rule: T = W/L, B the burst, a key's TAT as gcra's. At t, TAT' =
// max(TAT, t), diff = t - (TAT' - B*T) and remaining = diff/T. If
// remaining < 1 the request is rejected, RetryAfter = T - diff (the
// script's retry_after), rounded up to a nanosecond. Otherwise it is
// admitted: with remaining >= c as gcra (TAT = TAT' + c*T); with remaining
// < c the script sets cost = remaining, so it grants floor(remaining) (the
// script returns the Lua number, which Redis truncates to an integer
// reply: Result.Allowed) and moves TAT by remaining*T, to t + B*T: the
// bucket is emptied, its fraction of a token too. A partial admission is
// Verdict Accept with Decision.Granted = floor(remaining); the request's
// attempt counts once, as accepted. A cost above B is never Never: it is
// granted what is there.
//
// The script computes in Lua doubles of seconds since 2017 (Redis TIME);
// this row is its rule in exact arithmetic, as gcra is redis_rate's
// AllowN: TAT is whole nanoseconds plus a remainder over L.
//
// State per key: TAT, 16 bytes, released at the first whole nanosecond >=
// TAT (the script's key expires ceil(reset_after) seconds later, when
// max(TAT, t) = t: a fresh key's state).
type RedisRateAtMost struct {
	keyed[gcraState]
	burst    int64
	interval fracRate
}

var (
	_ Limiter     = (*RedisRateAtMost)(nil)
	_ Reserver    = (*RedisRateAtMost)(nil)
	_ stateHolder = (*RedisRateAtMost)(nil)
	_ Inspector   = (*RedisRateAtMost)(nil)
)

func newRedisRateAtMostLimiter(p Params) (Limiter, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("redis-rate-at-most", p); err != nil {
		return nil, err
	}
	r := &RedisRateAtMost{burst: p.Burst, interval: newFracRate(p.Rate, p.Per)}
	r.keyed = newKeyed(int64(unsafe.Sizeof(gcraState{})), func(s *gcraState) time.Duration { return s.tat.ceil() })
	return r, nil
}

// Decide is AllowAtMost(key, cost) at now.
func (r *RedisRateAtMost) Decide(now time.Duration, key Key, cost int64) Decision {
	s := r.get(now, key)
	iv := r.interval
	t := fracAt(now)
	tat := t
	if now >= 0 || r.isLive(key) {
		tat = fracMax(s.tat, t)
	}
	// diff = t - tat + B*T, in [0, B*T]
	diff := iv.add(iv.sub(t, tat), iv.times(r.burst))
	if iv.times(1).after(diff) {
		return Decision{Verdict: Reject, RetryAfter: iv.sub(iv.times(1), diff).ceil()}
	}
	// remaining = diff/T = (ns*den + rem)/num, at most B
	units := (int64(diff.ns)*iv.den + diff.rem) / iv.num
	if units >= cost {
		s.tat = iv.add(tat, iv.times(cost))
		r.touch(key, 0)
		return Decision{Verdict: Accept}
	}
	s.tat = iv.add(t, iv.times(r.burst)) // TAT' + diff: empty
	r.touch(key, 0)
	return Decision{Verdict: Accept, Granted: units}
}

// Inspect returns key's gauges at now: "tokens", remaining = diff/T, and
// "burst", B.
func (r *RedisRateAtMost) Inspect(now time.Duration, key Key) []Gauge {
	r.expire(now)
	s, known := r.stateOf(key)
	g := gcraRule{burst: r.burst, interval: r.interval}
	return g.gauges(&s, known, now)
}
