package adaptive

import "math"

// latencyHist is the part of libcircllhist (circllhist.c, the histogram
// envoy's gradient controller keeps its latency samples in) that the
// controller uses: hist_insert of whole microseconds, hist_sample_count,
// hist_approx_quantile of one quantile, and hist_clear.
//
// circllhist buckets a positive value v by its two leading decimal digits:
// bucket (val, exp) with val in [10, 99] covers [val/10 * 10^exp,
// (val+1)/10 * 10^exp). For a whole number of microseconds v >= 1 that is
// exp = digits(v) - 1 and val = v*10 for v < 10, the first two digits of v
// otherwise (double_to_hist_bucket computes it with floor(log10) and a 1e-13
// margin that, for integers below 10^13, gives exactly this); 0 has its own
// bucket of width 0. The buckets are kept by index, in value order: 0 for
// zero, then 1 + exp*90 + val-10.
//
// hist_approx_quantile(q): with n samples, the target count is n*q; walk the
// buckets in order, lower and upper being the counts below and up to the
// current one, advancing while upper < n*q (and a bucket remains); then the
// result is the bucket's left edge if lower == n*q, its right edge if upper
// == n*q, else left + (n*q - lower)/(upper - lower) * width, each operation
// a double operation in the C's order (left = (val/10.0) * 10^exp, width =
// 10^exp/10.0). Empty buckets (hist_clear zeroes counts but keeps buckets)
// change none of this, so only non-empty ones are kept here.
type latencyHist struct {
	counts   []uint64 // by bucket index
	n        uint64
	lo, hi   int // the range of indices holding counts, lo > hi when empty
	pow10tab [maxHistExp + 1]float64
}

// maxHistExp is the largest exponent a whole number of microseconds in an
// int64 of nanoseconds can have (9.2e12 µs).
const maxHistExp = 12

func newLatencyHist() *latencyHist {
	h := &latencyHist{counts: make([]uint64, 1+(maxHistExp+1)*90), lo: 1, hi: 0}
	p := 1.0
	for i := range h.pow10tab {
		h.pow10tab[i] = p // the C's power_of_ten table: exact powers up to 1e22
		p *= 10
	}
	return h
}

// bucketOf returns the bucket index of v microseconds (v >= 0).
func bucketOf(v int64) int {
	if v <= 0 {
		return 0
	}
	if v < 10 {
		return 1 + int(v*10) - 10
	}
	exp := 0
	for x := v; x >= 100; x /= 10 {
		exp++
	}
	val := v
	for range exp {
		val /= 10
	}
	exp++ // v has exp+2 digits: its bucket exponent is digits-1
	return 1 + exp*90 + int(val) - 10
}

// bucketBounds returns the C's bucket_left and bin width of bucket index i.
func (h *latencyHist) bucketBounds(i int) (left, width float64) {
	if i == 0 {
		return 0, 0
	}
	exp, val := (i-1)/90, (i-1)%90+10
	p := h.pow10tab[exp]
	return float64(float64(val)/10.0) * p, p / 10.0
}

func (h *latencyHist) insert(us int64) {
	i := bucketOf(us)
	h.counts[i]++
	h.n++
	h.lo, h.hi = min(h.lo, i), max(h.hi, i)
	if h.n == 1 {
		h.lo, h.hi = i, i
	}
}

func (h *latencyHist) clear() {
	for i := h.lo; i <= h.hi; i++ {
		h.counts[i] = 0
	}
	h.n, h.lo, h.hi = 0, 1, 0
}

// quantile is hist_approx_quantile of one quantile q in [0, 1] over a
// non-empty histogram.
func (h *latencyHist) quantile(q float64) float64 {
	target := float64(float64(h.n) * q) // rounded: not fused with target-lower below
	i := h.lo
	for h.counts[i] == 0 {
		i++
	}
	left, width := h.bucketBounds(i)
	lower, upper := 0.0, float64(h.counts[i])
	for i < h.hi && upper < target {
		i++
		if h.counts[i] == 0 {
			continue // an empty bucket: lower = upper, nothing moves
		}
		left, width = h.bucketBounds(i)
		lower, upper = upper, upper+float64(h.counts[i])
	}
	switch {
	case lower == target:
		return left
	case upper == target:
		return left + width
	case width == 0:
		return left
	}
	return left + float64((target-lower)/(upper-lower)*width)
}

// cppIntMicros is the controller's static_cast<int>(quantile): truncation
// toward zero; a value beyond int's range (undefined in C++, about 35
// minutes) saturates here.
func cppIntMicros(d float64) int64 {
	switch {
	case d != d || d <= 0:
		return 0
	case d >= math.MaxInt32:
		return math.MaxInt32
	}
	return int64(d)
}
