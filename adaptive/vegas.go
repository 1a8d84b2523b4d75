package adaptive

import (
	"math"
	"math/rand/v2"
	"time"
)

// VegasConfig holds the parameters of vegas, named as a scenario spells them
// (the Java builder's names in kebab-case). DefaultVegasConfig gives the
// Java's defaults:
//
//	initial-limit     20    the limit before any sample
//	max-concurrency   1000  the limit never goes above (nor below 1)
//	smoothing         1.0   weight of the new limit, in [0, 1]
//	probe-multiplier  30    probe for a new no-load rtt every about
//	                        jitter*30*limit samples, jitter in [0.5, 1)
//
// alpha, beta, threshold, increase and decrease are the Java's default
// functions of the limit (log10Int), not parameters.
type VegasConfig struct {
	InitialLimit    int
	MaxConcurrency  int
	Smoothing       float64
	ProbeMultiplier int
}

// DefaultVegasConfig returns VegasLimit.Builder's defaults.
func DefaultVegasConfig() VegasConfig {
	return VegasConfig{InitialLimit: 20, MaxConcurrency: 1000, Smoothing: 1.0, ProbeMultiplier: 30}
}

// Vegas is Netflix concurrency-limits' VegasLimit, after TCP Vegas: it
// estimates the queue from the ratio of the no-load rtt to the sample's rtt,
// and grows the limit while the queue is short, shrinks it when it is long.
//
// Source: concurrency-limits-core/src/main/java/com/netflix/concurrency/
// limits/limit/VegasLimit.java (_update, updateEstimatedLimit,
// shouldProbe), with functions/Log10RootIntFunction.java. State: the
// estimated limit E (a double), rtt_noload (0 = none yet), probeCount and
// probeJitter. On each sample (rtt > 0; the Java throws on rtt <= 0 before
// changing anything, so such a sample is ignored here):
//
//	probeCount++
//	if probeJitter*probeMultiplier*E <= probeCount:   probe
//	    probeJitter = a new draw in [0.5, 1); probeCount = 0
//	    rtt_noload = rtt; the limit stays (int)E
//	else if rtt_noload == 0 || rtt < rtt_noload:      a new minimum
//	    rtt_noload = rtt; the limit stays (int)E
//	else:
//	    queue = (int)ceil(E * (1 - rtt_noload/rtt))
//	    if dropped:                  new = E - log10(E)
//	    else if inflight*2 < E:      the limit stays (int)E (app-limited)
//	    else with l = log10((int)E), alpha = 3l, beta = 6l, threshold = l:
//	        if queue <= threshold:   new = E + beta
//	        else if queue < alpha:   new = E + l
//	        else if queue > beta:    new = E - l
//	        else:                    the limit stays (int)E
//	    new = max(1, min(maxConcurrency, new))
//	    E = (1-smoothing)*E + smoothing*new; the limit is (int)E
//
// log10(x) is max(1, floor(log10 x)) of the integer x (log10Int): 1 up to
// 99, 2 up to 999, 3 up to 9999. The probe jitter is
// ThreadLocalRandom.nextDouble(0.5, 1) in the Java; here 0.5 + 0.5*u with u
// = rng.Float64(), drawn at construction and at each probe from the
// caller's seeded rng.
//
// The Go port (platinummonkey/go-concurrency-limits limit/vegas.go)
// differs: it tests queue < threshold (the Java: <=), takes increase and
// decrease from a float log10 of the float limit, and truncates the probe
// product to an integer; this follows the Java.
type Vegas struct {
	cfg         VegasConfig
	rng         *rand.Rand
	estimated   float64
	limit       int
	rttNoLoad   time.Duration
	probeCount  int
	probeJitter float64
}

var _ Limit = (*Vegas)(nil)

// NewVegas returns a Vegas limit drawing its probe jitter from rng, or an
// error naming the first invalid parameter: limits of at least 1 with
// initial-limit <= max-concurrency (the Java warns), smoothing in [0, 1],
// probe-multiplier of at least 1 (0 or less would probe on every sample, so
// the limit would never move).
func NewVegas(c VegasConfig, rng *rand.Rand) (*Vegas, error) {
	if err := checkLimits("vegas", "initial-limit", c.InitialLimit, "min-limit", 1, "max-concurrency", c.MaxConcurrency); err != nil {
		return nil, err
	}
	if !(c.Smoothing >= 0 && c.Smoothing <= 1) {
		return nil, paramErr("vegas", "smoothing", c.Smoothing, "want a weight in [0, 1]")
	}
	if c.ProbeMultiplier < 1 {
		return nil, paramErr("vegas", "probe-multiplier", c.ProbeMultiplier, "want at least 1")
	}
	if rng == nil {
		return nil, paramErr("vegas", "seed", "none", "want a seeded random source for the probe jitter")
	}
	v := &Vegas{cfg: c, rng: rng, estimated: float64(c.InitialLimit), limit: c.InitialLimit}
	v.resetProbeJitter()
	return v, nil
}

// resetProbeJitter is ThreadLocalRandom.current().nextDouble(0.5, 1): origin
// + u*(bound-origin), u in [0, 1).
func (v *Vegas) resetProbeJitter() {
	v.probeJitter = float64(v.rng.Float64()*0.5) + 0.5
}

// Limit returns the current limit, (int) of the estimate.
func (v *Vegas) Limit(time.Duration) int { return v.limit }

// OnSample applies VegasLimit._update.
func (v *Vegas) OnSample(_, rtt time.Duration, inflight int, dropped bool) {
	if rtt <= 0 {
		return // IllegalArgumentException in the Java, before any change
	}
	v.probeCount++
	if float64(v.probeJitter*float64(v.cfg.ProbeMultiplier))*v.estimated <= float64(v.probeCount) {
		v.resetProbeJitter()
		v.probeCount = 0
		v.rttNoLoad = rtt
		v.limit = javaInt(v.estimated)
		return
	}
	if v.rttNoLoad == 0 || rtt < v.rttNoLoad {
		v.rttNoLoad = rtt
		v.limit = javaInt(v.estimated)
		return
	}
	v.limit = v.update(rtt, inflight, dropped)
}

// update is updateEstimatedLimit.
func (v *Vegas) update(rtt time.Duration, inflight int, dropped bool) int {
	e := v.estimated
	queue := javaInt(math.Ceil(e * (1 - float64(v.rttNoLoad)/float64(rtt))))
	var n float64
	switch {
	case dropped:
		n = e - float64(log10Int(javaInt(e)))
	case float64(inflight*2) < e:
		return javaInt(e)
	default:
		l := log10Int(javaInt(e))
		alpha, beta, threshold := 3*l, 6*l, l
		switch {
		case queue <= threshold:
			n = e + float64(beta)
		case queue < alpha:
			n = e + float64(l)
		case queue > beta:
			n = e - float64(l)
		default:
			return javaInt(e)
		}
	}
	n = max(1, min(float64(v.cfg.MaxConcurrency), n)) // Java's Math.max and Math.min, as math.Max and math.Min
	n = float64((1-v.cfg.Smoothing)*e) + float64(v.cfg.Smoothing*n)
	v.estimated = n
	return javaInt(n)
}
