package traffic

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExpTablesMatchMathRand: the ziggurat's tables, built by the paper's
// recursion at init, are math/rand/v2's, entry for entry, as its source
// in GOROOT prints them (skipped where that source is not installed). With
// the same random numbers, the same tables and the same steps, expDraw is
// ExpFloat64 wherever no ulp of ln or e^x decides.
func TestExpTablesMatchMathRand(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "math", "rand", "v2", "exp.go"))
	if err != nil {
		t.Skipf("math/rand/v2's source: %v", err)
	}
	table := func(name string) []string {
		s := string(src)
		i := strings.Index(s, "var "+name+" = [256]")
		require.GreaterOrEqual(t, i, 0, name)
		body := s[i+strings.Index(s[i:], "{")+1:]
		body = body[:strings.Index(body, "\n}")]
		return regexp.MustCompile(`[0-9a-fx.e+-]+`).FindAllString(body, -1)
	}
	ke, we, fe := table("ke"), table("we"), table("fe")
	require.Len(t, ke, 256)
	require.Len(t, we, 256)
	require.Len(t, fe, 256)
	for i := range 256 {
		k, err := strconv.ParseUint(ke[i], 0, 32)
		require.NoError(t, err)
		require.Equal(t, uint32(k), expK[i], "ke[%d]", i)
		w, err := strconv.ParseFloat(we[i], 32)
		require.NoError(t, err)
		require.Equal(t, float32(w), expW[i], "we[%d]", i)
		f, err := strconv.ParseFloat(fe[i], 32)
		require.NoError(t, err)
		require.Equal(t, float32(f), expF[i], "fe[%d]", i)
	}
}

// TestDrawsMatchMathRand: from the same generators, the portable draws
// are math/rand/v2's ExpFloat64 and Zipf, draw for draw, so that every
// trace made before they came in is unchanged: 3M exponentials and 3M
// Zipf draws (1,000,000 clients, s = 1.1 as poisson-10m; 50 clients, s =
// 2). math/rand/v2 may differ by an ulp of its own where its math.Exp
// takes the FMA path or its a*b+c is fused, so this compares at most 1
// in a million draws away by an ulp and asserts that none is further.
func TestDrawsMatchMathRand(t *testing.T) {
	a, b := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
	off := 0
	for n := range 3_000_000 {
		x, y := expDraw(a), b.ExpFloat64()
		if x != y {
			off++
			require.LessOrEqual(t, ulps(x, y), int64(1), "draw %d: %v against %v", n, x, y)
		}
	}
	require.LessOrEqual(t, off, 3)
	for _, c := range []struct {
		s    float64
		imax uint64
	}{{1.1, 999_999}, {2, 49}} {
		a, b := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
		z, w := newZipfDraw(a, c.s, 1, c.imax), rand.NewZipf(b, c.s, 1, c.imax)
		for n := range 3_000_000 {
			// compared before require, which costs more than the draws
			if want, got := w.Uint64(), z.next(); got != want {
				require.Equal(t, want, got, "s=%v draw %d", c.s, n)
			}
		}
	}
}

func ulps(a, b float64) int64 {
	d := int64(math.Float64bits(a)) - int64(math.Float64bits(b))
	return max(d, -d)
}

// drawsDigest is the sha256 of 2M exponential and 2M Zipf draws, and of
// the float steps inside them, where an ulp shows though a draw seldom
// changes: the ziggurat's tables and wedge heights, and the Zipf draws'
// constants, inverse points and shares, over sweeps of their arguments.
func drawsDigest() string {
	h := sha256.New()
	var buf [8]byte
	put := func(x uint64) {
		binary.LittleEndian.PutUint64(buf[:], x)
		h.Write(buf[:])
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 2_000_000 {
		put(math.Float64bits(expDraw(r)))
	}
	for i := range 256 {
		put(uint64(expK[i])<<32 | uint64(math.Float32bits(expW[i])))
		put(uint64(math.Float32bits(expF[i])))
		if i > 0 {
			for w := range 1000 {
				put(uint64(math.Float32bits(expWedge(uint8(i), float32(w)/1000))))
			}
		}
	}
	for _, c := range []struct {
		s    float64
		imax uint64
	}{{1.1, 999_999}, {2, 49}, {1.0001, 1 << 40}} {
		z := newZipfDraw(rand.New(rand.NewPCG(7, 8)), c.s, 1, c.imax)
		for range 1_000_000 {
			put(z.next())
		}
		put(math.Float64bits(z.hxm))
		put(math.Float64bits(z.span))
		put(math.Float64bits(z.squeeze))
		for u := range 100_000 {
			ur := z.hxm + float64(float64(u)/100_000*z.span)
			x := z.bigHInv(ur)
			put(math.Float64bits(x))
			put(math.Float64bits(z.share(math.Floor(x + 0.5))))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestExpWedgeRounded: the wedge's height rounds the product before the
// sum. Where a fused multiply-add would give another float32 (found by
// search: the product taken exactly in float64, then the sum rounded
// once), expWedge gives the rounded product's sum, so a build that fused
// it (GOAMD64=v3 or arm64, had the conversion been left out) fails here.
func TestExpWedgeRounded(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	found := 0
	for range 1_000_000 {
		i := uint8(1 + r.IntN(255))
		w := float32(r.Float64())
		d := expF[i-1] - expF[i]
		p := float32(float64(w) * float64(d))                      // the product, rounded (exact in float64)
		rounded := float32(float64(expF[i]) + float64(p))          // exact in float64, then rounded once
		fused := float32(float64(expF[i]) + float64(w)*float64(d)) // one rounding of the exact sum
		if rounded == fused {
			continue
		}
		found++
		require.Equal(t, rounded, expWedge(i, w), "i=%d w=%v", i, w)
	}
	require.Greater(t, found, 100, "cases where fusing would change the height")
}

// TestPortableDraws: the draws are the same bits on every platform and at
// every GOAMD64 level (CI runs this under GOAMD64=v3 and with the math
// library's FMA path off as well), by digest.
func TestPortableDraws(t *testing.T) {
	require.Equal(t, "5cda87799434eb42e938ebcefeecf201f663b478880a9abdbe96a371019b8c9c", drawsDigest())
}

// BenchmarkDraws: the portable draws beside math/rand/v2's, from the same
// generators (ns per draw; BENCHMARKS.md gives the ratios).
func BenchmarkDraws(b *testing.B) {
	b.Run("exp/portable", func(b *testing.B) {
		r, s := rand.New(rand.NewPCG(1, 2)), 0.0
		for range b.N {
			s += expDraw(r)
		}
		b.ReportMetric(s/float64(b.N), "mean")
	})
	b.Run("exp/math-rand", func(b *testing.B) {
		r, s := rand.New(rand.NewPCG(1, 2)), 0.0
		for range b.N {
			s += r.ExpFloat64()
		}
		b.ReportMetric(s/float64(b.N), "mean")
	})
	b.Run("zipf/portable", func(b *testing.B) {
		z, s := newZipfDraw(rand.New(rand.NewPCG(1, 2)), 1.1, 1, 999_999), uint64(0)
		for range b.N {
			s += z.next()
		}
		b.ReportMetric(float64(s)/float64(b.N), "mean")
	})
	b.Run("zipf/math-rand", func(b *testing.B) {
		z, s := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), 1.1, 1, 999_999), uint64(0)
		for range b.N {
			s += z.Uint64()
		}
		b.ReportMetric(float64(s)/float64(b.N), "mean")
	})
}

// TestZipfFastMatchesExact: where the table says a range of u gives k,
// mapping any u of the range gives k and passes the squeeze, as the draw
// would without the table: checked at both ends of every range and the
// points beside them, and at 2M random u, for exponents and sizes from
// few clients to 2^40; and the table does take most draws where the
// heaviest clients are most of the traffic.
func TestZipfFastMatchesExact(t *testing.T) {
	const shift = 53 - zipfRangeBits
	for _, c := range []struct {
		s        float64
		imax     uint64
		minShare float64 // of draws the table takes, at least
	}{{1.1, 999_999, 0.6}, {2, 49, 0.95}, {1.0001, 1 << 40, 0}, {1.5, 9_999, 0.8}, {30, 3, 0.99}} {
		z := newZipfDraw(rand.New(rand.NewPCG(11, 12)), c.s, 1, c.imax)
		check := func(u uint64) bool {
			r := u >> shift
			if z.fast[r] == zipfUnknown {
				z.fast[r] = z.learn(r)
			}
			f := z.fast[r]
			if f == zipfMapped {
				return false
			}
			_, x, k := z.mapped(u)
			if k != float64(f-zipfFirstK) || !(k-x <= z.squeeze) { // testify's reflection, at millions of points, takes seconds
				t.Fatalf("s=%v u=%d: the table gives %d, the map %v (x = %v, squeeze %v)", c.s, u, f-zipfFirstK, k, x, z.squeeze)
			}
			return true
		}
		for r := range uint64(1 << zipfRangeBits) {
			lo, hi := r<<shift, (r+1)<<shift-1
			for _, u := range []uint64{lo, lo + 1, lo + 2, hi - 2, hi - 1, hi, lo + (hi-lo)/2} {
				check(u)
			}
		}
		rng := rand.New(rand.NewPCG(13, 14))
		taken := 0
		const n = 2_000_000
		for range n {
			if check(rng.Uint64() << 11 >> 11) {
				taken++
			}
		}
		require.GreaterOrEqual(t, float64(taken)/n, c.minShare, "s=%v imax=%d: the table's share", c.s, c.imax)
		t.Logf("s=%v imax=%d: the table takes %.1f%% of draws", c.s, c.imax, 100*float64(taken)/n)
	}
}
