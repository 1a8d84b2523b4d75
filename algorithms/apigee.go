package algorithms

import (
	"time"
	"unsafe"
)

// ApigeeSpikeArrest is Apigee's SpikeArrest policy as its documentation
// describes it (Apigee X and Edge, "SpikeArrest policy": "How SpikeArrest
// works", <Rate>, <MessageWeight>, <UseEffectiveCount>), on one message
// processor. Apigee documents behaviour, not code; the reading modelled is
// said at each step.
//
// Rule (UseEffectiveCount false, the default): the rate, Nps or Npm (per
// 1s or 1m), is smoothed into intervals T = W/N: 100pm is one request
// every 600ms, 10ps one every 100ms, "a second request inside of 100ms
// will fail". Reading: a key keeps the instant from which its next
// request is allowed, next; a request at t is admitted iff t >= next, and
// then next = t + w*T, where w is its MessageWeight (the request's cost):
// a weight of 5 at 10pm allows 2 requests a minute. Nothing is stored
// while idle: after any pause one request passes, then one per T. T is
// kept exactly (ns plus a remainder over N).
// RetryAfter: next - t, rounded up; never Never (any weight passes on an
// idle key).
//
// use-effective-count (UseEffectiveCount true): "a sliding window
// algorithm", no smoothing: bursts pass as long as they stay within the
// rate. Reading: Cloudflare's two-counter sliding window over W (the
// sliding-window row, docs/algorithms.md), N per 1s or 1m, the weight as
// the cost. Apigee then shares the counts across the message processors of
// a region; one processor's view is modelled here.
//
// Per message processor: without UseEffectiveCount each processor keeps
// its own counts (an n-processor deployment allows about n times the
// rate); a scenario models that with a cluster of local nodes.
//
// State per key: next, 16 bytes (ns and a remainder), released at its
// ceiling, when a new key would decide the same.
type ApigeeSpikeArrest struct {
	keyed[gcraState]
	interval fracRate
}

var (
	_ Limiter     = (*ApigeeSpikeArrest)(nil)
	_ Reserver    = (*ApigeeSpikeArrest)(nil)
	_ stateHolder = (*ApigeeSpikeArrest)(nil)
	_ Inspector   = (*ApigeeSpikeArrest)(nil)
)

// checkApigeeRate requires per 1s or 1m: a SpikeArrest <Rate> is Nps or
// Npm.
func checkApigeeRate(p Policy) error {
	if err := checkPolicy(p); err != nil {
		return err
	}
	if p.Per != time.Second && p.Per != time.Minute {
		return &ParamError{Field: "per", Found: p.Per.String(), Want: "want 1s or 1m (a SpikeArrest <Rate> is Nps or Npm)"}
	}
	return nil
}

func newApigeeSpikeArrestLimiter(p Params) (Limiter, error) {
	if err := checkApigeeRate(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("apigee-spike-arrest", p, "use-effective-count"); err != nil {
		return nil, err
	}
	if p.UseEffectiveCount {
		return newSlidingWindowLimiter(Params{Policy: p.Policy})
	}
	a := &ApigeeSpikeArrest{interval: newFracRate(p.Rate, p.Per)}
	a.keyed = newKeyed(int64(unsafe.Sizeof(gcraState{})), func(s *gcraState) time.Duration { return s.tat.ceil() })
	return a, nil
}

// Decide admits the request iff its key's interval has passed.
func (a *ApigeeSpikeArrest) Decide(now time.Duration, key Key, cost int64) Decision {
	s := a.get(now, key)
	t := fracAt(now)
	if (now >= 0 || a.isLive(key)) && s.tat.after(t) {
		return Decision{Verdict: Reject, RetryAfter: a.interval.sub(s.tat, t).ceil()}
	}
	if cost > int64(maxExact)/a.interval.num {
		return Decision{Verdict: Reject, RetryAfter: Never} // beyond the virtual clock
	}
	s.tat = a.interval.add(t, a.interval.times(cost))
	a.touch(key, 0)
	return Decision{Verdict: Accept}
}

// Inspect returns key's gauges at now: "wait", the seconds until a request
// is allowed.
func (a *ApigeeSpikeArrest) Inspect(now time.Duration, key Key) []Gauge {
	a.expire(now)
	s, _ := a.stateOf(key)
	wait := 0.0
	if t := fracAt(now); s.tat.after(t) {
		wait = a.interval.sub(s.tat, t).ceil().Seconds()
	}
	return []Gauge{{"wait", wait}}
}

// The quota-type values of apigee-quota.
const (
	QuotaCalendar      = "calendar"
	QuotaFlexi         = "flexi"
	QuotaRollingWindow = "rollingwindow"
)

// ApigeeQuotaFlexi is Apigee's Quota policy of type flexi (Apigee X and
// Edge, "Quota policy", <Quota type>): "the quota counter starts when the
// first request message is received from an app" and is reset after one
// interval. Reading: a key's window starts at its first request, [s,
// s+W); the first request at or after s+W starts a new window at its own
// instant. A request of cost c (the MessageWeight) is admitted iff the
// window's count plus c is at most L (Allow count); rejected requests are
// not counted. RetryAfter: s+W - t; Never when c > L.
//
// The other types are other rows' rules (newApigeeQuotaLimiter): calendar
// (and the default, no type: the counter starts at the start of the
// interval) is fixed-window aligned to the Unix epoch, in UTC, calendar
// months with per: 1mo (a StartTime other than the epoch is not modelled);
// rollingwindow ("the quota is counted over the interval before the
// request") is sliding-log: never more than L in any interval of W.
//
// State per key, flexi: the window's start and count, 16 bytes, released
// at s+W.
type ApigeeQuotaFlexi struct {
	keyed[apigeeFlexiState]
	limit  int64
	window time.Duration
}

type apigeeFlexiState struct {
	start time.Duration
	count int64 // 0 with a zero start: no window
}

var (
	_ Limiter     = (*ApigeeQuotaFlexi)(nil)
	_ stateHolder = (*ApigeeQuotaFlexi)(nil)
	_ Inspector   = (*ApigeeQuotaFlexi)(nil)
)

func newApigeeQuotaLimiter(p Params) (Limiter, error) {
	if err := checkOptions("apigee-quota", p, "quota-type"); err != nil {
		return nil, err
	}
	base := Params{Policy: p.Policy}
	switch p.QuotaType {
	case "", QuotaCalendar:
		return newFixedWindowLimiter(base)
	case QuotaRollingWindow:
		return newSlidingLogLimiter(base)
	case QuotaFlexi:
	default:
		return nil, &ParamError{Field: "quota-type", Found: p.QuotaType, Want: "want calendar, flexi or rollingwindow (Apigee's Quota type)"}
	}
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	q := &ApigeeQuotaFlexi{limit: p.Rate, window: p.Per}
	q.keyed = newKeyed(int64(unsafe.Sizeof(apigeeFlexiState{})), func(s *apigeeFlexiState) time.Duration { return s.start + q.window })
	return q, nil
}

// Decide counts the request in its key's window, started by the key's
// first request.
func (q *ApigeeQuotaFlexi) Decide(now time.Duration, key Key, cost int64) Decision {
	s := q.get(now, key)
	if s.count == 0 || now >= s.start+q.window {
		// no window, or it is over: this request starts one (a rejected
		// request starts none: nothing is counted)
		if cost > q.limit {
			return Decision{Verdict: Reject, RetryAfter: Never}
		}
		*s = apigeeFlexiState{start: now, count: cost}
		q.touch(key, 0)
		return Decision{Verdict: Accept}
	}
	if cost > q.limit {
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	if s.count > q.limit-cost {
		return Decision{Verdict: Reject, RetryAfter: s.start + q.window - now}
	}
	s.count += cost
	q.touch(key, 0)
	return Decision{Verdict: Accept}
}

// Inspect returns key's gauges at now: "count", the cost counted in its
// window (0 when none is open), and "limit", L.
func (q *ApigeeQuotaFlexi) Inspect(now time.Duration, key Key) []Gauge {
	q.expire(now)
	s, _ := q.stateOf(key)
	count := s.count
	if now >= s.start+q.window {
		count = 0
	}
	return []Gauge{{"count", float64(count)}, {"limit", float64(q.limit)}}
}

// The tier values of azure-rate-limit.
const (
	AzureClassic = "classic"
	AzureV2      = "v2"
)

// AzureRateLimit is Azure API Management's rate-limit and
// rate-limit-by-key policies (learn.microsoft.com, "Limit call rate by
// key" and "Advanced request throttling": calls per renewal-period, the
// counter-key being the scenario's key), one gateway's counters. Azure
// documents behaviour; the readings modelled:
//
// Classic tiers (tier classic, the default): renewal-period is "the length
// in seconds of the sliding window during which the number of allowed
// requests should not exceed calls": the exact sliding log (sliding-log's
// rule), increment-count as the cost. renewal-period is a whole number of
// seconds up to 300.
//
// v2 tiers (tier v2): "a token bucket algorithm": token-bucket's rule,
// calls tokens refilled over renewal-period, a bucket of calls that
// starts full.
//
// increment-condition (classic only): with an increment-condition the
// counter is increased once the response is known, so the request is
// checked against the count before it: admitted iff the window's count is
// at most calls, then counted (the condition taken as true for every
// admitted request). The 429 arrives one call late: calls + 1 pass in a
// window, the next is refused. RetryAfter: until the count falls to calls;
// never Never.
//
// State per key: sliding-log's or token-bucket's.
type AzureRateLimit struct {
	*SlidingLog
}

func newAzureRateLimitLimiter(p Params) (Limiter, error) {
	if err := checkOptions("azure-rate-limit", p, "tier", "increment-condition"); err != nil {
		return nil, err
	}
	if err := checkPositive(p.Policy); err != nil {
		return nil, err
	}
	if p.Per%time.Second != 0 || p.Per > 300*time.Second || p.Calendar != NotCalendar {
		return nil, &ParamError{Field: "per", Found: p.PerString(), Want: "want a whole number of seconds from 1s to 5m (renewal-period: at most 300)"}
	}
	base := Params{Policy: p.Policy}
	switch p.Tier {
	case "", AzureClassic:
	case AzureV2:
		if p.IncrementLate {
			return nil, &ParamError{Field: "increment-condition", Found: "true", Want: "modelled for tier classic only (the v2 token bucket's reading is not documented)"}
		}
		return newTokenBucketLimiter(Params{Policy: Policy{Rate: p.Rate, Per: p.Per, Burst: p.Rate}})
	default:
		return nil, &ParamError{Field: "tier", Found: p.Tier, Want: "want classic or v2 (API Management's tiers)"}
	}
	l, err := newSlidingLogLimiter(base)
	if err != nil || !p.IncrementLate {
		return l, err
	}
	sl := l.(*SlidingLog)
	sl.rings.first = costLogFirstSlots // a window may hold calls+1 entries
	return &AzureRateLimit{SlidingLog: sl}, nil
}

// Decide admits the request iff the window's count, before it, is at
// most calls (increment-condition: the counter is increased after the
// response).
func (a *AzureRateLimit) Decide(now time.Duration, key Key, cost int64) Decision {
	a.flush(now)
	s := a.get(now, key)
	s.prune(now, &a.rings)
	if s.sum > a.limit {
		return Decision{Verdict: Reject, RetryAfter: s.waitFor(now, 1, a.limit+1)}
	}
	// a cost above calls is logged as calls+1: the window holding it is
	// over calls whatever its size (as count-rejected logs, sliding-log)
	a.log(s, now+a.window, min(cost, a.limit+1))
	a.logged(key, s, now+a.window)
	return Decision{Verdict: Accept}
}
