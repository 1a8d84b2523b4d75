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
		"  - {name: cloudflare-rate-limit, rate: 1, per: 10s, mitigation-timeout: 10m}\n" +
		"  - {name: aws-usage-plan, rate: 1000, per: 1mo, quota-offset: 200}\n"
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
	require.Equal(t, algorithms.CalendarMonth, p(10).Calendar)
	require.Equal(t, int64(200), p(10).QuotaOffset)

	for _, c := range []struct{ src, want string }{
		{"  - guava-burstyy\n", `did you mean "guava-bursty"?`},
		{"  - {name: apigee-quota, quota-type: weekly}\n", `s.yaml:6:38: algorithms[0].quota-type: "weekly": unknown quota-type (want calendar, flexi or rollingwindow)`},
		{"  - {name: apigee-quota, quota-type: flexy}\n", `s.yaml:6:38: algorithms[0].quota-type: "flexy": unknown quota-type (want calendar, flexi or rollingwindow); did you mean "flexi"?`},
		{"  - {name: guava-warming-up}\n", "warmup"},
		{"  - {name: guava-warming-up, warmup: 1s, cold-factor: 0.5}\n", "cold-factor: 0.5: want a factor >= 1"},
		{"  - {name: uber-ratelimit, warmup: 1s}\n", `uber-ratelimit takes no option "warmup" (its options: slack)`},
		{"  - {name: apigee-spike-arrest, per: 1h}\n", "want 1s or 1m (a SpikeArrest <Rate> is Nps or Npm)"},
		{"  - {name: azure-rate-limit, tier: v3}\n", `unknown tier (want classic or v2)`},
		{"  - cloudflare-rate-limt\n", `did you mean "cloudflare-rate-limit"?`},
		{"  - aws-usage-plna\n", `did you mean "aws-usage-plan"?`},
		{"  - {name: aws-usage-plan, quota-ofset: 1}\n", `did you mean "quota-offset"?`},
		{"  - {name: aws-usage-plan, per: 1h}\n", "want 24h, 168h or 1mo (a usage plan's period DAY, WEEK or MONTH)"},
		{"  - {name: aws-usage-plan, quota-offset: -1}\n", "quota-offset"},
		{"  - {name: cloudflare-rate-limit, mitigation-timout: 1m}\n", `did you mean "mitigation-timeout"?`},
		{"  - {name: sliding-window, mitigation-timeout: 1m}\n", `sliding-window takes no option "mitigation-timeout"`},
	} {
		_, err := Parse("s.yaml", []byte(gwHead+c.src))
		require.ErrorContains(t, err, c.want, c.src)
	}
}

// The API Gateway levels of docs/algorithms.md as an all-of row: the
// account's and the stage's throttles by global, the usage plan's throttle
// and quota by the api-key attribute; two keys of 5/s for 10s, each
// stopped by its initial day's quota of 30 - 10.
func TestParseAWSLevels(t *testing.T) {
	src := `name: aws-levels
duration: 10s
limit: 10/s
traffic:
  - {type: steady, key: a, rate: 5/s, attributes: {api-key: key-a}}
  - {type: steady, key: b, rate: 5/s, attributes: {api-key: key-b}}
algorithms:
  - name: all-of
    label: api-gateway
    limits:
      - {name: token-bucket, by: global, rate: 10000, per: 1s, burst: 5000} # account
      - {name: token-bucket, by: global, rate: 8, per: 1s, burst: 8}        # stage
      - {name: token-bucket, by: api-key, rate: 4, per: 1s, burst: 4}       # usage plan's throttle
      - {name: aws-usage-plan, by: api-key, rate: 30, per: 24h, quota-offset: 10} # usage plan's quota
`
	sc, err := Parse("s.yaml", []byte(src))
	require.NoError(t, err)
	ms := sc.Algorithms[0].Params.Members
	require.Len(t, ms, 4)
	require.Equal(t, [4]int{algorithms.ByAll, algorithms.ByAll, 1, 1}, [4]int{ms[0].By, ms[1].By, ms[2].By, ms[3].By})
	require.Equal(t, "aws-usage-plan", ms[3].Name)
	require.Equal(t, int64(10), ms[3].Params.QuotaOffset)
}
