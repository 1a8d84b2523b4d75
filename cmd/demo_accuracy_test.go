package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/internal/testenv"
	"github.com/ratesim/ratesim/lessons"
)

// The lesson's figures are the ones replay --baseline prints for the same
// trace and limit (the issue's: 451 of 30969 at 10 per minute, 301
// wrongly allowed and 150 wrongly limited). The lesson's text is read from
// its golden file, which TestDemoGolden holds to what `demo
// accuracy-on-real-traffic` prints.
func TestAccuracyLessonAgreesWithReplay(t *testing.T) {
	t.Parallel()
	path, err := bundledTrace("nasa-19950801.tsv.gz")
	require.NoError(t, err)
	status, csv, errOut := run(t, "replay", path, "--limit", "10/m", "--time-field", "time", "--key-field", "host",
		"--algorithms", "sliding-log,sliding-window", "--baseline", "sliding-log", "--format", "csv")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, csv, ",sliding-log,30969,451,301,150,196\n")

	out, err := os.ReadFile(filepath.Join("testdata", "demo", "accuracy-on-real-traffic.txt"))
	require.NoError(t, err)
	flat := strings.Join(strings.Fields(string(out)), " ")
	require.Contains(t, flat, "At 10/m, sliding-window decided 1.46% of the requests unlike sliding-log (301 wrongly allowed, 150 wrongly limited)")
	require.Contains(t, flat, "Cloudflare's 0.003%")
	require.Contains(t, flat, "of sliding-window's 451 differences at 10/m, 196 were first divergences and 255 followed")
}

// TestLessonOwnChartWritten: demo --charts writes a lesson's own picture
// first, as TestLessonPictures draws it from runs without --charts, byte
// for byte, then each run's charts in a directory named after the run.
func TestLessonOwnChartWritten(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ lesson, picture, runChart string }{
		{"choose-parameters", "reject_pct-key-user.svg", "rate.svg"},
		// six runs of a day of requests with their charts: 3 s of CPU
		{"accuracy-on-real-traffic", "accuracy.svg", filepath.Join("accuracy-10-per-m", "rate.svg")},
	} {
		t.Run(tc.lesson, func(t *testing.T) {
			if tc.lesson == "accuracy-on-real-traffic" {
				testenv.Long(t, "demo accuracy-on-real-traffic --charts")
			}
			dir := t.TempDir()
			status, _, errOut := run(t, "demo", tc.lesson, "--charts", dir, "--chart-format", "svg")
			require.Equal(t, 0, status, errOut)
			written, err := os.ReadFile(filepath.Join(dir, tc.picture))
			require.NoError(t, err)
			want := filepath.Join(t.TempDir(), tc.picture)
			require.NoError(t, writeChart(want, firstPicture(t, tc.lesson), "svg"))
			drawn, err := os.ReadFile(want)
			require.NoError(t, err)
			require.Equal(t, string(drawn), string(written))
			require.Contains(t, errOut, filepath.Join(dir, tc.runChart))
		})
	}
}

func TestLessonReplayUnknownTrace(t *testing.T) {
	_, _, err := lessonReplay(&lessons.Replay{Trace: "nope.tsv", Limit: "1/s"})
	require.Error(t, err)
}
