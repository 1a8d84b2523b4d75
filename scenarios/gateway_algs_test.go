package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
)

// The scenario spellings of what the gateway readers emit
// (docs/gateways.md): calendar windows (per: 1mo, 1y; Kong), discrete refill
// (fill-interval, tokens-per-fill; envoy before 1.31) and idle-reset
// (Traefik).

const gwHead = "name: t\nduration: 1s\nlimit: 10/s\ntraffic: [{type: steady, key: a, rate: 5/s}]\nalgorithms:\n"

var validGatewayAlgs = []struct {
	name, src string
}{
	{"month", gwHead + "  - {name: fixed-window, rate: 1000, per: 1mo}\n"},
	{"year count-rejected", gwHead + "  - {name: fixed-window, rate: 100000, per: 1y, count-rejected: true}\n"},
	{"calendar limit", "name: t\nduration: 1s\nlimit: {rate: 1000, per: 1mo}\ntraffic: [{type: steady, key: a, rate: 5/s}]\n"},
	{"kong second and month", gwHead + "  - {name: all-of, limits: [{name: fixed-window, rate: 5, per: 1s}, {name: fixed-window, rate: 1000, per: 1mo}]}\n"},
	{"week", gwHead + "  - {name: fixed-window, rate: 100, per: 168h}\n"},
	{"discrete", gwHead + "  - {name: token-bucket, burst: 10, fill-interval: 100ms, tokens-per-fill: 2}\n"},
	{"discrete same rate", gwHead + "  - {name: token-bucket, rate: 20, per: 1s, burst: 10, fill-interval: 100ms, tokens-per-fill: 2}\n"},
	{"discrete max-delay", gwHead + "  - {name: token-bucket, burst: 3, fill-interval: 1s, tokens-per-fill: 3, max-delay: 500ms}\n"},
	{"discrete under a calendar limit", "name: t\nduration: 1s\nlimit: {rate: 3, per: 1mo}\ntraffic: [{type: steady, key: a, rate: 5/s}]\nalgorithms: [fixed-window, {name: token-bucket, burst: 2, fill-interval: 1s, tokens-per-fill: 1}]\n"},
	{"traefik", gwHead + "  - {name: x-time-rate, rate: 10, per: 1s, burst: 20, max-delay: 50ms, idle-reset: 2s}\n"},
}

var invalidGatewayAlgs = []struct {
	name, src, want string
}{
	{"month on token-bucket", gwHead + "  - {name: token-bucket, per: 1mo}\n",
		`s.yaml:6:31: algorithms[0].per: 1mo: only fixed-window counts calendar windows (token-bucket cannot take per 1mo: give it a duration, e.g. per: 720h0m0s)`},
	{"inherited month", "name: t\nduration: 1s\nlimit: {rate: 3, per: 1y}\ntraffic: [{type: steady, key: a, rate: 5/s}]\nalgorithms: [sliding-log]\n",
		`s.yaml:3:23: limit.per: 1y: only fixed-window counts calendar windows (sliding-log cannot take per 1y: give it a duration, e.g. per: 8760h0m0s) (for algorithm sliding-log)`},
	{"month in all-of sliding-window", gwHead + "  - {name: all-of, limits: [{name: sliding-window, per: 1mo}]}\n",
		`s.yaml:6:57: algorithms[0].limits[0].per: 1mo: only fixed-window counts calendar windows (sliding-window cannot take per 1mo: give it a duration, e.g. per: 720h0m0s)`},
	{"day unit", gwHead + "  - {name: fixed-window, per: 1d}\n",
		`s.yaml:6:31: algorithms[0].per: "1d": unknown unit "d" (want ns, us, ms, s, m or h); or 1mo or 1y, a calendar month or year in UTC (fixed-window only)`},
	{"two months", gwHead + "  - {name: fixed-window, per: 2mo}\n",
		`s.yaml:6:31: algorithms[0].per: "2mo": unknown unit "mo" (want ns, us, ms, s, m or h); or 1mo or 1y, a calendar month or year in UTC (fixed-window only)`},
	{"fill-interval alone", gwHead + "  - {name: token-bucket, fill-interval: 100ms}\n",
		`s.yaml:6:5: algorithms[0]: tokens-per-fill: none: want tokens-per-fill with fill-interval 100ms (both or neither: envoy's token_bucket) (for algorithm token-bucket)`},
	{"tokens-per-fill alone", gwHead + "  - {name: token-bucket, tokens-per-fill: 2}\n",
		`s.yaml:6:5: algorithms[0]: fill-interval: none: want fill-interval with tokens-per-fill 2 (both or neither: envoy's token_bucket) (for algorithm token-bucket)`},
	{"tokens-per-fill 0", gwHead + "  - {name: token-bucket, fill-interval: 1s, tokens-per-fill: 0}\n",
		`s.yaml:6:62: algorithms[0].tokens-per-fill: 0: want an integer >= 1 (envoy's tokens_per_fill)`},
	{"fill-interval 0", gwHead + "  - {name: token-bucket, fill-interval: 0s, tokens-per-fill: 1}\n",
		`s.yaml:6:41: algorithms[0].fill-interval: "0s": want a duration > 0`},
	{"discrete other rate", gwHead + "  - {name: token-bucket, rate: 10, fill-interval: 100ms, tokens-per-fill: 2}\n",
		`s.yaml:6:32: algorithms[0].rate: rate 10 per 1s is not tokens-per-fill 2 per fill-interval 100ms, which is the refill: leave rate and per out (they are then 2 per 100ms), or write the same rate`},
	{"fill-interval on gcra", gwHead + "  - {name: gcra, fill-interval: 1s, tokens-per-fill: 1}\n",
		`s.yaml:6:18: algorithms[0].fill-interval: gcra takes no option "fill-interval" (its options: max-delay)` + "\n" +
			`s.yaml:6:37: algorithms[0].tokens-per-fill: gcra takes no option "tokens-per-fill" (its options: max-delay)`},
	{"idle-reset not whole seconds", gwHead + "  - {name: x-time-rate, idle-reset: 1500ms}\n",
		`s.yaml:6:37: algorithms[0].idle-reset: 1.5s: want a whole number of seconds >= 1s (Traefik's TTL map counts whole seconds)`},
	{"idle-reset 0", gwHead + "  - {name: x-time-rate, idle-reset: 0s}\n",
		`s.yaml:6:37: algorithms[0].idle-reset: "0s": want a duration > 0`},
	{"idle-reset on token-bucket", gwHead + "  - {name: token-bucket, idle-reset: 2s}\n",
		`s.yaml:6:26: algorithms[0].idle-reset: token-bucket takes no option "idle-reset" (its options: max-delay, fill-interval, tokens-per-fill)`},
}

func TestParseGatewayAlgorithms(t *testing.T) {
	for _, tc := range validGatewayAlgs {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse("s.yaml", []byte(tc.src))
			require.NoError(t, err)
			for _, a := range sc.Algorithms {
				_, err = algorithms.New(a.Name, a.Params)
				require.NoError(t, err)
			}
		})
	}
	for _, tc := range invalidGatewayAlgs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tc.src))
			require.Error(t, err)
			require.Equal(t, tc.want, err.Error())
		})
	}
}

func TestParseGatewayAlgorithmParams(t *testing.T) {
	sc, err := Parse("s.yaml", []byte(validGatewayAlgs[0].src))
	require.NoError(t, err)
	p := sc.Algorithms[0].Params
	require.Equal(t, algorithms.CalendarMonth, p.Calendar)
	require.Equal(t, 30*24*time.Hour, p.Per, "the nominal month")
	require.Equal(t, "1mo", sc.Algorithms[0].Set["per"])

	// A calendar limit: only fixed-window runs by default; its peak
	// windows are the nominal 30 days and 3 days.
	sc, err = Parse("s.yaml", []byte(validGatewayAlgs[2].src))
	require.NoError(t, err)
	require.Len(t, sc.Algorithms, 1)
	require.Equal(t, "fixed-window", sc.Algorithms[0].Name)
	require.Equal(t, []time.Duration{30 * 24 * time.Hour, 3 * 24 * time.Hour}, sc.Windows)

	// Discrete refill: rate and per are tokens-per-fill per fill-interval.
	sc, err = Parse("s.yaml", []byte(validGatewayAlgs[5].src))
	require.NoError(t, err)
	p = sc.Algorithms[0].Params
	require.Equal(t, [4]int64{2, int64(100 * time.Millisecond), 2, int64(100 * time.Millisecond)},
		[4]int64{p.Rate, int64(p.Per), p.TokensPerFill, int64(p.FillInterval)})
	require.Equal(t, int64(10), p.Burst)

	sc, err = Parse("s.yaml", []byte(validGatewayAlgs[9].src))
	require.NoError(t, err)
	p = sc.Algorithms[0].Params
	require.Equal(t, 2*time.Second, p.IdleReset)
	require.Equal(t, 50*time.Millisecond, p.MaxDelay)
}
