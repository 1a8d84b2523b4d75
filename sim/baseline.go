package sim

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/ratesim/ratesim/algorithms"
)

// BaselineResult is how one row's decisions compare with the baseline
// row's (docs/accuracy.md): over first attempts, matched request by request
// in processing order (every row reads the same traffic, so the n-th first
// attempt of one row is the n-th of every other), how many the two decided
// differently, and in which direction. Retries are left out: a row that
// rejects more also retries more, and its attempts would not line up.
//
// Every differing decision counts in Differs, including one that differs
// only because an earlier decision already did (the two rows' states for
// the key have diverged since), as in Cloudflare's measurement of its
// sliding window counter. FirstDivergences counts the differing decisions
// that no earlier difference explains: those on a key whose every earlier
// first attempt both rows decided alike, since the key last started afresh
// (it had sent nothing for as long as either algorithm remembers, see
// memoryOf). It is nil when it cannot be defined that cleanly: when clients
// retry (a retry changes a row's state but is not matched), on a cluster or
// a backend with workers, or for an algorithm whose memory has no bound
// (concurrency, the adaptive limits).
type BaselineResult struct {
	Label          string `json:"label"`
	Compared       int64  `json:"compared"`
	Differs        int64  `json:"differs"`
	WronglyAllowed int64  `json:"wrongly_allowed"` // the baseline rejected, the row admitted
	WronglyLimited int64  `json:"wrongly_limited"` // the baseline admitted, the row rejected
	// FirstDivergences <= Differs; Differs - FirstDivergences followed an
	// earlier difference on the same key.
	FirstDivergences *int64 `json:"first_divergences,omitempty"`
}

// baselineChunk is how many first attempts an observer gathers before it
// hands them to its pair (one lock per chunk, not per decision).
const baselineChunk = 1024

// baselineRec is one first attempt and whether the row admitted it.
type baselineRec struct {
	at       time.Duration
	key      string
	cost     int64
	admitted bool
}

// baselineCmp compares every row with the baseline row as the rows run,
// each on its own goroutine. Each row has a pair with the baseline: the
// side that is ahead leaves its decisions in the pair, the other side
// matches its own against them as it catches up. The rows read one feed
// whose ring holds a few batches (feedShape), so no row gets more than the ring
// ahead of another and a pair never holds more than that many decisions
// (and a chunk): memory is bounded by the ring and the keys, never by the
// number of requests.
type baselineCmp struct {
	base   int
	pairs  []*baselinePair // by row; nil for the baseline row
	locals [][]baselineRec // by row: decisions not yet handed over
	obs    []Observer      // by row: the caller's observer, or nil
	stop   []bool          // by row: the caller's observer stopped
}

// baselinePair is the comparison of one row with the baseline.
type baselinePair struct {
	mu   sync.Mutex
	pend []baselineRec // one side's decisions the other has not matched yet
	head int           // pend[head:] are pending
	peak int           // the most ever pending, for tests
	side bool          // pend is the row's (true) or the baseline's (false)
	res  BaselineResult
	err  error
	// first divergences: per key, when it last sent and whether the two
	// rows have decided it differently since it last started afresh;
	// nil when they are not defined
	keys    map[string]*baselineKey
	horizon time.Duration
	first   int64
}

type baselineKey struct {
	last     time.Duration
	diverged bool
}

// newBaselineCmp prepares the comparison of every row of cfg with the row
// labelled label.
func newBaselineCmp(cfg *Config, label string) (*baselineCmp, error) {
	base := -1
	for i := range cfg.Algorithms {
		if cfg.Algorithms[i].Label == label {
			base = i
			break
		}
	}
	if base < 0 {
		return nil, fmt.Errorf("baseline %q is not a row of the scenario", label)
	}
	n := len(cfg.Algorithms)
	c := &baselineCmp{base: base, pairs: make([]*baselinePair, n), locals: make([][]baselineRec, n),
		obs: make([]Observer, n), stop: make([]bool, n)}
	clean := !retries(cfg.Retries) && cfg.Coordinate == nil && cfg.Backend == nil
	bm, bok := memoryOf(&cfg.Algorithms[base])
	for i := range cfg.Algorithms {
		if i == base || cfg.Algorithms[i].Route != cfg.Algorithms[base].Route || !slices.Equal(cfg.Algorithms[i].Routes, cfg.Algorithms[base].Routes) {
			// a row of another route saw other requests: nothing to match
			continue
		}
		p := &baselinePair{res: BaselineResult{Label: label}}
		if m, ok := memoryOf(&cfg.Algorithms[i]); clean && ok && bok {
			p.keys, p.horizon = map[string]*baselineKey{}, max(m, bm)
		}
		c.pairs[i] = p
	}
	return c, nil
}

// memoryOf bounds how long an algorithm of section 2 remembers a request:
// a key that has sent nothing for that long is decided as a fresh key.
// Fixed window and sliding log: W; sliding window: 2W (the previous
// window's count); the buckets (token-bucket, gcra, leaky-bucket,
// x-time-rate, nginx): the time to drain a full burst, twice over for
// nginx's truncated rate, plus the longest delay. ok is false for the
// algorithms with no such bound.
func memoryOf(a *Algorithm) (time.Duration, bool) {
	p := a.Params
	if p.Rate <= 0 || p.Per <= 0 {
		return 0, false
	}
	drain := func(n int64) time.Duration {
		// ceil(n*W/L), saturating
		if n <= 0 {
			return 0
		}
		hi, lo := mul64(uint64(n), uint64(p.Per))
		if hi != 0 || lo > math.MaxInt64-uint64(p.Rate) {
			return math.MaxInt64
		}
		return time.Duration((lo + uint64(p.Rate) - 1) / uint64(p.Rate))
	}
	sat := func(a, b time.Duration) time.Duration {
		if a > math.MaxInt64-b {
			return math.MaxInt64
		}
		return a + b
	}
	switch a.Name {
	case "fixed-window", "sliding-log":
		if p.Calendar != algorithms.NotCalendar {
			return p.Calendar.Longest(), true // 31 or 366 days
		}
		return p.Per, true
	case "sliding-window":
		return sat(p.Per, p.Per), true
	case "token-bucket", "gcra", "leaky-bucket", "x-time-rate":
		if p.FillInterval > 0 && p.TokensPerFill > 0 {
			// discrete refill: the ticks that bring B+1 tokens, one more
			// for the phase, plus the longest delay
			return sat(time.Duration((p.Burst+1)/p.TokensPerFill+2)*p.FillInterval, p.MaxDelay), true
		}
		return sat(drain(p.Burst+1), p.MaxDelay), true
	case "nginx":
		nb := p.Burst - 1
		if p.NginxBurstSet {
			nb = p.NginxBurst
		}
		d := drain(nb + 2)
		return sat(sat(d, d), time.Second), true
	case "none":
		return 0, true
	}
	return 0, false
}

// mul64 is the 128-bit product of a and b.
func mul64(a, b uint64) (hi, lo uint64) {
	const mask = 1<<32 - 1
	a0, a1 := a&mask, a>>32
	b0, b1 := b&mask, b>>32
	w0 := a0 * b0
	t := a1*b0 + w0>>32
	w1, w2 := t&mask, t>>32
	w1 += a0 * b1
	hi = a1*b1 + w2 + w1>>32
	lo = a * b
	return
}

// observer wraps row i's observer (inner, possibly nil) so that its first
// attempts are compared too.
func (c *baselineCmp) observer(i int, inner Observer) Observer {
	c.obs[i] = inner
	return &baselineObserver{c: c, i: i}
}

type baselineObserver struct {
	c *baselineCmp
	i int
}

func (o *baselineObserver) Observe(d *Decision) error {
	c, i := o.c, o.i
	if d.Attempt == 1 {
		c.locals[i] = append(c.locals[i], baselineRec{at: d.Time, key: d.Key, cost: d.Cost,
			admitted: d.Verdict == algorithms.Accept || d.Verdict == algorithms.Delay})
		if len(c.locals[i]) >= baselineChunk {
			c.flush(i)
		}
	}
	if inner := c.obs[i]; inner != nil && !c.stop[i] {
		err := inner.Observe(d)
		if err == ErrStopObserving {
			c.stop[i] = true
		} else if err != nil {
			return err
		}
	}
	return nil
}

// flush hands row i's gathered decisions to its pair(s).
func (c *baselineCmp) flush(i int) {
	recs := c.locals[i]
	if len(recs) == 0 {
		return
	}
	if i == c.base {
		for _, p := range c.pairs {
			if p != nil {
				p.put(false, recs)
			}
		}
	} else if c.pairs[i] != nil {
		c.pairs[i].put(true, recs)
	}
	c.locals[i] = recs[:0]
}

// finish hands over what every row has left and returns each row's
// comparison (nil for the baseline row), once every row has ended.
func (c *baselineCmp) finish() ([]*BaselineResult, error) {
	for i := range c.locals {
		c.flush(i)
	}
	out := make([]*BaselineResult, len(c.pairs))
	for i, p := range c.pairs {
		if p == nil {
			continue
		}
		if p.err != nil {
			return nil, p.err
		}
		if p.head < len(p.pend) {
			return nil, fmt.Errorf("baseline: a row decided %d first attempts more than the other", len(p.pend)-p.head)
		}
		res := p.res
		if p.keys != nil {
			first := p.first
			res.FirstDivergences = &first
		}
		out[i] = &res
	}
	return out, nil
}

// put takes side's decisions (row: true, baseline: false): it matches
// them against the other side's pending ones and keeps the rest.
func (p *baselinePair) put(row bool, recs []baselineRec) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return
	}
	if p.head < len(p.pend) && p.side != row {
		n := min(len(recs), len(p.pend)-p.head)
		for k := 0; k < n; k++ {
			b, r := &p.pend[p.head+k], &recs[k]
			if row {
				p.match(b, r)
			} else {
				p.match(r, b)
			}
		}
		p.head += n
		recs = recs[n:]
	}
	if p.head == len(p.pend) {
		p.pend, p.head = p.pend[:0], 0
	}
	if len(recs) == 0 {
		return
	}
	if p.head > 0 && p.head >= len(p.pend)/2 {
		// the matched half is dropped: the pending ones move down
		p.pend = p.pend[:copy(p.pend, p.pend[p.head:])]
		p.head = 0
	}
	p.side = row
	p.pend = append(p.pend, recs...)
	p.peak = max(p.peak, len(p.pend)-p.head)
}

// match compares the baseline's decision b with the row's r on the same
// request.
func (p *baselinePair) match(b, r *baselineRec) {
	if b.at != r.at || b.key != r.key || b.cost != r.cost {
		p.err = fmt.Errorf("baseline: request %d differs between rows (%v %q and %v %q): the rows did not read the same traffic",
			p.res.Compared+1, b.at, b.key, r.at, r.key)
		return
	}
	p.res.Compared++
	differs := b.admitted != r.admitted
	if differs {
		p.res.Differs++
		if r.admitted {
			p.res.WronglyAllowed++
		} else {
			p.res.WronglyLimited++
		}
	}
	if p.keys == nil {
		return
	}
	k := p.keys[r.key]
	if k == nil {
		k = &baselineKey{last: r.at}
		p.keys[r.key] = k
	} else if r.at-k.last >= p.horizon {
		k.diverged = false // both rows have forgotten the key
	}
	k.last = r.at
	if differs && !k.diverged {
		p.first++
		k.diverged = true
	}
}
