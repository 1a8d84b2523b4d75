// Package adaptive implements the adaptive limiters of docs/adaptive.md:
// limits that learn the capacity of the backend they protect from what it
// gives back, instead of enforcing a configured rate.
//
// Five algorithms, one file each, each following its source to the letter:
//
//   - aimd, vegas, gradient2: Netflix concurrency-limits' AIMDLimit,
//     VegasLimit and Gradient2Limit (Java, concurrency-limits-core), each
//     optionally wrapped as WindowedLimit (windowed.go);
//   - envoy-adaptive: envoy's adaptive concurrency gradient controller
//     (gradient_controller.cc);
//   - sre-throttle: the client-side adaptive throttling of the Google SRE
//     book, chapter "Handling Overload" (Throttle, not a Limit).
//
// The first four are concurrency limits behind the Limit interface: a
// request is admitted iff the requests in flight are fewer than the limit,
// and every completed request is reported back as a sample. The SRE
// throttle decides per key with a caller-supplied random draw.
//
// Like package algorithms, everything here is a pure, deterministic state
// machine: no clock inside (time is an argument, virtual integer
// nanoseconds, in non-decreasing order), no randomness of its own (the
// random draws come from a caller-given seeded *rand.Rand or value), no
// goroutines, and it imports nothing of ratesim.
//
// Determinism across platforms. The limits use floating point, as their
// sources do, so that the arithmetic is the sources' own; every operation is
// an IEEE-754 operation that gives the same bits on every machine:
//
//   - every product that feeds an addition or a subtraction is rounded by an
//     explicit float64() conversion, so that the compiler cannot fuse the
//     two into a multiply-add (Go fuses x*y+z on amd64 under GOAMD64=v3, and
//     the specification allows it across statements unless a conversion
//     intervenes);
//   - no math.Exp, Log, Pow or Log10 (their amd64 code switches to FMA when
//     the CPU has it): Vegas' log10 of an integer limit is an integer digit
//     count (log10Int), which is what the Java's table and (int)Math.log10
//     give; math.Sqrt, Ceil and Floor are exact or correctly rounded.
//
// The package's tests check this: a long seeded run of every algorithm
// hashes its sequence of limits to a constant, the same under GOAMD64=v1 and
// GOAMD64=v3.
package adaptive

import (
	"fmt"
	"math"
	"time"
)

// Limit is a concurrency-limit algorithm: a request is admitted iff the
// requests in flight (admitted and not yet completed) are fewer than
// Limit(now), and every completed request is reported with OnSample.
//
// Calls must come in non-decreasing order of now. A Limit is not safe for
// concurrent use.
type Limit interface {
	// Limit returns the limit in force at now. The Netflix limits change
	// only on samples and ignore now; envoy-adaptive is driven by timers
	// (its sample window and its min-RTT measurement) and first runs every
	// timer due at or before now.
	Limit(now time.Duration) int
	// OnSample reports one request that completed at now after rtt (now -
	// rtt is when it was admitted, queueing included). inflight is the
	// number of requests in flight when it was admitted, itself included,
	// as the Java's AbstractLimiter captures it (inFlight.incrementAndGet()
	// at acquire). dropped says the request failed for lack of capacity (a
	// shed, an error or a timeout: docs/adaptive.md); the Java limiters
	// report those through Listener.onDropped. A timer of envoy-adaptive
	// due at now runs before the sample.
	OnSample(now, rtt time.Duration, inflight int, dropped bool)
}

// ParamError is an invalid parameter: Field names it as a scenario spells
// it (backoff-ratio, min-limit, interval, ...), Found is what was given and
// Want what is expected. The scenario loader adds file:line:col.
type ParamError struct {
	Algorithm string
	Field     string
	Found     string
	Want      string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("%s: %s: %s: %s", e.Algorithm, e.Field, e.Found, e.Want)
}

func paramErr(alg, field string, found any, want string) error {
	return &ParamError{Algorithm: alg, Field: field, Found: fmt.Sprint(found), Want: want}
}

// checkLimits validates an initial, min and max limit the way every Netflix
// limit needs them: the Java only logs a warning for an initial limit
// outside [min, max] (the first sample clamps it); ratesim rejects it, as it
// rejects any configuration the source warns about.
func checkLimits(alg, initName string, init int, minName string, min int, maxName string, max int) error {
	if min < 1 {
		return paramErr(alg, minName, min, "want at least 1 (a limit of 0 admits nothing, so no sample ever raises it)")
	}
	if max < min {
		return paramErr(alg, maxName, max, fmt.Sprintf("want at least %s (%d)", minName, min))
	}
	if init < min || init > max {
		return paramErr(alg, initName, init, fmt.Sprintf("want a limit from %s (%d) to %s (%d)", minName, min, maxName, max))
	}
	return nil
}

// javaInt is Java's (int) cast of a double (JLS 5.1.3): NaN gives 0, values
// beyond the int range saturate, others are truncated toward zero. Go's
// int() of an out-of-range float is implementation-specific, so every (int)
// of the Java sources goes through here.
func javaInt(d float64) int {
	switch {
	case d != d:
		return 0
	case d >= math.MaxInt32:
		return math.MaxInt32
	case d <= math.MinInt32:
		return math.MinInt32
	}
	return int(d)
}

// log10Int is the Java's Log10RootIntFunction.create(0) applied to t:
// max(1, (int)Math.log10(t)) from a table for t < 1000, (int)Math.log10(t)
// beyond. For t >= 1 that is the number of decimal digits of t minus one,
// at least 1 (Math.log10 is exact at powers of ten and monotonic, so its
// integer part is the digit count minus one); for t = 0 the table holds
// max(1, (int)-Infinity) = 1. A negative t throws in the Java (a negative
// array index); it cannot occur here, as every limit is at least 1.
func log10Int(t int) int {
	d := 0
	for t >= 10 {
		t /= 10
		d++
	}
	return max(1, d)
}

// never is an unarmed timer's due instant.
const never = time.Duration(math.MaxInt64)
