package sim

import (
	"cmp"
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
	counts map[int64]int64 // delay (or bucket lower bound) -> attempts
	exact  bool
	n      int64
	max    int64
}

func newDelayHist() delayHist {
	return delayHist{counts: map[int64]int64{}, exact: true}
}

// bucketOf rounds d down to 11 significant bits.
func bucketOf(d int64) int64 {
	e := bits.Len64(uint64(d)) - 11
	if e <= 0 {
		return d
	}
	return d >> e << e
}

// bucketTop is the largest value that rounds to bucket b.
func bucketTop(b int64) int64 {
	e := bits.Len64(uint64(b)) - 11
	if e <= 0 {
		return b
	}
	return b + 1<<e - 1
}

func (h *delayHist) add(d time.Duration) {
	h.n++
	if d == 0 {
		h.zeros++
		return
	}
	v := int64(d)
	h.max = max(h.max, v)
	if !h.exact {
		h.counts[bucketOf(v)]++
		return
	}
	h.counts[v]++
	if len(h.counts) > DelayExactValues {
		old := h.counts
		h.counts = make(map[int64]int64, len(old)/4)
		for k, c := range old {
			h.counts[bucketOf(k)] += c
		}
		h.exact = false
	}
}

// distribution returns the delays counted, in increasing order of delay.
func (h *delayHist) distribution() []DelayCount {
	out := make([]DelayCount, 0, len(h.counts)+1)
	if h.zeros > 0 {
		out = append(out, DelayCount{0, h.zeros})
	}
	for d, c := range h.counts {
		out = append(out, DelayCount{d, c})
	}
	slices.SortFunc(out, func(a, b DelayCount) int { return cmp.Compare(a.DelayNs, b.DelayNs) })
	return out
}

// percentiles by nearest rank: the p-th percentile is the smallest value v
// with at least ceil(p*n/100) attempts <= v.
func (h *delayHist) percentiles() Percentiles {
	if h.n == 0 {
		return Percentiles{Exact: true}
	}
	keys := make([]int64, 0, len(h.counts))
	for k := range h.counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	at := func(p int64) int64 {
		rank := (p*h.n + 99) / 100
		if rank <= h.zeros {
			return 0
		}
		cum := h.zeros
		for _, k := range keys {
			cum += h.counts[k]
			if cum >= rank {
				if h.exact {
					return k
				}
				return min(bucketTop(k), h.max)
			}
		}
		return h.max
	}
	return Percentiles{P50: at(50), P90: at(90), P99: at(99), Max: h.max, Exact: h.exact}
}

// peakWindow finds, over a stream of releases in non-decreasing time order,
// the largest total cost in any half-open interval [a, a+V) and the earliest
// release time a that starts one. It holds only the releases of the last V:
// when a release at x arrives, every held release f with f+V <= x can no
// longer gain company, so the interval starting at f is complete and its sum
// is a candidate. Releases at one instant are held as one entry.
type peakWindow struct {
	v     time.Duration
	q     []release // ring
	head  int
	size  int
	sum   int64
	best  int64
	start time.Duration
}

type release struct {
	at   time.Duration
	cost int64
}

func (p *peakWindow) add(at time.Duration, cost int64) {
	for p.size > 0 && p.q[p.head].at+p.v <= at {
		p.popFront()
	}
	p.sum += cost
	if p.size > 0 {
		if last := &p.q[(p.head+p.size-1)%len(p.q)]; last.at == at {
			last.cost += cost
			return
		}
	}
	if p.size == len(p.q) {
		n := max(16, 2*len(p.q))
		q := make([]release, n)
		for i := 0; i < p.size; i++ {
			q[i] = p.q[(p.head+i)%len(p.q)]
		}
		p.q, p.head = q, 0
	}
	p.q[(p.head+p.size)%len(p.q)] = release{at, cost}
	p.size++
}

func (p *peakWindow) popFront() {
	f := p.q[p.head]
	if p.sum > p.best {
		p.best, p.start = p.sum, f.at
	}
	p.sum -= f.cost
	p.head = (p.head + 1) % len(p.q)
	p.size--
}

// finish closes every interval still open and returns the peak.
func (p *peakWindow) finish() (count int64, start time.Duration) {
	for p.size > 0 {
		p.popFront()
	}
	return p.best, p.start
}

// series counts requests per bucket from start; it grows with the span of
// time covered, never with the number of requests.
type series struct {
	bucket time.Duration
	start  time.Duration
	// counts per bucket: offered, attempts, admitted, delayed, rejected
	rows [][5]int64
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

func (s *series) add(at time.Duration, col int) {
	if at < s.start {
		return
	}
	i := int((at - s.start) / s.bucket)
	for i >= MaxSeriesBuckets {
		s.coarsen()
		i = int((at - s.start) / s.bucket)
	}
	if i >= len(s.rows) {
		s.rows = append(s.rows, make([][5]int64, i+1-len(s.rows))...)
	}
	s.rows[i][col]++
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
