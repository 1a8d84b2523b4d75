package algorithms

import (
	"testing"
	"time"
)

// TestResilience4jAtomicRateLimiterTest transcribes the figures of
// resilience4j's AtomicRateLimiterTest.java: its mocked currentNanoTime is
// the virtual instant here (cycles from 0), reservePermission's 0 is an
// accept, a positive wait a delay, and -1 a reject (whose retry_after the
// test reads as the metrics' nanosToWait).
func TestResilience4jAtomicRateLimiterTest(t *testing.T) {
	const cycle = 250 * time.Millisecond // CYCLE_IN_NANOS, 1 permission
	one := func(timeout time.Duration) Limiter {
		return mustLimiter(t, "resilience4j", Params{Policy: Policy{Rate: 1, Per: cycle, Burst: 1}, MaxDelay: timeout})
	}
	t.Run("acquireAndRefreshWithEventPublishing", func(t *testing.T) {
		checkRows(t, one(0), []decideRow{
			{at: cycle, cost: 1, want: Accept},
			{at: cycle, cost: 1, want: Reject, retry: cycle}, // nanosToWait CYCLE
			{at: 2 * cycle, cost: 1, want: Accept},
			{at: 2 * cycle, cost: 1, want: Reject, retry: cycle},
		})
	})
	t.Run("reserveAndRefresh", func(t *testing.T) {
		// timeout CYCLE: the second waits a cycle, permissions -1
		checkRows(t, one(cycle), []decideRow{
			{at: cycle, cost: 1, want: Accept},
			{at: cycle, cost: 1, want: Delay, delay: cycle},
		})
	})
	t.Run("reserveFewThenSkipCyclesBeforeRefreshNonBlocking", func(t *testing.T) {
		checkRows(t, one(cycle), []decideRow{
			{at: cycle, cost: 1, want: Accept},
			{at: cycle, cost: 1, want: Delay, delay: cycle},
			// permissions -1: the wait is 2 cycles, over the timeout;
			// it fits a cycle later
			{at: cycle, cost: 1, want: Reject, retry: cycle},
			// 6 cycles on: 1 permission again
			{at: 6*cycle + 10, cost: 1, want: Accept},
		})
	})
	t.Run("reserveManyCyclesIfWegithgreaterThenLimitPerPeriod", func(t *testing.T) {
		// timeout 5 cycles: a cost of 3 with 1 per cycle borrows two
		// cycles: it waits 2 cycles (more than one)
		checkRows(t, one(5*cycle), []decideRow{{at: cycle, cost: 3, want: Delay, delay: 2 * cycle}})
	})
	t.Run("rejectedByTimeoutNonBlocking", func(t *testing.T) {
		checkRows(t, one(0), []decideRow{
			{at: cycle, cost: 1, want: Accept},
			{at: cycle, cost: 1, want: Reject, retry: cycle},
			{at: 2*cycle - 1, cost: 1, want: Reject, retry: 1}, // nanosToWait 1
		})
	})
	t.Run("reservePermissionsUpfront", func(t *testing.T) {
		// 3 per 10ms, timeout 12ms, requests at 10ms + i + 1
		p := 10 * time.Millisecond
		l := mustLimiter(t, "resilience4j", Params{Policy: Policy{Rate: 3, Per: p, Burst: 3}, MaxDelay: 12 * time.Millisecond})
		checkRows(t, l, []decideRow{
			{at: p + 1, cost: 1, want: Accept}, {at: p + 2, cost: 1, want: Accept}, {at: p + 3, cost: 1, want: Accept},
			{at: p + 4, cost: 1, want: Delay, delay: p - 4},
			{at: p + 5, cost: 1, want: Delay, delay: p - 5},
			{at: p + 6, cost: 1, want: Delay, delay: p - 6},
			// permissions -3: divCeil(1+3-3, 3) = 1 full cycle and the
			// rest of this one, 20ms - 7ns > 12ms; it falls to 12ms at
			// 18ms
			{at: p + 7, cost: 1, want: Reject, retry: 18*time.Millisecond - (p + 7)},
			{at: p + 8, cost: 1, want: Reject, retry: 18*time.Millisecond - (p + 8)},
			{at: p + 9, cost: 1, want: Reject, retry: 18*time.Millisecond - (p + 9)},
		})
	})
}

// TestResilience4jHandComputed: borrowing and its bounds by hand.
func TestResilience4jHandComputed(t *testing.T) {
	ms := time.Millisecond
	t.Run("borrow", func(t *testing.T) {
		// 2 per 100ms, timeout 250ms
		l := mustLimiter(t, "resilience4j", Params{Policy: Policy{Rate: 2, Per: 100 * ms, Burst: 2}, MaxDelay: 250 * ms})
		checkRows(t, l, []decideRow{
			// a cost of 5 at 30ms with 2 permissions: fullCycles =
			// divCeil(5-2-2, 2) = 1: wait 100ms + (100ms - 30ms)
			{at: 30 * ms, cost: 5, want: Delay, delay: 170 * ms},
			// permissions -3: a cost of 1 waits divCeil(1+3-2, 2) = 1
			// cycle + 70ms = 170ms
			{at: 30 * ms, cost: 1, want: Delay, delay: 170 * ms},
			// permissions -4: divCeil(3, 2) = 2 cycles + 70ms = 270ms >
			// 250ms: it fits from 50ms (the threshold 300ms - 250ms)
			{at: 30 * ms, cost: 1, want: Reject, retry: 20 * ms},
			// 120ms, cycle 1: -4 + 2 = -2: divCeil(1+2-2, 2) = 1 cycle +
			// 80ms = 180ms
			{at: 120 * ms, cost: 1, want: Delay, delay: 180 * ms},
		})
		// -3 in cycle 1: full at cycle 1 + ceil(5/2) = 4, 400ms
		requireLive(t, l.(stateHolder), 400*ms-1, 1, 16)
		requireLive(t, l.(stateHolder), 400*ms, 0, 0)
	})
	t.Run("never", func(t *testing.T) {
		// a cost of 5 with 2 per 100ms and a timeout of 150ms: with 2
		// permissions its wait is at least 100ms + the rest of the cycle,
		// over 150ms in the cycle's first half only: it fits from 50ms
		// into a cycle. With timeout 100ms it never fits.
		l := mustLimiter(t, "resilience4j", Params{Policy: Policy{Rate: 2, Per: 100 * ms, Burst: 2}, MaxDelay: 150 * ms})
		checkRows(t, l, []decideRow{{at: 10 * ms, cost: 5, want: Reject, retry: 40 * ms}})
		l = mustLimiter(t, "resilience4j", Params{Policy: Policy{Rate: 2, Per: 100 * ms, Burst: 2}, MaxDelay: 100 * ms})
		checkRows(t, l, []decideRow{{at: 10 * ms, cost: 5, want: Reject, retry: Never}})
		l = mustLimiter(t, "resilience4j", Params{Policy: Policy{Rate: 2, Per: 100 * ms, Burst: 2}})
		checkRows(t, l, []decideRow{{at: 10 * ms, cost: 3, want: Reject, retry: Never}})
	})
}
