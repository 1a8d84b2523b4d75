package algorithms

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// utcAt returns the instant of a UTC date and time on the virtual clock.
func utcAt(y int, m time.Month, d, h, min, s int) time.Duration {
	return time.Duration(time.Date(y, m, d, h, min, s, 0, time.UTC).UnixNano())
}

// TestAWSUsagePlan: QuotaSettings' periods and offset by hand.
func TestAWSUsagePlan(t *testing.T) {
	hour := time.Hour
	t.Run("day-offset", func(t *testing.T) {
		// limit 3 a UTC day, offset 1: the first request (10:00 on day
		// 0) starts the plan, and its day allows 3-1 = 2; the next day
		// the whole 3
		l := mustLimiter(t, "aws-usage-plan", Params{Policy: Policy{Rate: 3, Per: 24 * hour, Burst: 3}, QuotaOffset: 1})
		checkRows(t, l, []decideRow{
			{at: 10 * hour, cost: 1, want: Accept},
			{at: 11 * hour, cost: 1, want: Accept},
			{at: 12 * hour, cost: 1, want: Reject, retry: 12 * hour}, // to midnight UTC
			{at: 12 * hour, key: 1, cost: 1, want: Accept},           // every key's initial day
			{at: 25 * hour, cost: 3, want: Accept},
			{at: 25 * hour, cost: 1, want: Reject, retry: 23 * hour},
			{at: 25 * hour, cost: 4, want: Reject, retry: Never}, // above the limit
		})
		require.Equal(t, []Gauge{{"count", 3}, {"limit", 3}}, l.(Inspector).Inspect(25*hour, 0))
		// released at the day's end: 16 bytes a key
		requireLive(t, l.(stateHolder), 48*hour-1, 1, 16)
		requireLive(t, l.(stateHolder), 48*hour, 0, 0)
	})
	t.Run("week", func(t *testing.T) {
		// weeks from Monday 00:00 UTC: 2026-12-07 is a Monday, so the
		// Sunday before it is in the week before
		l := mustLimiter(t, "aws-usage-plan", Params{Policy: Policy{Rate: 1, Per: 168 * hour, Burst: 1}})
		sunday := utcAt(2026, time.December, 6, 23, 59, 59)
		monday := utcAt(2026, time.December, 7, 0, 0, 0)
		checkRows(t, l, []decideRow{
			{at: sunday, cost: 1, want: Accept},
			{at: monday - 1, cost: 1, want: Reject, retry: 1},
			{at: monday, cost: 1, want: Accept},
			{at: monday + time.Second, cost: 1, want: Reject, retry: 7*24*hour - time.Second},
		})
	})
	t.Run("week-epoch", func(t *testing.T) {
		// the epoch is a Thursday: its week ends on Monday 1970-01-05
		l := mustLimiter(t, "aws-usage-plan", Params{Policy: Policy{Rate: 1, Per: 168 * hour, Burst: 1}})
		checkRows(t, l, []decideRow{
			{at: 0, cost: 1, want: Accept},
			{at: 0, cost: 1, want: Reject, retry: 4 * 24 * hour},
			{at: 4 * 24 * hour, cost: 1, want: Accept},
		})
	})
	t.Run("month-offset", func(t *testing.T) {
		// limit 2 a calendar month, offset 2: the initial month (the plan
		// starts on 31 December) allows nothing; January its 2, then to
		// February, 31 days on
		l := mustLimiter(t, "aws-usage-plan", Params{Policy: Policy{Rate: 2, Per: CalendarMonth.Nominal(), Burst: 2, Calendar: CalendarMonth}, QuotaOffset: 2})
		jan := utcAt(2027, time.January, 1, 0, 0, 0)
		checkRows(t, l, []decideRow{
			{at: jan - hour, cost: 1, want: Reject, retry: hour},
			{at: jan, cost: 1, want: Accept},
			{at: jan, cost: 1, want: Accept},
			{at: jan, cost: 1, want: Reject, retry: 31 * 24 * hour},
		})
	})
	t.Run("options", func(t *testing.T) {
		_, err := New("aws-usage-plan", Params{Policy: Policy{Rate: 3, Per: hour, Burst: 3}})
		require.EqualError(t, err, "per: 1h0m0s: want 24h, 168h or 1mo (a usage plan's period DAY, WEEK or MONTH)")
		_, err = New("aws-usage-plan", Params{Policy: Policy{Rate: 3, Per: 24 * hour, Burst: 3}, QuotaOffset: 4})
		require.EqualError(t, err, "quota-offset: 4: want 0 to the limit, 3 (requests subtracted in the initial period)")
	})
}

// TestAWSLevels: API Gateway's levels as an all-of row (docs/algorithms.md):
// the account's and the stage's throttles count every request together,
// the usage plan's throttle and quota each API key, attribute 0 here.
func TestAWSLevels(t *testing.T) {
	sec := time.Second
	l := mustLimiter(t, "all-of", Params{Policy: Policy{Rate: 10, Per: sec, Burst: 10}, Members: []Member{
		{Name: "token-bucket", Params: Params{Policy: Policy{Rate: 10000, Per: sec, Burst: 5000}}, By: ByAll}, // account
		{Name: "token-bucket", Params: Params{Policy: Policy{Rate: 4, Per: sec, Burst: 4}}, By: ByAll},        // stage
		{Name: "token-bucket", Params: Params{Policy: Policy{Rate: 2, Per: sec, Burst: 2}}, By: 1},            // plan throttle
		{Name: "aws-usage-plan", Params: Params{Policy: Policy{Rate: 3, Per: 24 * time.Hour, Burst: 3}}, By: 1},
	}}).(Attributed)
	keyA, keyB := []Key{0, 0}, []Key{1, 1}
	type row struct {
		at    time.Duration
		attrs []Key
		want  Decision
	}
	for i, r := range []row{
		{0, keyA, Decision{Verdict: Accept}},
		{0, keyA, Decision{Verdict: Accept}},
		// key A's plan bucket (2) is empty: 1/2s to a token
		{0, keyA, Decision{Verdict: Reject, RetryAfter: sec / 2}},
		{0, keyB, Decision{Verdict: Accept}},
		{0, keyB, Decision{Verdict: Accept}},
		// the stage's 4 are spent, whoever asks: 1/4s to a token
		{0, []Key{2, 2}, Decision{Verdict: Reject, RetryAfter: sec / 4}},
		// key A's third request of the day passes at 1s; its fourth
		// meets the quota: to midnight
		{sec, keyA, Decision{Verdict: Accept}},
		{2 * sec, keyA, Decision{Verdict: Reject, RetryAfter: 24*time.Hour - 2*sec}},
	} {
		require.Equal(t, r.want, l.DecideAttrs(r.at, r.attrs, 1), "row %d", i)
	}
}
