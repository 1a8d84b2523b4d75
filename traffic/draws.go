package traffic

import (
	"math"
	"math/rand/v2"

	"github.com/ratesim/ratesim/internal/portable"
)

// The synthetic sources' random draws: a standard exponential (the gaps)
// and a Zipf law (the clients), the same bits on every platform and at
// every GOAMD64 level.
//
// math/rand/v2's ExpFloat64 and Zipf are not: they call math.Exp, whose
// amd64 code takes a fused multiply-add path when the CPU has one (a
// choice made at run time, which no build flag changes), and math.Log,
// assembly on amd64 and Go elsewhere; and the compiler fuses their a*b+c
// (ExpFloat64's wedge test under GOAMD64=v3 and on arm64). Each such
// difference is an ulp, but once one draw differs every later arrival
// moves. So these draws are the same methods, drawing the same random
// numbers in the same order from the same generators, with every product
// rounded explicitly (an explicit conversion rounds, and the compiler may
// not fuse across it) and internal/portable's Log and Exp. They give what
// math/rand/v2 gives on amd64 without FMA (TestDrawsMatchMathRand) except
// where an ulp of Log or Exp decides, which none of the tests, built-ins
// and benchmark scenarios has met.

// The exponential ziggurat of Marsaglia and Tsang ("The Ziggurat Method
// for Generating Random Variables", Journal of Statistical Software 5(8),
// 2000): 256 layers, each of area expV, under e^-x, the base layer holding
// the tail past expR. A draw takes 32 bits j and a layer i; x = j*expW[i]
// is taken at once when j < expK[i] (x lies under the layer above, about
// 99% of draws), from the tail when i is 0, else when a uniform point of
// the wedge between the layer's edges lies under e^-x; otherwise it draws
// again.
const (
	expR = 7.69711747013104972
	expV = 0.0039496598225815571993
)

var (
	expK [256]uint32
	expW [256]float32
	expF [256]float32
)

// init builds the ziggurat's tables by the paper's recursion: layer edges
// x[i] from the right, x[i] = -ln(v/x[i+1] + e^-x[i+1]); expK[i] is
// 2^32 x[i-1]/x[i] (the part of layer i under the layer above), expW[i]
// = x[i]/2^32 and expF[i] = e^-x[i]. Each step is one division and one
// addition of correctly rounded values, so the tables are the same
// everywhere; they are math/rand/v2's tables, entry for entry
// (TestExpTablesMatchMathRand).
func init() {
	const m = 1 << 32
	d := expR
	q := expV / portable.Exp(-d)
	expK[0] = uint32(d / q * m)
	expW[0] = float32(q / m)
	expW[255] = float32(d / m)
	expF[0] = 1
	expF[255] = float32(portable.Exp(-d))
	for i := 254; i >= 1; i-- {
		prev := d
		d = -portable.Log(expV/d + portable.Exp(-d))
		expK[i+1] = uint32(d / prev * m)
		expF[i] = float32(portable.Exp(-d))
		expW[i] = float32(d / m)
	}
}

// expDraw returns a standard exponential (mean 1) drawn from r: the
// ziggurat's fast path here, the rest in expRest.
func expDraw(r *rand.Rand) float64 {
	u := r.Uint64()
	j, i := uint32(u), uint8(u>>32)
	if j < expK[i] {
		return float64(j) * float64(expW[i])
	}
	return expRest(r, j, i)
}

// expRest finishes a draw whose first 32 bits j, in layer i, fell outside
// the layer above.
func expRest(r *rand.Rand, j uint32, i uint8) float64 {
	for {
		x := float64(j) * float64(expW[i])
		if j < expK[i] {
			return x
		}
		if i == 0 {
			u := r.Float64()
			if u == 0 {
				return math.Inf(1) // ln 0 = -inf
			}
			return expR - portable.Log(u)
		}
		if expWedge(i, float32(r.Float64())) < float32(portable.Exp(-x)) {
			return x
		}
		u := r.Uint64()
		j, i = uint32(u), uint8(u>>32)
	}
}

// expWedge is the height of the point w (in [0, 1)) of the way up layer
// i's wedge, from e^-x[i] to e^-x[i-1], in float32 as the tables are:
// the product rounded before the sum.
func expWedge(i uint8, w float32) float32 {
	return expF[i] + float32(w*(expF[i-1]-expF[i]))
}

// zipfDraw draws k in [0, imax] with probability proportional to
// (v+k)^-s, s > 1, v >= 1, by rejection-inversion (W. Hörmann and G.
// Derflinger, "Rejection-inversion to generate variates from monotone
// discrete distributions", ACM TOMACS 6(3), 1996): one uniform u is
// mapped through the inverse of H, the integral of the density's
// continuous hull h(x) = (v+x)^-s, to x; k is x rounded, taken at once
// when x lies within the squeeze s of k, else when u lies under k's share
// of the hull; otherwise it draws again. Its constants and steps are
// math/rand/v2's Zipf's.
//
// Most draws are of the heaviest clients, whose k holds over a wide range
// of u: so the draw remembers, for each of the 2^16 ranges of u that its
// top 16 bits make (a table of 256 KiB however large imax is), whether
// every u of the range gives the same k at once, and that k. A u of such
// a range costs no ln or e^x; the others are mapped as above. A range is
// learnt the first time a u falls in it, from its two ends: the same k,
// the squeeze passed, and both with a margin of a billionth of k, a
// million times what an ulp of rounding between them could move (the map
// is monotone in u). So the table changes no draw
// (TestZipfFastMatchesExact).
type zipfDraw struct {
	r           *rand.Rand
	v, q        float64 // v and the exponent s
	oneMinusQ   float64 // 1-q
	invOneMinus float64 // 1/(1-q)
	squeeze     float64
	hxm         float64 // H(imax + 1/2)
	span        float64 // H(1/2) - h(0) - H(imax + 1/2)
	// fast holds what each range of u gives: zipfUnknown until learnt,
	// zipfMapped where u must be mapped, else k + zipfFirstK.
	fast []uint32
}

// The ranges of u that zipfDraw remembers: u's top zipfRangeBits bits of
// 53, and the values of zipfDraw.fast.
const (
	zipfRangeBits = 16
	zipfUnknown   = 0
	zipfMapped    = 1
	zipfFirstK    = 2
	zipfMargin    = 1e-9
)

// newZipfDraw returns the Zipf draws of exponent s > 1 and offset v >= 1
// over [0, imax], from r.
func newZipfDraw(r *rand.Rand, s, v float64, imax uint64) *zipfDraw {
	z := &zipfDraw{r: r, v: v, q: s, oneMinusQ: 1 - s}
	z.invOneMinus = 1 / z.oneMinusQ
	z.hxm = z.bigH(float64(imax) + 0.5)
	z.span = z.bigH(0.5) - portable.Exp(float64(portable.Log(v)*-s)) - z.hxm
	z.squeeze = 1 - z.bigHInv(z.bigH(1.5)-portable.Exp(float64(-s*portable.Log(v+1))))
	z.fast = make([]uint32, 1<<zipfRangeBits)
	return z
}

// bigH is H(x) = (v+x)^(1-q) / (1-q).
func (z *zipfDraw) bigH(x float64) float64 {
	return float64(portable.Exp(float64(z.oneMinusQ*portable.Log(z.v+x))) * z.invOneMinus)
}

// bigHInv is H's inverse: (x(1-q))^(1/(1-q)) - v.
func (z *zipfDraw) bigHInv(x float64) float64 {
	return portable.Exp(float64(z.invOneMinus*portable.Log(float64(z.oneMinusQ*x)))) - z.v
}

// share is where k's share of the hull starts: H(k+1/2) - h(k).
func (z *zipfDraw) share(k float64) float64 {
	return z.bigH(k+0.5) - portable.Exp(float64(-portable.Log(k+z.v)*z.q))
}

// next returns the next draw.
func (z *zipfDraw) next() uint64 {
	for {
		u := z.r.Uint64() << 11 >> 11 // the 53 bits of math/rand/v2's Float64
		r := u >> (53 - zipfRangeBits)
		f := z.fast[r]
		if f == zipfUnknown {
			f = z.learn(r)
			z.fast[r] = f
		}
		if f != zipfMapped {
			return uint64(f - zipfFirstK)
		}
		ur, x, k := z.mapped(u)
		if k-x <= z.squeeze || ur >= z.share(k) {
			return uint64(k)
		}
	}
}

// mapped maps the 53-bit uniform u to ur, x and k as a draw does.
func (z *zipfDraw) mapped(u uint64) (ur, x, k float64) {
	ur = z.hxm + float64(float64(u)/(1<<53)*z.span)
	x = z.bigHInv(ur)
	return ur, x, math.Floor(x + 0.5)
}

// learn returns what range r of u gives: k + zipfFirstK when both its ends
// give k and pass the squeeze, each with the margin, else zipfMapped.
func (z *zipfDraw) learn(r uint64) uint32 {
	const shift = 53 - zipfRangeBits
	lo, hi := r<<shift, (r+1)<<shift-1
	_, xl, kl := z.mapped(lo)
	_, xh, _ := z.mapped(hi)
	m := float64(zipfMargin * max(1, kl))
	sure := func(x float64) bool {
		// x rounds to kl, passes the squeeze, and would with x moved by m
		return x-m >= kl-0.5 && x+m < kl+0.5 && kl-(x-m) <= z.squeeze
	}
	if !(kl >= 0 && kl < math.MaxUint32-zipfFirstK) || !sure(xl) || !sure(xh) {
		return zipfMapped
	}
	return uint32(kl) + zipfFirstK
}
