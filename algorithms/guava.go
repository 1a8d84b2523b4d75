package algorithms

import (
	"fmt"
	"math"
	"time"
	"unsafe"
)

// Guava is Guava's RateLimiter (com.google.common.util.concurrent,
// SmoothRateLimiter.java), one per key, in its two kinds: SmoothBursty
// (the row guava-bursty, RateLimiter.create(permitsPerSecond)) and
// SmoothWarmingUp (guava-warming-up, RateLimiter.create(permitsPerSecond,
// warmupPeriod)). It computes as Guava does, in doubles of microseconds,
// and is the same on every platform: each product is rounded on its own
// (float64(x*y) + z, never a fused multiply-add), each Java (long) cast
// truncates toward zero and saturates, as Java's does.
//
// Clock: Guava's stopwatch reads whole microseconds; this row reads the
// virtual instant truncated to a microsecond, floor(t/1µs), as if each
// key's RateLimiter were created on a whole microsecond (Guava creates it
// when the application asks, here on the key's first request).
//
// Rule (both kinds): a key keeps storedPermits (a double) and
// nextFreeTicketMicros (a long). permitsPerSecond is L/W.Seconds() and
// stableIntervalMicros 1e6/permitsPerSecond. A request of cost c at
// micros m is decided by tryAcquire(c, timeout): it is admitted iff
// nextFreeTicketMicros - timeout <= m, and then reserves: resync(m) (when
// m > nextFree, storedPermits = min(maxPermits, storedPermits +
// (m - nextFree)/coolDownIntervalMicros) and nextFree = m), spends
// min(c, storedPermits) stored permits and c minus those fresh ones, and
// moves nextFree by storedPermitsToWaitTime + (long)(fresh *
// stableIntervalMicros). The request itself waits only until the old
// nextFree: max(nextFree - m, 0) µs. So the next caller pays for the
// current one's cost ("the next caller pays"): any cost is admitted at
// once when nextFree has come, even one above maxPermits, and the
// requests after it wait for it.
//
// SmoothBursty (maxBurstSeconds, Guava's public create: 1s; the row's
// max-burst): maxPermits = maxBurstSeconds * permitsPerSecond; a new
// limiter has no stored permits (storedPermits 0: "initial state"), idle
// time stores one permit per stableIntervalMicros, and a stored permit
// costs no wait. The policy's burst is not read: maxPermits is the burst.
//
// SmoothWarmingUp (warmupPeriod, the row's warmup; coldFactor 3 as
// Guava's public create, the row's cold-factor for Guava's own tests):
// coldIntervalMicros = stableIntervalMicros * coldFactor,
// thresholdPermits = 0.5 * warmupPeriodMicros / stableIntervalMicros,
// maxPermits = thresholdPermits + 2.0 * warmupPeriodMicros /
// (stableIntervalMicros + coldIntervalMicros), slope = (cold - stable) /
// (maxPermits - thresholdPermits). A new limiter is cold: storedPermits =
// maxPermits. Stored permits above the threshold cost the integral of
// stable + permits * slope over the permits taken (the ramp), those below
// it stableIntervalMicros each; idle time stores one permit per
// warmupPeriodMicros / maxPermits.
//
// max-delay is tryAcquire's timeout, in whole microseconds (Guava's
// unit.toMicros truncates): 0, the default, is tryAcquire(c), which never
// waits. A blocking acquire(c) is a max-delay longer than any wait.
// Delay: max(nextFree - m, 0) µs, as Guava's stopwatch sleeps.
// RetryAfter: the first instant whose microsecond is nextFree - timeout,
// minus t (nextFree does not move while nothing is admitted). A cost above
// 2^31-1, which Guava's int permits cannot ask, is rejected with Never.
//
// State per key: nextFreeTicketMicros, storedPermits and whether the key
// has a limiter: 24 bytes. A warming-up key is released once it is cold
// again (storedPermits back at maxPermits and nextFree passed: a new
// limiter decides the same); a bursty key never is (a new limiter starts
// with no stored permits, an idle one with maxPermits), as Guava keeps a
// RateLimiter until the application drops it.
type Guava struct {
	keyed[guavaState]
	warm bool
	// stable is stableIntervalMicros, maxPermits the most stored permits,
	// threshold and slope the warming-up ramp, coolDown
	// coolDownIntervalMicros, initial a new limiter's stored permits.
	stable, maxPermits, threshold, slope, coolDown, initial float64
	timeout                                                 int64 // micros
}

// guavaState is one key's RateLimiter; the zero value is a key without one.
type guavaState struct {
	next   int64 // nextFreeTicketMicros, on the row's microsecond clock
	stored float64
	live   bool
}

var (
	_ Limiter     = (*Guava)(nil)
	_ Reserver    = (*Guava)(nil)
	_ stateHolder = (*Guava)(nil)
	_ Inspector   = (*Guava)(nil)
)

// GuavaColdFactor is SmoothWarmingUp's coldFactor in Guava's public
// RateLimiter.create(permitsPerSecond, warmupPeriod).
const GuavaColdFactor = 3.0

func newGuavaBurstyLimiter(p Params) (Limiter, error) {
	if err := checkGuava("guava-bursty", p, "max-delay", "max-burst"); err != nil {
		return nil, err
	}
	if p.MaxBurst < 0 {
		return nil, &ParamError{Field: "max-burst", Found: p.MaxBurst.String(), Want: "want a duration > 0 (Guava's maxBurstSeconds)"}
	}
	burst := 1.0 // RateLimiter.create's maxBurstSeconds
	if p.MaxBurst > 0 {
		burst = p.MaxBurst.Seconds()
	}
	g := newGuava(p)
	g.maxPermits = float64(burst * guavaPermitsPerSecond(p.Policy))
	g.coolDown = g.stable
	g.keyed = newKeyed(int64(unsafe.Sizeof(guavaState{})), func(*guavaState) time.Duration { return math.MaxInt64 })
	return g, nil
}

func newGuavaWarmingUpLimiter(p Params) (Limiter, error) {
	if err := checkGuava("guava-warming-up", p, "max-delay", "warmup", "cold-factor"); err != nil {
		return nil, err
	}
	if p.Warmup < time.Microsecond {
		return nil, &ParamError{Field: "warmup", Found: p.Warmup.String(), Want: "want a warmup period of at least 1µs (Guava's warmupPeriod, in whole microseconds)"}
	}
	cold := GuavaColdFactor
	if p.ColdFactor != 0 {
		cold = p.ColdFactor
	}
	if !(cold >= 1) || math.IsInf(cold, 0) {
		return nil, &ParamError{Field: "cold-factor", Found: fmt.Sprint(p.ColdFactor), Want: "want a factor >= 1 (Guava's coldFactor: 3)"}
	}
	g := newGuava(p)
	g.warm = true
	warmup := float64(p.Warmup.Microseconds()) // TimeUnit.toMicros, a long
	coldInterval := float64(g.stable * cold)
	g.threshold = float64(0.5*warmup) / g.stable
	g.maxPermits = g.threshold + float64(2.0*warmup)/(g.stable+coldInterval)
	g.slope = (coldInterval - g.stable) / (g.maxPermits - g.threshold)
	g.coolDown = warmup / g.maxPermits
	g.initial = g.maxPermits // the initial state is cold
	g.keyed = newKeyed(int64(unsafe.Sizeof(guavaState{})), g.freshAt)
	return g, nil
}

func checkGuava(name string, p Params, options ...string) error {
	if err := checkPolicy(p.Policy); err != nil {
		return err
	}
	if err := checkOptions(name, p, options...); err != nil {
		return err
	}
	return bucketMaxDelayCheck(p.MaxDelay, maxExact, "release times stay within range")
}

// guavaPermitsPerSecond is L/W in permits per second, as a double.
func guavaPermitsPerSecond(p Policy) float64 {
	return float64(p.Rate) / p.Per.Seconds()
}

func newGuava(p Params) *Guava {
	return &Guava{
		stable:  1e6 / guavaPermitsPerSecond(p.Policy), // SECONDS.toMicros(1L) / permitsPerSecond
		timeout: p.MaxDelay.Microseconds(),
	}
}

// javaLong is Java's (long) cast of a double: toward zero, saturating,
// NaN to 0.
func javaLong(x float64) int64 {
	switch {
	case x != x:
		return 0
	case x >= 0x1p63:
		return math.MaxInt64
	case x <= -0x1p63:
		return math.MinInt64
	}
	return int64(x)
}

// saturatedAdd is Guava's LongMath.saturatedAdd.
func saturatedAdd(a, b int64) int64 {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		if a > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// micros is the row's stopwatch: t truncated to a microsecond (floor).
func micros(t time.Duration) int64 {
	m := int64(t) / 1000
	if int64(t)%1000 < 0 {
		m--
	}
	return m
}

// Decide is tryAcquire(cost, max-delay) on key's RateLimiter.
func (g *Guava) Decide(now time.Duration, key Key, cost int64) Decision {
	if cost > math.MaxInt32 {
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	s := g.get(now, key)
	m := micros(now)
	if !s.live {
		*s = guavaState{next: m, stored: g.initial, live: true}
	}
	if at := s.next - g.timeout; at > m { // canAcquire is false
		if at > int64(maxExact)/1000 {
			// beyond the range of the virtual clock (a rate of a few
			// per year and a cost of millions saturates nextFree)
			return Decision{Verdict: Reject, RetryAfter: Never}
		}
		return Decision{Verdict: Reject, RetryAfter: time.Duration(at*1000) - now}
	}
	g.resync(s, m)
	ret := s.next
	spend := min(float64(cost), s.stored)
	fresh := float64(cost) - spend
	wait := g.storedWait(s.stored, spend) + javaLong(float64(fresh*g.stable))
	s.next = saturatedAdd(s.next, wait)
	s.stored -= spend
	g.touch(key, 0)
	if ret > m {
		return Decision{Verdict: Delay, Delay: time.Duration((ret - m) * 1000)}
	}
	return Decision{Verdict: Accept}
}

// resync is SmoothRateLimiter.resync: the permits stored since nextFree.
func (g *Guava) resync(s *guavaState, m int64) {
	if m > s.next {
		s.stored = min(g.maxPermits, s.stored+float64(m-s.next)/g.coolDown)
		s.next = m
	}
}

// storedWait is storedPermitsToWaitTime: 0 for SmoothBursty, the ramp's
// integral for SmoothWarmingUp.
func (g *Guava) storedWait(stored, take float64) int64 {
	if !g.warm {
		return 0
	}
	above := stored - g.threshold
	var us int64
	if above > 0 {
		aboveTake := min(above, take)
		length := g.permitsToTime(above) + g.permitsToTime(above-aboveTake)
		us = javaLong(float64(aboveTake*length) / 2.0)
		take -= aboveTake
	}
	return us + javaLong(float64(g.stable*take))
}

func (g *Guava) permitsToTime(permits float64) float64 {
	return g.stable + float64(permits*g.slope)
}

// freshAt is, for SmoothWarmingUp, the first instant whose microsecond m
// makes resync store maxPermits: then the key decides as a new one would.
func (g *Guava) freshAt(s *guavaState) time.Duration {
	if s.stored >= g.maxPermits {
		return time.Duration(s.next * 1000)
	}
	// a first guess, then the exact test of resync's own arithmetic
	m := s.next + javaLong(float64((g.maxPermits-s.stored)*g.coolDown))
	for m > s.next && s.stored+float64(m-1-s.next)/g.coolDown >= g.maxPermits {
		m--
	}
	for s.stored+float64(m-s.next)/g.coolDown < g.maxPermits {
		m++
	}
	return time.Duration(m * 1000)
}

// Inspect returns key's gauges at now: "permits", the stored permits
// resync would leave at now (0 for a bursty key without a limiter,
// maxPermits for a warming-up one), "max-permits", maxPermits, and
// "wait", the seconds until nextFreeTicket. It changes no live key's
// state.
func (g *Guava) Inspect(now time.Duration, key Key) []Gauge {
	g.expire(now)
	s, known := g.stateOf(key)
	m := micros(now)
	if !known {
		s = guavaState{next: m, stored: g.initial}
	}
	g.resync(&s, m)
	return []Gauge{{"permits", s.stored}, {"max-permits", g.maxPermits}, {"wait", float64(s.next-m) / 1e6}}
}
