package algorithms

import (
	"time"
	"unsafe"
)

// CloudflareRateLimit is a Cloudflare rate limiting rule
// (developers.cloudflare.com, WAF, "Rate limiting rules": the rule
// parameters, and "Request rate calculation"), one data center's
// counters. Cloudflare documents behaviour; the readings modelled:
//
// Counting: "Requests per period" L over "Period" W, one counter per value
// of the rule's characteristics (the scenario's key), counted with the
// two-counter approximation of a sliding window that Cloudflare describes
// ("How we built rate limiting capable of scaling to millions of
// domains"): sliding-window's rule, prev*(W-e) + (cur+c)*W <= L*W (see
// SlidingWindow). A request that fits is admitted and counted.
//
// Mitigation timeout ("Duration", the option mitigation-timeout D > 0):
// "once the rate is reached, the rate limiting rule blocks further
// requests for the period of time defined in this field ... regardless of
// the request rate during this period". Reading: the request that does
// not fit triggers the rule: it is blocked, and every request of its key
// is blocked until trigger + D, whatever the counts say then; blocked
// requests are not counted (they start no new timeout either). At
// trigger + D counting resumes on the counts as they stand. Cloudflare's
// "Request rate calculation" Example A (1 request per 10s, 10 minutes):
// the second request within 10s is blocked, and so is every request of
// the same characteristics for the next 10 minutes.
//
// Without mitigation-timeout (0): Enterprise's "Throttle requests over the
// maximum configured rate" action behaviour, "allowing incoming requests
// when the rate is lower than the configured limit": the sliding window
// alone, no block.
//
// A cost above L never fits and triggers nothing: RetryAfter Never.
// RetryAfter otherwise: the shortest wait, to the end of the block and then
// until the counts leave room, computed on the counts as they will stand
// at the block's end (sliding-window's exact wait from there).
//
// Per data center: Cloudflare's counters "are not shared across data
// centers"; one data center is modelled. A cluster mode with a counter per
// data center (and the spread of a key's requests over them) is not built.
//
// State per key: sliding-window's two counts and the block's end, 32
// bytes, released when both are over: at max((k+2)*W, end).
type CloudflareRateLimit struct {
	keyed[cloudflareState]
	rule    slidingWindowRule
	timeout time.Duration // D
}

type cloudflareState struct {
	counts  slidingWindowState
	blocked time.Duration // the end of the block; none before it or when 0
}

var (
	_ Limiter     = (*CloudflareRateLimit)(nil)
	_ Reserver    = (*CloudflareRateLimit)(nil)
	_ stateHolder = (*CloudflareRateLimit)(nil)
	_ Inspector   = (*CloudflareRateLimit)(nil)
)

func newCloudflareLimiter(p Params) (Limiter, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("cloudflare-rate-limit", p, "mitigation-timeout"); err != nil {
		return nil, err
	}
	if p.MitigationTimeout < 0 || p.MitigationTimeout > maxExact {
		return nil, &ParamError{Field: "mitigation-timeout", Found: p.MitigationTimeout.String(), Want: "want a duration of at least 0 (0: throttle, no block)"}
	}
	c := &CloudflareRateLimit{rule: *newSlidingWindowRule(Params{Policy: p.Policy}), timeout: p.MitigationTimeout}
	c.keyed = newKeyed(int64(unsafe.Sizeof(cloudflareState{})), func(s *cloudflareState) time.Duration {
		return max(time.Duration(s.counts.win+2)*c.rule.window, s.blocked)
	})
	return c, nil
}

// Decide blocks the request while its key is blocked, else counts it in
// the sliding window, blocking the key for the mitigation timeout when it
// does not fit.
func (c *CloudflareRateLimit) Decide(now time.Duration, key Key, cost int64) Decision {
	s := c.get(now, key)
	if cost > c.rule.limit {
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	if now < s.blocked {
		return Decision{Verdict: Reject, RetryAfter: c.waitFrom(s, s.blocked, now, cost)}
	}
	k, e := windowAt(now, c.rule.window)
	d, counted := c.rule.decideIn(&s.counts, k, e, cost)
	if d.Verdict != Reject {
		c.touch(key, 0)
		return d
	}
	if c.timeout == 0 {
		if counted {
			c.touch(key, 0)
		}
		return d
	}
	s.blocked = now + c.timeout
	c.touch(key, 0)
	return Decision{Verdict: Reject, RetryAfter: c.waitFrom(s, s.blocked, now, cost)}
}

// waitFrom is the shortest wait from now for a request of cost on s
// blocked until end: to end, then sliding-window's wait on the counts as
// they stand at end.
func (c *CloudflareRateLimit) waitFrom(s *cloudflareState, end, now time.Duration, cost int64) time.Duration {
	k, e := windowAt(end, c.rule.window)
	prev, cur := s.counts.countsIn(k)
	if c.rule.admits(e, prev, cur, cost) {
		return end - now
	}
	return end - now + c.rule.retryAfter(e, prev, cur, cost)
}

// Inspect returns key's gauges at now: "blocked", the seconds left of its
// block (0 when none), then sliding-window's gauges of its counts.
func (c *CloudflareRateLimit) Inspect(now time.Duration, key Key) []Gauge {
	c.expire(now)
	s, known := c.stateOf(key)
	blocked := 0.0
	if now < s.blocked {
		blocked = (s.blocked - now).Seconds()
	}
	return append([]Gauge{{"blocked", blocked}}, c.rule.gauges(&s.counts, known, now)...)
}
