package algorithms

import (
	"fmt"
	"math"
	"time"
	"unsafe"
)

// TokenBucket is the token bucket of golang.org/x/time/rate (rate.go),
// Linux tc-tbf(8) and the buckets of RFC 2697, in exact integer arithmetic.
//
// Rule: a key's bucket holds up to B tokens and starts full; it refills
// continuously at L tokens per W. A request of cost c at t is admitted iff the
// bucket holds at least c tokens; it then takes c tokens. So B requests pass
// at once on a fresh key, then one every W/L.
//
// RetryAfter: (c - tokens) / (L/W), the time for the missing tokens to drip
// in, rounded up to a nanosecond; Never when c > B.
//
// max-delay D (shaping, x/time/rate's ReserveN, tc-tbf's latency): a request
// short of tokens is admitted anyway when the missing tokens arrive within D:
// it takes its c tokens at once (the bucket goes negative: a debt that later
// requests queue behind) and is released after Delay = that wait, rounded up.
// A request whose wait exceeds D is rejected without taking anything; its
// RetryAfter is the wait minus D, the first instant at which it would be
// admitted with a delay of at most D. The debt is bounded by D*L/W tokens, so
// D*L (reduced by gcd(L, W)) must stay within the exact range.
//
// State per key: the tokens, kept as the deficit B - tokens scaled by W so
// that a refill of dt ns is dt*L, an integer (no fraction is ever lost), and
// the instant of the last update: two int64, 16 bytes. A key's state is
// released when the bucket is full again, at last + deficit/L rounded up,
// when it is indistinguishable from a fresh key's.
//
// Discrete refill (fill-interval D, tokens-per-fill N; both or neither):
// envoy's local rate limiter before 1.31
// (source/extensions/filters/common/local_ratelimit/local_ratelimit_impl.cc:
// the bucket starts at max_tokens, and a timer every fill_interval runs
// onFillTimer, which sets tokens = min(max_tokens, tokens +
// tokens_per_fill); requestAllowed takes a token if there is one). The
// capacity is B, envoy's max_tokens. The refill happens only at the ticks:
// the instants k*D for every integer k, aligned to time 0 (the Unix epoch)
// as fixed windows are, where envoy's timer runs from the filter's
// creation and is re-armed after each run. A tick at the very instant of a
// request comes first. So between ticks the bucket only drains: a key's
// bucket holds min(B, tokens + N*(ticks since its last update)), and a
// request of cost c is admitted iff it holds at least c tokens, then takes
// c (envoy takes one token per request; cost c takes c). Rate and per are
// not read by this rule (the scenario loader makes them tokens-per-fill per
// fill-interval, for the table).
//
// RetryAfter, discrete: the instant of the m-th tick after t, where m =
// ceil(missing/N) ticks bring the missing c - tokens, minus t; Never when c
// > B. max-delay D' works as above: a request is admitted with that wait as
// its delay when it is at most D' (the bucket goes into debt), else
// rejected with RetryAfter = wait - D'.
//
// State, discrete: the same two int64, the deficit B - tokens in whole
// tokens and the instant of the last update (whose tick index floor(t/D)
// counts the ticks since); released at the tick that fills the bucket.
//
// Redis: redislua/lua/token_bucket.lua is this rule as a Lua script, decision for
// decision (`ratesim lua token-bucket` prints it; redislua's tests hold it to
// this type on randomised traces). It has no discrete refill: a row with
// fill-interval runs in the simulation only (every cluster mode of
// token-bucket, its store deciding with this rule), not on Redis.
type TokenBucket struct {
	keyed[tokenBucketState]
	tokenBucketRule
}

// tokenBucketRule is TokenBucket's rule over one key's state, which its
// Limiter and its Table (a cluster's store) both call.
//
// Time going back (a store passed the nodes' clocks): a request stamped
// before the bucket's last update is decided as if it came at that update
// (its delay or retry_after counts from then), and the last update stays
// where it was: the bucket's clock never goes back, so a call from behind
// cannot make the next one refill the same time twice, as
// spring-cloud-gateway's script did when it stored the older time
// (spring-cloud-gateway #1688).
type tokenBucketRule struct {
	burst int64 // B
	// One token is perToken units and the bucket refills perNs units per
	// ns: W and L reduced by their gcd.
	perToken, perNs int64
	maxDelay        time.Duration
	// fill > 0 makes the refill discrete: perFill tokens at every k*fill
	// (deficit is then in whole tokens).
	fill    time.Duration
	perFill int64
	plainState[tokenBucketState]
}

// tokenBucketState is one key's bucket. The zero value is a full bucket.
type tokenBucketState struct {
	// deficit is (B - tokens)*perToken: 0 when full, above B*perToken when
	// max-delay has put the bucket in debt.
	deficit int64
	last    time.Duration // when deficit was last updated
}

var (
	_ Limiter     = (*TokenBucket)(nil)
	_ Reserver    = (*TokenBucket)(nil)
	_ stateHolder = (*TokenBucket)(nil)
	_ Inspector   = (*TokenBucket)(nil)
)

func newTokenBucketLimiter(p Params) (Limiter, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("token-bucket", p, "max-delay", "fill-interval", "tokens-per-fill"); err != nil {
		return nil, err
	}
	if p.FillInterval != 0 || p.TokensPerFill != 0 {
		if err := checkDiscrete(p); err != nil {
			return nil, err
		}
	} else {
		r := newFracRate(p.Rate, p.Per)
		if err := bucketMaxDelayCheck(p.MaxDelay, time.Duration(maxExact/r.den), "its debt in tokens stays exact"); err != nil {
			return nil, err
		}
	}
	tb := &TokenBucket{tokenBucketRule: *newTokenBucketRule(p)}
	tb.keyed = newKeyed(int64(unsafe.Sizeof(tokenBucketState{})), tb.fullAt)
	return tb, nil
}

func newTokenBucketRule(p Params) *tokenBucketRule {
	r := newFracRate(p.Rate, p.Per)
	return &tokenBucketRule{burst: p.Burst, perToken: r.num, perNs: r.den, maxDelay: p.MaxDelay,
		fill: p.FillInterval, perFill: p.TokensPerFill}
}

// checkDiscrete validates fill-interval and tokens-per-fill: both set, D >
// 0, N >= 1, and every product the discrete rule forms within the exact
// range: the time of B ticks, B*D, and the debt max-delay allows,
// N*(max-delay/D + 2) tokens.
func checkDiscrete(p Params) error {
	switch {
	case p.FillInterval == 0:
		return &ParamError{Field: "fill-interval", Found: "none",
			Want: fmt.Sprintf("want fill-interval with tokens-per-fill %d (both or neither: envoy's token_bucket)", p.TokensPerFill)}
	case p.TokensPerFill == 0:
		return &ParamError{Field: "tokens-per-fill", Found: "none",
			Want: fmt.Sprintf("want tokens-per-fill with fill-interval %v (both or neither: envoy's token_bucket)", p.FillInterval)}
	case p.FillInterval < 0:
		return &ParamError{Field: "fill-interval", Found: p.FillInterval.String(), Want: "want a duration > 0"}
	case p.TokensPerFill < 0:
		return &ParamError{Field: "tokens-per-fill", Found: fmt.Sprint(p.TokensPerFill), Want: "want an integer >= 1"}
	case p.FillInterval > maxExact/2:
		return &ParamError{Field: "fill-interval", Found: p.FillInterval.String(),
			Want: fmt.Sprintf("want at most %v (within the exact range)", time.Duration(maxExact/2))}
	case p.Burst > maxExact/int64(p.FillInterval):
		return &ParamError{Field: "burst", Found: fmt.Sprintf("%d with fill-interval %v", p.Burst, p.FillInterval),
			Want: fmt.Sprintf("want at most %d with fill-interval %v (burst*fill-interval must stay within 2^61 ns)", maxExact/int64(p.FillInterval), p.FillInterval)}
	}
	if err := bucketMaxDelayCheck(p.MaxDelay, maxExact/2, "release times stay within range"); err != nil {
		return err
	}
	if ticks := int64(p.MaxDelay/p.FillInterval) + 2; p.TokensPerFill > (maxExact-p.Burst)/ticks {
		return &ParamError{Field: "tokens-per-fill", Found: fmt.Sprint(p.TokensPerFill),
			Want: fmt.Sprintf("want at most %d with this max-delay and fill-interval (the debt in tokens must stay exact)", (maxExact-p.Burst)/ticks)}
	}
	return nil
}

// fullAt is when the bucket is full again if nothing else arrives.
func (tb *tokenBucketRule) fullAt(s *tokenBucketState) time.Duration {
	if tb.fill > 0 {
		if s.deficit <= 0 {
			return s.last
		}
		k, _ := windowAt(s.last, tb.fill)
		k += exactCeilDiv(s.deficit, tb.perFill) // the tick that fills it
		if k > math.MaxInt64/int64(tb.fill) {
			return math.MaxInt64
		}
		return time.Duration(k) * tb.fill
	}
	return s.last + time.Duration(exactCeilDiv(s.deficit, tb.perNs))
}

// refilled returns the deficit of s refilled up to now (>= s.last) by the
// ticks in (s.last, now]: N tokens each, stopping at full.
func (tb *tokenBucketRule) refilled(d int64, last, now time.Duration) (deficit int64, e time.Duration) {
	k, e := windowAt(now, tb.fill)
	if d > 0 {
		kl, _ := windowAt(last, tb.fill)
		// Comparing the ticks with those that fill the bucket first keeps
		// ticks*N below d + N: no overflow for any gap.
		if ticks := k - kl; ticks >= exactCeilDiv(d, tb.perFill) {
			d = 0
		} else {
			d -= ticks * tb.perFill
		}
	}
	return d, e
}

// decideDiscrete is decide with discrete refill.
func (tb *tokenBucketRule) decideDiscrete(s *tokenBucketState, known bool, now time.Duration, cost int64) (Decision, bool) {
	d, last := s.deficit, s.last
	if !known {
		d, last = 0, now // a full bucket
	}
	now = max(now, last)
	d, e := tb.refilled(d, last, now)
	// tokens >= cost  <=>  B - d >= cost.
	var wait time.Duration
	if short := d - (tb.burst - cost); short > 0 {
		// The m-th tick after now's, at (k+m)*D, brings the missing
		// tokens: m*D - e after now.
		m := exactCeilDiv(short, tb.perFill)
		wait = time.Duration(m)*tb.fill - e
		if wait > tb.maxDelay {
			return Decision{Verdict: Reject, RetryAfter: wait - tb.maxDelay}, false
		}
	}
	s.deficit, s.last = d+cost, now
	if wait > 0 {
		return Decision{Verdict: Delay, Delay: wait}, true
	}
	return Decision{Verdict: Accept}, true
}

// nsFor returns the whole ns the bucket takes to refill units (>= 0),
// ceil(units/perNs): no division when a token is a whole number of ns
// (perNs 1: W/L whole, as for 100/s).
func (tb *tokenBucketRule) nsFor(units int64) int64 {
	if tb.perNs == 1 {
		return units
	}
	return exactCeilDiv(units, tb.perNs)
}

// Decide refills key's bucket to now and takes cost tokens if they are
// there, or if they will be within max-delay.
func (tb *TokenBucket) Decide(now time.Duration, key Key, cost int64) Decision {
	s := tb.get(now, key)
	// a fresh key's zero last update is in the past of every instant from
	// 0 on; before 0 (a node's clock skewed back) the key must say it is
	// fresh
	d, took := tb.decide(s, now >= 0 || tb.isLive(key), now, cost)
	if took {
		tb.touch(key, 0)
	}
	return d
}

func (tb *tokenBucketRule) decide(s *tokenBucketState, known bool, now time.Duration, cost int64) (Decision, bool) {
	if cost > tb.burst {
		return Decision{Verdict: Reject, RetryAfter: Never}, false
	}
	if tb.fill > 0 {
		return tb.decideDiscrete(s, known, now, cost)
	}
	d, last := s.deficit, s.last
	if !known {
		d, last = 0, now // a full bucket
	}
	now = max(now, last) // a request from behind the last update comes at it
	if d > 0 {
		// Refill: dt*perNs, stopping at full. Comparing dt with the time
		// to full first keeps dt*perNs below d + perNs: no overflow for
		// any gap.
		if dt := int64(now - last); dt >= tb.nsFor(d) {
			d = 0
		} else {
			d -= dt * tb.perNs
		}
	}
	// tokens >= cost  <=>  B*perToken - d >= cost*perToken.
	var wait time.Duration
	if short := d - (tb.burst-cost)*tb.perToken; short > 0 {
		wait = time.Duration(tb.nsFor(short))
		if wait > tb.maxDelay {
			// At now+w the wait is wait-w (nothing is capped while
			// tokens are short), so the first admissible w is wait-D.
			return Decision{Verdict: Reject, RetryAfter: wait - tb.maxDelay}, false
		}
	}
	s.deficit, s.last = d+cost*tb.perToken, now
	if wait > 0 {
		return Decision{Verdict: Delay, Delay: wait}, true
	}
	return Decision{Verdict: Accept}, true
}

// bucketMaxDelayCheck validates max-delay for the shaping buckets: >= 0 and
// at most most, the largest value whose arithmetic stays exact (why says
// what it bounds).
func bucketMaxDelayCheck(d, most time.Duration, why string) error {
	if d < 0 {
		return &ParamError{Field: "max-delay", Found: d.String(), Want: "want a duration >= 0"}
	}
	if d > most {
		return &ParamError{Field: "max-delay", Found: d.String(),
			Want: fmt.Sprintf("want at most %v for this rate, so that %s", most, why)}
	}
	return nil
}

// Inspect returns key's gauges at now: "tokens", the bucket refilled up to
// now (B - deficit/perToken, negative while a max-delay debt is
// outstanding), and "burst", B. It releases what is fresh by now and changes
// no live key's state.
func (tb *TokenBucket) Inspect(now time.Duration, key Key) []Gauge {
	tb.expire(now)
	s, known := tb.stateOf(key)
	return tb.gauges(&s, known, now)
}

func (tb *tokenBucketRule) gauges(s *tokenBucketState, known bool, now time.Duration) []Gauge {
	if !known && now < 0 {
		return []Gauge{{"tokens", float64(tb.burst)}, {"burst", float64(tb.burst)}}
	}
	now = max(now, s.last) // as the rule: the bucket's clock never goes back
	d := s.deficit
	if tb.fill > 0 {
		if known {
			d, _ = tb.refilled(d, s.last, now)
		} else {
			d = 0
		}
		return []Gauge{{"tokens", float64(tb.burst - d)}, {"burst", float64(tb.burst)}}
	}
	if d > 0 {
		// As Decide: compare with the time to full first, no overflow.
		if dt := int64(now - s.last); dt >= exactCeilDiv(d, tb.perNs) {
			d = 0
		} else {
			d -= dt * tb.perNs
		}
	}
	tokens := float64(tb.burst*tb.perToken-d) / float64(tb.perToken)
	return []Gauge{{"tokens", tokens}, {"burst", float64(tb.burst)}}
}
