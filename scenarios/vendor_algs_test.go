package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
)

// The scenario spellings of the vendor rows' options (docs/algorithms.md):
// each reaches its row's Params, and a bad one is refused where it is
// written.
func TestParseVendorAlgorithms(t *testing.T) {
	src := gwHead +
		"  - {name: guava-bursty, max-delay: 1s, max-burst: 3s}\n" +
		"  - {name: guava-warming-up, warmup: 4s, cold-factor: 10}\n" +
		"  - {name: uber-ratelimit, slack: 0}\n" +
		"  - resilience4j\n" +
		"  - redis-rate-at-most\n" +
		"  - {name: apigee-spike-arrest, rate: 100, per: 1m, use-effective-count: true}\n" +
		"  - {name: apigee-quota, quota-type: flexi}\n" +
		"  - {name: apigee-quota, label: monthly, rate: 1000, per: 1mo}\n" +
		"  - {name: azure-rate-limit, tier: classic, increment-condition: true}\n" +
		"  - {name: cloudflare-rate-limit, rate: 1, per: 10s, mitigation-timeout: 10m}\n"
	sc, err := Parse("s.yaml", []byte(src))
	require.NoError(t, err)
	p := func(i int) algorithms.Params { return sc.Algorithms[i].Params }
	require.Equal(t, [2]time.Duration{time.Second, 3 * time.Second}, [2]time.Duration{p(0).MaxDelay, p(0).MaxBurst})
	require.Equal(t, 4*time.Second, p(1).Warmup)
	require.Equal(t, 10.0, p(1).ColdFactor)
	require.True(t, p(2).SlackSet)
	require.Zero(t, p(2).Slack)
	require.True(t, p(5).UseEffectiveCount)
	require.Equal(t, algorithms.QuotaFlexi, p(6).QuotaType)
	require.Equal(t, algorithms.CalendarMonth, p(7).Calendar)
	require.Equal(t, algorithms.AzureClassic, p(8).Tier)
	require.True(t, p(8).IncrementLate)
	require.Equal(t, 10*time.Minute, p(9).MitigationTimeout)

	for _, c := range []struct{ src, want string }{
		{"  - guava-burstyy\n", `did you mean "guava-bursty"?`},
		{"  - {name: apigee-quota, quota-type: weekly}\n", `s.yaml:6:38: algorithms[0].quota-type: "weekly": unknown quota-type (want calendar, flexi or rollingwindow)`},
		{"  - {name: guava-warming-up}\n", "warmup"},
		{"  - {name: guava-warming-up, warmup: 1s, cold-factor: 0.5}\n", "cold-factor: 0.5: want a factor >= 1"},
		{"  - {name: uber-ratelimit, warmup: 1s}\n", `uber-ratelimit takes no option "warmup" (its options: slack)`},
		{"  - {name: apigee-spike-arrest, per: 1h}\n", "want 1s or 1m (a SpikeArrest <Rate> is Nps or Npm)"},
		{"  - {name: azure-rate-limit, tier: v3}\n", `unknown tier (want classic or v2)`},
		{"  - cloudflare-rate-limt\n", `did you mean "cloudflare-rate-limit"?`},
		{"  - {name: cloudflare-rate-limit, mitigation-timout: 1m}\n", `did you mean "mitigation-timeout"?`},
		{"  - {name: sliding-window, mitigation-timeout: 1m}\n", `sliding-window takes no option "mitigation-timeout"`},
	} {
		_, err := Parse("s.yaml", []byte(gwHead+c.src))
		require.ErrorContains(t, err, c.want, c.src)
	}
}
