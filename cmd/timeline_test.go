package cmd

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMain makes the drawings independent of the terminal the tests run
// in: no COLUMNS (the width is then 80), no NO_COLOR.
func TestMain(m *testing.M) {
	os.Unsetenv("COLUMNS")
	os.Unsetenv("NO_COLOR")
	os.Exit(m.Run())
}

// asTerminal makes the writers in terms count as terminals of the given
// width until the test ends.
func asTerminal(t *testing.T, width int, terms ...io.Writer) {
	t.Helper()
	isTerm, termW := isTerminal, terminalWidth
	t.Cleanup(func() { isTerminal, terminalWidth = isTerm, termW })
	is := func(w io.Writer) bool {
		for _, x := range terms {
			if w == x {
				return true
			}
		}
		return false
	}
	isTerminal = is
	terminalWidth = func(w io.Writer) (int, bool) { return width, is(w) }
}

// runWith runs the CLI with the given writers.
func runWith(stdout, stderr *bytes.Buffer, args ...string) int {
	return Run(args, strings.NewReader(""), stdout, stderr)
}

// timelineOf is the timeline section of compare's output.
func timelineOf(t *testing.T, out string) string {
	t.Helper()
	i := strings.Index(out, "\nTimeline from ")
	require.GreaterOrEqual(t, i, 0, "no timeline in:\n%s", out)
	return out[i+1:]
}

// TestTimelineGolden draws the timelines of three built-ins in Unicode
// (the default), ASCII and colour (stdout a terminal), and checks that
// NO_COLOR takes the colour away.
func TestTimelineGolden(t *testing.T) {
	for _, name := range []string{"double-burst", "token-vs-leaky", "nginx-burst"} {
		t.Run(name, func(t *testing.T) {
			status, out, errOut := run(t, "compare", name)
			require.Equal(t, 0, status, errOut)
			unicode := timelineOf(t, out)
			require.NotContains(t, unicode, "\x1b[", "no colour when stdout is not a terminal")
			golden(t, filepath.Join("timeline", name+".txt"), unicode)

			status, out, errOut = run(t, "compare", name, "--ascii")
			require.Equal(t, 0, status, errOut)
			ascii := timelineOf(t, out)
			for _, r := range ascii {
				require.Less(t, r, rune(128), "--ascii draws in ASCII: %q", r)
			}
			golden(t, filepath.Join("timeline", name+".ascii.txt"), ascii)

			var stdout, stderr bytes.Buffer
			asTerminal(t, 80, &stdout)
			require.Equal(t, 0, runWith(&stdout, &stderr, "compare", name), stderr.String())
			color := timelineOf(t, stdout.String())
			require.Contains(t, color, "\x1b[32m", "colour on a terminal")
			golden(t, filepath.Join("timeline", name+".color.txt"), color)
			// The table above is not coloured.
			require.NotContains(t, stdout.String()[:strings.Index(stdout.String(), "Timeline")], "\x1b[")

			t.Setenv("NO_COLOR", "1")
			stdout.Reset()
			require.Equal(t, 0, runWith(&stdout, &stderr, "compare", name))
			require.Equal(t, unicode, timelineOf(t, stdout.String()), "NO_COLOR: no colour, same drawing")
		})
	}
}

func TestTimelineWidth(t *testing.T) {
	// Not a terminal: COLUMNS, else 80; a terminal: its own width.
	var buf bytes.Buffer
	require.Equal(t, 80, termWidth(&buf))
	t.Setenv("COLUMNS", "120")
	require.Equal(t, 120, termWidth(&buf))
	t.Setenv("COLUMNS", "wide")
	require.Equal(t, 80, termWidth(&buf))
	asTerminal(t, 57, &buf)
	require.Equal(t, 57, termWidth(&buf))

	t.Setenv("COLUMNS", "60")
	status, out, _ := run(t, "compare", "double-burst", "--ascii")
	require.Equal(t, 0, status)
	for _, l := range strings.Split(timelineOf(t, out), "\n") {
		if strings.HasPrefix(l, "Timeline") || strings.HasPrefix(l, "Later") {
			continue
		}
		require.LessOrEqual(t, len(l), 60, l)
	}
}

func TestTimelineOnlyWhenAsked(t *testing.T) {
	status, out, _ := run(t, "compare", "double-burst", "--no-timeline")
	require.Equal(t, 0, status)
	require.NotContains(t, out, "Timeline")
	for _, format := range []string{"json", "csv", "markdown"} {
		status, out, _ = run(t, "compare", "double-burst", "--format", format)
		require.Equal(t, 0, status)
		require.NotContains(t, out, "Timeline", format)
	}
	// Too many decisions to draw.
	status, out, _ = run(t, "compare", "retry-storm", "--algorithms", "fixed-window")
	require.Equal(t, 0, status)
	require.NotContains(t, out, "Timeline")
	// replay draws it too.
	status, out, errOut := run(t, "replay", "--limit", "2/s", "--algorithms", "fixed-window,sliding-log", writeFile(t, "t.csv",
		"time,key\n2026-01-01T00:00:00.900Z,a\n2026-01-01T00:00:00.950Z,a\n2026-01-01T00:00:01.000Z,a\n2026-01-01T00:00:01.050Z,a\n"))
	require.Equal(t, 0, status, errOut)
	tl := timelineOf(t, out)
	require.Contains(t, tl, "Timeline from 2026-01-01T00:00:00.9Z")
	require.Contains(t, tl, "sliding-log   •·········•·········│×·········×")
	require.Contains(t, tl, "+100ms")
}
