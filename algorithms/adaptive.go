package algorithms

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/ratesim/ratesim/adaptive"
)

// Adaptive is a concurrency limit that learns the backend's capacity from
// what the backend gives back (docs/adaptive.md), one limit for the whole
// row, as Netflix's concurrency-limits and envoy's filter run one per
// service: a request of cost c is admitted iff the units in flight, plus
// c, are at most the limit in force (adaptive.Limit), and stays in flight
// until Sample is called for it, when its client has its answer, a shed
// or an error, or gives up.
//
// The rules are package adaptive's, each following its source: aimd
// (AIMDLimit.java), vegas (VegasLimit.java), gradient2 (Gradient2Limit.java),
// all with their sources' defaults, each wrapped in WindowedLimit.java
// when Params.Window is set (window, min-samples); envoy-adaptive
// (gradient_controller.cc) with envoy's defaults and the options interval
// (required) and min-rtt-calc-interval.
//
// Samples: each Sample is the limit's sample (rtt from admission, queueing
// included), dropped for a shed, an error or a timeout (the Java's
// onDropped); envoy records a latency for every response it passes back, a
// 503 included, and none for a request whose client went away first, so
// envoy-adaptive takes no sample of a timeout (the request still leaves
// flight). envoy's timers run from its construction: here, the row's first
// decision.
//
// RetryAfter: the backend's mean service time (Params.Service), an
// estimate, as ConcurrencyModel's: at least 1ns.
//
// State: the units in flight and the limit's own, 8 bytes per key counted
// for the keys with requests in flight.
type Adaptive struct {
	lim  adaptive.Limit
	wait time.Duration
	// flight counts the units in flight, per key (for Memory) and in all
	// (its total), under no limit of its own
	flight ConcurrencyModel
	// envoy-adaptive: its configuration and seed, to build lim at the
	// first decision (lim is nil until then), and no sample of a timeout
	envoy    bool
	envoyCfg adaptive.EnvoyConfig
	seed     uint64
}

// EnvoyMinRTTInterval is envoy-adaptive's min-rtt-calc-interval when the
// scenario gives none: envoy's proto has no default for it, and this is
// the value of envoy's documentation example (60s).
const EnvoyMinRTTInterval = time.Minute

// Sampler is a limiter that learns from each admitted request's outcome
// (ConcurrencyModel, Adaptive, SREThrottle).
type Sampler interface {
	// InFlight returns the units in flight now: after an admission, that
	// request's own included.
	InFlight() int64
	// Sample ends a request of cost for key, admitted rtt before now when
	// inflight units were in flight (InFlight then), with its outcome for
	// its client.
	Sample(now time.Duration, key Key, cost int64, rtt time.Duration, inflight int64, outcome Outcome)
}

// Outcome is how a request the limiter admitted ended for its client.
type Outcome uint8

const (
	// Served: the backend answered without error in time.
	Served Outcome = iota
	// Failed: the backend shed it (a full queue) or answered with an error.
	Failed
	// Abandoned: its client stopped waiting (its timeout) first.
	Abandoned
)

// Dropped reports whether the outcome is a drop in docs/adaptive.md's
// sense: a shed, an error or a timeout.
func (o Outcome) Dropped() bool { return o != Served }

// LimitReporter is a limiter whose limit moves (the adaptive limits): the
// limit in force at now, for the limit's series.
type LimitReporter interface {
	Limit(now time.Duration) int
}

var (
	_ Limiter = (*Adaptive)(nil)
	_ Sampler = (*Adaptive)(nil)
)

func newAdaptive(name string, p Params) (Limiter, error) {
	if name == "envoy-adaptive" {
		return newEnvoyAdaptive(p)
	}
	limits := []string{"initial-limit", "min-limit", "max-limit"}
	if name == "vegas" {
		limits = []string{"initial-limit", "max-limit"} // VegasLimit has no minLimit
	}
	if err := checkOptions(name, p, append([]string{"window", "min-samples"}, limits...)...); err != nil {
		return nil, err
	}
	for _, o := range []struct {
		name string
		v    int64
	}{{"initial-limit", p.InitialLimit}, {"min-limit", p.MinLimit}, {"max-limit", p.MaxLimit}} {
		if o.v < 0 || o.v > 1<<30 {
			return nil, &ParamError{o.name, fmt.Sprint(o.v), "want a limit from 1 to 2^30 requests in flight"}
		}
	}
	set := func(dst *int, v int64) {
		if v > 0 {
			*dst = int(v)
		}
	}
	if p.Window < 0 || (p.Window == 0 && p.MinSamples != 0) {
		return nil, &ParamError{"window", p.Window.String(), "want a window > 0 over which samples are gathered"}
	}
	if p.MinSamples < 0 {
		return nil, &ParamError{"min-samples", fmt.Sprint(p.MinSamples), "want at least 1 sample a window"}
	}
	var lim adaptive.Limit
	var err error
	switch name {
	case "aimd":
		c := adaptive.DefaultAIMDConfig()
		set(&c.InitialLimit, p.InitialLimit)
		set(&c.MinLimit, p.MinLimit)
		set(&c.MaxLimit, p.MaxLimit)
		lim, err = adaptive.NewAIMD(c)
	case "vegas":
		c := adaptive.DefaultVegasConfig()
		set(&c.InitialLimit, p.InitialLimit)
		set(&c.MaxConcurrency, p.MaxLimit)
		lim, err = adaptive.NewVegas(c, rand.New(rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15)))
	case "gradient2":
		c := adaptive.DefaultGradient2Config()
		set(&c.InitialLimit, p.InitialLimit)
		set(&c.MinLimit, p.MinLimit)
		set(&c.MaxConcurrency, p.MaxLimit)
		lim, err = adaptive.NewGradient2(c)
	}
	if err == nil && p.Window > 0 {
		w := adaptive.DefaultWindowConfig()
		w.Window = p.Window
		if p.MinSamples > 0 {
			w.MinSamples = int(min(p.MinSamples, 1<<30))
		}
		lim, err = adaptive.NewWindowed(w, lim)
	}
	if err != nil {
		return nil, paramError(err)
	}
	return &Adaptive{lim: lim, wait: max(p.Service, 1), flight: ConcurrencyModel{max: math.MaxInt64}}, nil
}

// envoySeedStream tells envoy-adaptive's jitter draws apart from the
// other draws made from the scenario's seed.
const envoySeedStream = 0x3c6ef372fe94f82b

func newEnvoyAdaptive(p Params) (Limiter, error) {
	if err := checkOptions("envoy-adaptive", p, "interval", "min-rtt-calc-interval"); err != nil {
		return nil, err
	}
	c := adaptive.DefaultEnvoyConfig()
	c.Interval = p.Interval
	c.MinRTTCalcInterval = cmp.Or(p.MinRTTInterval, EnvoyMinRTTInterval)
	// checked now, built at the first decision
	if _, err := adaptive.NewEnvoy(c, rand.New(rand.NewPCG(p.Seed, envoySeedStream)), 0); err != nil {
		return nil, paramError(err)
	}
	return &Adaptive{wait: max(p.Service, 1), flight: ConcurrencyModel{max: math.MaxInt64},
		envoy: true, envoyCfg: c, seed: p.Seed}, nil
}

// paramError gives package adaptive's parameter errors the form the
// scenario loader places at the field (ParamError).
func paramError(err error) error {
	var pe *adaptive.ParamError
	if errors.As(err, &pe) {
		return &ParamError{Field: pe.Field, Found: pe.Found, Want: pe.Want}
	}
	return err
}

func newAIMDLimiter(p Params) (Limiter, error)      { return newAdaptive("aimd", p) }
func newVegasLimiter(p Params) (Limiter, error)     { return newAdaptive("vegas", p) }
func newGradient2Limiter(p Params) (Limiter, error) { return newAdaptive("gradient2", p) }
func newEnvoyLimiter(p Params) (Limiter, error)     { return newAdaptive("envoy-adaptive", p) }

// limit returns the limit, built at now when it is envoy's and not yet
// (small enough to be inlined: it is called at every decision and sample).
func (a *Adaptive) limit(now time.Duration) adaptive.Limit {
	if a.lim == nil {
		a.buildEnvoy(now)
	}
	return a.lim
}

// buildEnvoy builds envoy-adaptive's limit at now.
func (a *Adaptive) buildEnvoy(now time.Duration) {
	// cannot fail: the same configuration was checked by the constructor
	a.lim, _ = adaptive.NewEnvoy(a.envoyCfg, rand.New(rand.NewPCG(a.seed, envoySeedStream)), now)
}

// Decide admits the request iff the units in flight leave room for cost
// under the limit in force at now.
func (a *Adaptive) Decide(now time.Duration, key Key, cost int64) Decision {
	if cost > int64(a.limit(now).Limit(now))-a.flight.total {
		return Decision{Verdict: Reject, RetryAfter: a.wait}
	}
	return a.flight.Decide(now, key, cost)
}

// InFlight returns the units in flight.
func (a *Adaptive) InFlight() int64 { return a.flight.total }

// Sample ends a request and gives its sample to the limit, with the units
// in flight when it was admitted, itself included, as the Java's limiters
// count them (inFlight.incrementAndGet() at acquire).
func (a *Adaptive) Sample(now time.Duration, key Key, cost int64, rtt time.Duration, inflight int64, outcome Outcome) {
	if outcome != Abandoned || !a.envoy {
		a.limit(now).OnSample(now, rtt, int(inflight), outcome.Dropped())
	}
	a.flight.complete(key, cost)
}

// Limit returns the limit in force at now, for the limit's series.
func (a *Adaptive) Limit(now time.Duration) int { return a.limit(now).Limit(now) }

// Memory reports the keys with requests in flight.
func (a *Adaptive) Memory() Memory { return a.flight.mem }
