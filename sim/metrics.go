package sim

import (
	"cmp"
	"iter"
	"math/bits"
	"slices"
	"time"
)

// DelayExactValues is how many distinct delay values the delay accumulator
// counts exactly. Beyond it, delays are counted in log-linear buckets of 11
// significant bits, so a percentile is then within 1/1024 of the true value
// (reported as its bucket's upper bound, never above the true maximum).
const DelayExactValues = 1 << 14

// delayHist accumulates delays of admitted attempts without keeping each.
type delayHist struct {
	zeros  int64           // the common case, kept out of the map
	counts map[int64]int64 // while exact: delay -> attempts
	// once not exact: attempts by bucket, a page of 1024 buckets per
	// bit length of the delay, made when first needed (see bucketSlot):
	// an index where a map took a hash and a probe of a table grown to
	// thousands of buckets, seldom in cache
	pages [bucketPages]*[1024]int64
	exact bool
	n     int64
	max   int64
}

func newDelayHist() delayHist {
	return delayHist{counts: map[int64]int64{}, exact: true}
}

// bucketPages is how many pages of 1024 buckets cover every delay: two of
// the delays under 2048 ns (each its own bucket), then one for each bit
// length from 12 to 63.
const bucketPages = 2 + 63 - 11

// bucketSlot returns the page and the slot in it of d's bucket (d > 0).
// A bucket holds the delays that round down to the same 11 significant
// bits. Its page is d>>10 for d < 2048, else the page of d's bit length;
// its slot is the 10 significant bits below the leading one.
func bucketSlot(d int64) (page, slot int) {
	e := bits.Len64(uint64(d)) - 11
	if e <= 0 {
		return int(d >> 10), int(d & 1023)
	}
	return e + 1, int(d>>(uint(e)&63)) & 1023
}

// bucketAt is the bucket in slot slot of page page, as its lower bound:
// its delays rounded down to 11 significant bits.
func bucketAt(page, slot int) int64 {
	if page < 2 {
		return int64(page<<10 | slot)
	}
	return int64(1024+slot) << uint(page-1)
}

// bucketTop is the largest value that rounds to bucket b.
func bucketTop(b int64) int64 {
	e := bits.Len64(uint64(b)) - 11
	if e <= 0 {
		return b
	}
	return b + 1<<e - 1
}

// addZero counts an attempt admitted without delay: add(0).
func (h *delayHist) addZero() {
	h.n++
	h.zeros++
}

func (h *delayHist) add(d time.Duration) { h.addN(d, 1) }

// addN counts n attempts of delay d.
func (h *delayHist) addN(d time.Duration, n int64) {
	h.n += n
	if d == 0 {
		h.zeros += n
		return
	}
	v := int64(d)
	h.max = max(h.max, v)
	if !h.exact {
		h.addBucket(v, n)
		return
	}
	h.counts[v] += n
	if len(h.counts) > DelayExactValues {
		for k, c := range h.counts {
			h.addBucket(k, c)
		}
		h.counts, h.exact = nil, false
	}
}

// addBucket counts n attempts in the bucket of delay d (> 0).
func (h *delayHist) addBucket(d int64, n int64) {
	page, slot := bucketSlot(d)
	p := h.pages[page]
	if p == nil {
		p = new([1024]int64)
		h.pages[page] = p
	}
	p[slot] += n
}

// sorted returns the delays counted (exact) or the buckets (their lower
// bounds), with their counts, in increasing order of delay.
func (h *delayHist) sorted() []DelayCount {
	if h.exact {
		out := make([]DelayCount, 0, len(h.counts))
		for d, c := range h.counts {
			out = append(out, DelayCount{d, c})
		}
		slices.SortFunc(out, func(a, b DelayCount) int { return cmp.Compare(a.DelayNs, b.DelayNs) })
		return out
	}
	var out []DelayCount
	for page, p := range h.pages {
		if p == nil {
			continue
		}
		for slot, c := range p {
			if c != 0 {
				out = append(out, DelayCount{bucketAt(page, slot), c})
			}
		}
	}
	return out
}

// runHist is a delayHist fed through a run of equal values, counted at
// once when the value changes (the latency a cluster's store adds is most
// often one same round trip): the same figures, fewer map updates.
type runHist struct {
	h delayHist
	v time.Duration
	n int64
}

func newRunHist() runHist { return runHist{h: newDelayHist()} }

func (r *runHist) add(d time.Duration) {
	if r.n > 0 && d == r.v {
		r.n++
		return
	}
	r.flush()
	r.v, r.n = d, 1
}

func (r *runHist) flush() {
	if r.n > 0 {
		r.h.addN(r.v, r.n)
		r.n = 0
	}
}

func (r *runHist) percentiles() Percentiles {
	r.flush()
	return r.h.percentiles()
}

// distribution returns the delays counted, in increasing order of delay.
func (h *delayHist) distribution() []DelayCount {
	rest := h.sorted()
	out := make([]DelayCount, 0, len(rest)+1)
	if h.zeros > 0 {
		out = append(out, DelayCount{0, h.zeros})
	}
	return append(out, rest...)
}

// percentiles by nearest rank: the p-th percentile is the smallest value v
// with at least ceil(p*n/100) attempts <= v.
func (h *delayHist) percentiles() Percentiles {
	if h.n == 0 {
		return Percentiles{Exact: true}
	}
	counted := h.sorted()
	at := func(p int64) int64 {
		rank := (p*h.n + 99) / 100
		if rank <= h.zeros {
			return 0
		}
		cum := h.zeros
		for _, dc := range counted {
			cum += dc.Count
			if cum >= rank {
				if h.exact {
					return dc.DelayNs
				}
				return min(bucketTop(dc.DelayNs), h.max)
			}
		}
		return h.max
	}
	return Percentiles{P50: at(50), P90: at(90), P99: at(99), Max: h.max, Exact: h.exact}
}

// series counts requests per bucket from start; it grows with the span of
// time covered, never with the number of requests.
type series struct {
	bucket time.Duration
	start  time.Duration
	// counts per bucket: offered, attempts, admitted, delayed, rejected
	rows [][5]int64
	// rows[cur] counts [lo, hi), the bucket of the latest row asked for:
	// the next ones, in time order, mostly fall in it too (lo = hi: none)
	lo, hi time.Duration
	cur    int
	before [5]int64 // counts before start, not reported
}

func newSeries(bucket, start time.Duration) series {
	return series{bucket: bucket, start: start}
}

// setStart moves the start of a series that has no counts yet.
func (s *series) setStart(start time.Duration) {
	s.start = start
	s.lo, s.hi = 0, 0
}

const (
	colOffered = iota
	colAttempts
	colAdmitted
	colDelayed
	colRejected
)

// MaxSeriesBuckets bounds a time series: a longer one doubles its bucket,
// adding pairs of buckets together, until it fits. Counts stay exact.
const MaxSeriesBuckets = 1 << 16

// add counts a request in column col of at's bucket.
func (s *series) add(at time.Duration, col int) { s.row(at)[col]++ }

// row returns the counts of at's bucket (a row that is never reported
// when at is before the start).
func (s *series) row(at time.Duration) *[5]int64 {
	if at >= s.lo && at < s.hi {
		return &s.rows[s.cur]
	}
	return s.rowSlow(at)
}

// rowSlow is row in another bucket than the latest one's.
func (s *series) rowSlow(at time.Duration) *[5]int64 {
	if at < s.start {
		return &s.before
	}
	i := int((at - s.start) / s.bucket)
	for i >= MaxSeriesBuckets {
		s.coarsen()
		i = int((at - s.start) / s.bucket)
	}
	for len(s.rows) <= i {
		s.rows = append(s.rows, [5]int64{})
	}
	s.cur = i
	s.lo = s.start + time.Duration(i)*s.bucket
	s.hi = s.lo + s.bucket
	return &s.rows[i]
}

// coarsen doubles the bucket, adding pairs of buckets together.
func (s *series) coarsen() {
	for i := 0; i < len(s.rows); i += 2 {
		r := s.rows[i]
		if i+1 < len(s.rows) {
			for c := range r {
				r[c] += s.rows[i+1][c]
			}
		}
		s.rows[i/2] = r
	}
	s.rows = s.rows[:(len(s.rows)+1)/2]
	s.bucket *= 2
	s.lo, s.hi = 0, 0
}

// result returns the series padded to cover up to end.
func (s *series) result(end time.Duration) Series {
	n := len(s.rows)
	for end > s.start && (end-s.start-1)/s.bucket >= MaxSeriesBuckets {
		s.coarsen()
	}
	if end > s.start {
		n = max(len(s.rows), int((end-s.start+s.bucket-1)/s.bucket))
	}
	out := Series{BucketNs: int64(s.bucket), StartNs: int64(s.start)}
	cols := []*[]int64{&out.Offered, &out.Attempts, &out.Admitted, &out.Delayed, &out.Rejected}
	for c, dst := range cols {
		*dst = make([]int64, n)
		for i := range s.rows {
			(*dst)[i] = s.rows[i][c]
		}
	}
	return out
}

// pagedCounts counts by key id, in pages of countPage ids allocated when
// one of their ids is first counted: its memory follows the keys counted
// (the few that get rejected, say), not the size of the key space, and
// reading it back skips the pages never touched.
type pagedCounts struct {
	pages []*[countPage]int64
}

// countPage is how many ids a page of pagedCounts holds (4 KiB).
const countPage = 512

// reserve makes room for the ids 0 to n-1 without allocating their pages.
func (c *pagedCounts) reserve(n int) {
	if pages := (n + countPage - 1) / countPage; pages > len(c.pages) {
		c.pages = append(c.pages, make([]*[countPage]int64, pages-len(c.pages))...)
	}
}

func (c *pagedCounts) inc(id uint32) {
	i := int(id / countPage)
	if i >= len(c.pages) {
		c.reserve(max(i+1, 2*len(c.pages)) * countPage)
	}
	p := c.pages[i]
	if p == nil {
		// a page fresh from the system: written first, not read, so
		// that it is backed once (see internal/pages)
		p = new([countPage]int64)
		c.pages[i] = p
		p[id%countPage] = 1
		return
	}
	p[id%countPage]++
}

func (c *pagedCounts) get(id uint32) int64 {
	i := int(id / countPage)
	if i >= len(c.pages) || c.pages[i] == nil {
		return 0
	}
	return c.pages[i][id%countPage]
}

// nonZero yields the ids counted at least once, in increasing order.
func (c *pagedCounts) nonZero() iter.Seq[int] {
	return func(yield func(int) bool) {
		for i, p := range c.pages {
			if p == nil {
				continue
			}
			for j, n := range p {
				if n != 0 && !yield(i*countPage+j) {
					return
				}
			}
		}
	}
}
