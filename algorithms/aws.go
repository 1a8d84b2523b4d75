package algorithms

import (
	"fmt"
	"time"
	"unsafe"
)

// The periods of an aws-usage-plan quota, as the row's per spells them:
// API Gateway's QuotaSettings period DAY, WEEK or MONTH.
const (
	awsDay  = 24 * time.Hour
	awsWeek = 7 * awsDay
	// awsMonday is the offset of the first Monday after the Unix epoch (a
	// Thursday) from a multiple of 7 days: weeks start on Mondays, UTC.
	awsMonday = 4 * awsDay
)

// AWSUsagePlan is the quota of an Amazon API Gateway usage plan
// (docs.aws.amazon.com, API Gateway REST API Reference, QuotaSettings:
// limit, offset, period; the developer guide's "Usage plans and API keys"),
// counted per API key: the scenario's key, or an attribute through an
// all-of row's by. API Gateway documents behaviour; the readings modelled:
//
// Rule: "the target maximum number of requests that can be made in a
// given time period", L (rate) per period (per): 24h is DAY, a UTC day
// from midnight; 168h is WEEK, from Monday 00:00 UTC (the week's first
// day is not documented: ISO 8601's is read); 1mo is MONTH, a calendar
// month in UTC. A request of cost c in period k is admitted iff the
// cost counted in k plus c is at most k's limit; rejected requests are not
// counted. offset (the option quota-offset): "the number of requests
// subtracted from the given limit in the initial time period", since "the
// plan might start in the middle of the week or month" (CloudFormation's
// QuotaSettings): the initial period is the one holding the first request
// the row decides (the plan starts with the traffic), whose limit is L -
// offset for every key; every later period's is L.
//
// "Best-effort", "in some cases clients can exceed the targets that you
// set": the reading modelled is one counter, exact; what lets clients
// exceed it in API Gateway (its counts spread over its fleet) is not
// modelled.
//
// RetryAfter: to the end of the period (the next has the whole L); Never
// when c > L.
//
// State per key: the period's index and count (fixed-window's), 16 bytes,
// released at the period's end.
type AWSUsagePlan struct {
	keyed[fixedWindowState]
	limit, offset int64
	per           time.Duration // awsDay or awsWeek; 0 for months
	first         int64         // the initial period's index, once started
	started       bool
}

var (
	_ Limiter     = (*AWSUsagePlan)(nil)
	_ Reserver    = (*AWSUsagePlan)(nil)
	_ stateHolder = (*AWSUsagePlan)(nil)
	_ Inspector   = (*AWSUsagePlan)(nil)
)

func newAWSUsagePlanLimiter(p Params) (Limiter, error) {
	if err := checkOptions("aws-usage-plan", p, "quota-offset"); err != nil {
		return nil, err
	}
	if err := checkPositive(p.Policy); err != nil {
		return nil, err
	}
	q := &AWSUsagePlan{limit: p.Rate, offset: p.QuotaOffset}
	switch {
	case p.Calendar == CalendarMonth:
	case p.Calendar == NotCalendar && (p.Per == awsDay || p.Per == awsWeek):
		q.per = p.Per
	default:
		return nil, &ParamError{Field: "per", Found: p.PerString(), Want: "want 24h, 168h or 1mo (a usage plan's period DAY, WEEK or MONTH)"}
	}
	if p.QuotaOffset < 0 || p.QuotaOffset > p.Rate {
		return nil, &ParamError{Field: "quota-offset", Found: fmt.Sprint(p.QuotaOffset), Want: fmt.Sprintf("want 0 to the limit, %d (requests subtracted in the initial period)", p.Rate)}
	}
	q.keyed = newKeyed(int64(unsafe.Sizeof(fixedWindowState{})), func(s *fixedWindowState) time.Duration { return q.end(s.win) })
	return q, nil
}

// period returns the index of the period holding t and its end.
func (q *AWSUsagePlan) period(t time.Duration) (k int64, end time.Duration) {
	if q.per == 0 {
		k, _, end = calendarWindow(t, CalendarMonth)
		return k, end
	}
	k, _ = windowAt(t-awsMonday%q.per, q.per)
	return k, q.end(k)
}

// end returns the end of period k.
func (q *AWSUsagePlan) end(k int64) time.Duration {
	if q.per == 0 {
		return calendarWindowStart(k+1, CalendarMonth)
	}
	return time.Duration(k+1)*q.per + awsMonday%q.per
}

// limitOf returns period k's limit: L, less the offset in the initial one.
func (q *AWSUsagePlan) limitOf(k int64) int64 {
	if k == q.first {
		return q.limit - q.offset
	}
	return q.limit
}

// Decide counts the request in its key's period.
func (q *AWSUsagePlan) Decide(now time.Duration, key Key, cost int64) Decision {
	s := q.get(now, key)
	d, counted := q.decideOn(s, now, cost)
	if counted {
		q.touch(key, 0)
	}
	return d
}

// decideOn decides a request of cost at now on s, counting it there when
// it is admitted; the first call starts the plan.
func (q *AWSUsagePlan) decideOn(s *fixedWindowState, now time.Duration, cost int64) (Decision, bool) {
	k, end := q.period(now)
	if !q.started {
		q.first, q.started = k, true
	}
	if cost > q.limit {
		return Decision{Verdict: Reject, RetryAfter: Never}, false
	}
	var count int64
	if s.win == k {
		count = s.count
	}
	if count > q.limitOf(k)-cost {
		return Decision{Verdict: Reject, RetryAfter: end - now}, false
	}
	s.win, s.count = k, count+cost
	return Decision{Verdict: Accept}, true
}

// Inspect returns key's gauges at now: "count", the cost counted in its
// period, and "limit", the period's limit.
func (q *AWSUsagePlan) Inspect(now time.Duration, key Key) []Gauge {
	q.expire(now)
	s, _ := q.stateOf(key)
	k, _ := q.period(now)
	var count int64
	if s.win == k {
		count = s.count
	}
	return []Gauge{{"count", float64(count)}, {"limit", float64(q.limitOf(k))}}
}
