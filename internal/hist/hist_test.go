package hist

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

type count struct{ v, n int64 }

func countsOf(h *Hist) []count {
	var out []count
	for v, n := range h.Counts() {
		out = append(out, count{v, n})
	}
	return out
}

// TestExactByHand: nearest rank on a few values: 0, 10, 20, 30, 40 (n =
// 5): p50 is the 3rd (rank ceil(2.5)), p90 and p99 the 5th; the mean 20.
// A value below 0 counts as 0; the mean rounds half up.
func TestExactByHand(t *testing.T) {
	var h Hist
	for _, v := range []int64{30, 0, 10, 40, 20} {
		h.Add(v)
	}
	require.Equal(t, Summary{Mean: 20, P50: 20, P90: 40, P99: 40, Max: 40, Exact: true}, h.Summary())
	require.Equal(t, []count{{0, 1}, {10, 1}, {20, 1}, {30, 1}, {40, 1}}, countsOf(&h))
	require.Equal(t, int64(5), h.N())

	h.Reset()
	require.Equal(t, Summary{Exact: true}, h.Summary())
	require.Empty(t, countsOf(&h))
	h.Add(3)
	h.Add(4)
	h.Add(-7)
	// 0, 3, 4: mean 7/3 = 2.33 rounds to 2; p50 rank 2
	require.Equal(t, Summary{Mean: 2, P50: 3, P90: 4, P99: 4, Max: 4, Exact: true}, h.Summary())
	h.Reset()
	h.Add(3)
	h.Add(4)
	// mean 3.5 rounds half up
	require.Equal(t, Summary{Mean: 4, P50: 3, P90: 4, P99: 4, Max: 4, Exact: true}, h.Summary())

	// 10 values 0..9 ms in ns: p50 rank 5 = 4 ms, p90 rank 9 = 8 ms, p99
	// rank ceil(9.9) = 10 = 9 ms; mean 4.5 ms
	h.Reset()
	for i := int64(9); i >= 0; i-- {
		h.Add(i * 1e6)
	}
	require.Equal(t, Summary{Mean: 4.5e6, P50: 4e6, P90: 8e6, P99: 9e6, Max: 9e6, Exact: true}, h.Summary())

	// docs/algorithms.md, worked example 2's admitted delays: 0, 250,
	// 500, 750, 400, 0 ms; sorted 0, 0, 250, 400, 500, 750: p50 rank 3 =
	// 250 ms, p90 and p99 rank 6 = 750 ms; mean 1900/6 = 316.67 ms
	h.Reset()
	for _, d := range []int64{0, 250, 500, 750, 400, 0} {
		h.Add(d * 1e6)
	}
	require.Equal(t, Summary{Mean: 316666667, P50: 250e6, P90: 750e6, P99: 750e6, Max: 750e6, Exact: true}, h.Summary())

	// counted with counts: 0 ×3, 250 ×2, 750 ×1 (n = 6): p50 rank 3 = 0,
	// p90 rank 6 = 750; mean 1250/6 = 208.3
	h.Reset()
	h.AddN(250, 2)
	h.AddN(0, 3)
	h.AddN(750, 1)
	h.AddN(99, 0)
	require.Equal(t, Summary{Mean: 208, P50: 0, P90: 750, P99: 750, Max: 750, Exact: true}, h.Summary())
	require.Equal(t, []count{{0, 3}, {250, 2}, {750, 1}}, countsOf(&h))
}

// TestExactValues: the histogram stays exact up to ExactValues distinct
// values other than 0 (0 is not one of them, nor are repeats), and falls
// back to buckets at one more.
func TestExactValues(t *testing.T) {
	var h Hist
	h.Add(0)
	for v := int64(1); v <= ExactValues; v++ {
		h.Add(v * 1000)
		h.Add(v * 1000)
	}
	require.True(t, h.Exact())
	s := h.Summary()
	// 2*ExactValues+1 values: p50 rank ExactValues+1 is the 2nd of
	// value ExactValues/2 (0, then two of each)
	require.Equal(t, int64(ExactValues/2*1000), s.P50)
	require.True(t, s.Exact)
	h.AddN(1, 5)
	require.False(t, h.Exact())
	require.False(t, h.Summary().Exact)
	h.Reset()
	require.True(t, h.Exact())
}

// TestBucketsByHand: a histogram of buckets from the start (Buckets): a
// value below 2048 is its own bucket; above, its bucket is its 11
// significant bits, 2^e wide for a value of 11+e bits; a percentile is its
// bucket's upper bound, never above the maximum.
//
//	5:       its own bucket
//	2050:    12 bits, e = 1: [2050, 2051]
//	1e9:     30 bits, e = 19: 1e9>>19 = 1907, [999817216, 1000341503]
//	3e9, +1: 32 bits, e = 21: 3e9>>21 = 1430, [2998927360, 3001024511]
//
// n = 5: p50 rank 3 (1e9's bucket), p90 and p99 rank 5 (the last bucket,
// whose top is above the maximum 3e9+1); the mean (7000002056/5) and the
// maximum are exact.
func TestBucketsByHand(t *testing.T) {
	h := Buckets()
	for _, v := range []int64{3e9, 5, 1e9, 2050, 3e9 + 1} {
		h.Add(v)
	}
	require.Equal(t, Summary{Mean: 1400000411, P50: 1000341503, P90: 3e9 + 1, P99: 3e9 + 1, Max: 3e9 + 1}, h.Summary())
	require.Equal(t, []count{{5, 1}, {2050, 1}, {999817216, 1}, {2998927360, 2}}, countsOf(&h))

	// the same values, exact
	var x Hist
	for _, v := range []int64{3e9, 5, 1e9, 2050, 3e9 + 1} {
		x.Add(v)
	}
	require.Equal(t, Summary{Mean: 1400000411, P50: 1e9, P90: 3e9 + 1, P99: 3e9 + 1, Max: 3e9 + 1, Exact: true}, x.Summary())

	// edges of the buckets: 2047 is its own; 2048 and 2049 share one;
	// 4095 is in [4094, 4095], 4096 in [4096, 4099]; the largest int64
	// in [2047<<52, 2^63-1]
	h.ResetBuckets()
	for _, v := range []int64{2047, 2048, 2049, 4095, 4096, 4099, math.MaxInt64} {
		h.Add(v)
	}
	require.Equal(t, []count{{2047, 1}, {2048, 2}, {4094, 1}, {4096, 2}, {2047 << 52, 1}}, countsOf(&h))
	// n = 7: p50 rank 4 is 4095's bucket; p90 and p99 rank 7
	require.Equal(t, Summary{P50: 4095, P90: math.MaxInt64, P99: math.MaxInt64, Max: math.MaxInt64},
		withoutMean(h.Summary()))
}

func withoutMean(s Summary) Summary {
	s.Mean = 0
	return s
}

// reference is the plain model of a histogram, from every value kept:
// sort them; the p-th percentile is the nearest-rank value, or, once more
// than ExactValues distinct values other than 0 (or bucketed from the
// start), the upper bound of its bucket (11 significant bits) but at most
// the maximum. The counts: the distinct values, or the buckets' lower
// bounds.
func reference(vals []int64, bucketed bool) (Summary, []count) {
	vs := slices.Clone(vals)
	for i, v := range vs {
		vs[i] = max(v, 0)
	}
	slices.Sort(vs)
	distinct := slices.Compact(slices.Clone(vs))
	if len(distinct) > 0 && distinct[0] == 0 {
		distinct = distinct[1:]
	}
	bucketed = bucketed || len(distinct) > ExactValues
	low := func(v int64) int64 {
		if !bucketed || bits.Len64(uint64(v)) <= 11 {
			return v
		}
		e := bits.Len64(uint64(v)) - 11
		return v >> e << e
	}
	var cs []count
	for _, v := range vs {
		if k := len(cs) - 1; k >= 0 && cs[k].v == low(v) {
			cs[k].n++
			continue
		}
		cs = append(cs, count{low(v), 1})
	}
	if len(vs) == 0 {
		return Summary{Exact: true}, nil
	}
	n := int64(len(vs))
	top := vs[n-1]
	at := func(p int64) int64 {
		v := vs[(p*n+99)/100-1]
		if !bucketed || bits.Len64(uint64(v)) <= 11 {
			return v
		}
		e := bits.Len64(uint64(v)) - 11
		return min(low(v)+1<<e-1, top)
	}
	var sum big128
	for _, v := range vs {
		sum.add(uint64(v))
	}
	return Summary{Mean: sum.roundDiv(uint64(n)), P50: at(50), P90: at(90), P99: at(99), Max: top, Exact: !bucketed}, cs
}

type big128 struct{ hi, lo uint64 }

func (b *big128) add(v uint64) {
	var c uint64
	b.lo, c = bits.Add64(b.lo, v, 0)
	b.hi += c
}

func (b big128) roundDiv(n uint64) int64 {
	b.add(n / 2)
	q, _ := bits.Div64(b.hi, b.lo, n)
	return int64(q)
}

// values draws n values: a fifth 0 (or below), some small, the rest
// spread over spread ns, with repeats.
func values(rng *rand.Rand, n int, spread int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		switch x := rng.IntN(10); {
		case x < 2:
			out[i] = -rng.Int64N(2)
		case x < 3:
			out[i] = rng.Int64N(3000)
		case x < 5 && i > 0:
			out[i] = out[rng.IntN(i)]
		default:
			out[i] = 1 + rng.Int64N(spread)
		}
	}
	return out
}

// TestAgainstReference: on random values (few and many, below and above
// ExactValues distinct ones, narrow and wide), the summary and the counts
// are the reference's, however the values come: one by one, in runs
// of equal values (AddN), split in two histograms added together, cloned.
func TestAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 100, 2047, 2048, 2049, 5000, ExactValues + 500, 3 * ExactValues, 200_000} {
		for _, spread := range []int64{1000, 3 * ExactValues, 2e9, math.MaxInt64 - 1} {
			vals := values(rng, n, spread)
			for _, bucketed := range []bool{false, true} {
				want, wantCounts := reference(vals, bucketed)
				name := func(how string) []any {
					return []any{"n=%d spread=%d bucketed=%v %s", n, spread, bucketed, how}
				}
				fresh := func() Hist {
					if bucketed {
						return Buckets()
					}
					return Hist{}
				}
				check := func(h *Hist, how string) {
					t.Helper()
					require.Equal(t, want, h.Summary(), name(how)...)
					require.Equal(t, wantCounts, countsOf(h), name(how)...)
					require.Equal(t, int64(n), h.N(), name(how)...)
				}

				one := fresh()
				for _, v := range vals {
					one.Add(v)
				}
				check(&one, "one by one")
				c := one.Clone()
				check(&c, "cloned")

				// each value's count in a few parts, in random order
				var parts []count
				tally := map[int64]int64{}
				for _, v := range vals {
					tally[v]++
				}
				for v, c := range tally {
					for c > 0 {
						k := 1 + rng.Int64N(c)
						parts = append(parts, count{v, k})
						c -= k
					}
				}
				rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
				runs := fresh()
				for _, p := range parts {
					runs.AddN(p.v, p.n)
				}
				check(&runs, "in runs")

				// two halves added, the second into the first (when
				// the second counts in buckets, so does the sum)
				a, b := fresh(), fresh()
				cut := rng.IntN(len(vals) + 1)
				for _, v := range vals[:cut] {
					a.Add(v)
				}
				for _, v := range vals[cut:] {
					b.Add(v)
				}
				a.AddHist(&b)
				check(&a, "added")
			}
		}
	}
}

// TestOrderFree: the same values in another order give the same figures.
func TestOrderFree(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	vals := values(rng, 3*ExactValues, 1e9)
	var a, b Hist
	for _, v := range vals {
		a.Add(v)
	}
	rng.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
	for _, v := range vals {
		b.Add(v)
	}
	require.Equal(t, a.Summary(), b.Summary())
	require.Equal(t, countsOf(&a), countsOf(&b))
}

// TestAddExactIntoBuckets: an exact histogram added to one of buckets
// counts its values in the buckets; one of buckets added to an exact one
// makes it count in buckets.
func TestAddExactIntoBuckets(t *testing.T) {
	vals := []int64{0, 3000, 3001, 70, 1e6}
	b := Buckets()
	var e Hist
	for _, v := range vals {
		e.Add(v)
	}
	b.AddHist(&e)
	want, wantCounts := reference(vals, true)
	require.Equal(t, want, b.Summary())
	require.Equal(t, wantCounts, countsOf(&b))
	require.True(t, e.Exact(), "o is not changed")

	var e2 Hist
	e2.Add(5)
	b2 := Buckets()
	b2.Add(3001)
	e2.AddHist(&b2)
	require.Equal(t, []count{{5, 1}, {3000, 1}}, countsOf(&e2))
	require.False(t, e2.Exact())
}

// TestMemoryFollowsRange: once past its first values, a histogram counts
// more values of the same range without allocating, exact or not.
func TestMemoryFollowsRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, distinct := range []int64{1000, 10 * ExactValues} {
		var h Hist
		for range 100_000 {
			h.Add(1 + rng.Int64N(distinct)*1000)
		}
		allocs := testing.AllocsPerRun(10, func() {
			for range 100_000 {
				h.Add(1 + rng.Int64N(distinct)*1000)
			}
			h.Summary()
		})
		require.Zero(t, allocs, "%d distinct values", distinct)
	}
}

// TestRadixSort: radixSort orders as slices.Sort does, on batches of
// every size to 2,100, from all equal to spread over the whole int64
// range (one pass to six), its room reused.
func TestRadixSort(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 2))
	var tmp []int64
	for n := 0; n <= 2100; n += 37 {
		for _, bitsN := range []int{0, 3, 11, 12, 22, 40, 63} {
			p := make([]int64, n)
			for i := range p {
				switch {
				case bitsN == 63:
					p[i] = r.Int64()
				case bitsN > 0:
					p[i] = r.Int64N(1 << bitsN)
				}
			}
			want := slices.Clone(p)
			slices.Sort(want)
			tmp = radixSort(p, tmp)
			require.Equal(t, want, p, "%d values of %d bits", n, bitsN)
		}
	}
}
