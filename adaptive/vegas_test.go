package adaptive

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

func newVegas(t *testing.T, edit func(*VegasConfig)) *Vegas {
	c := DefaultVegasConfig()
	if edit != nil {
		edit(&c)
	}
	v, err := NewVegas(c, seeded(1))
	require.NoError(t, err)
	return v
}

func TestLog10Int(t *testing.T) {
	// Log10RootIntFunction: max(1, (int)Math.log10(t)) below 1000, then
	// (int)Math.log10(t).
	for _, c := range []struct{ t, want int }{
		{0, 1}, {1, 1}, {9, 1}, {10, 1}, {99, 1}, {100, 2}, {999, 2},
		{1000, 3}, {9999, 3}, {10000, 4}, {99999, 4}, {100000, 5}, {1 << 30, 9},
	} {
		require.Equal(t, c.want, log10Int(c.t), "log10Int(%d)", c.t)
	}
}

func TestVegasJavaTests(t *testing.T) {
	// VegasLimitTest.java's create(): alpha 3, beta 6 (which the default
	// functions also give at limits 10 to 99), smoothing 1, initial 10,
	// max-concurrency 20.
	create := func(t *testing.T) *Vegas {
		return newVegas(t, func(c *VegasConfig) { c.InitialLimit, c.MaxConcurrency = 10, 20 })
	}
	t.Run("increaseLimit", func(t *testing.T) {
		runSamples(t, create(t), []sampleRow{
			{0, 10 * ms, 10, false, 10}, // the first sample sets rtt_noload
			{0, 10 * ms, 11, false, 16}, // queue ceil(10*(1-10/10)) = 0 <= threshold 1: +beta 6
			{0, 10 * ms, 11, false, 20}, // 16+6 = 22, capped at max-concurrency 20
		})
	})
	t.Run("decreaseLimit", func(t *testing.T) {
		runSamples(t, create(t), []sampleRow{
			{0, 10 * ms, 10, false, 10},
			{0, 50 * ms, 11, false, 9}, // queue ceil(10*(1-0.2)) = 8 > beta 6: 10 - log10(10)=1
		})
	})
	t.Run("noChangeIfWithinThresholds", func(t *testing.T) {
		runSamples(t, create(t), []sampleRow{
			{0, 10 * ms, 10, false, 10},
			{0, 14 * ms, 14, false, 10}, // queue ceil(10*(1-10/14)) = ceil(2.86) = 3: not < alpha 3, not > beta 6
		})
	})
	t.Run("largeLimitIncrease", func(t *testing.T) {
		v := newVegas(t, func(c *VegasConfig) { c.InitialLimit, c.MaxConcurrency = 10000, 20000 })
		runSamples(t, v, []sampleRow{
			{0, 10e9, 5000, false, 10000},
			{0, 10e9, 6000, false, 10024}, // queue 0 <= log10 4: +beta 6*4 = 24
		})
	})
}

func TestVegasRows(t *testing.T) {
	t.Run("increase by log10, app-limited, new minimum, drop", func(t *testing.T) {
		runSamples(t, newVegas(t, func(c *VegasConfig) { c.InitialLimit = 10 }), []sampleRow{
			{0, 10 * ms, 10, false, 10}, // rtt_noload = 10ms
			{0, 12 * ms, 10, false, 11}, // queue ceil(10*(1-10/12)) = ceil(1.67) = 2: > 1, < alpha 3: +log10(10) = 1
			{0, 12 * ms, 5, false, 11},  // 5*2 < 11: app-limited, unchanged
			{0, 9 * ms, 11, false, 11},  // 9ms < 10ms: a new rtt_noload, unchanged
			{0, 9 * ms, 11, true, 10},   // a drop: 11 - log10(11) = 10, whatever the queue (0)
			{0, 8 * ms, 11, true, 10},   // 8ms < 9ms: only a new rtt_noload, even dropped
			{0, 0, 11, true, 10},        // rtt 0: the Java throws, nothing changes
		})
	})
	t.Run("smoothing 0.5", func(t *testing.T) {
		v := newVegas(t, func(c *VegasConfig) { c.InitialLimit, c.MaxConcurrency, c.Smoothing = 100, 200, 0.5 })
		runSamples(t, v, []sampleRow{
			{0, 10 * ms, 100, false, 100}, // rtt_noload
			{0, 20 * ms, 100, false, 99},  // queue 50 > beta 12: new 100-2 = 98; E = 0.5*100 + 0.5*98 = 99
			{0, 20 * ms, 100, false, 98},  // E 99: l = 1, queue ceil(49.5) = 50 > 6: new 98; E = 98.5, limit 98
			{0, 20 * ms, 100, true, 98},   // drop: new 98.5 - log10(98) = 97.5; E = 98.0
			{0, 10 * ms, 100, false, 101}, // rtt = rtt_noload, queue 0 <= 1: new 98 + 6 = 104; E = 0.5*98 + 0.5*104 = 101
		})
	})
	t.Run("floor at 1", func(t *testing.T) {
		runSamples(t, newVegas(t, func(c *VegasConfig) { c.InitialLimit = 1 }), []sampleRow{
			{0, 10 * ms, 1, false, 1},
			{0, 10 * ms, 1, true, 1}, // 1 - log10(1) = 0, floored at 1
		})
	})
}

func TestVegasProbe(t *testing.T) {
	// probe-multiplier 1 and limit 2: a probe when jitter*1*2 <= probeCount,
	// jitter in [0.5, 1): never at count 1 (unless jitter is exactly 0.5),
	// always at count 2.
	c := DefaultVegasConfig()
	c.InitialLimit, c.ProbeMultiplier = 2, 1
	v, err := NewVegas(c, seeded(7))
	require.NoError(t, err)
	require.Greater(t, v.probeJitter, 0.5)
	require.Less(t, v.probeJitter, 1.0)
	first := v.probeJitter
	runSamples(t, v, []sampleRow{
		{0, 10 * ms, 2, false, 2}, // count 1: rtt_noload = 10ms
		{0, 30 * ms, 2, false, 2}, // count 2: a probe, rtt_noload = 30ms (not a minimum), count 0
	})
	require.Equal(t, 30*ms, v.rttNoLoad)
	require.Equal(t, 0, v.probeCount)
	require.NotEqual(t, first, v.probeJitter, "a new jitter is drawn at each probe")
	require.Greater(t, v.probeJitter, 0.5)
	runSamples(t, v, []sampleRow{
		{0, 30 * ms, 2, false, 8},  // count 1: queue 0 against the probed 30ms: 2 + beta 6
		{0, 20 * ms, 8, false, 8},  // count 2, 2 < jitter*8: 20ms is a new minimum
		{0, 20 * ms, 8, false, 14}, // queue 0: 8 + 6
	})
}
