// Package hist counts values >= 0 (durations in ns) without keeping each,
// for percentiles, a mean and a distribution.
//
// A histogram is exact while its values take at most ExactValues distinct
// values other than 0. Beyond that it counts them in log-linear buckets
// of 11 significant bits: the values below 2048 one by one, and above
// that, for each power of two, 1024 buckets of equal width. A percentile
// is then reported as the upper bound of its bucket, never above the
// greatest value: at most 1/1024 above the true one, never below it. The
// count, the mean and the maximum stay exact.
//
// Memory: at most ExactValues distinct values (16 bytes each) while exact,
// then the values below 2048 (16 KiB) and 8 KiB for each power of two
// that a value has reached (durations from 1µs to 100s span 27 of them),
// beside a batch of values not counted yet (16 KiB). It grows with the
// range of the values, never with their number.
//
// The figures depend on the values given, not on their order.
package hist

import (
	"cmp"
	"iter"
	"math/bits"
	"slices"
)

// ExactValues is how many distinct values other than 0 a histogram counts
// exactly; one more and it falls back to buckets.
const ExactValues = 1 << 14

// sigBits is the significant bits a bucket keeps.
const sigBits = 11

// pendMax is how many values a histogram takes before it counts them:
// merged into its sorted run of distinct values while exact, added to its
// buckets after.
const pendMax = 2048

// Summary is what a histogram's values come to: their mean, rounded to
// the nearest (half up), their nearest-rank percentiles (the p-th is the
// smallest value v with at least ceil(p*n/100) values <= v) and their
// maximum. Exact is false once the histogram has fallen back to buckets.
// An empty histogram's summary is all 0, exact.
type Summary struct {
	Mean  int64
	P50   int64
	P90   int64
	P99   int64
	Max   int64
	Exact bool
}

// Hist accumulates values >= 0 (a value below 0 counts as 0). The zero
// value is an empty exact histogram.
type Hist struct {
	n, zeros, max int64
	sumHi, sumLo  uint64 // the sum of the values, 128 bits
	bucketed      bool
	// exact: the distinct values counted, in increasing order, with their
	// counts; appending a value to pend costs less than a map's
	// insertion, and a merge of pendMax sorted values into the run less
	// than pendMax insertions
	vals, cnts []int64
	// the values not counted yet (exact or not), > 0 (see settle); runs
	// those given with a count (AddN) while exact
	pend     []int64
	runs     []run
	pendCnts []int64 // merge's room for the counts of pend's values
	sortTmp  []int64 // radixSort's room
	// bucketed: small[v] for v < 2^sigBits; oct[e][m - 2^(sigBits-1)]
	// for the values v with bits.Len64(v) = sigBits + e, m = v >> e
	small *[1 << sigBits]int64
	oct   [64 - sigBits + 1]*[1 << (sigBits - 1)]int64
}

// run is n values v.
type run struct{ v, n int64 }

// Buckets returns an empty histogram that counts in buckets from the
// start (never exact): for many short-lived histograms, whose exact run
// would cost more than its figures are worth.
func Buckets() Hist { return Hist{bucketed: true} }

// Add counts the value v (0 if v < 0).
func (h *Hist) Add(v int64) {
	if v <= 0 {
		// the common case (no delay, no wait), in line
		h.n++
		h.zeros++
		return
	}
	h.add(v)
}

// add counts v > 0.
func (h *Hist) add(v int64) {
	h.n++
	var carry uint64
	h.sumLo, carry = bits.Add64(h.sumLo, uint64(v), 0)
	h.sumHi += carry
	h.max = max(h.max, v)
	if h.pend == nil {
		h.pend = make([]int64, 0, pendMax)
	}
	h.pend = append(h.pend, v)
	if len(h.pend) == pendMax {
		h.settle()
	}
}

// AddN counts n values v (none if n <= 0).
func (h *Hist) AddN(v, n int64) {
	switch {
	case n <= 0:
		return
	case n == 1:
		h.Add(v)
		return
	case v <= 0:
		h.n += n
		h.zeros += n
		return
	}
	h.n += n
	hi, lo := bits.Mul64(uint64(v), uint64(n))
	var carry uint64
	h.sumLo, carry = bits.Add64(h.sumLo, lo, 0)
	h.sumHi += hi + carry
	h.max = max(h.max, v)
	if h.bucketed {
		h.dense(v, n)
		return
	}
	h.runs = append(h.runs, run{v, n})
	if len(h.runs) == pendMax {
		h.merge()
	}
}

// N is how many values were counted.
func (h *Hist) N() int64 { return h.n }

// Exact reports whether the histogram still counts every distinct value.
func (h *Hist) Exact() bool {
	h.settle()
	return !h.bucketed
}

// settle counts the values not counted yet: merged into the run while
// exact, else added to the buckets. A bucketed histogram takes its values
// in pend too, and adds them pendMax at a time: over a run whose other
// work (a limiter's state over a million keys) evicts the buckets from
// the cache between two values, adding them one by one missed the cache
// at nearly every one; a batch reads each bucket's line once. Every
// reader of the counts settles first.
func (h *Hist) settle() {
	if !h.bucketed {
		h.merge()
		return
	}
	// the arrays first, so that the loop that counts calls nothing (a
	// call in it kept its variables on the stack): small and every
	// octave up to the greatest value's, which no pending value passes
	// (an array that counts nothing changes no figure; a pass over the
	// values to find the octaves they use cost more than the rest of the
	// counting)
	if h.small == nil {
		h.small = new([1 << sigBits]int64)
	}
	for e := 1; e <= bits.Len64(uint64(h.max))-sigBits; e++ {
		if h.oct[e] == nil {
			h.oct[e] = new([1 << (sigBits - 1)]int64)
		}
	}
	small := h.small
	for _, v := range h.pend {
		// dense's rule, in line with one branch (the rule as a
		// function of its own, inlined, took two and 10% more time)
		e := bits.Len64(uint64(v)) - sigBits
		if e <= 0 {
			small[v&(1<<sigBits-1)]++
			continue
		}
		h.oct[e&63][(v>>e)&(1<<(sigBits-1)-1)]++
	}
	h.pend = h.pend[:0]
}

// merge sorts the pending values and runs into the run of distinct values;
// past ExactValues of them, the histogram falls back to buckets.
func (h *Hist) merge() {
	if len(h.pend) > 0 {
		p := h.pend
		h.sortTmp = radixSort(p, h.sortTmp)
		// p as distinct values (in place) with their counts in pc
		pc := h.pendCnts[:0]
		k := 0
		for i := 0; i < len(p); {
			v, c := p[i], int64(0)
			for ; i < len(p) && p[i] == v; i++ {
				c++
			}
			p[k] = v
			pc = append(pc, c)
			k++
		}
		h.pend, h.pendCnts = h.pend[:0], pc[:0]
		h.mergeRun(p[:k], pc)
	}
	if len(h.runs) > 0 {
		if h.bucketed { // the pending values made it fall back
			for _, r := range h.runs {
				h.dense(r.v, r.n)
			}
		} else {
			slices.SortFunc(h.runs, func(a, b run) int { return cmp.Compare(a.v, b.v) })
			// as distinct values and counts, in pend's room (empty)
			p, pc := h.pend[:0], h.pendCnts[:0]
			for _, r := range h.runs {
				if k := len(p) - 1; k >= 0 && p[k] == r.v {
					pc[k] += r.n
					continue
				}
				p, pc = append(p, r.v), append(pc, r.n)
			}
			h.pend, h.pendCnts = p[:0], pc[:0]
			h.mergeRun(p, pc)
		}
		h.runs = h.runs[:0]
	}
}

// mergeRun merges the distinct values p, increasing, with their counts
// pc, into the run of distinct values; past ExactValues of them, the
// histogram falls back to buckets.
func (h *Hist) mergeRun(p, pc []int64) {
	// how many of p the run lacks
	fresh := 0
	j := 0
	for _, v := range p {
		for j < len(h.vals) && h.vals[j] < v {
			j++
		}
		if j == len(h.vals) || h.vals[j] != v {
			fresh++
		}
	}
	// merge from the back, in place
	n := len(h.vals)
	h.vals = append(h.vals, make([]int64, fresh)...)
	h.cnts = append(h.cnts, make([]int64, fresh)...)
	w := n + fresh - 1
	i, q := n-1, len(p)-1
	for q >= 0 {
		switch {
		case i >= 0 && h.vals[i] > p[q]:
			h.vals[w], h.cnts[w] = h.vals[i], h.cnts[i]
			i--
		case i >= 0 && h.vals[i] == p[q]:
			h.vals[w], h.cnts[w] = p[q], h.cnts[i]+pc[q]
			i--
			q--
		default:
			h.vals[w], h.cnts[w] = p[q], pc[q]
			q--
		}
		w--
	}
	if len(h.vals) > ExactValues {
		h.toBuckets()
	}
}

// toBuckets makes an exact histogram count in buckets from now on.
func (h *Hist) toBuckets() {
	for i, v := range h.vals {
		h.dense(v, h.cnts[i])
	}
	// their room is not needed until a reset
	h.vals, h.cnts, h.pendCnts, h.sortTmp = nil, nil, nil, nil
	h.bucketed = true
}

// radixSort sorts p (values >= 0) in place, by 11 bits a pass from the
// lowest, as many passes as the largest value needs (two for values below
// 4 ms): a batch of durations sorts in a few passes over it, where a
// comparison sort took a dozen with a mispredicted branch each. tmp is its
// room, returned grown to p's length.
func radixSort(p, tmp []int64) []int64 {
	const digit = 11
	var top int64
	for _, v := range p {
		top |= v
	}
	if cap(tmp) < len(p) {
		tmp = make([]int64, len(p))
	}
	tmp = tmp[:len(p)]
	src, dst := p, tmp
	for shift := 0; shift < 63 && top>>shift != 0; shift += digit {
		var count [1 << digit]int32
		for _, v := range src {
			count[v>>shift&(1<<digit-1)]++
		}
		sum := int32(0)
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, v := range src {
			d := v >> shift & (1<<digit - 1)
			dst[count[d]] = v
			count[d]++
		}
		src, dst = dst, src
	}
	if len(p) > 0 && &src[0] != &p[0] {
		copy(p, src)
	}
	return tmp
}

// dense counts n values v > 0 in the buckets. (settle counts its batch by
// the same rule, written out in its loop.)
func (h *Hist) dense(v, n int64) {
	e := bits.Len64(uint64(v)) - sigBits
	if e <= 0 {
		if h.small == nil {
			h.small = new([1 << sigBits]int64)
		}
		h.small[v] += n
		return
	}
	o := h.oct[e]
	if o == nil {
		o = new([1 << (sigBits - 1)]int64)
		h.oct[e] = o
	}
	o[v>>e-1<<(sigBits-1)] += n
}

// AddHist adds the counts of o to h: h then counts what it would had it
// been given o's values too, except that if o counts in buckets, so does
// h from then on. o is not changed (but for values it had not counted
// yet); o is not h.
func (h *Hist) AddHist(o *Hist) {
	o.settle()
	if !o.bucketed {
		h.AddN(0, o.zeros)
		for i, v := range o.vals {
			h.AddN(v, o.cnts[i])
		}
		return
	}
	h.settle()
	if !h.bucketed {
		h.toBuckets()
	}
	h.n += o.n
	h.zeros += o.zeros
	h.max = max(h.max, o.max)
	var carry uint64
	h.sumLo, carry = bits.Add64(h.sumLo, o.sumLo, 0)
	h.sumHi += o.sumHi + carry
	if o.small != nil {
		if h.small == nil {
			h.small = new([1 << sigBits]int64)
		}
		for v, c := range o.small {
			h.small[v] += c
		}
	}
	for e, oc := range o.oct {
		if oc == nil {
			continue
		}
		if h.oct[e] == nil {
			h.oct[e] = new([1 << (sigBits - 1)]int64)
		}
		hc := h.oct[e]
		for j, c := range oc {
			hc[j] += c
		}
	}
}

// Clone returns a copy of h that shares nothing with it.
func (h *Hist) Clone() Hist {
	c := *h
	c.vals, c.cnts = slices.Clone(h.vals), slices.Clone(h.cnts)
	c.pend, c.runs, c.pendCnts, c.sortTmp = slices.Clone(h.pend), slices.Clone(h.runs), nil, nil
	if h.small != nil {
		c.small = new([1 << sigBits]int64)
		*c.small = *h.small
	}
	for e, o := range h.oct {
		if o != nil {
			c.oct[e] = new([1 << (sigBits - 1)]int64)
			*c.oct[e] = *o
		}
	}
	return c
}

// Reset empties h, exact again, keeping its room.
func (h *Hist) Reset() {
	h.clearBuckets()
	h.vals, h.cnts, h.pend, h.runs = h.vals[:0], h.cnts[:0], h.pend[:0], h.runs[:0]
	h.zeros, h.bucketed, h.n, h.max, h.sumHi, h.sumLo = 0, false, 0, 0, 0, 0
}

// ResetBuckets empties h, keeping its buckets, as a histogram that counts
// in buckets from the start (Buckets).
func (h *Hist) ResetBuckets() {
	h.clearBuckets()
	h.vals, h.cnts, h.pend, h.runs, h.pendCnts, h.sortTmp = nil, nil, h.pend[:0], nil, nil, nil
	h.zeros, h.bucketed, h.n, h.max, h.sumHi, h.sumLo = 0, true, 0, 0, 0, 0
}

func (h *Hist) clearBuckets() {
	if h.small != nil {
		clear(h.small[:])
	}
	for _, o := range h.oct {
		if o != nil {
			clear(o[:])
		}
	}
}

// mean is the sum over the count, rounded to the nearest (half up).
func (h *Hist) mean() int64 {
	if h.n == 0 {
		return 0
	}
	n := uint64(h.n)
	lo, carry := bits.Add64(h.sumLo, n/2, 0)
	q, _ := bits.Div64(h.sumHi+carry, lo, n) // sum < n*2^63: no overflow
	return int64(q)
}

// Summary returns the mean, the p50, p90 and p99 and the maximum.
func (h *Hist) Summary() Summary {
	h.settle()
	if h.n == 0 {
		return Summary{Exact: true}
	}
	ranks := [3]int64{(50*h.n + 99) / 100, (90*h.n + 99) / 100, (99*h.n + 99) / 100}
	var out [3]int64
	next := 0
	cum := int64(0)
	for v, c := range h.all() {
		cum += c
		for next < 3 && ranks[next] <= cum {
			out[next] = min(v, h.max)
			next++
		}
		if next == 3 {
			break
		}
	}
	for ; next < 3; next++ {
		out[next] = h.max
	}
	return Summary{Mean: h.mean(), P50: out[0], P90: out[1], P99: out[2], Max: h.max, Exact: !h.bucketed}
}

// Counts yields the values counted, each with its count, in increasing
// order of value: 0 first if counted, then while exact each distinct
// value, else each bucket that counts a value, as its lower bound (its
// values rounded down to 11 significant bits).
func (h *Hist) Counts() iter.Seq2[int64, int64] {
	h.settle()
	return func(yield func(int64, int64) bool) {
		for v, c := range h.all() {
			if h.bucketed {
				v = bucketLow(v)
			}
			if !yield(v, c) {
				return
			}
		}
	}
}

// all yields the values counted (0 too) or the buckets, each bucket as
// its upper bound, with their counts, in increasing order. h is settled.
func (h *Hist) all() iter.Seq2[int64, int64] {
	return func(yield func(int64, int64) bool) {
		if h.zeros > 0 && !yield(0, h.zeros) {
			return
		}
		if !h.bucketed {
			for i, v := range h.vals {
				if !yield(v, h.cnts[i]) {
					return
				}
			}
			return
		}
		if h.small != nil {
			for v, c := range h.small {
				if c > 0 && !yield(int64(v), c) {
					return
				}
			}
		}
		for e, o := range h.oct {
			if o == nil {
				continue
			}
			for j, c := range o {
				if c > 0 && !yield(int64(j+1<<(sigBits-1))<<e+1<<e-1, c) {
					return
				}
			}
		}
	}
}

// bucketLow is the lower bound of the bucket whose upper bound is top (a
// value < 2048 is its own bucket): top rounded down to 11 significant
// bits.
func bucketLow(top int64) int64 {
	e := bits.Len64(uint64(top)) - sigBits
	if e <= 0 {
		return top
	}
	return top >> e << e
}
