package sim

import (
	"iter"
	"time"

	"github.com/ratesim/ratesim/internal/hist"
)

// DelayExactValues is how many distinct delay values the delay accumulator
// counts exactly. Beyond it, delays are counted in log-linear buckets of 11
// significant bits, so a percentile is then within 1/1024 of the true value
// (reported as its bucket's upper bound, never above the true maximum).
const DelayExactValues = hist.ExactValues

// delayHist accumulates delays of admitted attempts without keeping each.
type delayHist struct{ h hist.Hist }

func newDelayHist() delayHist { return delayHist{} }

// addZero counts an attempt admitted without delay: add(0).
func (d *delayHist) addZero() { d.h.Add(0) }

func (d *delayHist) add(v time.Duration) { d.h.Add(int64(v)) }

// distribution returns the delays counted (exact) or their buckets (as
// their lower bounds), with their counts, in increasing order of delay.
func (d *delayHist) distribution() []DelayCount {
	out := []DelayCount{}
	for v, n := range d.h.Counts() {
		out = append(out, DelayCount{v, n})
	}
	return out
}

// percentiles by nearest rank: the p-th percentile is the smallest value v
// with at least ceil(p*n/100) attempts <= v.
func (d *delayHist) percentiles() Percentiles {
	s := d.h.Summary()
	return Percentiles{P50: s.P50, P90: s.P90, P99: s.P99, Max: s.Max, Exact: s.Exact}
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
	if i >= len(s.rows) {
		s.rows = lengthen(s.rows, i+1)
	}
	s.cur = i
	s.lo = s.start + time.Duration(i)*s.bucket
	s.hi = s.lo + s.bucket
	return &s.rows[i]
}

// lengthen returns xs lengthened to n with zero values: within its
// capacity (rows a coarsening left behind are cleared), else in a new
// array of twice the capacity, at most MaxSeriesBuckets. A series of a
// trace days long grows to that bound and coarsens several times, and
// append's growth by a quarter would copy it about four times over.
func lengthen[T any](xs []T, n int) []T {
	if n <= cap(xs) {
		m := len(xs)
		xs = xs[:n]
		clear(xs[m:])
		return xs
	}
	out := make([]T, n, min(max(n, 2*cap(xs)), MaxSeriesBuckets))
	copy(out, xs)
	return out
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
