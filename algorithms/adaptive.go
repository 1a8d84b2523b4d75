package algorithms

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/ratesim/ratesim/adaptive"
)

// Adaptive is a concurrency limit that learns the backend's capacity from
// what the backend gives back (SPEC section 11), one limit for the whole
// row, as Netflix's concurrency-limits runs one per service: a request of
// cost c is admitted iff the units in flight, plus c, are at most the
// limit in force (adaptive.Limit), and stays in flight until Sample is
// called for it, when its client has its answer, a shed or an error, or
// gives up; each Sample is the limit's sample (rtt from admission,
// queueing included; dropped for a shed, an error or a timeout).
//
// The rules are package adaptive's, each following its source: aimd
// (AIMDLimit.java), vegas (VegasLimit.java), gradient2 (Gradient2Limit.java),
// all with their sources' defaults, each wrapped in WindowedLimit.java
// when Params.Window is set (window, min-samples). RetryAfter: the backend's mean service
// time (Params.Service), an estimate, as ConcurrencyModel's: at least 1ns.
//
// State: the units in flight and the limit's own, 8 bytes per key counted
// for the keys with requests in flight.
type Adaptive struct {
	lim  adaptive.Limit
	wait time.Duration
	// flight counts the units in flight, per key (for Memory) and in all
	// (its total), under no limit of its own
	flight ConcurrencyModel
}

// Sampler is a limiter that learns from each admitted request's outcome
// (ConcurrencyModel, Adaptive).
type Sampler interface {
	// InFlight returns the units in flight now: after an admission, that
	// request's own included.
	InFlight() int64
	// Sample ends a request of cost for key, admitted rtt before now when
	// inflight units were in flight (InFlight then); dropped says it was
	// shed, failed or timed out.
	Sample(now time.Duration, key Key, cost int64, rtt time.Duration, inflight int64, dropped bool)
}

var (
	_ Limiter = (*Adaptive)(nil)
	_ Sampler = (*Adaptive)(nil)
)

func newAdaptive(name string, p Params) (Limiter, error) {
	if err := checkOptions(name, p, "window", "min-samples"); err != nil {
		return nil, err
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
		lim, err = adaptive.NewAIMD(adaptive.DefaultAIMDConfig())
	case "vegas":
		lim, err = adaptive.NewVegas(adaptive.DefaultVegasConfig(), rand.New(rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15)))
	case "gradient2":
		lim, err = adaptive.NewGradient2(adaptive.DefaultGradient2Config())
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
		return nil, err
	}
	return &Adaptive{lim: lim, wait: max(p.Service, 1), flight: ConcurrencyModel{max: math.MaxInt64}}, nil
}

func newAIMDLimiter(p Params) (Limiter, error)      { return newAdaptive("aimd", p) }
func newVegasLimiter(p Params) (Limiter, error)     { return newAdaptive("vegas", p) }
func newGradient2Limiter(p Params) (Limiter, error) { return newAdaptive("gradient2", p) }

// Decide admits the request iff the units in flight leave room for cost
// under the limit in force at now.
func (a *Adaptive) Decide(now time.Duration, key Key, cost int64) Decision {
	if cost > int64(a.lim.Limit(now))-a.flight.total {
		return Decision{Verdict: Reject, RetryAfter: a.wait}
	}
	return a.flight.Decide(now, key, cost)
}

// InFlight returns the units in flight.
func (a *Adaptive) InFlight() int64 { return a.flight.total }

// Sample ends a request and gives its sample to the limit, with the units
// in flight when it was admitted, itself included, as the Java's limiters
// count them (inFlight.incrementAndGet() at acquire).
func (a *Adaptive) Sample(now time.Duration, key Key, cost int64, rtt time.Duration, inflight int64, dropped bool) {
	a.lim.OnSample(now, rtt, int(inflight), dropped)
	a.flight.complete(key, cost)
}

// Limit returns the limit in force at now, for the limit's series.
func (a *Adaptive) Limit(now time.Duration) int { return a.lim.Limit(now) }

// Memory reports the keys with requests in flight.
func (a *Adaptive) Memory() Memory { return a.flight.mem }
