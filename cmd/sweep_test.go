package cmd

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/internal/testenv"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sweep"
)

// compactResults is the "results" of a compare --format json, compacted.
func compactResults(t *testing.T, compareJSON string) string {
	t.Helper()
	var rep struct {
		Results json.RawMessage `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(compareJSON), &rep))
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, rep.Results))
	return buf.String()
}

// sweepPoints runs a sweep as JSON and returns its points.
func sweepPoints(t *testing.T, args ...string) []struct {
	Index   int             `json:"index"`
	Results json.RawMessage `json:"results"`
	Error   string          `json:"error"`
} {
	t.Helper()
	status, out, errOut := run(t, append(append([]string{"sweep"}, args...), "--format", "json")...)
	require.Equal(t, 0, status, errOut)
	var s struct {
		Points []struct {
			Index   int             `json:"index"`
			Results json.RawMessage `json:"results"`
			Error   string          `json:"error"`
		} `json:"points"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	return s.Points
}

// TestSweepIsCompare: every grid point's results are exactly what compare
// prints for the scenario file with the point's values written in, on every
// built-in (the file written by the sweep's own edit, run by compare).
func TestSweepIsCompare(t *testing.T) {
	t.Parallel()
	extra := map[string][]string{
		"sync-interval":       {"--vary", "cluster.store.rtt=1ms,4ms", "--vary", "algorithms[sync-100ms].sync=50ms,200ms"},
		"kong-local-pods":     {"--vary", "cluster.nodes=2,3"},
		"protect-the-backend": {"--vary", "backend.workers=2,4"},
		"api-gateway":         {"--vary", "seed=1,2"},
	}
	for i, info := range scenarios.Builtins() {
		t.Run(info.Name, func(t *testing.T) {
			if _, varied := extra[info.Name]; !varied && i%4 != 0 {
				testenv.Long(t, "the sweep of three built-ins of four (the quick suite sweeps every fourth, and those that vary more)")
			}
			file, data, err := scenarios.ResolveText(info.Name)
			require.NoError(t, err)
			sc, err := scenarios.Parse(file, data)
			require.NoError(t, err)
			b := sc.Limit.Burst
			args := []string{info.Name, "--vary", "limit.burst=" + strconv.FormatInt(b, 10) + "," + strconv.FormatInt(2*b, 10)}
			args = append(args, extra[info.Name]...)
			var fields []sweep.Field
			for i := 1; i < len(args); i += 2 {
				f, err := sweep.ParseVary(args[i+1])
				require.NoError(t, err)
				fields = append(fields, f)
			}
			base, err := sweep.NewBase(file, data, sc)
			require.NoError(t, err)
			points := sweepPoints(t, args...)
			require.Len(t, points, sweep.GridSize(fields))
			dir := t.TempDir()
			for i, p := range points {
				require.Equal(t, i, p.Index)
				require.Empty(t, p.Error)
				edited, err := base.Edit(fields, sweep.ValuesAt(fields, i))
				require.NoError(t, err)
				path := filepath.Join(dir, info.Name+".yaml")
				require.NoError(t, os.WriteFile(path, edited, 0o644))
				status, out, errOut := run(t, "compare", path, "--format", "json")
				require.Equal(t, 0, status, errOut)
				var got bytes.Buffer
				require.NoError(t, json.Compact(&got, p.Results))
				require.Equal(t, compactResults(t, out), got.String(), "point %d", i)
			}
		})
	}
}

// TestSweepEditIsTheHandEdit: the file a point runs is the file a user
// would write: the built-in's text with the value changed by hand.
func TestSweepEditIsTheHandEdit(t *testing.T) {
	_, data, err := scenarios.ResolveText("double-burst")
	require.NoError(t, err)
	dir := t.TempDir()
	for _, c := range []struct{ old, new, vary string }{
		{"burst: 10}", "burst: 20}", "limit.burst=5,20"},
		{"rate: 10,", "rate: 7,", "limit.rate=7,30"},
		{"seed: 1\n", "seed: 9\n", "seed=9"},
	} {
		require.Contains(t, string(data), c.old)
		path := filepath.Join(dir, "edited.yaml")
		require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), c.old, c.new, 1)), 0o644))
		status, out, errOut := run(t, "compare", path, "--format", "json")
		require.Equal(t, 0, status, errOut)
		want := compactResults(t, out)
		found := false
		for _, p := range sweepPoints(t, "double-burst", "--vary", c.vary) {
			var got bytes.Buffer
			require.NoError(t, json.Compact(&got, p.Results))
			found = found || got.String() == want
		}
		require.True(t, found, "%s: no point gives compare's results for the hand-edited file", c.vary)
	}
}

// TestSweepExitStatus: bad flags are exit 2 naming the flag; a point the
// scenario rejects is that point's error and the others run (exit 0);
// exit 2 only when every point failed.
func TestSweepExitStatus(t *testing.T) {
	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"double-burst", "--vary", "limit.brust=1,2"}, 2, `ratesim: --vary: limit.brust: unknown field (want rate, per or burst); did you mean "burst"?`},
		{[]string{"double-burst", "--vary", "algorithms[gcrx].burst=1"}, 2, `no algorithm labelled "gcrx"`},
		{[]string{"double-burst", "--vary", "limit.burst=5..x:1"}, 2, `ratesim: --vary: limit.burst="5..x:1": "x" is not a number or a duration`},
		{[]string{"double-burst"}, 2, "--vary: none given"},
		{[]string{"double-burst", "--vary", "limit.burst=5", "--goal", "minimize brust"}, 2, `ratesim: --goal: column 10: "brust" is not a metric`},
		{[]string{"double-burst", "--vary", "limit.burst=5", "--shard", "2/2"}, 2, "--shard: \"2/2\": want K/N with 0 <= K < N"},
		{[]string{"double-burst", "--vary", "limit.burst=5", "--shard", "0/2", "--format", "csv"}, 2, "a shard is written as JSON"},
		{[]string{"double-burst", "--vary", "limit.burst=0,5"}, 0, "point 0 (limit.burst=0): limit.burst: 0: want an integer >= 1"},
		{[]string{"double-burst", "--vary", "limit.burst=0,-1"}, 2, "every point failed"},
	} {
		status, out, errOut := run(t, append([]string{"sweep"}, c.args...)...)
		require.Equal(t, c.status, status, "%v: %s", c.args, errOut)
		require.Contains(t, out+errOut, c.want, "%v", c.args)
		require.NotContains(t, errOut, "panic")
	}
}

// TestSweepMergeCommand: ratesim sweep --shard K/N for every K, then
// ratesim sweep merge, prints what one unsharded run prints, byte for
// byte, in every format, with a goal over some keys. The scenario is
// api-gateway (thousands of keys, a goal over user-*) cut from 30s to 3s:
// merging is exact whatever the points' size.
func TestSweepMergeCommand(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../scenarios/builtin/api-gateway.yaml")
	require.NoError(t, err)
	require.Contains(t, string(data), "\nduration: 30s\n")
	short := writeFile(t, "api-gateway.yaml", strings.Replace(string(data), "\nduration: 30s\n", "\nduration: 3s\n", 1))
	vary := []string{"sweep", short, "--vary", "limit.burst=10,20,40", "--vary", "limit.rate=5,10"}
	goal := "minimize burst subject to reject_pct(key=user-*) <= 5"
	dir := t.TempDir()
	var files []string
	for k := range 4 {
		status, out, errOut := run(t, append(vary, "--shard", strconv.Itoa(k)+"/4", "--goal", goal)...)
		require.Equal(t, 0, status, errOut)
		files = append(files, filepath.Join(dir, "shard-"+strconv.Itoa(k)+".json"))
		require.NoError(t, os.WriteFile(files[k], []byte(out), 0o644))
	}
	for _, format := range sweep.Formats {
		status, want, errOut := run(t, append(vary, "--format", format, "--goal", goal)...)
		require.Equal(t, 0, status, errOut)
		status, got, errOut := run(t, append(append([]string{"sweep", "merge"}, files...), "--format", format, "--goal", goal)...)
		require.Equal(t, 0, status, errOut)
		require.Equal(t, want, got, format)
	}
	status, _, errOut := run(t, "sweep", "merge", files[0], files[1], "--goal", goal)
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "shards 2/4, 3/4 are missing")
	status, _, errOut = run(t, append(append([]string{"sweep", "merge"}, files...), "--goal", "minimize rejected(key=x*)")...)
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "no per-key totals for key=x*")
}

// TestSweepCharts: heatmaps for two fields, line charts for one, in PNG
// and SVG, the same bytes every time; more fields is a usage error.
func TestSweepCharts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		vary []string
		want []string
	}{
		{[]string{"--vary", "limit.burst=5,10", "--vary", "limit.rate=10,20"}, []string{"reject_pct", "p99_delay", "key_peak_ratio", "accepted"}},
		{[]string{"--vary", "limit.burst=5,10,20"}, []string{"reject_pct", "p99_delay", "key_peak_ratio", "accepted"}},
	} {
		for _, format := range []string{"png", "svg"} {
			var dirs []string
			for range 2 {
				dir := t.TempDir()
				args := append(append([]string{"sweep", "double-burst"}, c.vary...),
					"--goal", "maximize accepted subject to key_peak_ratio <= 1.1", "--charts", dir, "--chart-format", format)
				status, _, errOut := run(t, args...)
				require.Equal(t, 0, status, errOut)
				dirs = append(dirs, dir)
			}
			for _, name := range c.want {
				a, err := os.ReadFile(filepath.Join(dirs[0], name+"."+format))
				require.NoError(t, err)
				b, err := os.ReadFile(filepath.Join(dirs[1], name+"."+format))
				require.NoError(t, err)
				require.NotEmpty(t, a)
				require.True(t, bytes.Equal(a, b), "%s.%s differs from run to run", name, format)
			}
		}
	}
	status, _, errOut := run(t, "sweep", "double-burst", "--vary", "limit.burst=5", "--vary", "limit.rate=5", "--vary", "seed=1", "--charts", t.TempDir())
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "--charts: a sweep draws charts for one or two varied fields, this one has 3")
}

// TestSweepCSVGoalColumns: with --goal, the CSV has the goal's own
// metrics as the table does (goalColumns), after the table's figures and
// before error: here burst and reject_pct(key=user-*), the latter the
// share of the user-* keys' requests rejected, as the JSON's key groups
// count it (worked out from them, not canned). Without a goal, none.
func TestSweepCSVGoalColumns(t *testing.T) {
	args := []string{"sweep", "choose-burst", "--vary", "limit.rate=8,10", "--vary", "limit.burst=1..2:1",
		"--goal", "minimize burst subject to reject_pct(key=user-*) <= 1"}
	status, out, errOut := run(t, append(args, "--format", "csv")...)
	require.Equal(t, 0, status, errOut)
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	head := recs[0]
	require.Equal(t, []string{"key_peak_ratio", "burst", "reject_pct(key=user-*)", "error"}, head[len(head)-4:])
	status, js, errOut := run(t, append(args, "--format", "json")...)
	require.Equal(t, 0, status, errOut)
	var doc struct {
		Points []struct {
			Results   []struct{ Limit struct{ Burst int64 } }
			KeyGroups []struct {
				Groups []struct{ Offered, Rejected int64 }
			} `json:"key_groups"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(js), &doc))
	row := 1
	for _, p := range doc.Points {
		for ri, r := range p.Results {
			rec := recs[row]
			row++
			require.Equal(t, strconv.FormatInt(r.Limit.Burst, 10), rec[len(rec)-3])
			g := p.KeyGroups[ri].Groups[0]
			got, err := strconv.ParseFloat(rec[len(rec)-2], 64)
			require.NoError(t, err)
			require.Equal(t, 100*float64(g.Rejected)/float64(g.Offered), got, "row %d", row-1) // as reject_pct is worked out
		}
	}
	require.Equal(t, len(recs), row)
	status, out, errOut = run(t, "sweep", "choose-burst", "--vary", "limit.burst=1..2:1", "--format", "csv")
	require.Equal(t, 0, status, errOut)
	require.True(t, strings.HasSuffix(strings.SplitN(out, "\n", 2)[0], ",key_peak_ratio,error"), out)
}

// The heatmap docs/sweep.md and the README show is what the command they
// show draws (-update rewrites it; look at it before committing).
func TestDocsSweepChart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	status, _, errOut := run(t, "sweep", "choose-burst", "--vary", "limit.rate=8,10,12", "--vary", "limit.burst=1..6:1",
		"--goal", "minimize burst subject to reject_pct(key=user-*) <= 1", "--format", "csv", "--output", filepath.Join(dir, "out.csv"), "--charts", dir)
	require.Equal(t, 0, status, errOut)
	const name = "reject_pct-key-user.png"
	got, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	path := filepath.Join("..", "docs", "sweep", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(got, want), "%s is out of date: go test ./cmd/ -run TestDocsSweepChart -update", path)
}

// TestSweepBaseline: with --baseline, every point's results are compare
// --baseline's for the edited file (each point runs alone, against its own
// baseline row), and baseline_differs_pct ranks them: on the double burst
// the token bucket with burst 10 decides 1 of 20 requests unlike the
// sliding log (5%), with burst 5 or 15 six (30%). A label the scenario
// does not have is exit 2.
func TestSweepBaseline(t *testing.T) {
	t.Parallel()
	file, data, err := scenarios.ResolveText("double-burst")
	require.NoError(t, err)
	sc, err := scenarios.Parse(file, data)
	require.NoError(t, err)
	f, err := sweep.ParseVary("limit.burst=5..15:5")
	require.NoError(t, err)
	base, err := sweep.NewBase(file, data, sc)
	require.NoError(t, err)
	points := sweepPoints(t, "double-burst", "--vary", "limit.burst=5..15:5", "--baseline", "sliding-log")
	require.Len(t, points, 3)
	for i, p := range points {
		edited, err := base.Edit([]sweep.Field{f}, sweep.ValuesAt([]sweep.Field{f}, i))
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "p.yaml")
		require.NoError(t, os.WriteFile(path, edited, 0o644))
		status, out, errOut := run(t, "compare", path, "--format", "json", "--baseline", "sliding-log")
		require.Equal(t, 0, status, errOut)
		var got bytes.Buffer
		require.NoError(t, json.Compact(&got, p.Results))
		require.Equal(t, compactResults(t, out), got.String(), "point %d", i)
	}

	status, out, errOut := run(t, "sweep", "double-burst", "--vary", "limit.burst=5..15:5", "--baseline", "sliding-log",
		"--goal", "minimize baseline_differs_pct")
	require.Equal(t, 0, status, errOut)
	require.Regexp(t, `token-bucket +best +point 1 \(limit.burst=10\): baseline_differs_pct 5\n +runner-up point 0 \(limit.burst=5\): baseline_differs_pct 30`, out)

	// its heatmap is drawn beside the others
	dir := t.TempDir()
	status, _, errOut = run(t, "sweep", "double-burst", "--vary", "limit.burst=5..15:5", "--vary", "limit.rate=8,10",
		"--baseline", "sliding-log", "--charts", dir, "--chart-format", "svg")
	require.Equal(t, 0, status, errOut)
	require.FileExists(t, filepath.Join(dir, "baseline_differs_pct.svg"))

	status, _, errOut = run(t, "sweep", "double-burst", "--vary", "limit.burst=5,10", "--baseline", "nope")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, `--baseline: "nope" is not a row of double-burst`)
}
