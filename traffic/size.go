package traffic

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/bits"
	"time"
)

// Accuracy says how far a Size's figures can be trusted.
type Accuracy uint8

const (
	// Exact: the figures are what the source sends.
	Exact Accuracy = iota
	// Bound: the figures are an upper bound (a Poisson source's count is
	// random: its bound is ten standard deviations above the mean).
	Bound
	// Sampled: the figures are read from a sample (a trace's size over
	// the mean length of its first lines): neither exact nor a bound.
	Sampled
)

func (a Accuracy) String() string {
	switch a {
	case Exact:
		return "exact"
	case Bound:
		return "at most"
	}
	return "about"
}

// Unbounded is a count with no bound a int64 holds: a source that never
// ends, or a rate that saturates the arithmetic.
const Unbounded = math.MaxInt64

// Size is what a source sends before an instant, computed from its
// parameters without generating its arrivals (for a trace, from the
// file's size and a sample of its lines, without reading it all).
type Size struct {
	// Requests is the number of requests (first attempts); Unbounded
	// when they have no end.
	Requests int64
	// Keys is the number of keys they go to, at most.
	Keys int64
	// Window is the most requests in any window of the length asked
	// (half-open, [a, a+V)); Instants the most distinct instants among
	// them, never more than the window's length in ns.
	Window, Instants int64
	// Runs is the most entries the peaks of offered traffic hold for
	// the window, which group evenly spaced instants of one cost into one
	// (docs/metrics.md, "Peaks"): Instants, or fewer for a source whose
	// instants are evenly spaced (a steady source whose rate divides its
	// period in whole nanoseconds, or whose requests come a whole number
	// to the nanosecond). Two sources together group as their instants
	// interleave, which a size does not know: theirs is their Instants.
	Runs int64
	// Accuracy applies to Requests and Keys; Window and Instants are
	// always upper bounds (or, Sampled, from the same sample).
	Accuracy Accuracy
}

// Add sums two sizes: the most of each, the least accurate accuracy.
// Instants stay within v, a window's length in ns.
func (s Size) Add(t Size, v time.Duration) Size {
	u := Size{
		Requests: satAdd(s.Requests, t.Requests),
		Keys:     satAdd(s.Keys, t.Keys),
		Window:   satAdd(s.Window, t.Window),
		Instants: min(satAdd(s.Instants, t.Instants), int64(max(v, 1))),
		Accuracy: max(s.Accuracy, t.Accuracy),
	}
	switch {
	case s == Size{}:
		u.Runs = t.Runs
	case t == Size{}:
		u.Runs = s.Runs
	default:
		u.Runs = u.Instants
	}
	return u
}

// SizeOf is what src sends before end (0: no end but its own) and the
// most of it in any window of v (> 0). The error is a trace's, which
// SizeOf opens to sample.
func SizeOf(src Source, end, v time.Duration) (Size, error) {
	if e := src.End(); e > 0 && (end == 0 || e < end) {
		end = e
	}
	var s Size
	switch x := src.(type) {
	case *Times:
		s = x.size(end, v)
	case *Burst:
		s = x.size(end, v)
	case *Steady:
		s = x.size(end, v)
	case *OnOff:
		s = x.size(end, v)
	case *Ramp:
		s = x.size(end, v)
	case *Poisson:
		s = x.size(end, v)
	case *Aligned:
		s = x.size(end, v)
	case *Replay:
		var err error
		if s, err = x.size(v); err != nil {
			return Size{}, err
		}
	default:
		return Size{}, fmt.Errorf("traffic: no size for a source of type %T", src)
	}
	s.Window = min(s.Window, s.Requests)
	s.Instants = min(s.Instants, s.Window, int64(max(v, 1)))
	if s.Runs == 0 || s.Runs > s.Instants {
		s.Runs = s.Instants
	}
	return s, nil
}

// satMul is a*b for a, b >= 0, Unbounded past it (satAdd is a+b).
func satMul(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > Unbounded {
		return Unbounded
	}
	return int64(lo)
}

// before is how many i >= 0 have floor(i*per/count) < x: ceil(x*count/per)
// for x > 0, the requests of a rate count/per in its first x ns
// (Unbounded when that passes an int64).
func before(x time.Duration, count int64, per time.Duration) int64 {
	if x <= 0 || count <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(x), uint64(count))
	lo, carry := bits.Add64(lo, uint64(per)-1, 0)
	hi += carry
	if hi >= uint64(per) {
		return Unbounded
	}
	q, _ := bits.Div64(hi, lo, uint64(per))
	if q > Unbounded {
		return Unbounded
	}
	return int64(q)
}

// inWindow is the most requests of a rate count/per in a window of v:
// the instants floor(i*per/count) within any [a, a+v) are at most
// ceil(v*count/per) + 1 (the +1 for where the floors bunch).
func inWindow(v time.Duration, count int64, per time.Duration) int64 {
	return satAdd(before(v, count, per), 1)
}

// span is the time a source sends in: from start to end, 0 when it ends
// before it starts, Unbounded when it has no end.
func span(start, end time.Duration) (time.Duration, bool) {
	if end == 0 {
		return 0, false
	}
	return max(end-start, 0), true
}

func (c Clients) count() int64 {
	if c.N == 0 {
		return 1
	}
	return int64(c.N)
}

// size of a times source: its instants in [Start, end), for every client.
func (s *Times) size(end, v time.Duration) Size {
	var n int64
	distinct := map[time.Duration]bool{}
	for _, at := range s.At {
		if at >= s.Start && (end == 0 || at < end) {
			n++
			distinct[at] = true
		}
	}
	return Size{Requests: satMul(n, s.Clients.count()), Keys: s.Clients.count(),
		Window: satMul(n, s.Clients.count()), Instants: int64(len(distinct))}
}

// size of a burst: Count requests per client over Over, those in
// [Start, end) kept.
func (s *Burst) size(end, v time.Duration) Size {
	// request i is at At + floor(i*Over/Count): those before x are the
	// i with floor(i*Over/Count) < x - At
	upto := func(x time.Duration) int64 {
		if s.Over == 0 {
			if x > s.At {
				return s.Count
			}
			return 0
		}
		return min(before(x-s.At, s.Count, s.Over), s.Count)
	}
	n := s.Count
	if end > 0 {
		n = upto(end)
	}
	n -= upto(s.Start)
	n = max(n, 0)
	w, inst := n, min(n, 1) // all at At
	if s.Over > 0 {
		w = min(n, inWindow(v, s.Count, s.Over))
		inst = w
	}
	k := s.Clients.count()
	return Size{Requests: satMul(n, k), Keys: k, Window: satMul(w, k), Instants: inst, Runs: gridRuns(s.Count, int64(s.Over), inst)}
}

// size of a steady source: request i at Start + floor(i*Per/Count), while
// before end.
func (s *Steady) size(end, v time.Duration) Size {
	t, ok := span(s.Start, end)
	n := int64(Unbounded)
	if ok {
		n = before(t, s.Rate.Count, s.Rate.Per)
	}
	w := inWindow(v, s.Rate.Count, s.Rate.Per)
	return Size{Requests: n, Keys: s.Clients.count(), Window: w, Instants: w, Runs: gridRuns(s.Rate.Count, int64(s.Rate.Per), w)}
}

// gridRuns is the most entries the peaks of offered traffic hold for w
// instants of requests at floor(i*per/count), of one cost (0: as many as
// instants). Where those are evenly spaced, per/count whole nanoseconds
// apart or count/per whole requests at each nanosecond: the first
// instant, a run of the rest and one more while an instant's requests add
// up. Where they are apart by q = floor(per/count) or q+1 ns, in any
// stretch of w-1 gaps the rarer gap comes at most ceil(w*m/count) times
// (m = per mod count, or count-m for the gap q; the gaps of a line's
// floors are balanced) and never twice in a row, so the runs are at most
// twice that and one, and the first instant, the run not yet counted and
// the window's oldest entry, cut at its front, are three more. Several
// requests a nanosecond, not evenly, vary the cost of an instant: 0.
func gridRuns(count, per, w int64) int64 {
	switch {
	case count <= 0 || per <= 0:
		return 0
	case per%count == 0 || count%per == 0:
		return 3
	case per < count:
		return 0
	}
	m := per % count
	m = min(m, count-m)
	hi, lo := bits.Mul64(uint64(w), uint64(m))
	if hi >= uint64(count) {
		return 0
	}
	q, r := bits.Div64(hi, lo, uint64(count))
	if r > 0 {
		q++
	}
	return satAdd(satMul(int64(min(q, Unbounded)), 2), 4)
}

// size of an onoff source: each phase of On+Off sends the requests of
// its first On ns at Rate, ceil(On*Count/Per) of them; the last phase is
// cut by end.
func (s *OnOff) size(end, v time.Duration) Size {
	k := s.Clients.count()
	if s.Rate.Count < 1 || s.Rate.Per < 1 || s.On <= 0 || s.Off <= 0 {
		return Size{Keys: k}
	}
	perPhase := before(s.On, s.Rate.Count, s.Rate.Per)
	w := min(inWindow(v, s.Rate.Count, s.Rate.Per), satMul(perPhase, int64(v/(s.On+s.Off))+2))
	t, ok := span(s.Start, end)
	if !ok {
		return Size{Requests: Unbounded, Keys: k, Window: w, Instants: w}
	}
	phase := s.On + s.Off
	n := satMul(int64(t/phase), perPhase)
	n = satAdd(n, min(perPhase, before(t%phase, s.Rate.Count, s.Rate.Per)))
	return Size{Requests: n, Keys: k, Window: w, Instants: w}
}

// size of a ramp: request i at the first t with Λ(t) >= i (see Ramp), so
// the requests before t are floor(Λ(t-1)) + 1, counted exactly as its
// stream does.
func (s *Ramp) size(end, v time.Duration) Size {
	k := s.Clients.count()
	until := s.Until
	if until == 0 {
		until = s.Common.End
	}
	// the fastest of the two rates bounds any window's requests
	fast := s.To
	if s.From.Count > 0 && s.From.Per > 0 && big.NewInt(0).Mul(big.NewInt(s.From.Count), big.NewInt(int64(s.To.Per))).Cmp(
		big.NewInt(0).Mul(big.NewInt(s.To.Count), big.NewInt(int64(s.From.Per)))) > 0 {
		fast = s.From
	}
	w := inWindow(v, fast.Count, fast.Per)
	if until <= s.Start || s.From.Count < 0 || s.From.Per <= 0 || s.To.Count < 1 || s.To.Per <= 0 {
		return Size{Keys: k}
	}
	T := int64(until - s.Start)
	limit := T
	if end > 0 {
		limit = min(limit, int64(end-s.Start))
	}
	if limit <= 0 {
		return Size{Keys: k, Window: w, Instants: w}
	}
	c0, p0 := big.NewInt(s.From.Count), big.NewInt(int64(s.From.Per))
	c1, p1 := big.NewInt(s.To.Count), big.NewInt(int64(s.To.Per))
	twoT := big.NewInt(2 * T)
	// 2T*P0*P1 * Λ(t) = (C1*P0 - C0*P1)*t² + 2T*P1*C0*t, as rampStream
	a := new(big.Int).Sub(new(big.Int).Mul(c1, p0), new(big.Int).Mul(c0, p1))
	b := new(big.Int).Mul(twoT, new(big.Int).Mul(p1, c0))
	d := new(big.Int).Mul(twoT, new(big.Int).Mul(p0, p1))
	x := big.NewInt(limit - 1)
	l := new(big.Int).Mul(a, x)
	l.Add(l, b)
	l.Mul(l, x)
	l.Quo(l, d)
	n := int64(Unbounded)
	if l.IsInt64() {
		n = satAdd(l.Int64(), 1)
	}
	return Size{Requests: n, Keys: k, Window: w, Instants: w}
}

// size of a poisson source, whose count is random: an upper bound. Its
// gaps are round(x*m) ns for x standard exponential and m = Per/Count, so
// a gap is k with probability e^(-(k-1/2)/m) - e^(-(k+1/2)/m) (k >= 1)
// and its mean is μ = e^(-1/(2m)) / (1 - e^(-1/m)), near m once m is a few
// ns and far below it under 1 ns (most gaps are then 0). Over t ns the
// count is about t/μ with a variance of about t·σ²/μ³ (a renewal
// process), σ² <= E[(xm + 1/2)²] = 2m² + m + 1/4; the bound is ten
// standard deviations above the mean, plus one. The figure is for
// planning: floats, rounded up, decide no request.
func (s *Poisson) size(end, v time.Duration) Size {
	k := s.Clients.count()
	if s.Rate.Count < 1 || s.Rate.Per < 1 {
		return Size{Keys: k}
	}
	m := float64(s.Rate.Per) / float64(s.Rate.Count)
	mu := math.Exp(-1/(2*m)) / -math.Expm1(-1/m)
	sigma2 := float64(2*m*m) + m + 0.25 // products rounded: no fused multiply-add (docs/development.md)
	bound := func(t time.Duration) int64 {
		if t <= 0 {
			return 0
		}
		if !(mu > 0) {
			return Unbounded // every gap rounds to 0: one instant for ever
		}
		ft := float64(t)
		mean := ft / mu
		sd := math.Sqrt(ft * sigma2 / (mu * mu * mu))
		b := math.Ceil(mean + float64(10*sd) + 1)
		if !(b < math.MaxInt64/2) {
			return Unbounded
		}
		return int64(b)
	}
	w := bound(v)
	t, ok := span(s.Start, end)
	n := int64(Unbounded)
	if ok {
		n = bound(t)
	}
	return Size{Requests: n, Keys: k, Window: w, Instants: w, Accuracy: Bound}
}

// size of an aligned source: Count requests per client at each occurrence
// k*Every + Offset in [Start, end).
func (s *Aligned) size(end, v time.Duration) Size {
	k := s.Clients.count()
	if s.Count < 1 || s.Every <= 0 {
		return Size{Keys: k}
	}
	// occurrences at or after Start: the k with k*Every + Offset >= Start,
	// k >= 0
	first := int64(0)
	if s.Start > s.Offset {
		first = int64((s.Start - s.Offset + s.Every - 1) / s.Every)
	}
	// a window of v touches at most v/Every + 2 occurrences (Over <
	// Every), each sending Count requests per client at shared instants
	w := satMul(s.Count, int64(v/s.Every)+2)
	inst := w
	if end == 0 {
		return Size{Requests: Unbounded, Keys: k, Window: satMul(w, k), Instants: inst}
	}
	// occurrences before end: k*Every + Offset < end
	last := int64(-1)
	if end > s.Offset {
		last = int64((end - s.Offset - 1) / s.Every)
	}
	occ := max(last-first+1, 0)
	n := satMul(occ, s.Count)
	if occ > 0 {
		// the last occurrence's requests at or after end are cut
		at := time.Duration(last)*s.Every + s.Offset
		if s.Over > 0 {
			n -= s.Count - min(before(end-at, s.Count, s.Over), s.Count)
		}
	}
	return Size{Requests: satMul(n, k), Keys: k, Window: satMul(w, k), Instants: inst}
}

// sizeSample is how much of a trace size reads to measure its lines.
const sizeSample = 64 << 10

// size of a replay: its lines, about, from the file's size over the mean
// length of the lines in its first sizeSample bytes (after gunzipping,
// with the file's size scaled by how much the sample's compressed bytes
// grew); every line a request of its own key at its own instant, at most.
// It reads no further than the sample.
func (r *Replay) size(v time.Duration) (Size, error) {
	f, err := r.open()
	if err != nil {
		return Size{}, &ReplayError{Path: r.Path, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Size{}, &ReplayError{Path: r.Path, Msg: err.Error(), Err: err}
	}
	bytes := st.Size()
	cr := &countingReader{r: f}
	br := bufio.NewReaderSize(cr, 4096)
	var rd io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return Size{}, &ReplayError{Path: r.Path, Msg: "not a valid gzip file: " + err.Error(), Err: err}
		}
		rd = gz
	}
	keys := func(lines int64) int64 {
		if r.KeyField == "none" {
			return 1 // every request under one key
		}
		return lines
	}
	buf := make([]byte, sizeSample)
	n, err := io.ReadFull(rd, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return Size{}, &ReplayError{Path: r.Path, Msg: err.Error(), Err: err}
	}
	buf = buf[:n]
	lines := int64(0)
	switch {
	case n < sizeSample:
		// the whole trace is in the sample: its lines, exactly
		// the whole trace is in the sample: its lines, of which a header
		// or a malformed line is no request
		lines = int64(len(splitLines(buf)))
		return Size{Requests: lines, Keys: keys(lines), Window: lines, Instants: lines, Accuracy: Bound}, nil
	default:
		ls := splitLines(buf)
		if len(ls) > 1 {
			ls = ls[:len(ls)-1] // the last may be cut by the sample
		}
		used := 0
		for _, l := range ls {
			used += len(l) + 1
		}
		total := float64(bytes)
		if rd != io.Reader(br) {
			// gzip: the sample's share of the file is what it read of it
			total = float64(bytes) * float64(n) / float64(max(cr.n-int64(br.Buffered()), 1))
		}
		est := math.Ceil(total * float64(len(ls)) / float64(max(used, 1)))
		lines = Unbounded
		if est < math.MaxInt64/2 {
			lines = int64(est)
		}
	}
	return Size{Requests: lines, Keys: keys(lines), Window: lines, Instants: lines, Accuracy: Sampled}, nil
}

// splitLines cuts b into its lines, without their ends.
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		out = append(out, b[:i])
		if i == len(b) {
			break
		}
		b = b[i+1:]
	}
	return out
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
