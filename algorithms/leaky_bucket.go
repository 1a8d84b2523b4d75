package algorithms

import (
	"time"
	"unsafe"
)

// LeakyBucket is the leaky bucket as a queue (J. Turner's leaky bucket, the
// shaper of Tanenbaum's Computer Networks): requests wait in a FIFO of
// bounded size that drains at a constant rate, so the backend sees them
// exactly D = W/L apart. It is GCRA with the excess spent waiting instead of
// refused: the same requests are admitted, but a burst reaches the backend
// smoothed instead of at once.
//
// Rule: D = W/L. A key keeps TAT, the instant its queue is empty again. The
// queue holds at most B requests (one leaving now and B-1 waiting). A request
// of cost c at t is admitted iff
//
//	max(TAT, t) + c*D - t <= B*D
//
// it is released at max(TAT, t), so Delay = max(TAT, t) - t rounded up to a
// nanosecond (never early), and then TAT = max(TAT, t) + c*D. D need not be a
// whole number of nanoseconds: TAT is exact (see fracTime), releases are
// rounded up one by one and never accumulate rounding.
//
// RetryAfter: as GCRA, max(TAT, t) + c*D - B*D - t rounded up; Never when
// c > B. The leaky bucket takes no options.
//
// State per key: TAT, whole nanoseconds plus a remainder over L (the queue
// length is (TAT - t)/D), two int64, 16 bytes. A key's state is released at
// the first whole nanosecond >= TAT, when the queue is empty.
//
// Redis: redislua/lua/leaky_bucket.lua is this rule as a Lua script, decision for
// decision (`ratesim lua leaky-bucket` prints it; redislua's tests hold it to
// this type on randomised traces).
type LeakyBucket struct {
	keyed[leakyBucketState]
	leakyBucketRule
}

// leakyBucketRule is LeakyBucket's rule over one key's state, which its
// Limiter and its Table (a cluster's store) both call.
//
// Time going back (a store passed the nodes' clocks) needs nothing more, as
// for GCRA: a request stamped before others finds the queue longer ahead of
// it and waits (or is refused) accordingly; TAT never moves back.
type leakyBucketRule struct {
	capacity int64    // B
	spacing  fracRate // D = W/L
	plainState[leakyBucketState]
}

// leakyBucketState is one key's queue: the instant it is empty again. The
// zero value is an empty queue.
type leakyBucketState struct {
	tat fracTime
}

var (
	_ Limiter     = (*LeakyBucket)(nil)
	_ Reserver    = (*LeakyBucket)(nil)
	_ stateHolder = (*LeakyBucket)(nil)
	_ Inspector   = (*LeakyBucket)(nil)
)

func newLeakyBucketLimiter(p Params) (Limiter, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("leaky-bucket", p); err != nil {
		return nil, err
	}
	lb := &LeakyBucket{leakyBucketRule: *newLeakyBucketRule(p)}
	lb.keyed = newKeyed(int64(unsafe.Sizeof(leakyBucketState{})), func(s *leakyBucketState) time.Duration {
		return s.tat.ceil()
	})
	return lb, nil
}

func newLeakyBucketRule(p Params) *leakyBucketRule {
	return &leakyBucketRule{capacity: p.Burst, spacing: newFracRate(p.Rate, p.Per)}
}

// Decide queues the request if key's queue has room and returns its wait.
func (lb *LeakyBucket) Decide(now time.Duration, key Key, cost int64) Decision {
	s := lb.get(now, key)
	// as GCRA: before 0 the zero TAT is not in the past
	d, queued := lb.decide(s, now >= 0 || lb.isLive(key), now, cost)
	if queued {
		lb.touch(key, 0)
	}
	return d
}

func (lb *leakyBucketRule) decide(s *leakyBucketState, known bool, now time.Duration, cost int64) (Decision, bool) {
	if cost > lb.capacity {
		return Decision{Verdict: Reject, RetryAfter: Never}, false
	}
	r := lb.spacing
	t := fracAt(now)
	release := t // a fresh key's queue is empty
	if known {
		release = fracMax(s.tat, t)
	}
	wait := r.sub(release, t)           // queued work ahead of this request
	room := r.times(lb.capacity - cost) // the most it may wait: (B-c)*D
	if wait.after(room) {
		return Decision{Verdict: Reject, RetryAfter: r.sub(wait, room).ceil()}, false
	}
	s.tat = r.add(release, r.times(cost))
	if d := wait.ceil(); d > 0 {
		return Decision{Verdict: Delay, Delay: d}, true
	}
	return Decision{Verdict: Accept}, true
}

// Inspect returns key's gauges at now: "queue", the requests waiting or
// being released at now, (max(TAT, now) - now)/D, and "capacity", B. It
// releases what is fresh by now and changes no live key's state.
func (lb *LeakyBucket) Inspect(now time.Duration, key Key) []Gauge {
	lb.expire(now)
	s, known := lb.stateOf(key)
	return lb.gauges(&s, known, now)
}

func (lb *leakyBucketRule) gauges(s *leakyBucketState, known bool, now time.Duration) []Gauge {
	t := fracAt(now)
	var queue float64
	if known || now >= 0 {
		queue = lb.spacing.count(lb.spacing.sub(fracMax(s.tat, t), t))
	}
	return []Gauge{{"queue", queue}, {"capacity", float64(lb.capacity)}}
}
