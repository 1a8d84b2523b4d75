package adaptive

import (
	"math"
	"math/rand/v2"
	"time"
)

// EnvoyConfig holds the parameters of envoy-adaptive, named as a scenario
// spells them, after the proto's fields (envoy/extensions/filters/http/
// adaptive_concurrency/v3/adaptive_concurrency.proto, GradientControllerConfig).
// DefaultEnvoyConfig gives the defaults gradient_controller.cc applies
// (PROTOBUF_..._OR_DEFAULT):
//
//	interval               required  concurrency_limit_params.concurrency_update_interval:
//	                                 how often the limit is recalculated
//	max-concurrency-limit  1000      concurrency_limit_params.max_concurrency_limit
//	sample-percentile      50        sample_aggregate_percentile, a percent
//	min-rtt-calc-interval  required  min_rtt_calc_params.interval: the time
//	                                 between min-RTT measurements
//	request-count          50        min_rtt_calc_params.request_count: samples
//	                                 per min-RTT measurement
//	jitter                 15        min_rtt_calc_params.jitter, a percent of
//	                                 min-rtt-calc-interval
//	min-concurrency        3         min_rtt_calc_params.min_concurrency: the
//	                                 limit during a min-RTT measurement, and
//	                                 the lowest limit
//	buffer                 25        min_rtt_calc_params.buffer, a percent
//	                                 added to the min RTT
//
// Both intervals are required: the proto requires concurrency_update_interval
// and gives min_rtt_calc_params.interval no default (an unset one reads as 0,
// which in the current proto disables min-RTT sampling and requires a fixed
// min RTT, not modelled here). Envoy reads both in whole milliseconds
// (DurationUtil::durationToMilliseconds), so they are truncated to whole
// milliseconds and must be at least 1ms.
type EnvoyConfig struct {
	Interval            time.Duration
	MaxConcurrencyLimit int
	SamplePercentile    float64
	MinRTTCalcInterval  time.Duration
	RequestCount        int
	Jitter              float64
	MinConcurrency      int
	Buffer              float64
}

// DefaultEnvoyConfig returns gradient_controller.cc's defaults, with the
// two required intervals unset.
func DefaultEnvoyConfig() EnvoyConfig {
	return EnvoyConfig{MaxConcurrencyLimit: 1000, SamplePercentile: 50, RequestCount: 50,
		Jitter: 15, MinConcurrency: 3, Buffer: 25}
}

// Envoy is envoy's adaptive concurrency filter with its gradient
// controller: the limit is recalculated every interval from the ratio of a
// periodically measured minimum RTT to a percentile of the latencies
// sampled since the last recalculation.
//
// Source: source/extensions/filters/http/adaptive_concurrency/controller/
// gradient_controller.cc (and .h), in the order of operations of its
// functions, which are timer callbacks and per-request calls:
//
//   - Construction (at start): limit = min-concurrency, then
//     enterMinRTTSamplingWindow, and the sample timer armed at start +
//     interval.
//   - enterMinRTTSamplingWindow (min-RTT timer): unless already in a
//     window, deferred = limit (deferred > 0 means "in a min-RTT window"),
//     updateConcurrencyLimit(min-concurrency), clear the histogram, epoch =
//     now.
//   - recordLatencySample (OnSample): a request sent before epoch (now - rtt
//     < epoch) is ignored; else its latency, truncated to whole microseconds,
//     goes into the histogram, and updateMinRTT runs.
//   - updateMinRTT: only in a window with at least request-count samples:
//     minRTT = the percentile of the histogram (cleared),
//     updateConcurrencyLimit(deferred), deferred = 0, the min-RTT timer
//     armed at now + min-rtt-calc-interval + jitter, and the sample timer
//     at now + interval.
//   - the sample timer: in a min-RTT window it does nothing (and is not
//     re-armed); else, if the histogram holds samples, sampleRTT = their
//     percentile (cleared) and updateConcurrencyLimit(calculateNewLimit());
//     then it re-arms itself at now + interval.
//   - calculateNewLimit: gradient = max(0.5, min(2.0, (minRTT +
//     minRTT*buffer) / sampleRTT)) over nanoseconds; limit' = limit*gradient;
//     new = (uint32)(limit' + sqrt(limit')); clamped to [min-concurrency,
//     max-concurrency-limit].
//   - updateConcurrencyLimit(new): outside a min-RTT window, a limit set
//     from min-concurrency to min-concurrency counts one more in a row (any
//     other update resets the count); at 5 in a row the min-RTT timer is
//     armed at now (a new measurement at once).
//   - jitter: with jitter j > 0, the min-RTT timer's delay is interval_ms +
//     rng.Uint64() % ceil(interval_ms * j) milliseconds (envoy's
//     random_.random() % jitter_range_ms).
//
// The percentile is libcircllhist's hist_approx_quantile over its log-linear
// buckets (latencyHist), as in envoy; like envoy's C++ std::min and std::max,
// a NaN gradient (minRTT and sampleRTT both 0) gives 2.0.
//
// Timers are events of the virtual clock: Limit and OnSample first run,
// in time order, every timer due at or before now, each at its own due
// instant; timers due at the same instant run in the order they were armed.
// A timer due at the instant of a sample runs before it.
//
// What envoy samples: the filter records a latency for every response it
// encodes, a 503 or an error included, and none for a request whose stream
// is destroyed first (a client that gave up: cancelLatencySample). So
// dropped is not read here; a caller models envoy best by not reporting
// requests whose client timed out.
type Envoy struct {
	cfg        EnvoyConfig
	rng        *rand.Rand
	intervalMs int64
	minRTTMs   int64
	percentile float64 // sample-percentile / 100
	jitter     float64 // jitter / 100
	buffer     float64 // buffer / 100

	limit          uint32
	deferred       uint32 // the limit to restore after a min-RTT window; > 0 in one
	minRTT         time.Duration
	sampleRTT      time.Duration
	consecutiveMin uint32
	epoch          time.Duration
	hist           *latencyHist

	minRTTTimer, sampleTimer timer
	armSeq                   uint64
}

var _ Limit = (*Envoy)(nil)

// timer is one of the controller's two timers: due instant (never when
// unarmed) and the order it was armed in.
type timer struct {
	due time.Duration
	seq uint64
}

func (e *Envoy) arm(t *timer, due time.Duration) {
	e.armSeq++
	t.due, t.seq = due, e.armSeq
}

// NewEnvoy returns the controller as constructed at start, drawing its
// jitter from rng, or an error naming the first invalid parameter: the
// proto's rules (interval and min-rtt-calc-interval required, at least 1ms;
// max-concurrency-limit, request-count and min-concurrency > 0; percents in
// [0, 100]), plus min-concurrency <= max-concurrency-limit <= 2^30.
func NewEnvoy(c EnvoyConfig, rng *rand.Rand, start time.Duration) (*Envoy, error) {
	const alg = "envoy-adaptive"
	if c.Interval == 0 {
		return nil, paramErr(alg, "interval", "none", "required, as in envoy (concurrency_update_interval): how often the limit is recalculated")
	}
	if c.Interval < time.Millisecond {
		return nil, paramErr(alg, "interval", c.Interval, "want at least 1ms (envoy reads it in whole milliseconds)")
	}
	if c.MinRTTCalcInterval == 0 {
		return nil, paramErr(alg, "min-rtt-calc-interval", "none", "required: envoy has no default for the time between min-RTT measurements")
	}
	if c.MinRTTCalcInterval < time.Millisecond {
		return nil, paramErr(alg, "min-rtt-calc-interval", c.MinRTTCalcInterval, "want at least 1ms (envoy reads it in whole milliseconds)")
	}
	if c.MinConcurrency < 1 {
		return nil, paramErr(alg, "min-concurrency", c.MinConcurrency, "want at least 1")
	}
	if c.MaxConcurrencyLimit < c.MinConcurrency || c.MaxConcurrencyLimit > 1<<30 {
		return nil, paramErr(alg, "max-concurrency-limit", c.MaxConcurrencyLimit, "want a limit from min-concurrency to 2^30")
	}
	if c.RequestCount < 1 {
		return nil, paramErr(alg, "request-count", c.RequestCount, "want at least 1")
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"sample-percentile", c.SamplePercentile}, {"jitter", c.Jitter}, {"buffer", c.Buffer}} {
		if !(p.v >= 0 && p.v <= 100) {
			return nil, paramErr(alg, p.name, p.v, "want a percent in [0, 100]")
		}
	}
	if rng == nil {
		return nil, paramErr(alg, "seed", "none", "want a seeded random source for the jitter")
	}
	e := &Envoy{
		cfg: c, rng: rng,
		intervalMs: int64(c.Interval / time.Millisecond), minRTTMs: int64(c.MinRTTCalcInterval / time.Millisecond),
		percentile: c.SamplePercentile / 100, jitter: c.Jitter / 100, buffer: c.Buffer / 100,
		limit: uint32(c.MinConcurrency), hist: newLatencyHist(),
		minRTTTimer: timer{due: never}, sampleTimer: timer{due: never},
	}
	e.enterMinRTTSamplingWindow(start)
	e.arm(&e.sampleTimer, start+e.interval())
	return e, nil
}

func (e *Envoy) interval() time.Duration { return time.Duration(e.intervalMs) * time.Millisecond }

// Limit returns the limit in force at now, after the timers due by then.
func (e *Envoy) Limit(now time.Duration) int {
	e.advance(now)
	return int(e.limit)
}

// InMinRTTWindow says whether a min-RTT measurement is under way at now
// (the limit is then pinned to min-concurrency): for charts and tests.
func (e *Envoy) InMinRTTWindow(now time.Duration) bool {
	e.advance(now)
	return e.deferred > 0
}

// MinRTT returns the last measured min RTT (whole microseconds), 0 before
// the first measurement ends: for charts and tests.
func (e *Envoy) MinRTT() time.Duration { return e.minRTT }

// OnSample is recordLatencySample, after the timers due by now.
func (e *Envoy) OnSample(now, rtt time.Duration, _ int, _ bool) {
	e.advance(now)
	if now-rtt < e.epoch {
		return // sent before the current min-RTT window began
	}
	e.hist.insert(int64(rtt / time.Microsecond))
	e.updateMinRTT(now)
}

// advance runs the timers due at or before now, in order.
func (e *Envoy) advance(now time.Duration) {
	for {
		m, s := &e.minRTTTimer, &e.sampleTimer
		if s.due <= now && e.deferred == 0 && e.hist.n == 0 {
			// Idle: with no samples, the sample timer only re-arms itself,
			// until the min-RTT timer fires or now. Skip those firings in
			// one step (none if the min-RTT timer comes first).
			last := now
			if m.due <= now {
				last = m.due - 1 // firings at m.due come after the min-RTT timer's
			}
			if s.due <= last {
				k := (last-s.due)/e.interval() + 1
				e.arm(s, s.due+k*e.interval())
				continue
			}
		}
		switch {
		case m.due <= now && (m.due < s.due || m.due == s.due && m.seq < s.seq):
			at := m.due
			m.due = never
			e.enterMinRTTSamplingWindow(at)
		case s.due <= now:
			at := s.due
			s.due = never
			e.onSampleTimer(at)
		default:
			return
		}
	}
}

func (e *Envoy) enterMinRTTSamplingWindow(now time.Duration) {
	if e.deferred > 0 {
		return
	}
	e.deferred = e.limit
	e.updateConcurrencyLimit(now, uint32(e.cfg.MinConcurrency))
	e.hist.clear()
	e.epoch = now
}

func (e *Envoy) updateMinRTT(now time.Duration) {
	if e.deferred == 0 || e.hist.n < uint64(e.cfg.RequestCount) {
		return
	}
	e.minRTT = e.processLatencySamplesAndClear()
	e.updateConcurrencyLimit(now, e.deferred)
	e.deferred = 0
	e.arm(&e.minRTTTimer, now+e.applyJitter())
	e.arm(&e.sampleTimer, now+e.interval())
}

// applyJitter is applyJitter(minRTTCalcInterval, jitter) in milliseconds.
func (e *Envoy) applyJitter() time.Duration {
	ms := e.minRTTMs
	if e.jitter != 0 {
		jrange := uint32(math.Ceil(float64(ms) * e.jitter))
		if jrange > 0 {
			ms += int64(e.rng.Uint64() % uint64(jrange))
		}
	}
	return time.Duration(ms) * time.Millisecond
}

func (e *Envoy) onSampleTimer(now time.Duration) {
	if e.deferred > 0 {
		return // a min-RTT window began: updateMinRTT re-arms this timer
	}
	if e.hist.n > 0 {
		e.sampleRTT = e.processLatencySamplesAndClear()
		e.updateConcurrencyLimit(now, e.calculateNewLimit())
	}
	e.arm(&e.sampleTimer, now+e.interval())
}

func (e *Envoy) processLatencySamplesAndClear() time.Duration {
	q := e.hist.quantile(e.percentile)
	e.hist.clear()
	return time.Duration(cppIntMicros(q)) * time.Microsecond
}

func (e *Envoy) calculateNewLimit() uint32 {
	minRTT := float64(e.minRTT)
	buffered := minRTT + float64(minRTT*e.buffer)
	raw := buffered / float64(e.sampleRTT)
	gradient := cppMax(0.5, cppMin(2.0, raw))
	limit := float64(float64(e.limit) * gradient)
	headroom := math.Sqrt(limit)
	n := uint32(limit + headroom)
	return max(uint32(e.cfg.MinConcurrency), min(uint32(e.cfg.MaxConcurrencyLimit), n))
}

func (e *Envoy) updateConcurrencyLimit(now time.Duration, n uint32) {
	old := e.limit
	e.limit = n
	mc := uint32(e.cfg.MinConcurrency)
	if e.deferred == 0 && old == mc && n == mc {
		e.consecutiveMin++
	} else {
		e.consecutiveMin = 0
	}
	if e.consecutiveMin >= 5 {
		e.arm(&e.minRTTTimer, now)
	}
}

// cppMin and cppMax are std::min and std::max: (b < a) ? b : a and (a < b)
// ? b : a, which return a when either is NaN.
func cppMin(a, b float64) float64 {
	if b < a {
		return b
	}
	return a
}

func cppMax(a, b float64) float64 {
	if a < b {
		return b
	}
	return a
}
