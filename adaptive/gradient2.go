package adaptive

import (
	"time"
)

// Gradient2Config holds the parameters of gradient2, named as a scenario
// spells them (the Java builder's names in kebab-case).
// DefaultGradient2Config gives the Java's defaults:
//
//	initial-limit    20   the limit before any sample
//	min-limit        20   the limit never goes below
//	max-concurrency  200  the limit never goes above
//	smoothing        0.2  weight of the new limit, in [0, 1]
//	queue-size       4    what the limit may grow by per update (the
//	                      builder's queueSize(int); a constant)
//	long-window      600  samples of the long-term rtt's exponential average
//	rtt-tolerance    1.5  how much the rtt may exceed the long-term rtt
//	                      before the limit shrinks (>= 1)
type Gradient2Config struct {
	InitialLimit   int
	MinLimit       int
	MaxConcurrency int
	Smoothing      float64
	QueueSize      int
	LongWindow     int
	RTTTolerance   float64
}

// DefaultGradient2Config returns Gradient2Limit.Builder's defaults.
func DefaultGradient2Config() Gradient2Config {
	return Gradient2Config{InitialLimit: 20, MinLimit: 20, MaxConcurrency: 200, Smoothing: 0.2,
		QueueSize: 4, LongWindow: 600, RTTTolerance: 1.5}
}

// Gradient2 is Netflix concurrency-limits' Gradient2Limit: the limit follows
// the gradient between a long-term exponentially averaged rtt and the
// current rtt, plus a fixed allowance for queueing.
//
// Source: concurrency-limits-core/src/main/java/com/netflix/concurrency/
// limits/limit/Gradient2Limit.java (_update) with measurement/
// ExpAvgMeasurement.java. State: the estimated limit E (a double) and the
// long rtt, an ExpAvgMeasurement(longWindow, warmup 10): its first 10
// samples set it to their plain mean (sum/count), each later one to
// value*(1-f) + rtt*f with f = 2/(longWindow+1). On each sample (dropped
// plays no part, as in the Java):
//
//	queue = queueSize
//	short = rtt; long = longRtt.add(rtt)
//	if long/short > 2:  longRtt = longRtt*0.95   (after long was read)
//	if inflight < E/2:  the limit stays (int)E (app-limited)
//	gradient = max(0.5, min(1.0, tolerance*long/short))
//	new = E*gradient + queue
//	new = E*(1-smoothing) + new*smoothing
//	E = max(minLimit, min(maxConcurrency, new)); the limit is (int)E
//
// An rtt of 0 makes long/short infinite or NaN, and NaN then stays in E as
// in the Java, where the limit is then (int)NaN = 0; the WindowedLimit
// wrapper filters rtts under 100µs, and the backend gives none.
//
// The Go port (platinummonkey/go-concurrency-limits limit/gradient2.go)
// differs: its gradient has no rtt tolerance (max(0.5, min(1, long/short))),
// it decays the long rtt by 0.9 (the Java: 0.95), and it replaces invalid
// parameters with other defaults (min-limit 4, max 1000); this follows the
// Java.
type Gradient2 struct {
	cfg       Gradient2Config
	estimated float64
	limit     int
	long      expAvg
}

var _ Limit = (*Gradient2)(nil)

// NewGradient2 returns a Gradient2 limit, or an error naming the first
// invalid parameter: the Java's check (rtt-tolerance >= 1), plus limits of
// at least 1 with initial-limit in [min-limit, max-concurrency] (the Java
// warns), smoothing in [0, 1], queue-size >= 0 and long-window >= 1.
func NewGradient2(c Gradient2Config) (*Gradient2, error) {
	if err := checkLimits("gradient2", "initial-limit", c.InitialLimit, "min-limit", c.MinLimit, "max-concurrency", c.MaxConcurrency); err != nil {
		return nil, err
	}
	if !(c.Smoothing >= 0 && c.Smoothing <= 1) {
		return nil, paramErr("gradient2", "smoothing", c.Smoothing, "want a weight in [0, 1]")
	}
	if c.QueueSize < 0 {
		return nil, paramErr("gradient2", "queue-size", c.QueueSize, "want 0 or more")
	}
	if c.LongWindow < 1 {
		return nil, paramErr("gradient2", "long-window", c.LongWindow, "want at least 1 sample")
	}
	if !(c.RTTTolerance >= 1) {
		return nil, paramErr("gradient2", "rtt-tolerance", c.RTTTolerance, "want at least 1.0")
	}
	return &Gradient2{cfg: c, estimated: float64(c.InitialLimit), limit: c.InitialLimit,
		long: newExpAvg(c.LongWindow, 10)}, nil
}

// Limit returns the current limit, (int) of the estimate.
func (g *Gradient2) Limit(time.Duration) int { return g.limit }

// OnSample applies Gradient2Limit._update.
func (g *Gradient2) OnSample(_, rtt time.Duration, inflight int, _ bool) {
	e := g.estimated
	queue := float64(g.cfg.QueueSize)
	short := float64(rtt)
	long := g.long.add(short)
	if long/short > 2 {
		g.long.value = g.long.value * 0.95
	}
	if float64(inflight) < e/2 {
		g.limit = javaInt(e)
		return
	}
	// Go's max and min are Java's Math.max and Math.min on doubles (and
	// math.Max and math.Min, without a call): NaN wins, -0 < +0
	gradient := max(0.5, min(1.0, float64(g.cfg.RTTTolerance*long)/short))
	n := float64(e*gradient) + queue
	n = float64(e*(1-g.cfg.Smoothing)) + float64(n*g.cfg.Smoothing)
	n = max(float64(g.cfg.MinLimit), min(float64(g.cfg.MaxConcurrency), n))
	g.estimated = n
	g.limit = javaInt(n)
}

// expAvg is measurement/ExpAvgMeasurement.java: the plain mean of the first
// warmup samples, then an exponential average with factor 2/(window+1).
type expAvg struct {
	window, warmup int
	count          int
	sum, value     float64
	f              float64 // 2/(window+1), computed once
}

func newExpAvg(window, warmup int) expAvg {
	return expAvg{window: window, warmup: warmup, f: 2.0 / float64(window+1)}
}

func (m *expAvg) add(sample float64) float64 {
	if m.count < m.warmup {
		m.count++
		m.sum += sample
		m.value = m.sum / float64(m.count)
	} else {
		f := m.f
		m.value = float64(m.value*(1-f)) + float64(sample*f)
	}
	return m.value
}
