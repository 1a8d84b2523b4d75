package algorithms

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// grantRow is a decideRow with the cost granted (0: the whole cost).
type grantRow struct {
	decideRow
	granted int64
}

func checkGrants(t *testing.T, l Limiter, rows []grantRow) {
	t.Helper()
	for i, r := range rows {
		d := l.Decide(r.at, r.key, r.cost)
		want := Decision{Verdict: r.want, Delay: r.delay, RetryAfter: r.retry, Granted: r.granted}
		require.Equal(t, want, d, "row %d: t=%v key=%d cost=%d", i, r.at, r.key, r.cost)
	}
}

// TestRedisRateAllowAtMost transcribes redis_rate's TestAllowAtMost
// (rate_test.go) at PerSecond(10) (rate 10, burst 10, T = 100ms): the
// calls its test makes one after the other, a few ms apart here (its
// deltas of 10ms allow for that). AllowN(0) peeks, which no request does:
// left out.
func TestRedisRateAllowAtMost(t *testing.T) {
	ms := time.Millisecond
	t0 := 1_700_000_000 * time.Second
	l := mustLimiter(t, "redis-rate-at-most", Params{Policy: perSecond(10)})
	checkGrants(t, l, []grantRow{
		// Allow: allowed 1, remaining 9
		{decideRow: decideRow{at: t0, cost: 1, want: Accept}},
		// AllowAtMost(2): allowed 2, remaining 7
		{decideRow: decideRow{at: t0, cost: 2, want: Accept}},
		// AllowAtMost(10), 1ms on: remaining 7.01: allowed 7, and the
		// bucket is emptied (TAT = now + 1s: ResetAfter ~999ms... 1s)
		{decideRow: decideRow{at: t0 + ms, cost: 10, want: Accept}, granted: 7},
		// AllowAtMost(1000), 1ms on: diff 1ms < T: allowed 0,
		// RetryAfter T - diff = 99ms
		{decideRow: decideRow{at: t0 + 2*ms, cost: 1000, want: Reject, retry: 99 * ms}},
	})
}

// TestRedisRateAtMostHandComputed: 3/s burst 2 (T = 333333333.3ns).
func TestRedisRateAtMostHandComputed(t *testing.T) {
	T3 := time.Second / 3 // 333333333ns, T rounded down
	l := mustLimiter(t, "redis-rate-at-most", Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 2}})
	checkGrants(t, l, []grantRow{
		// a cost above the burst: granted the burst, 2, bucket empty
		// (TAT = 2T = 666666666.6ns)
		{decideRow: decideRow{at: 0, cost: 5, want: Accept}, granted: 2},
		// diff = t - TAT + 2T = t: below T until 333333333.3ns
		{decideRow: decideRow{at: T3, cost: 1, want: Reject, retry: 1}},
		// at T + 0.7ns... 333333334ns: remaining 1.000000002: 1 of 2,
		// and TAT = t + 2T
		{decideRow: decideRow{at: T3 + 1, cost: 2, want: Accept}, granted: 1},
		// at 1000000001ns, past TAT (1000000000.6ns): remaining 2, a
		// whole cost that fits, as gcra: TAT = t + 2T
		{decideRow: decideRow{at: T3 + 1 + 2*T3 + 1, cost: 2, want: Accept}},
	})
	// TAT = 1000000001 + 666666666.6 ns: released at its ceiling
	requireLive(t, l.(stateHolder), 1666666667, 1, 16)
	requireLive(t, l.(stateHolder), 1666666668, 0, 0)
}
