package traffic

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

// Rate is a total rate of Count requests per Per, as a scenario writes
// 10/s, 600/m, 5/100ms or 3600/h.
type Rate struct {
	Count int64
	Per   time.Duration
}

// Clients says which keys a source's requests go to: the single key Key
// when N is 0, otherwise N keys named Prefix-0 .. Prefix-(N-1).
type Clients struct {
	Key    string
	N      int
	Prefix string
}

func (c Clients) declare(k *Keys) {
	if c.N == 0 {
		k.Intern(c.Key)
		return
	}
	k.Range(c.Prefix, c.N)
}

// resolve returns the id of client 0 and the number of clients: client i
// has id base+i.
func (c Clients) resolve(k *Keys) (base uint32, n int) {
	if c.N == 0 {
		return k.Intern(c.Key), 1
	}
	return k.Range(c.Prefix, c.N), c.N
}

// Common holds the fields every source has.
type Common struct {
	Clients Clients
	Cost    int64         // >= 1
	Start   time.Duration // first instant the source may send at
	End     time.Duration // the source sends only before End; 0 = no end of its own
	// Retry overrides the scenario's client retry policy for this source's
	// requests; nil means the scenario's.
	Retry *RetryPolicy
}

// mulDiv returns floor(a*b/c) for a, b >= 0 and c > 0, with the product
// taken in 128 bits; ok is false when the quotient does not fit in an int64
// (it is then past any instant a time.Duration can hold).
func mulDiv(a, b, c int64) (q int64, ok bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 0, false // the quotient needs more than 64 bits
	}
	u, _ := bits.Div64(hi, lo, uint64(c))
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// Times sends at exactly the listed instants (absolute times, any order:
// they are sorted), for hand-made teaching traces. With several clients,
// every client sends at every instant, in client order.
type Times struct {
	Common
	At []time.Duration
}

// Burst makes every client send Count requests, request i at
// At + floor(i*Over/Count).
type Burst struct {
	Common
	At    time.Duration
	Count int64
	Over  time.Duration
}

// Steady sends request i at Start + floor(i*Rate.Per/Rate.Count) while that
// is before End; with N clients request i goes to client i mod N.
type Steady struct {
	Common
	Rate Rate
}

func (s *Times) Declare(k *Keys)  { s.Clients.declare(k) }
func (s *Burst) Declare(k *Keys)  { s.Clients.declare(k) }
func (s *Steady) Declare(k *Keys) { s.Clients.declare(k) }

// End of a times source is its last instant + 1ns (or its End if sooner).
func (s *Times) End() time.Duration {
	if len(s.At) == 0 {
		return 0
	}
	return capEnd(slices.Max(s.At)+1, s.Common.End)
}

// End of a burst is its last request's instant + 1ns (or its End if sooner).
func (s *Burst) End() time.Duration {
	if s.Count == 0 {
		return 0
	}
	last, _ := mulDiv(s.Count-1, int64(s.Over), s.Count) // < Over: fits
	return capEnd(s.At+time.Duration(last)+1, s.Common.End)
}

// End of a steady source is its own End: it runs to the scenario's
// duration unless it has one.
func (s *Steady) End() time.Duration { return s.Common.End }

func capEnd(natural, end time.Duration) time.Duration {
	if end > 0 && end < natural {
		return end
	}
	return natural
}

// gridStream walks a grid of (request index, client) in time order: every
// request index i has an instant at(i), non-decreasing in i, and is sent by
// every client (perClient) or by client i mod n.
type gridStream struct {
	at        func(i int64) (time.Duration, bool) // false: no request i
	base      uint32
	n         int64
	perClient bool
	cost      int64
	start     time.Duration
	end       time.Duration
	source    int32

	i, c int64
}

func (g *gridStream) Err() error { return nil }

func (g *gridStream) Next(a *Arrival) bool {
	for {
		t, ok := g.at(g.i)
		if !ok || (g.end > 0 && t >= g.end) {
			return false
		}
		client := g.i % g.n
		if g.perClient {
			client = g.c
			g.c++
			if g.c == g.n {
				g.c = 0
				g.i++
			}
		} else {
			g.i++
		}
		if t < g.start {
			continue
		}
		*a = Arrival{At: t, Key: g.base + uint32(client), Cost: g.cost, Source: g.source}
		return true
	}
}

func (s *Times) Open(k *Keys, index int, _ uint64) (Stream, error) {
	at := slices.Clone(s.At)
	slices.Sort(at)
	base, n := s.Clients.resolve(k)
	return &gridStream{
		at: func(i int64) (time.Duration, bool) {
			if i >= int64(len(at)) {
				return 0, false
			}
			return at[i], true
		},
		base: base, n: int64(n), perClient: true, cost: s.Cost,
		start: s.Start, end: s.Common.End, source: int32(index),
	}, nil
}

func (s *Burst) Open(k *Keys, index int, _ uint64) (Stream, error) {
	base, n := s.Clients.resolve(k)
	at, count, over := s.At, s.Count, int64(s.Over)
	return &gridStream{
		at: func(i int64) (time.Duration, bool) {
			if i >= count {
				return 0, false
			}
			off, _ := mulDiv(i, over, count) // i < count, so off < over: fits
			return at + time.Duration(off), true
		},
		base: base, n: int64(n), perClient: true, cost: s.Cost,
		start: s.Start, end: s.Common.End, source: int32(index),
	}, nil
}

func (s *Steady) Open(k *Keys, index int, _ uint64) (Stream, error) {
	base, n := s.Clients.resolve(k)
	start, rate := s.Start, s.Rate
	return &gridStream{
		at: func(i int64) (time.Duration, bool) {
			// Past the largest time.Duration, there is no request i: stop
			// rather than clamp (a clamped instant would repeat forever).
			off, ok := mulDiv(i, int64(rate.Per), rate.Count)
			if !ok || off > math.MaxInt64-int64(start) {
				return 0, false
			}
			return start + time.Duration(off), true
		},
		base: base, n: int64(n), perClient: false, cost: s.Cost,
		start: s.Start, end: s.Common.End, source: int32(index),
	}, nil
}
