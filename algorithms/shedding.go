package algorithms

import (
	"fmt"
	"math"
	"math/bits"
	"time"
	"unsafe"
)

// The priority-shedding rows limit the requests in flight per key, as the
// concurrency row does, and give some of them precedence by the value of
// one attribute of the request (Params.ClassBy): a partition of Netflix's
// partitioned limiter, a critical method of Stripe's fleet usage load
// shedder. Both run as the concurrency row: a request of cost c counts as c
// units, never delayed, in flight during [t, t+S) for the backend's service
// time S (Params.Service); one that completes at exactly t no longer counts
// at t. With S = 0 nothing is ever in flight: every request that could fit
// an empty key is admitted and no state is kept.
//
// State per key: the FIFO of (completion, cost, class) of the requests in
// flight, which complete in admission order, the units in flight of every
// class and in all; 64 bytes plus 8 per class, plus 24 bytes per request in
// flight (every live entry is counted at every instant, as concurrency's).
// A key is released when its last request completes.

// NetflixPartitioned is Netflix concurrency-limits' partitioned limiter
// (AbstractPartitionedLimiter.java) over a FixedLimit of max (Params.Max,
// Burst when 0) requests in flight.
//
// Rule, from acquire(): a request of partition p (the partition named by its
// attribute's value; the unknown partition when the value is no
// partition's or the request carries none) is admitted iff the units in
// flight plus c are at most max, or p's units in flight plus c are at most
// p's limit. The partition's limit is Partition.updateLimit's
// max(1, ceil(max * percent)), computed once as Java computes it: the
// double product of max and the percent, rounded up (one IEEE 754
// multiplication, the same on every platform); the unknown partition's is
// 0. So a partition borrows whatever the others leave while the total is
// under max, and keeps its guaranteed share once it is over: with max 10
// and live 0.9, batch 0.1, batch gets 1 in flight however busy live is,
// and live 9 however busy batch is. For c = 1 this is the source's
// "getInflight() >= getLimit()" then "busy >= limit" exactly; a cost c
// counts as c acquisitions at once. The builder's check that the percents
// add up to at most 1.0 is done in file order in doubles, as
// Double::sum over the LinkedHashMap does.
//
// RetryAfter: the shortest wait until enough requests in flight have
// completed for either condition to hold. Never when c > max.
type NetflixPartitioned struct{ shedder }

// StripeFleetShedder is Stripe's fleet usage load shedder ("Scaling your
// API with rate limiters", stripe.com/blog/rate-limiters): "We divide up
// our traffic into two types: critical API methods (e.g. creating charges)
// and non-critical methods (e.g. listing charges) ... We always reserve a
// fraction of our infrastructure for critical requests. If our reservation
// number is 20%, then any non-critical request over their 80% allocation
// would be rejected with status code 503." Stripe documents behaviour;
// the reading modelled: the fleet holds max (Params.Max, Burst when 0)
// requests in flight per key; the non-critical allocation is
// A = floor(max * (1 - reserve)), computed in integers from the reserve in
// millionths. A request whose attribute's value is one of the critical
// values is admitted iff the units in flight plus c are at most max; any
// other request iff, besides, the non-critical units in flight plus c are
// at most A.
//
// RetryAfter: the shortest wait until enough requests in flight have
// completed for the request's conditions to hold. Never when c > max, and
// for a non-critical request when c > A.
type StripeFleetShedder struct{ shedder }

var (
	_ Limiter     = (*NetflixPartitioned)(nil)
	_ Attributed  = (*NetflixPartitioned)(nil)
	_ Reserver    = (*NetflixPartitioned)(nil)
	_ stateHolder = (*NetflixPartitioned)(nil)
	_ Inspector   = (*NetflixPartitioned)(nil)
	_ Limiter     = (*StripeFleetShedder)(nil)
	_ Attributed  = (*StripeFleetShedder)(nil)
	_ Reserver    = (*StripeFleetShedder)(nil)
	_ stateHolder = (*StripeFleetShedder)(nil)
	_ Inspector   = (*StripeFleetShedder)(nil)
)

// shedFlight is one request in flight of a priority-shedding row.
type shedFlight struct {
	until time.Duration // its completion
	cost  int64
	class int32
}

const shedFlightBytes = int64(unsafe.Sizeof(shedFlight{}))

// shedState is one key's requests in flight.
type shedState struct {
	q     []shedFlight // q[head:] in flight, in completion order
	head  int
	busy  []int64 // units in flight by class
	total int64
}

// shedder is the rule shared by the priority-shedding rows: classes, the
// units each may hold, and how a class's request is judged (admits).
type shedder struct {
	keyed[shedState]
	expiring expiryFIFO
	name     string
	max      int64
	service  time.Duration
	by       int     // Params.ClassBy
	classOf  []int32 // by value id, the class of a value; beyond it, other
	other    int32   // the class of a request with no named value
	limits   []int64 // by class: netflix's partition limits; stripe's [A, max]
	names    []string
	// netflix: a request is admitted when the total or its class has
	// room; stripe: when the total and (for the non-critical class)
	// its class have room
	either bool
}

func newShedder(name string, p Params, classes []Class) (shedder, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return shedder{}, err
	}
	if p.Max < 0 {
		return shedder{}, &ParamError{"max", fmt.Sprint(p.Max), "want at least 1 request in flight per key (0 means the burst)"}
	}
	if p.Service < 0 || p.Service > maxExact {
		return shedder{}, &ParamError{"service", p.Service.String(),
			fmt.Sprintf("want a service time from 0 to %v", time.Duration(maxExact))}
	}
	if p.ClassBy < 0 {
		return shedder{}, &ParamError{"by", fmt.Sprint(p.ClassBy), "want an attribute of the requests"}
	}
	s := shedder{name: name, max: p.Max, service: p.Service, by: p.ClassBy}
	if s.max == 0 {
		s.max = p.Burst
	}
	for i, c := range classes {
		if c.Value == NoKey {
			continue
		}
		for int(c.Value) >= len(s.classOf) {
			s.classOf = append(s.classOf, -1)
		}
		s.classOf[c.Value] = int32(i)
	}
	for _, c := range classes {
		s.names = append(s.names, c.Name)
	}
	return s, nil
}

// finish sizes the state table's entries once the classes are known.
func (s *shedder) finish() {
	for i := range s.classOf {
		if s.classOf[i] < 0 {
			s.classOf[i] = s.other
		}
	}
	size := int64(unsafe.Sizeof(shedState{})) + 8*int64(len(s.limits))
	s.keyed = newKeyed(size, func(st *shedState) time.Duration {
		if st.head == len(st.q) {
			return math.MinInt64
		}
		return st.q[len(st.q)-1].until
	})
}

func newNetflixPartitionedLimiter(p Params) (Limiter, error) {
	if err := checkOptions("netflix-partitioned", p, "max", "by", "partitions"); err != nil {
		return nil, err
	}
	if len(p.Partitions) == 0 {
		return nil, &ParamError{"partitions", "none", "want at least one partition, e.g. {live: 0.9, batch: 0.1}"}
	}
	s, err := newShedder("netflix-partitioned", p, p.Partitions)
	if err != nil {
		return nil, err
	}
	sum := 0.0
	for _, c := range p.Partitions {
		if !(c.Share >= 0 && c.Share <= 1) {
			return nil, &ParamError{"partitions", fmt.Sprintf("%s: %v", c.Name, c.Share), "want a percent from 0.0 to 1.0, as Partition's builder checks"}
		}
		sum += c.Share
		// Partition.updateLimit: (int)Math.max(1, Math.ceil(totalLimit * percent))
		s.limits = append(s.limits, max(1, int64(math.Ceil(float64(s.max)*c.Share))))
	}
	if sum > 1 {
		return nil, &ParamError{"partitions", fmt.Sprint(sum), "want percents that add up to at most 1.0, as AbstractPartitionedLimiter checks (summed in file order, in doubles)"}
	}
	s.other = int32(len(s.limits))
	s.limits = append(s.limits, 0) // the unknown partition
	s.names = append(s.names, "unknown")
	s.either = true
	s.finish()
	return &NetflixPartitioned{s}, nil
}

func newStripeFleetShedderLimiter(p Params) (Limiter, error) {
	if err := checkOptions("stripe-fleet-shedder", p, "max", "by", "critical", "reserve"); err != nil {
		return nil, err
	}
	if p.Reserve < 0 || p.Reserve >= 1_000_000 {
		return nil, &ParamError{"reserve", fmt.Sprint(float64(p.Reserve) / 1e6), "want a fraction from 0 to below 1, e.g. 0.2"}
	}
	s, err := newShedder("stripe-fleet-shedder", p, nil)
	if err != nil {
		return nil, err
	}
	// class 0: non-critical, its allocation A; class 1: critical, the
	// whole fleet
	for _, c := range p.Critical {
		if c.Value == NoKey {
			continue
		}
		for int(c.Value) >= len(s.classOf) {
			s.classOf = append(s.classOf, -1)
		}
		s.classOf[c.Value] = 1
	}
	s.names = []string{"non-critical", "critical"}
	alloc := int64(mulDiv(uint64(s.max), uint64(1_000_000-p.Reserve), 1_000_000))
	s.limits = []int64{alloc, s.max}
	s.finish()
	return &StripeFleetShedder{s}, nil
}

// mulDiv returns floor(a*b/d) for 0 < b <= d, exactly.
func mulDiv(a, b, d uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	q, _ := bits.Div64(hi, lo, d)
	return q
}

// ByAttributes reports whether the row reads an attribute of the requests.
func (s *shedder) ByAttributes() bool { return s.by > 0 }

// Decide decides a request that carries no attribute: the unknown
// partition's, or a non-critical one.
func (s *shedder) Decide(now time.Duration, key Key, cost int64) Decision {
	return s.decide(now, key, s.other, cost)
}

// DecideAttrs decides a request classed by its attribute.
func (s *shedder) DecideAttrs(now time.Duration, attrs []Key, cost int64) Decision {
	class := s.other
	if s.by < len(attrs) {
		if v := attrs[s.by]; int(v) < len(s.classOf) {
			class = s.classOf[v]
		}
	}
	return s.decide(now, attrs[0], class, cost)
}

// fits reports whether a request of cost in class may ever be admitted:
// on an empty key.
func (s *shedder) fits(class int32, cost int64) bool {
	if s.either {
		return cost <= s.max || cost <= s.limits[class]
	}
	return cost <= s.limits[class] && cost <= s.max
}

func (s *shedder) decide(now time.Duration, key Key, class int32, cost int64) Decision {
	if !s.fits(class, cost) {
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	if s.service == 0 {
		return Decision{Verdict: Accept}
	}
	if n := s.expiring.popDue(now); n > 0 {
		s.addBytes(-shedFlightBytes * int64(n))
	}
	st := s.get(now, key)
	if st.busy == nil {
		st.busy = make([]int64, len(s.limits))
	}
	st.prune(now)
	totalOK := st.total+cost <= s.max
	classOK := st.busy[class]+cost <= s.limits[class]
	admit := totalOK && classOK
	if s.either {
		admit = totalOK || classOK
	}
	if !admit {
		return Decision{Verdict: Reject, RetryAfter: s.wait(st, now, class, cost)}
	}
	if st.head > 0 && st.head >= len(st.q)/2 {
		// keep the FIFO at most twice what is in flight
		st.q, st.head = st.q[:copy(st.q, st.q[st.head:])], 0
	}
	st.q = append(st.q, shedFlight{until: now + s.service, cost: cost, class: class})
	st.busy[class] += cost
	st.total += cost
	s.expiring.push(now + s.service)
	s.addBytes(shedFlightBytes)
	s.touch(key, shedFlightBytes*int64(len(st.q)-st.head))
	return Decision{Verdict: Accept}
}

// prune drops the requests completed by now.
func (st *shedState) prune(now time.Duration) {
	for st.head < len(st.q) && st.q[st.head].until <= now {
		f := st.q[st.head]
		st.busy[f.class] -= f.cost
		st.total -= f.cost
		st.head++
	}
}

// wait is the shortest wait from now until a request of cost in class
// would be admitted, nothing else arriving (fits must hold).
func (s *shedder) wait(st *shedState, now time.Duration, class int32, cost int64) time.Duration {
	total := s.until(st, now, -1, s.max-cost)
	own := s.until(st, now, class, s.limits[class]-cost)
	if s.either {
		return min(total, own)
	}
	return max(total, own)
}

// until returns the wait from now until the units in flight of class (all
// classes when class < 0) are at most bound; math.MaxInt64 when bound < 0.
func (s *shedder) until(st *shedState, now time.Duration, class int32, bound int64) time.Duration {
	if bound < 0 {
		return math.MaxInt64
	}
	sum := st.total
	if class >= 0 {
		sum = st.busy[class]
	}
	if sum <= bound {
		return 0
	}
	for _, f := range st.q[st.head:] {
		if class >= 0 && f.class != class {
			continue
		}
		if sum -= f.cost; sum <= bound {
			return f.until - now
		}
	}
	return math.MaxInt64 // not reached: everything completes
}

// liveAt drops the completed requests from the bytes, then releases the
// keys that are fresh.
func (s *shedder) liveAt(now time.Duration) (keys, bytes int64) {
	if n := s.expiring.popDue(now); n > 0 {
		s.addBytes(-shedFlightBytes * int64(n))
	}
	return s.keyed.liveAt(now)
}

// Inspect returns key's gauges at now: "in flight", then each class's
// units in flight, named by the class.
func (s *shedder) Inspect(now time.Duration, key Key) []Gauge {
	s.expire(now)
	st, _ := s.stateOf(key)
	total := int64(0)
	busy := make([]int64, len(s.limits))
	for _, f := range st.q[st.head:] {
		if f.until > now {
			total += f.cost
			busy[f.class] += f.cost
		}
	}
	g := []Gauge{{"in flight", float64(total)}, {"max", float64(s.max)}}
	for c, n := range busy {
		g = append(g, Gauge{s.names[c] + " in flight", float64(n)})
	}
	return g
}
