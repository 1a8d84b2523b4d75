package portable

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// ulps is how many float64s lie between a and b.
func ulps(a, b float64) int64 {
	d := int64(math.Float64bits(a)) - int64(math.Float64bits(b))
	if d < 0 {
		d = -d
	}
	return d
}

// TestPortableLogExp: the portable functions agree with the math package
// to within one ulp for log and two for exp (fdlibm's bound is one ulp
// each; amd64's own math.Exp adds its own error), over random arguments and
// the edges.
func TestPortableLogExp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		x := math.Float64frombits(rng.Uint64() >> 1) // positive, every exponent
		if x < 0x1p-1022 || math.IsInf(x, 0) || math.IsNaN(x) {
			continue // subnormals below: amd64's math.Log is wrong there
		}
		require.LessOrEqual(t, ulps(Log(x), math.Log(x)), int64(1), "log(%v)", x)
		u := rng.Float64()*1400 - 700
		// amd64's math.Exp is itself off by an ulp at times
		require.LessOrEqual(t, ulps(Exp(u), math.Exp(u)), int64(2), "exp(%v)", u)
	}
	for _, x := range []float64{1, 2, 0.5, math.E, 1e-300, 1 << 53, 0x1p-1022, math.MaxFloat64} {
		require.LessOrEqual(t, ulps(Log(x), math.Log(x)), int64(1), "log(%v)", x)
	}
	// a subnormal: ln(x) = ln(x*2^200) - 200 ln 2
	x := 1.589330600355766e-308
	require.InDelta(t, math.Log(x*0x1p200)-200*math.Ln2, Log(x), 1e-12)
	require.Equal(t, 0.0, Log(1))
	require.True(t, math.IsNaN(Log(0)))
	require.True(t, math.IsNaN(Log(-1)))
	require.Equal(t, 1.0, Exp(0))
	require.Equal(t, 0.0, Exp(-800))
	require.True(t, math.IsInf(Exp(800), 1))
}

// TestFrexp: frexp is math.Frexp, bit for bit, over normal and subnormal
// arguments, powers of two and their neighbours included.
func TestFrexp(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	xs := []float64{math.SmallestNonzeroFloat64, 0x1p-1022, math.Nextafter(0x1p-1022, 0), 1, math.Nextafter(1, 0),
		math.Sqrt2 / 2, 0.5, 2, math.MaxFloat64}
	for range 100000 {
		xs = append(xs, math.Float64frombits(r.Uint64()&^(1<<63)))
	}
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
			continue
		}
		f, e := frexp(x)
		wf, we := math.Frexp(x)
		require.Equal(t, math.Float64bits(wf), math.Float64bits(f), "x = %v", x)
		require.Equal(t, we, e, "x = %v", x)
	}
}
