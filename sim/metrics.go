package sim

import (
	"cmp"
	"iter"
	"math"
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

// addZero counts an attempt admitted without delay: add(0).
func (h *delayHist) addZero() {
	h.n++
	h.zeros++
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
//
// A window of up to 2^32-1 ns (4.29s) holds each release in 8 bytes: its
// distance to the one before and its cost, 32 bits each. A longer window,
// or a cost past 32 bits, holds them whole (16 bytes): the window switches
// for good the first time it needs to.
type peakWindow struct {
	v     time.Duration
	wide  bool
	short chunkQueue[shortRelease] // while !wide
	long  chunkQueue[release]      // once wide
	// the instants of the oldest and the latest release held (short only)
	frontAt, backAt time.Duration
	size            int
	sum             int64
	best            int64
	start           time.Duration
}

// shortRelease is a release held as its distance dt to the release held
// before it (the oldest one's is meaningless) and its cost.
type shortRelease struct {
	dt, cost uint32
}

type release struct {
	at   time.Duration
	cost int64
}

func (p *peakWindow) add(at time.Duration, cost int64) {
	if p.wide || !p.addShort(at, cost) {
		p.addLong(at, cost)
	}
}

// addShort adds a release in 8 bytes, or reports that it cannot.
func (p *peakWindow) addShort(at time.Duration, cost int64) bool {
	if p.v > math.MaxUint32 {
		p.widen()
		return false
	}
	for p.size > 0 && p.frontAt+p.v <= at {
		p.popShort()
	}
	if p.size > 0 && p.backAt == at {
		last := p.short.back()
		c := int64(last.cost) + cost
		if c > math.MaxUint32 {
			p.widen()
			return false
		}
		last.cost = uint32(c)
		p.sum += cost
		return true
	}
	if cost > math.MaxUint32 {
		p.widen()
		return false
	}
	// the latest release held is within V of at (else it left above), and
	// V fits in 32 bits
	dt := uint32(at - p.backAt)
	if p.size == 0 {
		dt, p.frontAt = 0, at
	}
	p.short.push(shortRelease{dt, uint32(cost)})
	p.backAt = at
	p.size++
	p.sum += cost
	return true
}

func (p *peakWindow) popShort() {
	if p.sum > p.best {
		p.best, p.start = p.sum, p.frontAt
	}
	p.sum -= int64(p.short.front().cost)
	p.short.pop()
	if p.size--; p.size > 0 {
		p.frontAt += time.Duration(p.short.front().dt)
	}
}

// widen moves the releases held to 16-byte entries, for good.
func (p *peakWindow) widen() {
	at := p.frontAt
	for i := 0; i < p.size; i++ {
		e := p.short.front()
		if i > 0 {
			at += time.Duration(e.dt)
		}
		p.long.push(release{at, int64(e.cost)})
		p.short.pop()
	}
	p.short = chunkQueue[shortRelease]{}
	p.wide = true
}

func (p *peakWindow) addLong(at time.Duration, cost int64) {
	for p.size > 0 && p.long.front().at+p.v <= at {
		p.popLong()
	}
	p.sum += cost
	if p.size > 0 {
		if last := p.long.back(); last.at == at {
			last.cost += cost
			return
		}
	}
	p.long.push(release{at, cost})
	p.size++
}

func (p *peakWindow) popLong() {
	f := p.long.front()
	if p.sum > p.best {
		p.best, p.start = p.sum, f.at
	}
	p.sum -= f.cost
	p.long.pop()
	p.size--
}

// finish closes every interval still open and returns the peak.
func (p *peakWindow) finish() (count int64, start time.Duration) {
	for p.size > 0 {
		if p.wide {
			p.popLong()
		} else {
			p.popShort()
		}
	}
	return p.best, p.start
}

// chunkQueue is a queue in fixed-size chunks: it grows by a chunk (reusing
// the ones emptied at its front) and never copies what it holds.
type chunkQueue[E any] struct {
	chunks []*[peakChunk]E // oldest first
	spare  []*[peakChunk]E // emptied, for reuse
	first  *[peakChunk]E   // chunks[0], or nil
	last   *[peakChunk]E   // chunks[len-1], or nil
	head   int             // the oldest entry is first[head]
	tail   int             // the next entry goes to last[tail]
}

// peakChunk is how many entries a chunk of a peak window holds.
const peakChunk = 1024

// front and back are the oldest and the latest entry (the queue is not
// empty).
func (q *chunkQueue[E]) front() *E { return &q.first[q.head] }
func (q *chunkQueue[E]) back() *E  { return &q.last[q.tail-1] }

func (q *chunkQueue[E]) push(e E) {
	if q.last == nil || q.tail == peakChunk {
		q.grow()
	}
	q.last[q.tail] = e
	q.tail++
}

// grow adds an empty chunk at the back.
func (q *chunkQueue[E]) grow() {
	var c *[peakChunk]E
	if n := len(q.spare); n > 0 {
		c, q.spare = q.spare[n-1], q.spare[:n-1]
	} else {
		c = new([peakChunk]E)
	}
	q.chunks = append(q.chunks, c)
	q.last, q.tail = c, 0
	if len(q.chunks) == 1 {
		q.first, q.head = c, 0
	}
}

// pop drops the oldest entry.
func (q *chunkQueue[E]) pop() {
	if q.head++; q.head < peakChunk {
		return
	}
	// the front chunk is used up (the back one too if it was alone)
	q.spare = append(q.spare, q.first)
	q.chunks[0] = nil
	q.chunks = q.chunks[1:]
	q.head, q.first = 0, nil
	if len(q.chunks) > 0 {
		q.first = q.chunks[0]
	} else {
		q.last = nil
	}
}

// held is how many chunks the queue holds, in use or spare.
func (q *chunkQueue[E]) held() int { return len(q.chunks) + len(q.spare) }

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
		p = new([countPage]int64)
		c.pages[i] = p
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
