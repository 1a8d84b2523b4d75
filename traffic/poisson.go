package traffic

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// KeyDist is how a poisson source of several clients picks the client of
// each request.
type KeyDist string

const (
	// KeyUniform picks every client with the same probability.
	KeyUniform KeyDist = "uniform"
	// KeyZipf picks client k (0 the heaviest) with probability proportional
	// to 1/(k+1)^s, for the source's exponent s > 1.
	KeyZipf KeyDist = "zipf"
)

// Poisson sends requests with exponential inter-arrival times at Rate, the
// source's total rate L/W: each gap is round(x * W/L) whole nanoseconds for
// x drawn from the standard exponential distribution (mean 1), summed in
// int64 from Start, so the first request is one gap after Start and the
// instants never drift. It sends while before End (or for ever, up to the
// largest time.Duration, when it has none).
//
// With one key every request goes to it. With N clients each request's
// client is drawn after its gap: uniformly (KeyUniform, or "") or by a
// Zipf law of exponent ZipfS (KeyZipf), by rejection-inversion, which
// holds no table of the clients (a fixed 256 KiB, however many there
// are). The draws are portable (draws.go): one seed gives one trace on
// every platform.
//
// The gaps and the clients are drawn from two PCG generators seeded with
// the first four outputs of SplitMix64 from the source's own seed: one
// scenario seed gives one trace, and the instants do not depend on the
// keys (the same source with one key or a thousand clients, uniform or
// zipf, sends at the same instants).
type Poisson struct {
	Common
	Rate    Rate
	KeyDist KeyDist // with clients only; "" means KeyUniform
	ZipfS   float64 // the Zipf exponent, > 1 (KeyZipf only)
}

func (s *Poisson) Declare(k *Keys) { s.Clients.declare(k) }

// End of a poisson source is its own End: it runs to the scenario's
// duration unless it has one.
func (s *Poisson) End() time.Duration { return s.Common.End }

func (s *Poisson) Open(k *Keys, index int, seed uint64) (Stream, error) {
	base, n := s.Clients.resolve(k)
	gaps, keys := newRand(seed, 0), newRand(seed, 1)
	st := &poissonStream{rng: gaps, keys: keys, base: base, n: n, cost: s.Cost,
		t: s.Start, end: s.Common.End, source: int32(index)}
	switch s.KeyDist {
	case "", KeyUniform:
	case KeyZipf:
		if !(s.ZipfS > 1) || math.IsInf(s.ZipfS, 1) {
			return nil, fmt.Errorf("traffic: zipf exponent %v: want a number > 1", s.ZipfS)
		}
		if n > 1 {
			st.zipf = newZipfDraw(keys, s.ZipfS, 1, uint64(n-1))
		}
	default:
		return nil, fmt.Errorf("traffic: unknown key distribution %q (want uniform or zipf)", s.KeyDist)
	}
	if s.Rate.Count < 1 || s.Rate.Per < 1 {
		st.done = true // a rate of nothing sends nothing
	} else {
		st.mean = float64(s.Rate.Per) / float64(s.Rate.Count)
	}
	return st, nil
}

// newRand returns generator g (0, 1, ...) of a source opened with seed: a
// PCG seeded with outputs 2g+1 and 2g+2 of SplitMix64 started at seed.
func newRand(seed uint64, g uint64) *rand.Rand {
	const gamma = 0x9e3779b97f4a7c15
	return rand.New(rand.NewPCG(splitmix64(seed+2*g*gamma), splitmix64(seed+(2*g+1)*gamma)))
}

type poissonStream struct {
	rng    *rand.Rand // the gaps
	keys   *rand.Rand // the clients
	zipf   *zipfDraw  // nil: uniform keys
	mean   float64    // mean gap in ns, W/L
	base   uint32
	n      int
	cost   int64
	t      time.Duration // the previous arrival, or Start
	end    time.Duration // 0: none
	source int32
	done   bool
}

func (p *poissonStream) Err() error { return nil }

func (p *poissonStream) Next(a *Arrival) bool {
	if p.done {
		return false
	}
	room := math.MaxInt64 - int64(p.t)
	x := expDraw(p.rng) * p.mean
	if !(x < float64(room)) { // past the largest time.Duration
		p.done = true
		return false
	}
	// x < 2^63, so the rounded gap converts exactly; float64(room) may have
	// rounded room up, hence the second check.
	gap := int64(math.Round(x))
	if gap > room {
		p.done = true
		return false
	}
	p.t += time.Duration(gap)
	if p.end > 0 && p.t >= p.end {
		p.done = true
		return false
	}
	key := p.base
	switch {
	case p.zipf != nil:
		key += uint32(p.zipf.next())
	case p.n > 1:
		key += uint32(p.keys.IntN(p.n))
	}
	*a = Arrival{At: p.t, Key: key, Cost: p.cost, Source: p.source}
	return true
}
