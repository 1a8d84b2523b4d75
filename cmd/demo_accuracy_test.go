package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/lessons"
)

// The lesson's figures are the ones replay --baseline prints for the same
// trace and limit (the issue's: 451 of 30969 at 10 per minute, 301
// wrongly allowed and 150 wrongly limited), and --charts draws the
// disagreement against the limit (in SVG: PNG costs more to draw than
// the lesson's runs, and TestDemoCharts writes PNG).
func TestAccuracyLessonAgreesWithReplay(t *testing.T) {
	t.Parallel()
	path, err := bundledTrace("nasa-19950801.tsv.gz")
	require.NoError(t, err)
	status, csv, errOut := run(t, "replay", path, "--limit", "10/m", "--time-field", "time", "--key-field", "host",
		"--algorithms", "sliding-log,sliding-window", "--baseline", "sliding-log", "--format", "csv")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, csv, ",sliding-log,30969,451,301,150,196\n")

	dir := t.TempDir()
	status, out, errOut := run(t, "demo", "accuracy-on-real-traffic", "--charts", dir, "--chart-format", "svg")
	require.Equal(t, 0, status, errOut)
	flat := strings.Join(strings.Fields(out), " ")
	require.Contains(t, flat, "At 10/m, sliding-window decided 1.46% of the requests unlike sliding-log (301 wrongly allowed, 150 wrongly limited)")
	require.Contains(t, flat, "Cloudflare's 0.003%")
	require.Contains(t, flat, "of sliding-window's 451 differences at 10/m, 196 were first divergences and 255 followed")
	// the lesson's picture, as TestLessonPictures draws it from runs
	// without --charts, byte for byte
	written, err := os.ReadFile(filepath.Join(dir, "accuracy.svg"))
	require.NoError(t, err)
	want := filepath.Join(t.TempDir(), "accuracy.svg")
	require.NoError(t, writeChart(want, firstPicture(t, "accuracy-on-real-traffic"), "svg"))
	drawn, err := os.ReadFile(want)
	require.NoError(t, err)
	require.Equal(t, string(drawn), string(written))
	require.Contains(t, errOut, filepath.Join(dir, "accuracy-10-per-m", "rate.svg"))
}

func TestLessonReplayUnknownTrace(t *testing.T) {
	_, _, err := lessonReplay(&lessons.Replay{Trace: "nope.tsv", Limit: "1/s"})
	require.Error(t, err)
}
