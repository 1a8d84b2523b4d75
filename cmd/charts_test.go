package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/traffic"
	"github.com/stretchr/testify/require"
)

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// chartFiles returns the files of dir, sorted.
func chartFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// wrote returns the files stderr says were written, in order.
func wrote(stderr string) []string {
	var files []string
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if f, ok := strings.CutPrefix(line, "wrote "); ok {
			files = append(files, f)
		}
	}
	return files
}

// TestCompareCharts: `compare double-burst --charts DIR` creates DIR and
// writes the charts, says so on stderr one line a file, and prints the
// same comparison as without charts.
func TestCompareCharts(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out", "charts")
	status, out, errOut := run(t, "compare", "double-burst", "--charts", dir)
	require.Equal(t, 0, status, errOut)
	_, plain, _ := run(t, "compare", "double-burst")
	require.Equal(t, plain, out, "charts change nothing on stdout")

	files := chartFiles(t, dir)
	for _, want := range []string{"window.png", "rate.png", "multiples.png", "peaks.png", "delay.png", "timeline.png"} {
		require.Contains(t, files, want)
	}
	// state.png comes with the algorithms that can show their state
	for _, f := range files {
		require.True(t, slices.Contains([]string{"window.png", "rate.png", "multiples.png", "peaks.png", "delay.png",
			"state.png", "timeline.png"}, f), "unexpected file %s", f)
		data, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(data, pngMagic), "%s is not a PNG", f)
	}
	var want []string
	for _, name := range []string{"window", "rate", "multiples", "peaks", "delay", "state", "timeline"} {
		if slices.Contains(files, name+".png") {
			want = append(want, filepath.Join(dir, name+".png"))
		}
	}
	require.Equal(t, want, wrote(errOut), "one line a file, in order:\n%s", errOut)

	// the same run draws the same bytes
	again := filepath.Join(t.TempDir(), "again")
	status, _, errOut = run(t, "compare", "double-burst", "--charts", again)
	require.Equal(t, 0, status, errOut)
	for _, f := range files {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, _ := os.ReadFile(filepath.Join(again, f))
		require.True(t, bytes.Equal(a, b), "%s differs between two runs", f)
	}
}

func TestCompareChartsSVG(t *testing.T) {
	dir := t.TempDir()
	status, _, errOut := run(t, "compare", "token-vs-leaky", "--charts", dir, "--chart-format", "svg")
	require.Equal(t, 0, status, errOut)
	files := chartFiles(t, dir)
	require.Subset(t, files, []string{"rate.svg", "multiples.svg", "peaks.svg", "delay.svg", "timeline.svg"})
	for _, f := range files {
		require.Equal(t, ".svg", filepath.Ext(f))
		data, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(data, []byte("<?xml")), "%s is not SVG", f)
		require.Contains(t, string(data), "</svg>")
	}
	rate, _ := os.ReadFile(filepath.Join(dir, "rate.svg"))
	require.Contains(t, string(rate), "token-vs-leaky: limit 5/1s burst 5")
}

// TestChartsNoTimelineForLongRuns: a run of thousands of decisions has
// no timeline chart (in SVG, quicker to write than PNG: which charts are
// drawn does not depend on the format).
func TestChartsNoTimelineForLongRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	status, _, errOut := run(t, "compare", "retry-storm", "--charts", dir, "--chart-format", "svg", "--format", "json")
	require.Equal(t, 0, status, errOut)
	files := chartFiles(t, dir)
	require.Contains(t, files, "rate.svg")
	require.NotContains(t, files, "timeline.svg")
}

// TestReplayCharts: a replayed trace keeps its timestamps; its time axis
// reads the clock (UTC), from the first request's second, named in the
// label.
func TestReplayCharts(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	for _, at := range []string{"10:05:03", "10:05:03", "10:05:03", "10:05:04", "10:05:06"} {
		log.WriteString(strings.Replace(okLine, "10:05:03", at, 1))
	}
	trace := filepath.Join(dir, "access.log")
	require.NoError(t, os.WriteFile(trace, log.Bytes(), 0o644))
	out := filepath.Join(dir, "charts")
	status, _, errOut := run(t, "replay", trace, "--limit", "2/s", "--charts", out, "--chart-format", "svg")
	require.Equal(t, 0, status, errOut)
	rate, err := os.ReadFile(filepath.Join(out, "rate.svg"))
	require.NoError(t, err)
	require.Contains(t, string(rate), "time (UTC) from 2015-05-17T10:05:03Z")
	require.Contains(t, string(rate), ">10:05:04<", "the ticks read the clock")
	require.FileExists(t, filepath.Join(out, "timeline.svg"))
}

func TestChartFlagsBad(t *testing.T) {
	dir := t.TempDir()
	status, _, errOut := run(t, "compare", "--charts", dir, "--chart-format", "gif")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, `--chart-format: "gif" is not a chart format (want png or svg)`)
	require.Empty(t, chartFiles(t, dir), "nothing written")

	// --charts naming a file, not a directory
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	status, _, errOut = run(t, "compare", "--charts", file)
	require.Equal(t, 2, status, errOut)
	require.Contains(t, errOut, "--charts:")

	status, _, _ = run(t, "compare", "--charts")
	require.Equal(t, 2, status, "--charts needs a directory")
}

// TestBusiestKey: the default --chart-key is the key with the most
// requests, ties to the first name (runner's TestInspect: the state drawn
// is that key's).
func TestBusiestKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`name: keys
limit: 10/s
duration: 2s
traffic:
  - {type: times, key: bob, at: [0ms, 10ms, 20ms]}
  - {type: times, key: alice, at: [0ms, 10ms, 30ms]}
  - {type: times, key: carol, at: [0ms, 1ms, 2ms, 3ms, 2s]}   # the last is after the end
`), 0o644))
	sc, err := scenarios.Load(path)
	require.NoError(t, err)
	key, err := traffic.BusiestKey(sc.Traffic, 0, sc.Duration)
	require.NoError(t, err)
	require.Equal(t, "carol", key, "4 requests before the end")

	sc.Traffic.Sources = sc.Traffic.Sources[:2]
	key, err = traffic.BusiestKey(sc.Traffic, 0, sc.Duration)
	require.NoError(t, err)
	require.Equal(t, "alice", key, "a tie goes to the first name")
}

// backendScenario is a scenario with a backend of two workers and a pause.
const backendScenario = `name: backend-charts
seed: 5
duration: 10s
limit: {rate: 40, per: 1s, burst: 20}
backend:
  workers: 2
  service: {dist: exponential, mean: 25ms}
  queue: 10
  timeout: 500ms
  faults:
    - {type: pause, at: 4s, for: 1s}
traffic:
  - {type: poisson, rate: 45/s}
algorithms: [token-bucket, leaky-bucket]
`

// TestCompareBackendChart: a scenario with a backend gets backend.png,
// listed last on stderr, the same bytes from two runs, and backend.svg
// with --chart-format svg; a scenario without one gets none (see
// TestCompareCharts).
func TestCompareBackendChart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "backend.yaml")
	require.NoError(t, os.WriteFile(path, []byte(backendScenario), 0o644))
	dir := filepath.Join(t.TempDir(), "charts")
	status, _, errOut := run(t, "compare", path, "--charts", dir)
	require.Equal(t, 0, status, errOut)
	files := wrote(errOut)
	require.NotEmpty(t, files)
	require.Equal(t, filepath.Join(dir, "backend.png"), files[len(files)-1], "backend.png last:\n%s", errOut)
	first, err := os.ReadFile(filepath.Join(dir, "backend.png"))
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(first, pngMagic))

	again := filepath.Join(t.TempDir(), "again")
	status, _, errOut = run(t, "compare", path, "--charts", again)
	require.Equal(t, 0, status, errOut)
	second, err := os.ReadFile(filepath.Join(again, "backend.png"))
	require.NoError(t, err)
	require.True(t, bytes.Equal(first, second), "backend.png differs between two runs")

	svgDir := t.TempDir()
	status, _, errOut = run(t, "compare", path, "--charts", svgDir, "--chart-format", "svg")
	require.Equal(t, 0, status, errOut)
	svg, err := os.ReadFile(filepath.Join(svgDir, "backend.svg"))
	require.NoError(t, err)
	for _, want := range []string{"Backend health over time, per algorithm", "token-bucket: p99 response time", "fault: pause"} {
		require.Contains(t, string(svg), want)
	}
}
