// Package algorithms implements the rate-limiting algorithms that ratesim
// compares, one file per algorithm, each behind the small Limiter interface.
//
// Every limiter is a pure function of the calls it has been given: there is
// no clock inside. Time is passed to Decide as a virtual instant, an integer
// count of nanoseconds from the Unix epoch, and calls must come in
// non-decreasing time order. Every decision of the exact algorithms is made in
// integer arithmetic; only the x-time-rate row, which runs the real
// golang.org/x/time/rate library, uses floating point.
//
// State is kept per key. Keys are dense integer ids handed out by the caller
// (the engine interns key names), so per-key state lives in slices indexed by
// id. A key's state is released once it is indistinguishable from a fresh
// key's, as a Redis-backed limiter lets the key expire; each limiter counts
// the keys and bytes it holds and reports the peaks through Memory.
package algorithms

import (
	"math"
	"time"
)

// Key identifies one rate-limited key (a client, an IP, a tenant). Keys are
// dense ids from 0 assigned by the caller; a limiter sizes its state tables
// to the largest id it has seen.
type Key uint32

// Verdict is the outcome of one decision.
type Verdict uint8

const (
	// Accept admits the request now.
	Accept Verdict = iota
	// Delay admits the request and releases it to the backend after
	// Decision.Delay (> 0).
	Delay
	// Reject refuses the request; Decision.RetryAfter says when the same
	// request would be admitted if nothing else arrived.
	Reject
)

// String returns the verdict as docs/algorithms.md spells it: accept, delay or reject.
func (v Verdict) String() string {
	switch v {
	case Accept:
		return "accept"
	case Delay:
		return "delay"
	case Reject:
		return "reject"
	}
	return "unknown"
}

// Never is the RetryAfter of a request that can never be admitted (its cost
// exceeds the burst or the concurrency maximum).
const Never time.Duration = -1

// Decision is the verdict on one request.
type Decision struct {
	Verdict Verdict
	// Delay is the time from arrival to release to the backend: > 0 when
	// Verdict is Delay, 0 otherwise. A release that falls between two
	// nanoseconds is rounded up to the next one.
	Delay time.Duration
	// RetryAfter is set on Reject only: the shortest wait after which this
	// same request would be admitted if nothing else arrived, or Never.
	RetryAfter time.Duration
	// Granted is set on a partial admission only, by the rows that grant
	// less than asked (redis-rate-at-most, redis_rate's AllowAtMost): the
	// cost admitted, from 1 to the request's cost minus 1, with Verdict
	// Accept or Delay. 0 means the request's whole cost.
	Granted int64
}

// GrantedOf returns the cost d admits of a request of cost: Granted when
// set, else cost, and 0 for a rejection.
func GrantedOf(d Decision, cost int64) int64 {
	switch {
	case d.Verdict == Reject:
		return 0
	case d.Granted > 0:
		return d.Granted
	}
	return cost
}

// Limiter decides on requests. Calls to Decide must come in non-decreasing
// order of now; a Limiter is not safe for concurrent use (the engine runs
// each limiter on its own goroutine).
type Limiter interface {
	// Decide returns the verdict on a request of the given cost (>= 1)
	// arriving at now for key.
	Decide(now time.Duration, key Key, cost int64) Decision
	// Memory reports the per-key state held: the peaks since the limiter
	// was made.
	Memory() Memory
}

// NoKey stands for an attribute that a request does not carry, in
// Attributed's attrs.
const NoKey Key = math.MaxUint32

// Attributed is implemented by a limiter whose limits may count by
// different attributes of a request (an all-of row with a per-address
// limit beside a global one). When ByAttributes reports true, the engine
// calls DecideAttrs instead of Decide: attrs[0] is the request's key and
// attrs[j] the id of its attribute j-1's value (attributes in the order
// the scenario's traffic lists them, values numbered per attribute from
// 0), NoKey for an attribute the request does not carry. attrs is only
// read during the call.
type Attributed interface {
	ByAttributes() bool
	DecideAttrs(now time.Duration, attrs []Key, cost int64) Decision
}

// RouteDecider is implemented by a limiter whose rule depends on the
// request's route: one gateway limit whose state several routes share,
// each checking it with its own parameters (an nginx zone named by several
// locations, Params.NginxRoutes). The engine calls DecideRoute instead of
// Decide, with the request's route (traffic.Arrival.Route).
type RouteDecider interface {
	DecideRoute(now time.Duration, key Key, cost int64, route uint16) Decision
}

// Memory is what a limiter reports of the state it holds.
type Memory struct {
	// BytesPerKeyMax is the most bytes of state any one key held at once,
	// computed from the Go types (fixed fields plus live entries).
	BytesPerKeyMax int64
	// KeysPeak is the most keys holding state at one instant.
	KeysPeak int64
	// BytesPeak is the most bytes of state held over all keys at one
	// instant.
	BytesPeak int64
}

// Reserver is implemented by the limiters of this package whose state is
// a table indexed by key (those built on keyed, all-of, nginx's zone and
// sre-throttle); concurrency, none and the adaptive concurrency limits
// keep no such table (their units in flight are in a small table of the
// keys in flight) and take no reservation. Reserve(n)
// sizes the per-key state tables for the keys 0 to n-1 up front, so that
// no decision on them grows (and copies) a table. A caller that knows how
// many keys it will use (the engine, after interning the key names) calls
// it once before the first Decide; without it the tables grow as keys
// appear, as append grows a slice (doubling, then by a quarter). It changes
// no decision and no Memory figure, and never shrinks a table.
type Reserver interface {
	Reserve(n int)
}

// Prefetcher is implemented by the limiters built on keyed, nginx's zone
// (as a no-op) and sre-throttle. Prefetch(keys,
// horizon) tells the limiter that decisions on keys come next, at instants
// up to horizon, so that it can load their state ahead (over many keys, the
// state of a key decided on is seldom in cache, and loads made together
// overlap their misses). It is a hint: it changes no decision and no Memory
// figure, whatever it is given.
type Prefetcher interface {
	Prefetch(keys []Key, horizon time.Duration)
}

// stateHolder is implemented by every limiter so that tests can check that
// state is released once a key is fresh again: liveAt expires what is due at
// now and returns the keys and bytes alive.
type stateHolder interface {
	liveAt(now time.Duration) (keys, bytes int64)
}

// Gauge is one named figure of a key's state, for charts only: a token
// count, a queue length, a window's count. Its value may be fractional
// (tokens refill continuously); no decision ever reads it.
type Gauge struct {
	Name  string
	Value float64
}

// Inspector is implemented by limiters whose per-key state can be charted.
// Inspect returns key's gauges at now, in a fixed order of names; now must
// not be earlier than the last Decide (it may release state that has
// become fresh, which changes no decision).
type Inspector interface {
	Inspect(now time.Duration, key Key) []Gauge
}
