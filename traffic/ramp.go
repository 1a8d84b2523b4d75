package traffic

import (
	"errors"
	"math"
	"math/big"
	"time"
)

// Ramp sends at a rate that changes linearly from From at Start to To at
// Until (rising, or falling when From is the larger). With t the time since
// Start and T = Until - Start, the number of requests due by t is
//
//	Λ(t) = r0*t + (r1-r0)*t²/(2T)
//
// for the rates r0 = From and r1 = To in requests per ns, and request i
// (i = 0, 1, 2, ...) is at Start + the smallest whole ns t with Λ(t) >= i:
// request 0 at Start, and request i at the instant the cumulative rate
// reaches i, rounded up to a ns. It sends while t < T and before End. With N
// clients request i goes to client i mod N.
//
// The instants are exact: a float square root gives a candidate, which
// Λ, evaluated in integers (math/big) with the rates as the fractions
// Count/Per, corrects. From may be 0 requests (a ramp up from silence); To
// has at least 1.
type Ramp struct {
	Common
	From, To Rate
	// Until is the instant the rate reaches To. 0 means End: a ramp needs
	// one or the other. A scenario sets it to the source's end as written,
	// even past the scenario's duration (which then cuts the ramp short
	// without changing its slope), or else to the duration.
	Until time.Duration
}

func (s *Ramp) Declare(k *Keys) { s.Clients.declare(k) }

// End of a ramp is its own End: it runs to the scenario's duration unless
// it has one.
func (s *Ramp) End() time.Duration { return s.Common.End }

// errRampNoEnd is Open's error for a ramp with neither Until nor End.
var errRampNoEnd = errors.New("traffic: a ramp with no end (set Until or End)")

func (s *Ramp) Open(k *Keys, index int, _ uint64) (Stream, error) {
	until := s.Until
	if until == 0 {
		until = s.Common.End
	}
	switch {
	case until == 0:
		return nil, errRampNoEnd
	case until <= s.Start:
		return nil, errors.New("traffic: a ramp that ends before it starts")
	case s.From.Count < 0 || s.From.Per <= 0 || s.To.Count < 1 || s.To.Per <= 0:
		return nil, errors.New("traffic: ramp rates must be >= 0 (from) and >= 1 (to) requests per period > 0")
	}
	base, n := s.Clients.resolve(k)
	T := int64(until - s.Start)
	limit := T // requests at t < limit
	if s.Common.End > 0 {
		limit = min(limit, int64(s.Common.End-s.Start))
	}
	r := &rampStream{base: base, n: int64(n), cost: s.Cost, start: s.Start, source: int32(index), limit: limit}
	if limit <= 0 {
		r.last = -1
		return r, nil
	}

	c0, p0 := big.NewInt(s.From.Count), big.NewInt(int64(s.From.Per))
	c1, p1 := big.NewInt(s.To.Count), big.NewInt(int64(s.To.Per))
	bigT := big.NewInt(T)
	// 2T*P0*P1 * Λ(t) = (C1*P0 - C0*P1)*t² + 2T*P1*C0*t
	r.a = new(big.Int).Sub(new(big.Int).Mul(c1, p0), new(big.Int).Mul(c0, p1))
	r.b = new(big.Int).Mul(new(big.Int).Mul(big.NewInt(2), bigT), new(big.Int).Mul(p1, c0))
	r.d = new(big.Int).Mul(new(big.Int).Mul(big.NewInt(2), bigT), new(big.Int).Mul(p0, p1))
	// the last request is floor(Λ(limit-1)); Λ >= 0 on [0, T]
	last := r.scaled(limit - 1)
	last.Quo(last, r.d)
	r.last = math.MaxInt64
	if last.IsInt64() {
		r.last = last.Int64()
	}

	// float coefficients of the candidate: Λ(t) = fa*t² + fb*t
	fr0 := float64(s.From.Count) / float64(s.From.Per)
	fr1 := float64(s.To.Count) / float64(s.To.Per)
	r.fa, r.fb = (fr1-fr0)/(2*float64(T)), fr0
	return r, nil
}

type rampStream struct {
	base   uint32
	n      int64
	cost   int64
	start  time.Duration
	source int32
	limit  int64 // requests at t < limit (ns since start)

	a, b, d *big.Int // 2T*P0*P1 * Λ(t) = a*t² + b*t
	fa, fb  float64  // Λ(t) ≈ fa*t² + fb*t
	last    int64    // the last request index

	i    int64 // the next request
	prev int64 // t of request i-1
	x, y *big.Int
}

func (r *rampStream) Err() error { return nil }

// scaled returns a*t² + b*t, that is 2T*P0*P1 * Λ(t), in a new big.Int.
func (r *rampStream) scaled(t int64) *big.Int {
	x := big.NewInt(t)
	v := new(big.Int).Mul(r.a, x)
	v.Add(v, r.b)
	return v.Mul(v, x)
}

// reaches reports whether Λ(t) >= i, exactly.
func (r *rampStream) reaches(t, i int64) bool {
	if r.x == nil {
		r.x, r.y = new(big.Int), new(big.Int)
	}
	r.x.SetInt64(t)
	r.y.Mul(r.a, r.x)
	r.y.Add(r.y, r.b)
	r.y.Mul(r.y, r.x) // a*t² + b*t
	r.x.SetInt64(i)
	r.x.Mul(r.x, r.d) // 2T*P0*P1 * i
	return r.y.Cmp(r.x) >= 0
}

// candidate is the float estimate of the smallest t with Λ(t) >= i: the
// root of fa*t² + fb*t = i, written 2i/(fb + sqrt(fb² + 4*fa*i)) to stay
// accurate when fa is small or negative.
func (r *rampStream) candidate(i int64) int64 {
	fi := float64(i)
	disc := r.fb*r.fb + 4*r.fa*fi
	t := 2 * fi / (r.fb + math.Sqrt(disc))
	if !(t >= 0) || t >= float64(r.limit) { // NaN, or beyond the end
		return r.limit - 1
	}
	return int64(t)
}

// at returns the smallest t in [lo, limit) with Λ(t) >= i, knowing that
// Λ(limit-1) >= i and that no t < lo qualifies.
func (r *rampStream) at(i, lo int64) int64 {
	c := max(r.candidate(i), lo)
	// gallop from the candidate to a bracket (f, h]: Λ(f) < i (or f = lo-1),
	// Λ(h) >= i
	var f, h int64
	if r.reaches(c, i) {
		h, f = c, lo-1
		for step := int64(1); h > lo; step *= 2 {
			t := max(h-step, lo)
			if !r.reaches(t, i) {
				f = t
				break
			}
			h = t
		}
	} else {
		f, h = c, r.limit-1
		for step := int64(1); step < r.limit-1-f; step *= 2 {
			t := f + step
			if r.reaches(t, i) {
				h = t
				break
			}
			f = t
		}
	}
	for h-f > 1 {
		m := f + (h-f)/2
		if r.reaches(m, i) {
			h = m
		} else {
			f = m
		}
	}
	return h
}

func (r *rampStream) Next(a *Arrival) bool {
	if r.i > r.last {
		return false
	}
	t := int64(0)
	if r.i > 0 {
		t = r.at(r.i, r.prev)
	}
	*a = Arrival{At: r.start + time.Duration(t), Key: r.base + uint32(r.i%r.n), Cost: r.cost, Source: r.source}
	r.prev = t
	if r.i == math.MaxInt64 {
		r.last = -1 // the last index an int64 holds: stop
	} else {
		r.i++
	}
	return true
}
