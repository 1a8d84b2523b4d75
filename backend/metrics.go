package backend

import (
	"slices"
	"time"

	"github.com/ratesim/ratesim/internal/hist"
)

// ExactValues is how many distinct values a histogram counts exactly.
// Beyond it, values are counted in log-linear buckets of 11 significant
// bits, so a percentile is then within 1/1024 of the true value (reported
// as its bucket's upper bound, never above the true maximum); the mean
// and the maximum stay exact. A histogram's memory follows the range of
// its values, never their number (see internal/hist).
const ExactValues = hist.ExactValues

// Percentiles are nearest-rank order statistics of durations in ns: the
// p-th percentile is the smallest value v with at least ceil(p*n/100)
// values <= v. Mean is the exact mean, rounded to the nearest ns.
type Percentiles struct {
	Mean int64 `json:"mean"`
	P50  int64 `json:"p50"`
	P90  int64 `json:"p90"`
	P99  int64 `json:"p99"`
	Max  int64 `json:"max"`
	// Exact is false once the histogram has fallen back to buckets.
	Exact bool `json:"-"`
}

// row is one bucket of the series.
type row struct {
	queueArea int64 // integral of the queue length over the bucket, in ns
	queueMax  int64
	p99       int64 // of the responses completed in the bucket
	goodput   int64
	shed      int64
	timedOut  int64
	// the limit in force (Backend.Limit) over the part of the bucket it
	// covers (limTime ns): its integral, least and greatest
	limArea, limTime int64
	limMin, limMax   int64
}

// series is the backend's time series per bucket from start; it grows
// with the span of time covered, never with the number of requests, and
// at most to max buckets (then the bucket doubles).
type series struct {
	start  time.Duration
	bucket time.Duration
	max    int
	rows   []row
	// the row of the last instant index found, and its bucket [lo, hi)
	// (hi = lo: none)
	cur    int
	lo, hi time.Duration
	// the queue's length since qFrom, not yet added to the rows
	qLen  int64
	qFrom time.Duration
	// the responses of bucket open, not yet reduced to its p99: in buf
	// while at most bufMax, then in resp
	open int
	buf  []int64
	resp hist.Hist
	// all is the histogram of every response (nil: none), which the
	// series feeds: a response before the start at once; the open
	// bucket's as it closes (pending), except while all is exact and the
	// bucket holds more than bufMax, when each goes to both at once. A
	// bucket that spills to resp once all has fallen back to buckets
	// (lazy) adds resp's counts to all at its close, one addition per
	// bucket of resp rather than one per response.
	all  *hist.Hist
	lazy bool
	// the limit in force since limFrom (limOn once one was recorded), not
	// yet added to the rows, and its figures over the whole series
	lim              int64
	limFrom          time.Duration
	limOn            bool
	limArea, limTime int64
	limMin, limMax   int64
}

func newSeries(start, bucket time.Duration, maxBuckets int) series {
	s := start - start%bucket
	if start < 0 && start%bucket != 0 {
		s -= bucket
	}
	// past bufMax responses a bucket's p99 comes from buckets of 11
	// significant bits (within 1/1024, never below): an exact histogram
	// per bucket costs a run of up to ExactValues values each time
	return series{start: s, bucket: bucket, max: maxBuckets, qFrom: s, open: -1, resp: hist.Buckets()}
}

// index returns the row of instant t, making it (and doubling the bucket
// as needed), or -1 for an instant before the start.
func (s *series) index(t time.Duration) int {
	if s.lo <= t && t < s.hi {
		return s.cur // the row of the last instant asked: inlined
	}
	return s.find(t)
}

// find is index for an instant out of the last row asked.
func (s *series) find(t time.Duration) int {
	if t < s.start {
		return -1
	}
	i := int((t - s.start) / s.bucket)
	for i >= s.max {
		s.double()
		i = int((t - s.start) / s.bucket)
	}
	if i >= len(s.rows) {
		s.rows = append(s.rows, make([]row, i+1-len(s.rows))...)
	}
	s.cur = i
	s.lo = s.start + time.Duration(i)*s.bucket
	s.hi = s.lo + s.bucket
	return i
}

// double merges pairs of rows: counts and areas add, maxima and p99s take
// the larger (the p99 of a merged bucket is then an upper bound of its
// exact p99: each half has 99% of its responses at or below its own).
func (s *series) double() {
	n := (len(s.rows) + 1) / 2
	for i := range n {
		a := s.rows[2*i]
		if 2*i+1 < len(s.rows) {
			b := s.rows[2*i+1]
			a.queueArea += b.queueArea
			a.queueMax = max(a.queueMax, b.queueMax)
			a.p99 = max(a.p99, b.p99)
			a.goodput += b.goodput
			a.shed += b.shed
			a.timedOut += b.timedOut
			switch {
			case a.limTime == 0:
				a.limArea, a.limTime, a.limMin, a.limMax = b.limArea, b.limTime, b.limMin, b.limMax
			case b.limTime > 0:
				a.limArea += b.limArea
				a.limTime += b.limTime
				a.limMin, a.limMax = min(a.limMin, b.limMin), max(a.limMax, b.limMax)
			}
		}
		s.rows[i] = a
	}
	clear(s.rows[n:])
	s.rows = s.rows[:n]
	if s.open >= 0 {
		s.open /= 2
	}
	s.bucket *= 2
	s.hi = s.lo // the rows are others now
}

// queue records that the queue's length becomes q at t (t never goes
// back).
func (s *series) queue(t time.Duration, q int) {
	s.spread(t)
	s.qLen = int64(q)
	if i := s.index(t); i >= 0 {
		s.rows[i].queueMax = max(s.rows[i].queueMax, s.qLen)
	}
}

// spread adds the queue's length from qFrom to t to the rows it covers.
func (s *series) spread(t time.Duration) {
	from := max(s.qFrom, s.start)
	if t <= from {
		return
	}
	s.qFrom = t
	if s.qLen == 0 {
		return
	}
	for from < t {
		i := s.index(from)
		end := s.start + time.Duration(i+1)*s.bucket
		to := min(end, t)
		s.rows[i].queueArea += s.qLen * int64(to-from)
		s.rows[i].queueMax = max(s.rows[i].queueMax, s.qLen)
		from = to
	}
}

// limit records that the limit in force becomes v at t (t never goes
// back).
func (s *series) limit(t time.Duration, v int64) {
	if s.limOn && v == s.lim {
		return
	}
	s.spreadLimit(t)
	s.lim, s.limFrom, s.limOn = v, max(t, s.start), true
}

// spreadLimit adds the limit in force from limFrom to t to the rows it
// covers, and to the series' own figures.
func (s *series) spreadLimit(t time.Duration) {
	from := s.limFrom
	if !s.limOn || t <= from {
		return
	}
	s.limFrom = t
	v := s.lim
	if s.limTime == 0 {
		s.limMin, s.limMax = v, v
	}
	s.limMin, s.limMax = min(s.limMin, v), max(s.limMax, v)
	s.limArea += v * int64(t-from)
	s.limTime += int64(t - from)
	for from < t {
		i := s.index(from)
		end := s.start + time.Duration(i+1)*s.bucket
		to := min(end, t)
		w := &s.rows[i]
		if w.limTime == 0 {
			w.limMin, w.limMax = v, v
		}
		w.limMin, w.limMax = min(w.limMin, v), max(w.limMax, v)
		w.limArea += v * int64(to-from)
		w.limTime += int64(to - from)
		from = to
	}
}

// bufMax is how many responses of one bucket are kept one by one (then
// sorted for the bucket's p99) before they go to a histogram.
const bufMax = 4096

// response counts a response of d completed at t (and in all).
func (s *series) response(t, d time.Duration) {
	i := s.index(t)
	if i < 0 {
		if s.all != nil {
			s.all.Add(int64(d))
		}
		return
	}
	if i != s.open {
		s.close()
		s.open = i
	}
	switch {
	case s.resp.N() > 0:
		s.resp.Add(int64(d))
		if !s.lazy {
			s.all.Add(int64(d))
		}
	case len(s.buf) < bufMax:
		s.buf = append(s.buf, int64(d))
	default:
		s.lazy = s.all == nil || !s.all.Exact()
		for _, v := range s.buf {
			s.resp.Add(v)
			if !s.lazy {
				s.all.Add(v)
			}
		}
		s.buf = s.buf[:0]
		s.resp.Add(int64(d))
		if !s.lazy {
			s.all.Add(int64(d))
		}
	}
}

// pending adds to h the responses of the open bucket that all does not
// count yet (h is all, or a copy of it).
func (s *series) pending(h *hist.Hist) {
	switch {
	case s.all == nil || s.open < 0:
	case s.resp.N() > 0 && s.lazy:
		h.AddHist(&s.resp)
	case s.resp.N() == 0:
		for _, v := range s.buf {
			h.Add(v)
		}
	}
}

// openP99 is the p99 of the open bucket's responses (0: none).
func (s *series) openP99() int64 {
	if s.resp.N() > 0 {
		return s.resp.Summary().P99
	}
	n := len(s.buf)
	if n == 0 {
		return 0
	}
	v := append([]int64(nil), s.buf...)
	slices.Sort(v)
	return v[(99*n+99)/100-1]
}

// close reduces the open bucket's responses to its p99, and adds those
// that all does not count yet to all.
func (s *series) close() {
	s.pending(s.all)
	if s.open >= 0 {
		p := s.resp.Summary().P99
		if n := len(s.buf); s.resp.N() == 0 && n > 0 {
			slices.Sort(s.buf) // in place: the buffer is emptied below
			p = s.buf[(99*n+99)/100-1]
		}
		s.rows[s.open].p99 = max(s.rows[s.open].p99, p)
	}
	s.buf = s.buf[:0]
	if s.resp.N() > 0 {
		s.resp.ResetBuckets()
	}
	s.open, s.lazy = -1, false
}

// Series is the backend's time series: one value per bucket of BucketNs
// from StartNs.
type Series struct {
	// LimitMin, LimitMean and LimitMax are the least, time-weighted mean
	// and greatest limit in force over each bucket, from the first limit
	// recorded (Backend.Limit; nil when none was): an adaptive row's
	// limit; a bucket before it, or after the end, has NaN as its mean and
	// 0 for the others.
	LimitMin  []int64   `json:"-"`
	LimitMean []float64 `json:"-"`
	LimitMax  []int64   `json:"-"`

	StartNs  int64 `json:"start_ns"`
	BucketNs int64 `json:"bucket_ns"`
	// Queue is the time-average of the queue's length (requests waiting,
	// not in service) over each bucket, QueueMax its largest.
	Queue    []float64 `json:"queue"`
	QueueMax []int64   `json:"queue_max"`
	// ResponseP99Ns is the p99 of the response times of the requests
	// completed in each bucket (0 when none); after buckets merged
	// (MaxBuckets), the larger of the merged buckets' p99s.
	ResponseP99Ns []int64 `json:"response_p99_ns"`
	// Goodput counts the requests completed in each bucket without error
	// within their client's timeout; Shed and TimedOut the sheds and the
	// clients' timeouts in each bucket.
	Goodput  []int64 `json:"goodput"`
	Shed     []int64 `json:"shed"`
	TimedOut []int64 `json:"timed_out"`
}

// Result is docs/backend.md's `backend` object, and what more the model
// counts (not in the JSON).
type Result struct {
	// Served counts the requests whose service ended (with or without an
	// error, their client waiting or not); CompletedOK those of them
	// without an error; Goodput those of them completed at or before their
	// client's deadline.
	Served      int64 `json:"served"`
	CompletedOK int64 `json:"completed_ok"`
	Goodput     int64 `json:"goodput"`
	// Shed counts requests turned away by a full queue (503); TimedOut the
	// clients that gave up waiting; Errors the served requests that failed.
	Shed     int64 `json:"shed"`
	TimedOut int64 `json:"timed_out"`
	Errors   int64 `json:"errors"`
	// WastedNs is worker time spent on requests after their client had
	// given up: for each served request, end - max(start, deadline) when
	// positive.
	WastedNs int64 `json:"wasted_ns"`
	// Utilization is the busy worker time over Workers times the span.
	Utilization float64 `json:"utilization"`
	// QueueWaitNs: from admission to the start of service, over the
	// requests that started; ResponseNs: from admission to the end of
	// service, over the requests served, plus the request's Gate (in a
	// cluster, the wait for the store before the verdict).
	QueueWaitNs Percentiles `json:"queue_wait_ns"`
	ResponseNs  Percentiles `json:"response_ns"`
	// RetryAmplification is attempts / offered, which the engine knows
	// (the backend sees admitted attempts only); left 0 here.
	RetryAmplification float64 `json:"retry_amplification"`
	// RecoveredNs: after the last fault ends, how long until goodput
	// returns to within 10% of its level before the first fault (see
	// Backend.Result); nil when there are no faults, no level to return
	// to, or it never does.
	RecoveredNs *int64 `json:"recovered_ns,omitempty"`
	// Faults is how many faults the backend had: with some and no
	// RecoveredNs, the goodput did not come back (or had no level before
	// them to come back to).
	Faults int `json:"faults,omitempty"`
	// Limit is the least, time-weighted mean and greatest limit in force
	// from the first one recorded to the end (an adaptive row's): the
	// limit series of docs/adaptive.md, summed up; nil when none was recorded.
	Limit *LimitStats `json:"limit,omitempty"`

	// HeldPeak is the most requests the backend held at once, from their
	// verdict to their end (served, shed or dropped), counted after every
	// change at one instant: with Latency, the backlog of network
	// calculus's rate-latency server (Config.Latency).
	HeldPeak int64 `json:"-"`
	// Submitted counts the requests given to the backend; Started those a
	// worker began; Dropped those dropped unserved (DropExpired).
	Submitted int64 `json:"-"`
	Started   int64 `json:"-"`
	Dropped   int64 `json:"-"`
	// BusyNs is the busy worker time; SpanNs the span it is held against.
	BusyNs int64  `json:"-"`
	SpanNs int64  `json:"-"`
	Series Series `json:"-"`
	// FaultWindows are the faults' windows on the run's clock (the
	// clock of Series.StartNs), in the configuration's order, for charts.
	FaultWindows []FaultWindow `json:"-"`
}

// FaultWindow is a fault's window [StartNs, EndNs) on the run's clock;
// EndNs saturates at the largest instant (Fault.End).
type FaultWindow struct {
	Type    FaultType
	StartNs int64
	EndNs   int64
}

// recovered finds, in the goodput of rows (buckets of bucket from start),
// the first window of m buckets that starts at or after the last fault's
// end f1, ends by to, and whose goodput is at least 90% of the mean per
// bucket of the buckets wholly before the first fault's start f0; it
// returns how long after f1 that window starts. All in integers.
func recovered(rows []row, start, bucket time.Duration, m int, f0, f1, to time.Duration) *int64 {
	var base, nBase int64
	for i := range rows {
		if start+time.Duration(i+1)*bucket > f0 {
			break
		}
		base += rows[i].goodput
		nBase++
	}
	if nBase == 0 || base == 0 || f1 < start {
		return nil
	}
	k0 := int((f1 - start + bucket - 1) / bucket)
	var sum int64
	for k := k0; ; k++ {
		end := start + time.Duration(k+m)*bucket
		if end > to || k+m > len(rows) {
			return nil
		}
		sum = 0
		for _, r := range rows[k : k+m] {
			sum += r.goodput
		}
		// sum/m >= 0.9 * base/nBase
		if 10*sum*nBase >= 9*int64(m)*base {
			d := int64(start + time.Duration(k)*bucket - f1)
			return &d
		}
	}
}

// utilization is busy / (workers * span), 0 for an empty span.
func utilization(busy int64, workers int, span int64) float64 {
	if span <= 0 {
		return 0
	}
	return float64(busy) / float64(float64(workers)*float64(span))
}

// areaMean is a queue area over a bucket: the bucket's mean length.
// LimitStats sums up a limit over time.
type LimitStats struct {
	Min  int64   `json:"min"`
	Mean float64 `json:"mean"`
	Max  int64   `json:"max"`
}

func areaMean(area int64, bucket time.Duration) float64 {
	return float64(area) / float64(bucket)
}
