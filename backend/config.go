package backend

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ratesim/ratesim/internal/portable"
)

// Dist is a service-time distribution.
type Dist string

const (
	// Constant serves every request in exactly Service.Mean.
	Constant Dist = "constant"
	// Exponential draws -Mean*ln(u) for a uniform u in (0, 1].
	Exponential Dist = "exponential"
	// Lognormal draws exp(mu + sigma*z) for a standard normal z, with mu
	// and sigma set by Service.Mean and Service.P99 (see Service).
	Lognormal Dist = "lognormal"
)

// Discipline is the order in which waiting requests reach a worker.
type Discipline string

const (
	// FIFO serves the request that has waited longest.
	FIFO Discipline = "fifo"
	// LIFO serves the request that joined the queue last.
	LIFO Discipline = "lifo"
)

// FaultType is one of the three faults of docs/backend.md, or a trigger.
type FaultType string

const (
	// Slow multiplies by Factor the service time of every request that
	// starts in the fault's window.
	Slow FaultType = "slow"
	// Pause stops every worker from starting anything in the window (a
	// garbage-collection pause); requests in service finish.
	Pause FaultType = "pause"
	// Workers cuts the capacity to Count workers in the window: no request
	// starts while Count or more are in service; running requests finish.
	Workers FaultType = "workers"
	// Trigger changes nothing in the backend: it marks the window of a
	// trigger from outside (a surge of traffic, say) so that RecoveredNs
	// and the charts measure from it, as from a fault.
	Trigger FaultType = "trigger"
)

// Unbounded, as Config.Queue, is a waiting room without a bound.
const Unbounded = -1

// Service is the service-time distribution of a request.
//
// A lognormal is given by its mean m and 99th percentile p: with
// ln X ~ N(mu, sigma^2), the mean is exp(mu + sigma^2/2) and the p99
// exp(mu + z99*sigma), z99 = 2.3263478740408408 the standard normal's 99th
// percentile; so ln(p/m) = z99*sigma - sigma^2/2, of which sigma is the
// smaller root, sigma = z99 - sqrt(z99^2 - 2 ln(p/m)), and
// mu = ln(m) - sigma^2/2. There is a root iff 1 <= p/m <= exp(z99^2/2)
// (about 14.97): a lognormal's p99 can be at most that many times its
// mean. p = m gives sigma = 0, a constant.
type Service struct {
	Dist Dist          // "" means Constant
	Mean time.Duration // > 0 for exponential and lognormal; >= 0 for constant
	P99  time.Duration // lognormal only
}

// Fault is a window [At, At+For) in which the backend misbehaves. At is an
// absolute instant on the run's clock (the engine adds the scenario's
// origin).
type Fault struct {
	Type   FaultType
	At     time.Duration
	For    time.Duration // > 0
	Factor float64       // Slow: > 0, finite
	Count  int           // Workers: >= 0 (0 stops every start)
}

// End is the end of the fault's window, saturating at the largest instant.
func (f Fault) End() time.Duration {
	if f.At > math.MaxInt64-f.For {
		return math.MaxInt64
	}
	return f.At + f.For
}

// Config is one backend: docs/backend.md's `backend` section, in typed
// values, and the run's figures the model needs (seed, series).
type Config struct {
	// Workers is c, the requests served at once (>= 1).
	Workers int
	Service Service
	// Queue is the waiting room beyond the c in service (>= 0; 0 sheds
	// every request that finds all workers busy), or Unbounded.
	Queue      int
	Discipline Discipline // "" means FIFO
	// Timeout is how long a client waits, from its attempt's arrival at
	// the limiter (Request.Arrived); 0 means for ever.
	Timeout time.Duration
	// DropExpired drops, instead of serving, a request whose client has
	// given up by the time it reaches a worker.
	DropExpired bool
	// Errors is the fraction of served requests that fail, in [0, 1].
	Errors float64
	Faults []Fault
	// Latency is a pure delay every request spends before it reaches the
	// queue (>= 0): with one worker, a constant service S and an unbounded
	// FIFO queue, the backend is network calculus's rate-latency server
	// beta(t) = max(0, t - Latency)/S (Le Boudec and Thiran, "Network
	// Calculus", 2001, chapter 1), one request a unit. The response
	// time includes it, the queue wait does not.
	Latency time.Duration

	// Seed is the scenario's seed; every draw derives from it and the
	// request's identity (see Request).
	Seed uint64
	// Start is where the series begins (rounded down to a bucket); Bucket
	// the series' bucket (> 0), the scenario's report.bucket.
	Start  time.Duration
	Bucket time.Duration
	// MaxBuckets bounds the series: past it the bucket doubles and pairs
	// of buckets merge (0 means DefaultMaxBuckets).
	MaxBuckets int
	// RecoverWindow is the length over which goodput is averaged when
	// looking for recovery after the faults (Result.RecoveredNs), rounded
	// up to whole buckets; 0 means DefaultRecoverWindow.
	RecoverWindow time.Duration
}

// DefaultMaxBuckets is the default bound of the series, as sim's.
const DefaultMaxBuckets = 1 << 16

// DefaultRecoverWindow is the default averaging window of the recovery.
const DefaultRecoverWindow = time.Second

// z99 is the 99th percentile of the standard normal distribution.
const z99 = 2.3263478740408408

// maxP99Ratio is the largest p99/mean a lognormal can have, exp(z99^2/2).
var maxP99Ratio = portable.Exp(float64(z99*z99) / 2)

// Validate checks c and says what is wrong, naming the field.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Workers <= 0 {
		bad("workers: %d: want at least 1", c.Workers)
	}
	if c.Latency < 0 {
		bad("latency: %v: want a duration >= 0", c.Latency)
	}
	switch c.Service.Dist {
	case "", Constant:
		if c.Service.Mean < 0 {
			bad("service: %v: want a duration >= 0", c.Service.Mean)
		}
		if c.Service.P99 != 0 {
			bad("service: p99 is for a lognormal only")
		}
	case Exponential:
		if c.Service.Mean <= 0 {
			bad("service: exponential mean %v: want a duration > 0", c.Service.Mean)
		}
		if c.Service.P99 != 0 {
			bad("service: p99 is for a lognormal only")
		}
	case Lognormal:
		if _, _, err := lognormalParams(c.Service.Mean, c.Service.P99); err != nil {
			bad("service: %v", err)
		}
	default:
		bad("service: unknown distribution %q (want constant, exponential or lognormal)", c.Service.Dist)
	}
	if c.Queue < 0 && c.Queue != Unbounded {
		bad("queue: %d: want a count >= 0", c.Queue)
	}
	switch c.Discipline {
	case "", FIFO, LIFO:
	default:
		bad("discipline: unknown discipline %q (want fifo or lifo)", c.Discipline)
	}
	if c.Timeout < 0 {
		bad("timeout: %v: want a duration >= 0 (0: none)", c.Timeout)
	}
	if !(c.Errors >= 0 && c.Errors <= 1) {
		bad("errors: %v: want a fraction in [0, 1]", c.Errors)
	}
	if c.Bucket <= 0 {
		bad("bucket: %v: want a duration > 0", c.Bucket)
	}
	if c.MaxBuckets < 0 {
		bad("max buckets: %d: want a count >= 0", c.MaxBuckets)
	}
	if c.RecoverWindow < 0 {
		bad("recover window: %v: want a duration >= 0", c.RecoverWindow)
	}
	for i, f := range c.Faults {
		switch f.Type {
		case Slow:
			if !(f.Factor > 0) || math.IsInf(f.Factor, 1) {
				bad("faults[%d]: slow factor %v: want a number > 0", i, f.Factor)
			}
		case Pause, Trigger:
		case Workers:
			if f.Count < 0 {
				bad("faults[%d]: workers count %d: want a count >= 0", i, f.Count)
			}
		default:
			bad("faults[%d]: unknown fault type %q (want slow, pause, workers or trigger)", i, f.Type)
		}
		if f.For <= 0 {
			bad("faults[%d]: for %v: want a duration > 0", i, f.For)
		}
	}
	errs = append(errs, overlaps(c.Faults)...)
	return errors.Join(errs...)
}

// overlaps reports each pair of faults of one type whose windows share an
// instant (windows are half-open: one may start where another ends).
func overlaps(faults []Fault) []error {
	var errs []error
	idx := make([]int, len(faults))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		fa, fb := faults[a], faults[b]
		if fa.Type != fb.Type {
			if fa.Type < fb.Type {
				return -1
			}
			return 1
		}
		switch {
		case fa.At < fb.At:
			return -1
		case fa.At > fb.At:
			return 1
		}
		return 0
	})
	for k := 1; k < len(idx); k++ {
		a, b := faults[idx[k-1]], faults[idx[k]]
		if a.Type == b.Type && a.For > 0 && b.For > 0 && b.At < a.End() {
			i, j := min(idx[k-1], idx[k]), max(idx[k-1], idx[k])
			errs = append(errs, fmt.Errorf("faults[%d] and faults[%d]: two %s faults overlap ([%v, %v) and [%v, %v))",
				i, j, a.Type, faults[i].At, faults[i].End(), faults[j].At, faults[j].End()))
		}
	}
	return errs
}

// lognormalParams solves mu and sigma of a lognormal of this mean and p99
// (see Service), in ln-nanoseconds.
func lognormalParams(mean, p99 time.Duration) (mu, sigma float64, err error) {
	if mean <= 0 {
		return 0, 0, fmt.Errorf("lognormal mean %v: want a duration > 0", mean)
	}
	if p99 < mean {
		return 0, 0, fmt.Errorf("lognormal p99 %v is below its mean %v: a lognormal's p99 is at least its mean", p99, mean)
	}
	r := float64(p99) / float64(mean)
	if r > maxP99Ratio {
		return 0, 0, fmt.Errorf("lognormal p99 %v is %.4g times its mean %v: at most %.4g times is possible (exp(z99^2/2))",
			p99, r, mean, maxP99Ratio)
	}
	disc := float64(z99*z99) - float64(2*portable.Log(r))
	if disc < 0 { // r at the bound, rounded
		disc = 0
	}
	sigma = z99 - math.Sqrt(disc)
	mu = portable.Log(float64(mean)) - float64(float64(sigma*sigma)/2)
	return mu, sigma, nil
}
