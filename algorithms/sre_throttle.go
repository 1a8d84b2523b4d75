package algorithms

import (
	"math/rand/v2"
	"time"

	"github.com/ratesim/ratesim/adaptive"
	"github.com/ratesim/ratesim/internal/prefetch"
)

// SREThrottle is the client-side adaptive throttling of the Google SRE book
// (chapter 21, "Handling Overload"), package adaptive's Throttle, as a row:
// each key is a client that rejects its own request locally, before it
// reaches the backend, with probability
//
//	p = max(0, (requests - k*accepts) / (requests + 1))
//
// over the key's last window (k default 2, window default 2m, the book's),
// requests counting every request the client attempted (its own rejections
// included) and accepts the requests the backend answered without error in
// time (Sample with Served: a shed, an error or a timeout is not an
// accept). The draw compared with p is a uniform [0, 1) value taken for
// every request, in decision order, from the scenario's seed on a stream
// of its own; a request's cost does not enter (the book counts requests).
//
// RetryAfter: the backend's mean service time (Params.Service), at least
// 1ns, as the other adaptive rows: the client's throttle gives no hint.
//
// State per key: its two sums and the seconds of its window that hold
// counts, 32 bytes plus 16 a second (adaptive.Throttle), kept from the
// key's first request: at most 32 + 16*window/1s (1,952 bytes at 2m) for
// a key busy every second, 48 for a key seen in one second only.
type SREThrottle struct {
	t    *adaptive.Throttle
	draw func() float64 // the uniform [0, 1) draw of each request
	wait time.Duration
	// units in flight, for InFlight
	inflight int64
	mem      Memory
	// Prefetch's addresses (reused), and the keys it was last told of
	lines []uintptr
	prev  []Key
}

var (
	_ Limiter    = (*SREThrottle)(nil)
	_ Sampler    = (*SREThrottle)(nil)
	_ Reserver   = (*SREThrottle)(nil)
	_ Prefetcher = (*SREThrottle)(nil)
)

// sreSeedStream tells sre-throttle's draws apart from the other draws made
// from the scenario's seed.
const sreSeedStream = 0xbb67ae8584caa73b

func newSREThrottleLimiter(p Params) (Limiter, error) {
	if err := checkOptions("sre-throttle", p, "k", "window"); err != nil {
		return nil, err
	}
	c := adaptive.DefaultThrottleConfig()
	if p.K != 0 {
		c.K = p.K
	}
	if p.Window != 0 {
		c.Window = p.Window
	}
	t, err := adaptive.NewThrottle(c)
	if err != nil {
		return nil, paramError(err)
	}
	return &SREThrottle{t: t, draw: rand.New(rand.NewPCG(p.Seed, sreSeedStream)).Float64, wait: max(p.Service, 1)}, nil
}

// Decide draws, and admits the request unless the key's throttle drops it.
func (s *SREThrottle) Decide(now time.Duration, key Key, cost int64) Decision {
	admit := s.t.Admit(now, adaptive.Key(key), s.draw())
	s.account()
	if !admit {
		return Decision{Verdict: Reject, RetryAfter: s.wait}
	}
	s.inflight += cost
	return Decision{Verdict: Accept}
}

// account follows the state held: the keys, and the seconds they hold.
func (s *SREThrottle) account() {
	entries, most := s.t.Entries()
	n := int64(s.t.Keys())
	s.mem.KeysPeak = max(s.mem.KeysPeak, n)
	s.mem.BytesPeak = max(s.mem.BytesPeak, n*adaptive.KeyBytes+entries*adaptive.EntryBytes)
	s.mem.BytesPerKeyMax = max(s.mem.BytesPerKeyMax, adaptive.KeyBytes+int64(most)*adaptive.EntryBytes)
}

// InFlight returns the units admitted and not yet answered.
func (s *SREThrottle) InFlight() int64 { return s.inflight }

// Sample counts an accept when the backend served the request in time.
func (s *SREThrottle) Sample(now time.Duration, key Key, cost int64, _ time.Duration, _ int64, outcome Outcome) {
	s.t.OnResult(now, adaptive.Key(key), outcome == Served)
	s.inflight = max(s.inflight-cost, 0)
	s.account()
}

// Reserve makes room for the keys 0 to n-1 (Reserver).
func (s *SREThrottle) Reserve(n int) { s.t.Reserve(n) }

// Prefetch fetches the state of keys ahead of decisions on them
// (Prefetcher), in two steps, since a key's seconds are found through its
// counts: the counts of keys, and the seconds of the keys it was told of
// the time before (their counts, fetched then, are in cache by now). A
// hint, which changes nothing.
func (s *SREThrottle) Prefetch(keys []Key, _ time.Duration) {
	lines := s.lines[:0]
	for _, key := range s.prev {
		lines = s.t.AppendAddrs(lines, adaptive.Key(key), true)
	}
	for _, key := range keys {
		lines = s.t.AppendAddrs(lines, adaptive.Key(key), false)
	}
	prefetch.Lines(lines)
	s.lines = lines
	s.prev = append(s.prev[:0], keys...)
}

// Memory reports the keys with state.
func (s *SREThrottle) Memory() Memory { return s.mem }
