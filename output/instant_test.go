package output

import (
	"testing"
	"time"

	"github.com/ratesim/ratesim/sim"
	"github.com/stretchr/testify/require"
)

func TestFormatInstantAbsolute(t *testing.T) {
	require.Equal(t, "1995-08-01T00:00:00.5Z", FormatInstant(807235200500000000, true))
	require.Equal(t, "1970-01-01T00:00:01Z", FormatInstant(int64(time.Second), true))
	require.Equal(t, "900ms", FormatInstant(int64(900*time.Millisecond), false))
	require.Equal(t, "2015-05-17T10:05:03Z", formatInstant(1431857103*int64(time.Second)))
	// a replay's instants are dates whatever their year
	r := &sim.Report{StartNs: 807235200500000000, Traces: []sim.TraceSummary{{Path: "x"}}}
	require.True(t, AbsoluteTimes(r))
	require.Equal(t, "1995-08-01T00:00:00.5Z", reportInstant(r, r.StartNs))
	require.False(t, AbsoluteTimes(&sim.Report{StartNs: 0}))
}
