package backend

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestValidate: each bad field is named with what is wanted.
func TestValidate(t *testing.T) {
	ok := func() Config { return cfgOf(2, 10*ms) }
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no workers", func(c *Config) { c.Workers = 0 }, "workers: 0: want at least 1"},
		{"negative workers", func(c *Config) { c.Workers = -3 }, "workers: -3: want at least 1"},
		{"negative constant", func(c *Config) { c.Service.Mean = -time.Second }, "service: -1s: want a duration >= 0"},
		{"exponential without mean", func(c *Config) { c.Service = Service{Dist: Exponential} },
			"service: exponential mean 0s: want a duration > 0"},
		{"p99 below mean", func(c *Config) { c.Service = Service{Dist: Lognormal, Mean: 20 * ms, P99: 10 * ms} },
			"service: lognormal p99 10ms is below its mean 20ms"},
		{"p99 too far", func(c *Config) { c.Service = Service{Dist: Lognormal, Mean: 1 * ms, P99: 20 * ms} },
			"service: lognormal p99 20ms is 20 times its mean 1ms: at most 14.97 times is possible"},
		{"p99 on exponential", func(c *Config) { c.Service = Service{Dist: Exponential, Mean: ms, P99: 2 * ms} },
			"service: p99 is for a lognormal only"},
		{"unknown distribution", func(c *Config) { c.Service.Dist = "pareto" },
			`service: unknown distribution "pareto" (want constant, exponential or lognormal)`},
		{"negative queue", func(c *Config) { c.Queue = -2 }, "queue: -2: want a count >= 0"},
		{"unknown discipline", func(c *Config) { c.Discipline = "random" },
			`discipline: unknown discipline "random" (want fifo or lifo)`},
		{"negative timeout", func(c *Config) { c.Timeout = -ms }, "timeout: -1ms: want a duration >= 0 (0: none)"},
		{"errors above 1", func(c *Config) { c.Errors = 1.5 }, "errors: 1.5: want a fraction in [0, 1]"},
		{"errors below 0", func(c *Config) { c.Errors = -0.1 }, "errors: -0.1: want a fraction in [0, 1]"},
		{"errors NaN", func(c *Config) { c.Errors = math.NaN() }, "errors: NaN: want a fraction in [0, 1]"},
		{"no bucket", func(c *Config) { c.Bucket = 0 }, "bucket: 0s: want a duration > 0"},
		{"fault without length", func(c *Config) { c.Faults = []Fault{{Type: Pause, At: time.Second}} },
			"faults[0]: for 0s: want a duration > 0"},
		{"negative fault length", func(c *Config) { c.Faults = []Fault{{Type: Pause, For: -time.Second}} },
			"faults[0]: for -1s: want a duration > 0"},
		{"slow without factor", func(c *Config) { c.Faults = []Fault{{Type: Slow, For: time.Second}} },
			"faults[0]: slow factor 0: want a number > 0"},
		{"negative worker count", func(c *Config) { c.Faults = []Fault{{Type: Workers, For: time.Second, Count: -1}} },
			"faults[0]: workers count -1: want a count >= 0"},
		{"unknown fault", func(c *Config) { c.Faults = []Fault{{Type: "crash", For: time.Second}} },
			`faults[0]: unknown fault type "crash" (want slow, pause, workers or trigger)`},
		{"overlapping faults", func(c *Config) {
			c.Faults = []Fault{
				{Type: Pause, At: 30 * time.Second, For: time.Second},
				{Type: Slow, At: 0, For: time.Minute, Factor: 2}, // another type may overlap
				{Type: Pause, At: 29 * time.Second, For: 2 * time.Second},
			}
		}, "faults[0] and faults[2]: two pause faults overlap ([30s, 31s) and [29s, 31s))"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := ok()
			c.edit(&cfg)
			err := cfg.Validate()
			require.ErrorContains(t, err, c.want)
			_, err = New(cfg, nil)
			require.ErrorContains(t, err, "backend: "+c.want)
		})
	}
	// windows are half-open: one may start where another ends
	cfg := ok()
	cfg.Faults = []Fault{{Type: Pause, At: 0, For: time.Second}, {Type: Pause, At: time.Second, For: time.Second}}
	require.NoError(t, cfg.Validate())
	cfg.Service = Service{Dist: Lognormal, Mean: 20 * ms, P99: 20 * ms} // p99 = mean: a constant
	require.NoError(t, cfg.Validate())
	// several errors at once
	cfg = Config{Errors: 2}
	err := cfg.Validate()
	require.ErrorContains(t, err, "workers")
	require.ErrorContains(t, err, "errors")
	require.ErrorContains(t, err, "bucket")
}

// TestSubmitInThePast: a request that arrived before the backend's clock,
// or admitted before it arrived, is refused.
func TestSubmitInThePast(t *testing.T) {
	b, err := New(cfgOf(1, 10*ms), nil)
	require.NoError(t, err)
	require.NoError(t, b.Submit(new(at(0, 5))))
	b.Until(6 * ms)
	require.Equal(t, 5*ms, b.Now())
	require.True(t, errors.Is(b.Submit(new(at(1, 4))), ErrPast))
	r := at(2, 7)
	r.Admitted = 6 * ms
	require.True(t, errors.Is(b.Submit(&r), ErrPast))
	require.NoError(t, b.Submit(new(at(3, 5)))) // at the clock: fine
	require.Equal(t, 1, b.InService())
	b.Until(5 * ms)
	require.Equal(t, 1, b.Waiting())
}

// TestSeriesDoubling: with at most 4 buckets, the FIFO case of
// TestFIFOAndLIFO (5 buckets of 10ms) doubles its bucket to 20ms: counts
// add, maxima and p99s take the larger, the queue's mean is over 20ms.
func TestSeriesDoubling(t *testing.T) {
	cfg := cfgOf(1, 10*ms)
	cfg.MaxBuckets = 4
	_, res := play(t, cfg, 40*ms, at(0, 0), at(1, 1), at(2, 2), at(3, 3))
	require.Equal(t, int64(20*ms), res.Series.BucketNs)
	require.Equal(t, []int64{1, 2, 1}, res.Series.Goodput)
	require.Equal(t, []int64{int64(10 * ms), int64(28 * ms), int64(37 * ms)}, res.Series.ResponseP99Ns)
	require.Equal(t, []float64{2.2, 0.5, 0}, res.Series.Queue) // (24+20)/20, (10+0)/20
	require.Equal(t, []int64{3, 1, 0}, res.Series.QueueMax)
}
