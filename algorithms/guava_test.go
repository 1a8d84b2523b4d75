package algorithms

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// guavaStep is one step of a test of Guava's RateLimiterTest: acquire(n)
// (or tryAcquire(n, timeout) with the row's max-delay), or the user
// sleeping ms milliseconds.
type guavaStep struct {
	acquire int64
	sleepMs int64
}

func acq(n int64) guavaStep      { return guavaStep{acquire: n} }
func sleepMs(ms int64) guavaStep { return guavaStep{sleepMs: ms} }

// javaSeconds formats micros as Guava's FakeStopwatch does,
// String.format("%3.2f", micros / 1000000.0): Java's Formatter rounds the
// double's exact decimal value half up (Go's fmt would round the exact
// ties 1.125 and 0.625 to even).
func javaSeconds(micros int64) string {
	exact := new(big.Float).SetFloat64(float64(micros)/1000000.0).Text('f', 80)
	whole, frac, _ := strings.Cut(exact, ".")
	cents := new(big.Int)
	cents.SetString(whole+frac[:2], 10)
	if frac[2] >= '5' {
		cents.Add(cents, big.NewInt(1))
	}
	s := fmt.Sprintf("%03d", cents)
	return s[:len(s)-2] + "." + s[len(s)-2:]
}

// guavaEvents runs the steps on key 0 of l from instant start and returns
// the stopwatch's events: R for the limiter's sleep (an admitted request's
// delay, after which the caller goes on), U for the user's, and, for a
// rejected tryAcquire, "false".
func guavaEvents(t *testing.T, l Limiter, start time.Duration, steps []guavaStep) []string {
	t.Helper()
	now := start
	var events []string
	for _, s := range steps {
		if s.acquire == 0 {
			now += time.Duration(s.sleepMs) * time.Millisecond
			events = append(events, "U"+javaSeconds(s.sleepMs*1000))
			continue
		}
		d := l.Decide(now, 0, s.acquire)
		switch d.Verdict {
		case Reject:
			events = append(events, "false")
		default:
			require.Zero(t, d.Delay%time.Microsecond, "Guava sleeps whole microseconds")
			events = append(events, "R"+javaSeconds(int64(d.Delay/time.Microsecond)))
			now += d.Delay
		}
	}
	return events
}

func repeat(n int, s guavaStep) []guavaStep {
	out := make([]guavaStep, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func split(s string) []string { return strings.Split(s, ", ") }

// perSecond is a policy of rate permits per second (Guava's
// permitsPerSecond) for the rows that read no burst.
func perSecond(rate int64) Policy { return Policy{Rate: rate, Per: time.Second, Burst: rate} }

// TestGuavaRateLimiterTest transcribes the figures of Guava's own
// RateLimiterTest.java (guava-tests/.../util/concurrent): each case is a
// test there, its steps and the events its FakeStopwatch records. A
// blocking acquire is a max-delay longer than every wait. Tests of setRate
// and of an infinite rate have no row here (the rows have one rate).
func TestGuavaRateLimiterTest(t *testing.T) {
	const blocking = time.Hour // acquire(): every wait is shorter
	warm := func(rate int64, warmup time.Duration, cold float64) Params {
		return Params{Policy: perSecond(rate), Warmup: warmup, ColdFactor: cold, MaxDelay: blocking}
	}
	cases := []struct {
		name  string
		row   string
		p     Params
		start time.Duration // the limiter is made by the first request
		steps []guavaStep
		want  []string
	}{
		{"testSimple", "guava-bursty", Params{Policy: perSecond(5), MaxDelay: blocking}, 0,
			[]guavaStep{acq(1), acq(1), acq(1)}, split("R0.00, R0.20, R0.20")},
		{"testSimpleWithWait", "guava-bursty", Params{Policy: perSecond(5), MaxDelay: blocking}, 0,
			[]guavaStep{acq(1), sleepMs(200), acq(1), acq(1)}, split("R0.00, U0.20, R0.00, R0.20")},
		{"testSimpleAcquireEarliestAvailableIsInPast", "guava-bursty", Params{Policy: perSecond(5), MaxDelay: blocking}, 0,
			[]guavaStep{acq(1), sleepMs(400), acq(1), acq(1), acq(1)}, split("R0.00, U0.40, R0.00, R0.00, R0.20")},
		// Guava makes the limiter, then sleeps 2s before the first
		// request; here the limiter is made by a first request, 2s
		// before: the same 5 stored permits (one second's worth) then.
		{"testOneSecondBurst", "guava-bursty", Params{Policy: perSecond(5), MaxDelay: blocking}, 0,
			[]guavaStep{acq(1), sleepMs(1000), sleepMs(1000), acq(1), acq(1), acq(3), acq(1), acq(1)},
			split("R0.00, U1.00, U1.00, R0.00, R0.00, R0.00, R0.00, R0.20")},
		{"testSimpleWeights", "guava-bursty", Params{Policy: perSecond(1), MaxDelay: blocking}, 0,
			[]guavaStep{acq(1), acq(1), acq(2), acq(4), acq(8), acq(1)},
			split("R0.00, R1.00, R1.00, R2.00, R4.00, R8.00")},
		{"testImmediateTryAcquire", "guava-bursty", Params{Policy: perSecond(1)}, 0,
			[]guavaStep{acq(1), acq(1)}, split("R0.00, false")},
		{"testTryAcquire_noWaitAllowed", "guava-bursty", Params{Policy: perSecond(5)}, 0,
			[]guavaStep{acq(1), acq(1), acq(1), sleepMs(100), acq(1)}, split("R0.00, false, false, U0.10, false")},
		// tryAcquire(5, 0): a cost of 5 is granted at once and the next
		// caller pays: nothing until 1s.
		{"testTryAcquire_negative", "guava-bursty", Params{Policy: perSecond(5)}, 0,
			[]guavaStep{acq(5), sleepMs(900), acq(1), sleepMs(100), acq(1)}, split("R0.00, U0.90, false, U0.10, R0.00")},
		{"testWarmUp", "guava-warming-up", warm(2, 4*time.Second, 3), 0,
			slicesConcat(repeat(8, acq(1)), []guavaStep{sleepMs(500), sleepMs(4000)}, repeat(8, acq(1)),
				[]guavaStep{sleepMs(500), sleepMs(2000)}, repeat(8, acq(1))),
			split("R0.00, R1.38, R1.13, R0.88, R0.63, R0.50, R0.50, R0.50, U0.50, U4.00, " +
				"R0.00, R1.38, R1.13, R0.88, R0.63, R0.50, R0.50, R0.50, U0.50, U2.00, " +
				"R0.00, R0.50, R0.50, R0.50, R0.50, R0.50, R0.50, R0.50")},
		{"testWarmUpWithColdFactor", "guava-warming-up", warm(5, 4*time.Second, 10), 0,
			slicesConcat(repeat(8, acq(1)), []guavaStep{sleepMs(200), sleepMs(4000)}, repeat(8, acq(1)),
				[]guavaStep{sleepMs(200), sleepMs(1000)}, repeat(8, acq(1))),
			split("R0.00, R1.75, R1.26, R0.76, R0.30, R0.20, R0.20, R0.20, U0.20, U4.00, " +
				"R0.00, R1.75, R1.26, R0.76, R0.30, R0.20, R0.20, R0.20, U0.20, U1.00, " +
				"R0.00, R0.20, R0.20, R0.20, R0.20, R0.20, R0.20, R0.20")},
		{"testWarmUpWithColdFactor1", "guava-warming-up", warm(5, 4*time.Second, 1), 0,
			slicesConcat(repeat(8, acq(1)), []guavaStep{sleepMs(340)}, repeat(8, acq(1))),
			split("R0.00, R0.20, R0.20, R0.20, R0.20, R0.20, R0.20, R0.20, U0.34, " +
				"R0.00, R0.20, R0.20, R0.20, R0.20, R0.20, R0.20, R0.20")},
		// testWarmUpAndUpdate's first part, before its setRate.
		{"testWarmUpAndUpdate", "guava-warming-up", warm(2, 4*time.Second, 3), 0,
			slicesConcat(repeat(8, acq(1)), []guavaStep{sleepMs(4500)}, repeat(3, acq(1))),
			split("R0.00, R1.38, R1.13, R0.88, R0.63, R0.50, R0.50, R0.50, U4.50, R0.00, R1.38, R1.13")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := mustLimiter(t, c.row, c.p)
			require.Equal(t, c.want, guavaEvents(t, l, c.start, c.steps))
		})
	}
}

func slicesConcat(parts ...[]guavaStep) []guavaStep {
	var out []guavaStep
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestGuavaTryAcquireSomeWaitAllowed is Guava's
// testTryAcquire_someWaitAllowed: tryAcquire with timeouts 0, 200ms, 100ms
// and, 100ms later, 100ms again, at 5 permits per second (the second call
// sleeps 200ms, which Guava's fake stopwatch counts). A row has one
// max-delay, so the test sets each call's timeout on the limiter.
func TestGuavaTryAcquireSomeWaitAllowed(t *testing.T) {
	ms := time.Millisecond
	g := mustLimiter(t, "guava-bursty", Params{Policy: perSecond(5)}).(*Guava)
	calls := []struct {
		at      time.Duration
		timeout time.Duration
		want    Decision
	}{
		{0, 0, Decision{Verdict: Accept}},
		{0, 200 * ms, Decision{Verdict: Delay, Delay: 200 * ms}},
		{200 * ms, 100 * ms, Decision{Verdict: Reject, RetryAfter: 100 * ms}}, // nextFree 400ms
		{300 * ms, 100 * ms, Decision{Verdict: Delay, Delay: 100 * ms}},
	}
	for i, c := range calls {
		g.timeout = c.timeout.Microseconds()
		require.Equal(t, c.want, g.Decide(c.at, 0, 1), "call %d", i)
	}
}

// TestGuavaHandComputed: the rules by hand, with nanosecond arrivals.
func TestGuavaHandComputed(t *testing.T) {
	ms, us := time.Millisecond, time.Microsecond
	t.Run("bursty", func(t *testing.T) {
		// 10/s: stable interval 100000µs, max-burst 1s: 10 permits.
		l := mustLimiter(t, "guava-bursty", Params{Policy: perSecond(10)})
		checkRows(t, l, []decideRow{
			// a new limiter: no stored permits, but nextFree is now: a
			// cost of 4 passes and moves nextFree to 400ms (the next
			// caller pays)
			{at: 0, cost: 4, want: Accept},
			// 399.999999ms is micro 399999 < 400000: rejected, retry at
			// the instant of micro 400000
			{at: 400*ms - 1, cost: 1, want: Reject, retry: 1},
			// 400ms: admitted, nothing stored (resync stores 0)
			{at: 400 * ms, cost: 1, want: Accept},
			// idle 2.5s from nextFree 500ms: 25 permits, capped at 10
			{at: 3 * time.Second, cost: 10, want: Accept},
			// 10 stored spent: nothing more until nextFree, which no
			// stored permit moved
			{at: 3 * time.Second, cost: 1, want: Accept},
			// nextFree is now 3.1s: 100ms to wait, and a 1ns remainder
			// of the microsecond does not count
			{at: 3*time.Second + 500, cost: 1, want: Reject, retry: 100*ms - 500},
		})
	})
	t.Run("bursty-max-delay", func(t *testing.T) {
		// 2/s with tryAcquire(timeout 300.0009ms): 300000µs (toMicros
		// truncates); max-burst 3s: 6 permits
		l := mustLimiter(t, "guava-bursty", Params{Policy: perSecond(2), MaxDelay: 300*ms + 900, MaxBurst: 3 * time.Second})
		checkRows(t, l, []decideRow{
			{at: 0, cost: 1, want: Accept}, // nextFree 500ms
			// nextFree - timeout = 200ms > 100ms: rejected until 200ms
			{at: 100 * ms, cost: 1, want: Reject, retry: 100 * ms},
			// at 200ms: waits until 500ms, and nextFree goes to 1s
			{at: 200 * ms, cost: 1, want: Delay, delay: 300 * ms},
			// 10s: (10s - 1s)/500ms = 18 permits, capped at 6
			{at: 10 * time.Second, cost: 7, want: Accept}, // 6 stored + 1 fresh: nextFree 10.5s
			{at: 10*time.Second + 200*ms + 333, cost: 1, want: Delay, delay: 300 * ms},
		})
	})
	t.Run("warming-up", func(t *testing.T) {
		// 2/s, warmup 4s, cold factor 3: stable 500000µs, cold
		// 1500000µs, threshold 4, maxPermits 8, slope 250000µs per
		// permit, cool-down 500000µs per permit.
		l := mustLimiter(t, "guava-warming-up", Params{Policy: perSecond(2), Warmup: 4 * time.Second})
		checkRows(t, l, []decideRow{
			// cold: 8 stored. A cost of 2 takes permits 8..6 on the
			// ramp: 2 * (permitsToTime(4) + permitsToTime(2)) / 2 =
			// 1.5e6 + 1e6 = 2.5s for the next caller
			{at: 0, cost: 2, want: Accept},
			{at: 2500*ms - us, cost: 1, want: Reject, retry: us},
			// at 2.5s: resync stores nothing (nextFree is now); the
			// permit from 6 to 5 costs (1e6 + 0.75e6)/2 = 875000µs
			{at: 2500 * ms, cost: 1, want: Accept},
			{at: 3375 * ms, cost: 1, want: Accept},
		})
		// Released once cold again: 8 - 4 stored permits (after 5 -> 4
		// at 3375ms, nextFree 3375 + (0.75e6+0.5e6)/2 = 4000ms) take
		// 4 * 500000µs of cool-down from nextFree: 6s.
		requireLive(t, l.(stateHolder), 6*time.Second-1, 1, 24)
		requireLive(t, l.(stateHolder), 6*time.Second, 0, 0)
	})
	t.Run("never", func(t *testing.T) {
		l := mustLimiter(t, "guava-bursty", Params{Policy: perSecond(2)})
		checkRows(t, l, []decideRow{{at: 0, cost: 1 << 31, want: Reject, retry: Never}})
	})
}

func TestGuavaParams(t *testing.T) {
	_, err := New("guava-warming-up", Params{Policy: perSecond(2)})
	require.EqualError(t, err, "warmup: 0s: want a warmup period of at least 1µs (Guava's warmupPeriod, in whole microseconds)")
	_, err = New("guava-bursty", Params{Policy: perSecond(2), Warmup: time.Second})
	require.EqualError(t, err, "warmup: 1s: guava-bursty takes no warmup (only guava-warming-up)")
	_, err = New("guava-warming-up", Params{Policy: perSecond(2), Warmup: time.Second, ColdFactor: 0.5})
	require.ErrorContains(t, err, "cold-factor: 0.5: want a factor >= 1")
}
