package algorithms

import "time"

// ConcurrencyModel is the concurrency limiter in front of a backend model
// (docs/backend.md: with a backend with workers, the concurrency limiter
// learns its completions from the model): it cannot know when a request will
// be answered, so it learns it. A request admitted at t stays in flight
// until Sample is called for it: when its client has its answer, a shed
// or an error, or stops waiting (what a gateway's semaphore sees: the
// response passes back, or the client's connection closes).
//
// Rule: a request of cost c counts as c units; it is admitted iff the units
// in flight for its key, plus c, are at most max (Params.Max, Burst when
// 0), as Concurrency's rule; c > max is rejected with retry_after Never.
//
// RetryAfter: the backend's mean service time (Params.Service, which the
// scenario sets to the mean of its service distribution), an estimate,
// since no completion instant is known in advance: at least 1ns.
//
// State per key: the units in flight, 8 bytes; a key holds state while it
// has any (flights: a hash table of the keys in flight).
type ConcurrencyModel struct {
	max      int64
	wait     time.Duration
	inflight flights
	total    int64 // units in flight over every key
	mem      Memory
}

var (
	_ Limiter = (*ConcurrencyModel)(nil)
	_ Sampler = (*ConcurrencyModel)(nil)
)

// NewConcurrencyModel returns the concurrency limiter of p driven by
// completions; p is checked as the concurrency algorithm checks it.
func NewConcurrencyModel(p Params) (*ConcurrencyModel, error) {
	if _, err := newConcurrencyLimiter(p); err != nil {
		return nil, err
	}
	m := &ConcurrencyModel{max: p.Max, wait: max(p.Service, 1)}
	if m.max == 0 {
		m.max = p.Burst
	}
	return m, nil
}

// Decide admits the request iff its key's units in flight leave room for
// cost.
func (m *ConcurrencyModel) Decide(_ time.Duration, key Key, cost int64) Decision {
	if cost > m.max {
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	if m.inflight.get(key) > m.max-cost {
		return Decision{Verdict: Reject, RetryAfter: m.wait}
	}
	if cost > 0 && m.inflight.add(key, cost) {
		keys := int64(m.inflight.n)
		m.mem.KeysPeak = max(m.mem.KeysPeak, keys)
		m.mem.BytesPeak = max(m.mem.BytesPeak, 8*keys)
		m.mem.BytesPerKeyMax = 8
	}
	m.total += cost
	return Decision{Verdict: Accept}
}

// InFlight returns the units in flight over every key.
func (m *ConcurrencyModel) InFlight() int64 { return m.total }

// Sample takes a request out of flight (its sample is not needed).
func (m *ConcurrencyModel) Sample(_ time.Duration, key Key, cost int64, _ time.Duration, _ int64, _ Outcome) {
	m.complete(key, cost)
}

// complete takes cost units of key out of flight.
func (m *ConcurrencyModel) complete(key Key, cost int64) {
	m.total -= m.inflight.sub(key, cost)
}

// Memory reports the peaks.
func (m *ConcurrencyModel) Memory() Memory { return m.mem }
