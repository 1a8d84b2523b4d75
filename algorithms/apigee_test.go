package algorithms

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestApigeeSpikeArrest: the documentation's examples by hand.
func TestApigeeSpikeArrest(t *testing.T) {
	ms := time.Millisecond
	t.Run("100pm", func(t *testing.T) {
		// "Why Spike arrest with Rate 100pm rejects 1 request per
		// second": 100pm is one request every 600ms, not 100 in any
		// minute; two requests in one second fail one
		l := mustLimiter(t, "apigee-spike-arrest", Params{Policy: Policy{Rate: 100, Per: time.Minute, Burst: 100}})
		checkRows(t, l, []decideRow{
			{at: 0, cost: 1, want: Accept},
			{at: 500 * ms, cost: 1, want: Reject, retry: 100 * ms},
			{at: 600 * ms, cost: 1, want: Accept},
			// after a pause nothing is stored: one passes, the next waits
			{at: 10 * time.Second, cost: 1, want: Accept},
			{at: 10*time.Second + ms, cost: 1, want: Reject, retry: 599 * ms},
		})
		require.Equal(t, []Gauge{{"wait", 0.599}}, l.(Inspector).Inspect(10*time.Second+ms, 0))
	})
	t.Run("30pm-weight", func(t *testing.T) {
		// 30pm: one every 2s; a MessageWeight of 5 takes 5 intervals:
		// 10s before the next request
		l := mustLimiter(t, "apigee-spike-arrest", Params{Policy: Policy{Rate: 30, Per: time.Minute, Burst: 30}})
		checkRows(t, l, []decideRow{
			{at: 0, cost: 5, want: Accept},
			{at: 9 * time.Second, cost: 1, want: Reject, retry: time.Second},
			{at: 10 * time.Second, cost: 1, want: Accept},
		})
		requireLive(t, l.(stateHolder), 12*time.Second-1, 1, 16)
		requireLive(t, l.(stateHolder), 12*time.Second, 0, 0)
	})
	t.Run("7ps", func(t *testing.T) {
		// 7ps: T = 142857142.857ns, kept exactly; each admission
		// counts T from its own instant
		l := mustLimiter(t, "apigee-spike-arrest", Params{Policy: Policy{Rate: 7, Per: time.Second, Burst: 7}})
		checkRows(t, l, []decideRow{
			{at: 0, cost: 1, want: Accept},
			{at: 142857142, cost: 1, want: Reject, retry: 1}, // 0.857ns short
			{at: 142857143, cost: 1, want: Accept},           // next: 285714285.857
			{at: 285714285, cost: 1, want: Reject, retry: 1},
		})
	})
	t.Run("use-effective-count", func(t *testing.T) {
		// a sliding window: 3ps admits 3 at once, no smoothing; the
		// 4th fits when the previous second's 3, weighted by the part
		// of the window they still cover, leave room for 1:
		// 3*(1-f) + 1 <= 3 from f = 1/3, at 1.3333333333s
		l := mustLimiter(t, "apigee-spike-arrest", Params{Policy: Policy{Rate: 3, Per: time.Second, Burst: 3}, UseEffectiveCount: true})
		checkRows(t, l, []decideRow{
			{at: 0, cost: 1, want: Accept}, {at: 0, cost: 1, want: Accept}, {at: 0, cost: 1, want: Accept},
			{at: 0, cost: 1, want: Reject, retry: 1333333334},
		})
	})
	t.Run("per", func(t *testing.T) {
		_, err := New("apigee-spike-arrest", Params{Policy: Policy{Rate: 3, Per: time.Hour, Burst: 3}})
		require.EqualError(t, err, "per: 1h0m0s: want 1s or 1m (a SpikeArrest <Rate> is Nps or Npm)")
	})
}

// TestApigeeQuota: the three types by hand, Allow count 3 per 1m.
func TestApigeeQuota(t *testing.T) {
	pol := Policy{Rate: 3, Per: time.Minute, Burst: 3}
	sec := time.Second
	t.Run("calendar", func(t *testing.T) {
		// windows aligned to the minute: 3 before 1m, 3 more from 1m
		l := mustLimiter(t, "apigee-quota", Params{Policy: pol})
		checkRows(t, l, []decideRow{
			{at: 50 * sec, cost: 3, want: Accept},
			{at: 59 * sec, cost: 1, want: Reject, retry: sec},
			{at: 60 * sec, cost: 3, want: Accept},
		})
	})
	t.Run("flexi", func(t *testing.T) {
		// the window starts at the first request, 50s: until 1m50s
		l := mustLimiter(t, "apigee-quota", Params{Policy: pol, QuotaType: QuotaFlexi})
		checkRows(t, l, []decideRow{
			{at: 50 * sec, cost: 2, want: Accept},
			{at: 60 * sec, cost: 2, want: Reject, retry: 50 * sec},
			{at: 60 * sec, cost: 1, want: Accept},
			{at: 110*sec - 1, cost: 1, want: Reject, retry: 1},
			// a new window from this request: until 3m
			{at: 120 * sec, cost: 3, want: Accept},
			{at: 179 * sec, cost: 1, want: Reject, retry: sec},
			{at: 179 * sec, cost: 4, want: Reject, retry: Never},
		})
		requireLive(t, l.(stateHolder), 180*sec-1, 1, 16)
		requireLive(t, l.(stateHolder), 180*sec, 0, 0)
	})
	t.Run("rollingwindow", func(t *testing.T) {
		// the minute before each request: 50s's 2 count until 1m50s
		l := mustLimiter(t, "apigee-quota", Params{Policy: pol, QuotaType: QuotaRollingWindow})
		checkRows(t, l, []decideRow{
			{at: 50 * sec, cost: 2, want: Accept},
			{at: 60 * sec, cost: 1, want: Accept},
			{at: 70 * sec, cost: 1, want: Reject, retry: 40 * sec},
			{at: 110 * sec, cost: 2, want: Accept},
		})
	})
	t.Run("month", func(t *testing.T) {
		l := mustLimiter(t, "apigee-quota", Params{Policy: Policy{Rate: 2, Per: CalendarMonth.Nominal(), Burst: 2, Calendar: CalendarMonth}})
		jan31 := time.Duration(time.Date(2025, 1, 31, 23, 0, 0, 0, time.UTC).UnixNano())
		checkRows(t, l, []decideRow{
			{at: jan31, cost: 2, want: Accept},
			{at: jan31, cost: 1, want: Reject, retry: time.Hour},
			{at: jan31 + time.Hour, cost: 2, want: Accept},
		})
	})
	t.Run("type", func(t *testing.T) {
		_, err := New("apigee-quota", Params{Policy: pol, QuotaType: "weekly"})
		require.EqualError(t, err, "quota-type: weekly: want calendar, flexi or rollingwindow (Apigee's Quota type)")
	})
}

// TestAzureRateLimit: calls 3 per renewal-period 10s.
func TestAzureRateLimit(t *testing.T) {
	pol := Policy{Rate: 3, Per: 10 * time.Second, Burst: 3}
	sec := time.Second
	t.Run("classic", func(t *testing.T) {
		// a sliding window: never more than 3 in any 10s
		l := mustLimiter(t, "azure-rate-limit", Params{Policy: pol})
		checkRows(t, l, []decideRow{
			{at: 0, cost: 1, want: Accept}, {at: 4 * sec, cost: 2, want: Accept},
			{at: 9 * sec, cost: 1, want: Reject, retry: sec},
			{at: 10 * sec, cost: 1, want: Accept},
			{at: 10 * sec, cost: 1, want: Reject, retry: 4 * sec},
		})
	})
	t.Run("increment-condition", func(t *testing.T) {
		// the count is read before the request is counted: the 4th of
		// a window passes, the 5th gets the 429: one call late
		l := mustLimiter(t, "azure-rate-limit", Params{Policy: pol, IncrementLate: true})
		checkRows(t, l, []decideRow{
			{at: 0, cost: 1, want: Accept}, {at: sec, cost: 1, want: Accept},
			{at: 2 * sec, cost: 1, want: Accept}, {at: 3 * sec, cost: 1, want: Accept},
			// 4 counted: back to 3 when the first leaves, at 10s
			{at: 4 * sec, cost: 1, want: Reject, retry: 6 * sec},
			{at: 10 * sec, cost: 5, want: Accept}, // 3 before it: any increment passes
			{at: 12 * sec, cost: 1, want: Reject, retry: 8 * sec},
		})
	})
	t.Run("v2", func(t *testing.T) {
		// a token bucket of 3 refilled 3 per 10s: one every 3.33s
		l := mustLimiter(t, "azure-rate-limit", Params{Policy: pol, Tier: AzureV2})
		checkRows(t, l, []decideRow{
			{at: 0, cost: 3, want: Accept},
			{at: sec, cost: 1, want: Reject, retry: 10*sec/3 + 1 - sec},
		})
	})
	t.Run("renewal-period", func(t *testing.T) {
		_, err := New("azure-rate-limit", Params{Policy: Policy{Rate: 3, Per: 301 * sec, Burst: 3}})
		require.EqualError(t, err, "per: 5m1s: want a whole number of seconds from 1s to 5m (renewal-period: at most 300)")
		_, err = New("azure-rate-limit", Params{Policy: pol, Tier: AzureV2, IncrementLate: true})
		require.ErrorContains(t, err, "modelled for tier classic only")
	})
}
