package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratesim/ratesim/lessons"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/stretchr/testify/require"
)

func TestDemoList(t *testing.T) {
	status, out, errOut := run(t, "demo")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, len(lessons.All()), strings.Count(out, "\n"), "one line each")
	for _, name := range []string{"double-burst", "token-vs-leaky", "sliding-window-accuracy", "retry-storm", "nginx-burst"} {
		require.Contains(t, out, name+"  ")
	}
	golden(t, filepath.Join("demo", "list.txt"), out)
}

// TestDemoGolden prints every lesson, in Unicode and in ASCII.
func TestDemoGolden(t *testing.T) {
	t.Parallel()
	for _, l := range lessons.All() {
		t.Run(l.Name, func(t *testing.T) {
			status, out, errOut := run(t, "demo", l.Name)
			require.Equal(t, 0, status, errOut)
			require.Empty(t, errOut)
			require.NotContains(t, out, "\x1b[")
			golden(t, filepath.Join("demo", l.Name+".txt"), out)

			status, out, errOut = run(t, "demo", l.Name, "--ascii")
			require.Equal(t, 0, status, errOut)
			for _, r := range out {
				require.Less(t, r, rune(128), "--ascii: %q in\n%s", r, out)
			}
			golden(t, filepath.Join("demo", l.Name+".ascii.txt"), out)
		})
	}
}

func TestDemoDoubleBurstSentence(t *testing.T) {
	// The sentence the issue asks for, word for word.
	status, out, _ := run(t, "demo", "double-burst")
	require.Equal(t, 0, status)
	require.Contains(t, strings.Join(strings.Fields(out), " "),
		"fixed-window admitted 20 requests between 0.90 s and 1.09 s: 2.0x the limit of 10 per second.")
	require.Contains(t, out, "sliding-log admitted at most 10 in any second")
}

// TestDemoNumbersComeFromTheRun runs the double-burst lesson on a changed
// scenario (a second burst of 15 instead of 10, and a limit of 12): its
// sentences change with it.
func TestDemoNumbersComeFromTheRun(t *testing.T) {
	data, err := os.ReadFile("../scenarios/builtin/double-burst.yaml")
	require.NoError(t, err)
	text := string(data)
	i := strings.LastIndex(text, "count: 10")
	require.Positive(t, i)
	text = text[:i] + "count: 15" + text[i+len("count: 10"):]
	text = strings.Replace(text, "limit: {rate: 10, per: 1s, burst: 10}", "limit: {rate: 12, per: 1s, burst: 12}", 1)
	load := func(name string) (*scenarios.Scenario, error) {
		return scenarios.Parse("changed:"+name, []byte(text))
	}
	l, ok := lessons.Named("double-burst")
	require.True(t, ok)
	var stdout, stderr bytes.Buffer
	require.NoError(t, runLesson(&stdout, &stderr, l, load, demoFlags{}))
	out := strings.Join(strings.Fields(stdout.String()), " ")
	// fixed-window admits the first 10 and 12 of the next 15 (at 1000 +
	// floor(i*100/15) ms, the 12th at 1073ms): 22/12 = 1.83x.
	require.Contains(t, out, "fixed-window admitted 22 requests between 0.90 s and 1.073 s: 1.83x the limit of 12 per second.", stdout.String())
	require.Contains(t, out, "The limit is 12 requests per second.")
	require.Contains(t, out, "sliding-log admitted at most 12 in any second (1.0x the limit) and rejected 13 of the 25 requests.")

	_, orig, _ := run(t, "demo", "double-burst")
	require.NotEqual(t, orig, stdout.String())
}

func TestDemoUnknownLesson(t *testing.T) {
	status, out, errOut := run(t, "demo", "nope")
	require.Equal(t, 2, status)
	require.Empty(t, out)
	require.Contains(t, errOut, `no lesson "nope" (lessons: double-burst, token-vs-leaky`)
}

func TestDemoNoTimeline(t *testing.T) {
	status, out, _ := run(t, "demo", "double-burst", "--no-timeline")
	require.Equal(t, 0, status)
	require.NotContains(t, out, "Timeline")
	require.Contains(t, out, "What the run shows:")
}

// TestDemoCharts: --charts writes the lesson's pictures; a lesson of two
// runs writes each into a directory named after its scenario.
func TestDemoCharts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	status, _, errOut := run(t, "demo", "double-burst", "--charts", dir)
	require.Equal(t, 0, status, errOut)
	require.FileExists(t, filepath.Join(dir, "timeline.png"))

	dir = t.TempDir()
	status, _, errOut = run(t, "demo", "retry-storm", "--charts", dir, "--chart-format", "svg")
	require.Equal(t, 0, status, errOut)
	require.FileExists(t, filepath.Join(dir, "retry-storm", "rate.svg"))
	require.FileExists(t, filepath.Join(dir, "retry-storm-jitter", "rate.svg"))

	status, _, errOut = run(t, "demo", "double-burst", "--chart-format", "gif")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "--chart-format")
}
