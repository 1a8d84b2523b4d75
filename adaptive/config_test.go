package adaptive

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBadConfig: every invalid parameter is an error naming it.
func TestBadConfig(t *testing.T) {
	aimd := func(f func(*AIMDConfig)) error {
		c := DefaultAIMDConfig()
		f(&c)
		_, err := NewAIMD(c)
		return err
	}
	vegas := func(f func(*VegasConfig)) error {
		c := DefaultVegasConfig()
		f(&c)
		_, err := NewVegas(c, seeded(1))
		return err
	}
	gradient2 := func(f func(*Gradient2Config)) error {
		c := DefaultGradient2Config()
		f(&c)
		_, err := NewGradient2(c)
		return err
	}
	window := func(f func(*WindowConfig)) error {
		c := DefaultWindowConfig()
		f(&c)
		_, err := NewWindowed(c, &recorder{})
		return err
	}
	envoy := func(f func(*EnvoyConfig)) error {
		c := envoyConfig()
		f(&c)
		_, err := NewEnvoy(c, seeded(1), 0)
		return err
	}
	throttle := func(f func(*ThrottleConfig)) error {
		c := DefaultThrottleConfig()
		f(&c)
		_, err := NewThrottle(c)
		return err
	}
	for _, c := range []struct {
		field string
		err   error
	}{
		{"min-limit", aimd(func(c *AIMDConfig) { c.MinLimit = -1 })},
		{"max-limit", aimd(func(c *AIMDConfig) { c.MaxLimit = 10 })}, // below min-limit 20
		{"initial-limit", aimd(func(c *AIMDConfig) { c.InitialLimit = 300 })},
		{"backoff-ratio", aimd(func(c *AIMDConfig) { c.BackoffRatio = 1 })},   // the Java: [0.5, 1)
		{"backoff-ratio", aimd(func(c *AIMDConfig) { c.BackoffRatio = 0.4 })}, //
		{"timeout", aimd(func(c *AIMDConfig) { c.Timeout = 0 })},
		{"initial-limit", vegas(func(c *VegasConfig) { c.InitialLimit = 0 })},
		{"max-concurrency", vegas(func(c *VegasConfig) { c.MaxConcurrency = -5 })},
		{"smoothing", vegas(func(c *VegasConfig) { c.Smoothing = 1.5 })},
		{"probe-multiplier", vegas(func(c *VegasConfig) { c.ProbeMultiplier = 0 })},
		{"min-limit", gradient2(func(c *Gradient2Config) { c.MinLimit = 0 })},
		{"smoothing", gradient2(func(c *Gradient2Config) { c.Smoothing = -0.1 })},
		{"queue-size", gradient2(func(c *Gradient2Config) { c.QueueSize = -1 })},
		{"long-window", gradient2(func(c *Gradient2Config) { c.LongWindow = 0 })},
		{"rtt-tolerance", gradient2(func(c *Gradient2Config) { c.RTTTolerance = 0.9 })}, // the Java: >= 1
		{"window", window(func(c *WindowConfig) { c.Window = 99 * ms })},                // the Java: >= 100ms
		{"min-samples", window(func(c *WindowConfig) { c.MinSamples = 9 })},             // the Java: >= 10
		{"min-rtt-threshold", window(func(c *WindowConfig) { c.MinRTTThreshold = -1 })},
		{"interval", envoy(func(c *EnvoyConfig) { c.Interval = 0 })}, // required, as in envoy
		{"interval", envoy(func(c *EnvoyConfig) { c.Interval = 999 * time.Microsecond })},
		{"min-rtt-calc-interval", envoy(func(c *EnvoyConfig) { c.MinRTTCalcInterval = 0 })},
		{"min-concurrency", envoy(func(c *EnvoyConfig) { c.MinConcurrency = 0 })},
		{"max-concurrency-limit", envoy(func(c *EnvoyConfig) { c.MaxConcurrencyLimit = 2 })}, // below min-concurrency 3
		{"request-count", envoy(func(c *EnvoyConfig) { c.RequestCount = 0 })},
		{"sample-percentile", envoy(func(c *EnvoyConfig) { c.SamplePercentile = 101 })},
		{"jitter", envoy(func(c *EnvoyConfig) { c.Jitter = -1 })},
		{"buffer", envoy(func(c *EnvoyConfig) { c.Buffer = 100.5 })},
		{"k", throttle(func(c *ThrottleConfig) { c.K = 0 })},
		{"window", throttle(func(c *ThrottleConfig) { c.Window = 1500 * ms })},
		{"window", throttle(func(c *ThrottleConfig) { c.Window = 0 })},
	} {
		var pe *ParamError
		require.True(t, errors.As(c.err, &pe), "%s: want a ParamError, got %v", c.field, c.err)
		require.Equal(t, c.field, pe.Field, "%v", c.err)
	}
	_, err := NewEnvoy(DefaultEnvoyConfig(), seeded(1), 0)
	require.EqualError(t, err, "envoy-adaptive: interval: none: required, as in envoy "+
		"(concurrency_update_interval): how often the limit is recalculated")
	_, err = NewVegas(DefaultVegasConfig(), nil)
	require.Error(t, err, "no random source")
	_, err = NewWindowed(DefaultWindowConfig(), nil)
	require.Error(t, err, "nothing to wrap")
}

// TestDefaults: the sources' defaults are valid as they are (envoy's once
// its two required intervals are given).
func TestDefaults(t *testing.T) {
	_, err := NewAIMD(DefaultAIMDConfig())
	require.NoError(t, err)
	_, err = NewVegas(DefaultVegasConfig(), seeded(1))
	require.NoError(t, err)
	_, err = NewGradient2(DefaultGradient2Config())
	require.NoError(t, err)
	_, err = NewWindowed(DefaultWindowConfig(), &recorder{})
	require.NoError(t, err)
	_, err = NewEnvoy(envoyConfig(), seeded(1), 0)
	require.NoError(t, err)
	_, err = NewThrottle(DefaultThrottleConfig())
	require.NoError(t, err)
}
