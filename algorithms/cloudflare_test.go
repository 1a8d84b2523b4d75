package algorithms

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCloudflareRateLimit: Cloudflare's documented example and the rule by
// hand.
func TestCloudflareRateLimit(t *testing.T) {
	sec := time.Second
	t.Run("example-a", func(t *testing.T) {
		// "Request rate calculation", Example A: 1 request per 10s,
		// mitigation timeout 10 minutes, counters per IP and x-api-key
		// (key 0 one combination, key 1 another IP).
		l := mustLimiter(t, "cloudflare-rate-limit", Params{Policy: Policy{Rate: 1, Per: 10 * sec, Burst: 1}, MitigationTimeout: 10 * time.Minute})
		checkRows(t, l, []decideRow{
			{at: 0, cost: 1, want: Accept}, // counter 1: within the rate
			// counter 2 > 1: blocked, and the key with it until 2s+10m;
			// then the counts are two windows old: it fits at once
			{at: 2 * sec, cost: 1, want: Reject, retry: 600 * sec},
			// another IP: a counter of its own
			{at: 3 * sec, key: 1, cost: 1, want: Accept},
			// the block holds whatever the counts say (0 here)
			{at: 30 * sec, cost: 1, want: Reject, retry: 572 * sec},
			{at: 602*sec - 1, cost: 1, want: Reject, retry: 1},
			{at: 602 * sec, cost: 1, want: Accept},
		})
		require.Equal(t, []Gauge{{"blocked", 0}, {"previous", 0}, {"current", 1}, {"estimate", 1}, {"limit", 1}}, l.(Inspector).Inspect(602*sec, 0))
		// key 1 was released at 20s (its window 0 no longer the
		// previous); key 0 is at 620s, two windows after window 60: 32
		// bytes
		requireLive(t, l.(stateHolder), 620*sec-1, 1, 32)
		requireLive(t, l.(stateHolder), 620*sec, 0, 0)
	})
	t.Run("throttle", func(t *testing.T) {
		// no mitigation timeout: the sliding window alone. At 2s the
		// count of window 0 is full; in window 1 it weighs 1*(W-e)/W
		// until 20s, so 1 more fits only then: 18s.
		l := mustLimiter(t, "cloudflare-rate-limit", Params{Policy: Policy{Rate: 1, Per: 10 * sec, Burst: 1}})
		checkRows(t, l, []decideRow{
			{at: 0, cost: 1, want: Accept},
			{at: 2 * sec, cost: 1, want: Reject, retry: 18 * sec},
			{at: 20 * sec, cost: 1, want: Accept},
		})
	})
	t.Run("block-then-counts", func(t *testing.T) {
		// 2 per 10s, blocked 5s. The third request at 9s blocks the key
		// until 14s; the counts then are prev 2 at e = 4s: 2*6 + 1*10 =
		// 22 > 20, and 1 more fits from e = 5s (2*5 + 10 = 20): 15s,
		// 6s after 9s.
		l := mustLimiter(t, "cloudflare-rate-limit", Params{Policy: Policy{Rate: 2, Per: 10 * sec, Burst: 2}, MitigationTimeout: 5 * sec})
		checkRows(t, l, []decideRow{
			{at: 9 * sec, cost: 1, want: Accept},
			{at: 9 * sec, cost: 1, want: Accept},
			{at: 9 * sec, cost: 1, want: Reject, retry: 6 * sec},
			{at: 12 * sec, cost: 1, want: Reject, retry: 3 * sec}, // blocked: to 14s, then 1s
			// the block is over but the counts do not fit: a new trigger,
			// blocked until 19s, when 2*1 + 10 <= 20 fits at once
			{at: 14 * sec, cost: 1, want: Reject, retry: 5 * sec},
			{at: 15 * sec, cost: 1, want: Reject, retry: 4 * sec}, // it would have fitted but for the block
			{at: 19 * sec, cost: 1, want: Accept},
		})
	})
	t.Run("cost-above-rate", func(t *testing.T) {
		// a cost above L never fits and blocks nothing
		l := mustLimiter(t, "cloudflare-rate-limit", Params{Policy: Policy{Rate: 1, Per: 10 * sec, Burst: 1}, MitigationTimeout: time.Minute})
		checkRows(t, l, []decideRow{
			{at: 0, cost: 2, want: Reject, retry: Never},
			{at: 0, cost: 1, want: Accept},
		})
	})
	t.Run("options", func(t *testing.T) {
		_, err := New("cloudflare-rate-limit", Params{Policy: Policy{Rate: 1, Per: sec, Burst: 1}, MitigationTimeout: -sec})
		require.EqualError(t, err, "mitigation-timeout: -1s: want a duration of at least 0 (0: throttle, no block)")
		_, err = New("sliding-window", Params{Policy: Policy{Rate: 1, Per: sec, Burst: 1}, MitigationTimeout: sec})
		require.EqualError(t, err, "mitigation-timeout: 1s: sliding-window takes no mitigation-timeout (only cloudflare-rate-limit)")
	})
}
