package algorithms

import (
	"math"
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
// centers" ("Request rate calculation"; newer revisions add "with the
// exception of data centers associated with the same geographical
// location"), and within one, the blog above keeps the count of the
// servers a client's requests are spread over in memcached, incremented
// asynchronously: a server's counts reach the others later. In a
// cluster's local mode each node is a data center counting alone. In sync
// mode (docs/cluster.md) the nodes are the data centers (or servers) whose
// counts reach the others later: each decides on the counts it knows, its
// own plus those of the others that reached it at its last sync, with the
// rule above, and keeps its own block per key: a node blocks a key when the
// counts it knows trigger the rule, for the mitigation timeout, whatever
// the other nodes decide meanwhile; the requests it blocks are not counted
// and so never reach the others.
//
// State per key: sliding-window's two counts and the block's end, 32
// bytes, released when both are over: at max((k+2)*W, end).
type CloudflareRateLimit struct {
	keyed[cloudflareState]
	rule cloudflareRule
}

// cloudflareRule is the rule on one key's counts and block, wherever they
// are held: a data center's own state (CloudflareRateLimit) or the counts a
// sync node knows (NewWindowRule).
type cloudflareRule struct {
	slidingWindowRule
	timeout time.Duration // D
}

// BlockRule is a WindowRule that also blocks a key for a period after a
// trigger (cloudflare-rate-limit's mitigation timeout): a sync node keeps
// each key's block end beside its counts and decides with DecideBlocked
// instead of DecideCounts.
type BlockRule interface {
	WindowRule
	// DecideBlocked decides a request of cost at now on the counts of
	// now's window k and the one before (prev, cur), the key blocked until
	// blocked (none when now >= blocked; NoBlock for a key never
	// blocked, whatever the clock). It returns the decision,
	// whether cost is to be added to window k's count, and the key's block
	// end after the decision.
	DecideBlocked(now, blocked time.Duration, prev, cur, cost int64) (d Decision, counted bool, until time.Duration)
}

type cloudflareState struct {
	counts slidingWindowState
	// blocked is the end of the block XOR NoBlock, so that the zero state
	// has none even on a clock behind the run's start (a skewed node)
	blocked time.Duration
}

// NoBlock is a BlockRule's block end of a key never blocked: earlier than
// any clock.
const NoBlock = time.Duration(math.MinInt64)

// blockEnd returns the end of s's block (NoBlock for none).
func (s *cloudflareState) blockEnd() time.Duration { return s.blocked ^ NoBlock }

var (
	_ Limiter     = (*CloudflareRateLimit)(nil)
	_ Reserver    = (*CloudflareRateLimit)(nil)
	_ stateHolder = (*CloudflareRateLimit)(nil)
	_ Inspector   = (*CloudflareRateLimit)(nil)
	_ BlockRule   = (*cloudflareRule)(nil)
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
	c := &CloudflareRateLimit{rule: *newCloudflareRule(p)}
	c.keyed = newKeyed(int64(unsafe.Sizeof(cloudflareState{})), func(s *cloudflareState) time.Duration {
		return max(time.Duration(s.counts.win+2)*c.rule.window, s.blockEnd())
	})
	return c, nil
}

// newCloudflareRule returns the rule of p (validated by
// newCloudflareLimiter).
func newCloudflareRule(p Params) *cloudflareRule {
	return &cloudflareRule{slidingWindowRule: *newSlidingWindowRule(Params{Policy: p.Policy}), timeout: p.MitigationTimeout}
}

// Decide blocks the request while its key is blocked, else counts it in
// the sliding window, blocking the key for the mitigation timeout when it
// does not fit.
func (c *CloudflareRateLimit) Decide(now time.Duration, key Key, cost int64) Decision {
	s := c.get(now, key)
	k, _ := windowAt(now, c.rule.window)
	prev, cur := s.counts.countsIn(k)
	d, counted, until := c.rule.DecideBlocked(now, s.blockEnd(), prev, cur, cost)
	if counted {
		s.counts.win, s.counts.prev, s.counts.cur = k, prev, addSat(cur, cost)
	}
	if counted || until != s.blockEnd() {
		s.blocked = until ^ NoBlock
		c.touch(key, 0)
	}
	return d
}

// DecideBlocked implements BlockRule: a cost above L never fits and
// triggers nothing; a blocked key rejects and counts nothing; otherwise the
// sliding window decides, and a request it does not fit blocks the key
// until now + D (D > 0).
func (r *cloudflareRule) DecideBlocked(now, blocked time.Duration, prev, cur, cost int64) (Decision, bool, time.Duration) {
	if cost > r.limit {
		return Decision{Verdict: Reject, RetryAfter: Never}, false, blocked
	}
	if now < blocked {
		return Decision{Verdict: Reject, RetryAfter: r.waitFrom(now, blocked, prev, cur, cost)}, false, blocked
	}
	_, e := windowAt(now, r.window)
	d, counted := r.decideCounts(e, prev, cur, cost)
	if d.Verdict != Reject || r.timeout == 0 {
		return d, counted, blocked
	}
	end := now + r.timeout
	return Decision{Verdict: Reject, RetryAfter: r.waitFrom(now, end, prev, cur, cost)}, false, end
}

// waitFrom is the shortest wait from now for a request of cost blocked
// until end, the counts of now's window and the one before being prev and
// cur: to end, then sliding-window's wait on the counts as they stand at
// end.
func (r *cloudflareRule) waitFrom(now, end time.Duration, prev, cur, cost int64) time.Duration {
	k, _ := windowAt(now, r.window)
	ke, e := windowAt(end, r.window)
	switch ke {
	case k:
	case k + 1:
		prev, cur = cur, 0
	default:
		prev, cur = 0, 0
	}
	if r.admits(e, prev, cur, cost) {
		return end - now
	}
	return end - now + r.retryAfter(e, prev, cur, cost)
}

// Inspect returns key's gauges at now: "blocked", the seconds left of its
// block (0 when none), then sliding-window's gauges of its counts.
func (c *CloudflareRateLimit) Inspect(now time.Duration, key Key) []Gauge {
	c.expire(now)
	s, known := c.stateOf(key)
	blocked := 0.0
	if end := s.blockEnd(); now < end {
		blocked = (end - now).Seconds()
	}
	return append([]Gauge{{"blocked", blocked}}, c.rule.gauges(&s.counts, known, now)...)
}
