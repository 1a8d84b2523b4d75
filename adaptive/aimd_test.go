package adaptive

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// sampleRow is one sample and the limit expected after it.
type sampleRow struct {
	now, rtt time.Duration
	inflight int
	dropped  bool
	want     int
}

func runSamples(t *testing.T, l Limit, rows []sampleRow) {
	t.Helper()
	for i, r := range rows {
		l.OnSample(r.now, r.rtt, r.inflight, r.dropped)
		require.Equal(t, r.want, l.Limit(r.now), "row %d: %+v", i, r)
	}
}

func newAIMD(t *testing.T, edit func(*AIMDConfig)) *AIMD {
	c := DefaultAIMDConfig()
	if edit != nil {
		edit(&c)
	}
	a, err := NewAIMD(c)
	require.NoError(t, err)
	return a
}

func TestAIMDJavaTests(t *testing.T) {
	// AIMDLimitTest.java, row for row.
	require.Equal(t, 10, newAIMD(t, func(c *AIMDConfig) { c.InitialLimit, c.MinLimit = 10, 10 }).Limit(0),
		"testDefault: the initial limit (min-limit lowered, which the Java only warns about)")
	runSamples(t, newAIMD(t, nil), []sampleRow{
		{0, 1 * ms, 10, false, 21}, // increaseOnSuccess: 10*2 >= 20, so 20+1
	})
	runSamples(t, newAIMD(t, func(c *AIMDConfig) { c.InitialLimit = 30 }), []sampleRow{
		{0, 0, 0, true, 27}, // decreaseOnDrops: (int)(30*0.9) = (int)27.0 = 27
	})
	runSamples(t, newAIMD(t, func(c *AIMDConfig) { c.InitialLimit, c.MaxLimit, c.MinLimit = 21, 21, 1 }), []sampleRow{
		{0, 1 * ms, 10, false, 21}, // successOverflow: 10*2 < 21, no increase anyway; capped at 21
		{0, 1 * ms, 11, false, 21}, // 22 > max-limit 21
	})
}

func TestAIMDRows(t *testing.T) {
	t.Run("defaults: a drop at the minimum stays there", func(t *testing.T) {
		runSamples(t, newAIMD(t, nil), []sampleRow{
			{0, ms, 0, true, 20},                   // (int)(20*0.9) = 18, clamped to min-limit 20
			{0, ms, 9, false, 20},                  // 9*2 = 18 < 20: app-limited, no increase
			{0, ms, 10, false, 21},                 // 10*2 >= 20: +1
			{0, ms, 11, false, 22},                 // 22 >= 21: +1
			{0, ms, 10, false, 22},                 // 20 < 22: stays
			{0, 5 * time.Second, 11, false, 23},    // rtt == timeout is not beyond it: 22 >= 22, +1
			{0, 5*time.Second + 1, 11, false, 20},  // rtt > timeout is a drop: (int)(23*0.9)=(int)20.7=20
			{0, 5*time.Second + 1, 100, false, 20}, // (int)18.0 = 18 -> 20 again
		})
	})
	t.Run("backoff truncates", func(t *testing.T) {
		runSamples(t, newAIMD(t, func(c *AIMDConfig) { c.InitialLimit, c.MinLimit = 100, 1 }), []sampleRow{
			{0, ms, 0, true, 90}, // 100*0.9 rounds to 90.0 exactly: 90
			{0, ms, 0, true, 81}, // 90*0.9 = 81.0
			{0, ms, 0, true, 72}, // 81*0.9 = 72.9 -> 72 (truncated, not rounded)
			{0, ms, 0, true, 64}, // 72*0.9 = 64.8 -> 64
		})
	})
	t.Run("backoff 0.5 halves down to min-limit 1", func(t *testing.T) {
		runSamples(t, newAIMD(t, func(c *AIMDConfig) { c.InitialLimit, c.MinLimit, c.BackoffRatio = 3, 1, 0.5 }), []sampleRow{
			{0, ms, 0, true, 1},  // (int)1.5 = 1
			{0, ms, 0, true, 1},  // (int)0.5 = 0, clamped to 1
			{0, ms, 1, false, 2}, // 1*2 >= 1: +1
		})
	})
	t.Run("max-limit caps", func(t *testing.T) {
		runSamples(t, newAIMD(t, func(c *AIMDConfig) { c.InitialLimit = 200 }), []sampleRow{
			{0, ms, 200, false, 200}, // 201 > 200
			{0, ms, 200, true, 180},  // (int)(200*0.9) = 180
		})
	})
}
