package play_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratesim/ratesim/cmd"
	"github.com/ratesim/ratesim/lessons"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/web/play"
	"github.com/stretchr/testify/require"
)

// counts are the figures of a row that the page shows and compare's JSON
// prints.
type counts struct {
	Label    string `json:"label"`
	Offered  int64  `json:"offered"`
	Attempts int64  `json:"attempts"`
	Accepted int64  `json:"accepted"`
	Delayed  int64  `json:"delayed"`
	Rejected int64  `json:"rejected"`
	GaveUp   int64  `json:"gave_up"`
	Peaks    []struct {
		WindowNs int64 `json:"window_ns"`
		Count    int64 `json:"count"`
		StartNs  int64 `json:"start_ns"`
	} `json:"peaks"`
}

// countsOf reads the rows' counts out of a JSON report.
func countsOf(t *testing.T, data []byte) []counts {
	t.Helper()
	var r struct {
		Results []counts `json:"results"`
	}
	require.NoError(t, json.Unmarshal(data, &r))
	return r.Results
}

// compareJSON is `ratesim compare ARGS --format json`'s output.
func compareJSON(t *testing.T, args ...string) []byte {
	t.Helper()
	var out, errOut bytes.Buffer
	status := cmd.Run(append(append([]string{"compare"}, args...), "--format", "json"), nil, &out, &errOut)
	require.Equal(t, 0, status, errOut.String())
	return out.Bytes()
}

// runJSON is the JSON the page receives for a run, as the worker passes
// it on.
func runJSON(t *testing.T, s *play.Session, file, text string, o play.Options) ([]byte, *play.Result) {
	t.Helper()
	res := s.Run(file, text, o)
	data, err := json.Marshal(res)
	require.NoError(t, err)
	var back struct {
		Report json.RawMessage `json:"report"`
	}
	require.NoError(t, json.Unmarshal(data, &back))
	return back.Report, res
}

func preset(t *testing.T, name string) play.Preset {
	t.Helper()
	ps, err := play.Presets()
	require.NoError(t, err)
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no preset %s", name)
	return play.Preset{}
}

// TestDoubleBurstInThePage: the page's double-burst shows fixed-window
// admitting all 20 and sliding-log 10, as the command line's JSON says,
// with every decision for the timeline.
func TestDoubleBurstInThePage(t *testing.T) {
	var s play.Session
	p := preset(t, "double-burst")
	report, res := runJSON(t, &s, "builtin:double-burst", p.Text, play.Options{})
	require.Nil(t, res.Error)
	got := countsOf(t, report)
	require.Equal(t, countsOf(t, compareJSON(t, "double-burst")), got)
	byLabel := map[string]counts{}
	for _, c := range got {
		byLabel[c.Label] = c
	}
	require.EqualValues(t, 20, byLabel["fixed-window"].Accepted)
	require.EqualValues(t, 10, byLabel["sliding-log"].Accepted)
	require.EqualValues(t, 10, byLabel["sliding-log"].Rejected)
	require.Equal(t, "ratesim compare double-burst", res.Command)
	for _, row := range res.Rows {
		require.True(t, row.Kept)
		require.Len(t, row.T, 20, row.Label)
		require.Len(t, row.V, 20, row.Label)
	}
	require.Equal(t, []string{"alice"}, res.Keys)
	fw := res.Rows[0]
	require.Equal(t, "fixed-window", fw.Label)
	require.Equal(t, strings.Repeat("a", 20), fw.V)
	require.EqualValues(t, 900_000_000, fw.T[0])
	require.NotNil(t, fw.Window)
	require.EqualValues(t, 10, fw.Limit)
}

// TestEveryBuiltinAsTheCommandLine: for every built-in under the
// browser's budget, the counts the page receives are compare's.
func TestEveryBuiltinAsTheCommandLine(t *testing.T) {
	ps, err := play.Presets()
	require.NoError(t, err)
	for _, p := range ps {
		t.Run(p.Name, func(t *testing.T) {
			require.True(t, p.Fits, "every built-in fits the browser's budget: %v", p.Estimate)
			var s play.Session
			report, res := runJSON(t, &s, "builtin:"+p.Name, p.Text, play.Options{})
			require.Nil(t, res.Error)
			// what `ratesim compare NAME --format json` prints: cmd's
			// TestCompareBuiltinsGolden holds the command to this file
			want, err := os.ReadFile(filepath.Join("..", "..", "cmd", "testdata", "compare", p.Name+".json"))
			require.NoError(t, err)
			require.Equal(t, countsOf(t, want), countsOf(t, report))
		})
	}
}

// TestAlgorithmsOption: the rows shown are compare's --algorithms, and
// the command says so.
func TestAlgorithmsOption(t *testing.T) {
	var s play.Session
	p := preset(t, "double-burst")
	report, res := runJSON(t, &s, "builtin:double-burst", p.Text, play.Options{Algorithms: "fixed-window,sliding-log"})
	require.Equal(t, countsOf(t, compareJSON(t, "double-burst", "--algorithms", "fixed-window,sliding-log")), countsOf(t, report))
	require.Equal(t, "ratesim compare double-burst --algorithms fixed-window,sliding-log", res.Command)
}

// TestErrorsAtLineAndColumn: a bad scenario comes back as the command
// line's errors, each at its line and column.
func TestErrorsAtLineAndColumn(t *testing.T) {
	var s play.Session
	text := "name: x\nduration: 3s\nlimit: {rate: ten, per: 1s}\ntraffic:\n  - {type: steady, rate: 5/s}\n"
	res := s.Run("scenario.yaml", text, play.Options{})
	require.NotNil(t, res.Error)
	require.NotEmpty(t, res.Error.Problems)
	p := res.Error.Problems[0]
	require.Equal(t, 3, p.Line)
	require.Equal(t, 15, p.Col)
	require.True(t, strings.HasPrefix(p.Text, "scenario.yaml:3:15: limit.rate: "), p.Text)
	require.Nil(t, res.Report)
}

// TestTooLargeIsRefused: a run over the browser's budget is refused with
// its estimate and the command that runs it.
func TestTooLargeIsRefused(t *testing.T) {
	var s play.Session
	text := "name: big\nduration: 1h\nlimit: 100/s\ntraffic:\n  - {type: steady, rate: 10000/s}\n"
	res := s.Run("scenario.yaml", text, play.Options{})
	require.Nil(t, res.Error)
	require.NotNil(t, res.Refused)
	require.Contains(t, res.Refused.Message, "decisions")
	require.Equal(t, "ratesim compare scenario.yaml", res.Refused.Command)
	require.NotEmpty(t, res.Refused.Estimate)
}

// TestWhyThisDecision: the first rejection of sliding-log in double-burst
// is explained in every row: sliding-log's log holds the ten of the last
// second, fixed-window's new window has room.
func TestWhyThisDecision(t *testing.T) {
	var s play.Session
	p := preset(t, "double-burst")
	res := s.Run("builtin:double-burst", p.Text, play.Options{Algorithms: "fixed-window,sliding-log,token-bucket"})
	require.Nil(t, res.Error)
	sl := res.Rows[1]
	require.Equal(t, "sliding-log", sl.Label)
	first := strings.IndexByte(sl.V, 'r')
	require.Equal(t, 10, first)
	why, err := s.Explain(1, first)
	require.NoError(t, err)
	require.Len(t, why, 3)
	for _, w := range why {
		require.True(t, w.Found, w.Label)
		require.EqualValues(t, 1_000_000_000, w.TimeNs)
		require.Equal(t, "alice", w.Key)
		require.Empty(t, w.State, w.Label)
		require.NotEmpty(t, w.Rule)
		require.NotEmpty(t, w.Before, w.Label)
		require.NotEmpty(t, w.After, w.Label)
	}
	require.Equal(t, "accept", why[0].Verdict)
	require.Equal(t, "reject", why[1].Verdict)
	require.EqualValues(t, 900_000_000, why[1].RetryAfter, "the first of the log leaves at 1.9s")
	require.Equal(t, why[1].Before, why[1].After, "a rejection leaves the log as it was")
	_, err = s.Explain(1, 99)
	require.Error(t, err)
}

// TestWhyOnACluster: a cluster row's decision names its node, where its
// rule ran, the key's state there and what was in flight. kong-local-pods'
// sixth request (1.25 s, 4 a second on 3 nodes): node 2's own window
// (local) had counted the third, so it counts 1 then 2; the store's window
// (central) counted the five before it, 5 then 6, with no script in flight
// (250 ms apart, 1 ms round trips).
func TestWhyOnACluster(t *testing.T) {
	var s play.Session
	p := preset(t, "kong-local-pods")
	res := s.Run("builtin:kong-local-pods", p.Text, play.Options{})
	require.Nil(t, res.Error)
	require.True(t, res.Cluster)
	why, err := s.Explain(0, 5)
	require.NoError(t, err)
	require.NotNil(t, why[0].Node)
	require.Equal(t, 2, *why[0].Node, "round-robin: the sixth request goes to node 2")
	require.Empty(t, why[0].State)
	require.Equal(t, "node 2", why[0].Where)
	require.Equal(t, []play.Gauge{{Name: "count", Value: 1}, {Name: "limit", Value: 60}}, why[0].Before)
	require.Equal(t, []play.Gauge{{Name: "count", Value: 2}, {Name: "limit", Value: 60}}, why[0].After)
	require.Equal(t, "store", why[2].Where)
	require.Equal(t, float64(5), why[2].Before[0].Value)
	require.Equal(t, float64(6), why[2].After[0].Value)
	require.NotNil(t, why[2].InFlight)
	require.Zero(t, *why[2].InFlight)
	require.Greater(t, why[2].AtNs, why[2].TimeNs, "the script runs in the store after the request's arrival")
}

// TestCSVAsCompare: the page's decisions CSV is compare --decisions's.
func TestCSVAsCompare(t *testing.T) {
	var s play.Session
	p := preset(t, "token-vs-leaky")
	s.Run("builtin:token-vs-leaky", p.Text, play.Options{})
	got, err := s.CSV()
	require.NoError(t, err)
	path := t.TempDir() + "/d.csv"
	var out, errOut bytes.Buffer
	require.Equal(t, 0, cmd.Run([]string{"compare", "token-vs-leaky", "--decisions", path}, nil, &out, &errOut), errOut.String())
	want, err := readFile(path)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// TestLessonReplayInThePage: a lesson's replay of a bundled trace asks
// the page for the trace, then runs as `ratesim compare` runs the same
// scenario beside the same file.
func TestLessonReplayInThePage(t *testing.T) {
	var replays []*lessons.RunSpec
	for _, l := range lessons.All() {
		for i := range l.Runs {
			if l.Runs[i].Replay != nil {
				replays = append(replays, &l.Runs[i])
			}
		}
	}
	require.NotEmpty(t, replays, "a lesson replays a bundled trace")
	for _, r := range []*lessons.RunSpec{replays[0], replays[len(replays)-1]} {
		t.Run(r.Scenario, func(t *testing.T) {
			f, err := r.Replay.File(r.Replay.Trace)
			require.NoError(t, err)
			text, err := scenarios.Marshal(f)
			require.NoError(t, err)
			opt := play.Options{Algorithms: r.Algorithms}

			var s play.Session
			res := s.Run("scenario.yaml", string(text), opt)
			require.Nil(t, res.Error)
			require.Nil(t, res.Report)
			require.Equal(t, []string{r.Replay.Trace}, res.Needs)

			data, err := scenarios.Trace(r.Replay.Trace)
			require.NoError(t, err)
			s.AddFile(r.Replay.Trace, data)
			report, res := runJSON(t, &s, "scenario.yaml", string(text), opt)
			require.Nil(t, res.Error)
			require.Empty(t, res.Needs)
			got := countsOf(t, report)
			require.Len(t, got, 3)
			require.Greater(t, got[0].Offered, int64(30_000))

			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, r.Replay.Trace), data, 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "scenario.yaml"), text, 0o644))
			require.Equal(t, countsOf(t, compareJSON(t, filepath.Join(dir, "scenario.yaml"), "--algorithms", r.Algorithms)), got)
		})
	}
}

// TestExpectationWindowsAsCompare: a window that an expectation reads and
// the report lacks is added to the page's run as compare adds it, after
// the report's own: the page's peaks are compare's, 2s among them.
func TestExpectationWindowsAsCompare(t *testing.T) {
	text := `name: claim-window
duration: 2m
limit: {rate: 5, per: 1m, burst: 5}
algorithms: [fixed-window, sliding-log]
traffic:
  - {type: burst, key: user, at: 59s, count: 5}
  - {type: burst, key: user, at: 1m, count: 5}
expect:
  fixed-window: key_peak(2s) == 10
`
	var s play.Session
	report, res := runJSON(t, &s, "scenario.yaml", text, play.Options{})
	require.Nil(t, res.Error)
	path := filepath.Join(t.TempDir(), "scenario.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	want := countsOf(t, compareJSON(t, path))
	got := countsOf(t, report)
	require.Equal(t, want, got)
	var windows []int64
	for _, p := range got[0].Peaks {
		windows = append(windows, p.WindowNs)
	}
	require.Equal(t, []int64{60e9, 6e9, 2e9}, windows, "the report's windows, then the claim's")
	require.EqualValues(t, 10, got[0].Peaks[2].Count)
}

// TestExpectationErrorAtLineAndColumn: an expectation the language cannot
// read is the page's error at its line and column, as compare's.
func TestExpectationErrorAtLineAndColumn(t *testing.T) {
	var s play.Session
	text := "name: x\nduration: 3s\nlimit: 5/s\ntraffic:\n  - {type: steady, rate: 5/s}\nexpect:\n  all: peak(1s) <= ten\n"
	res := s.Run("scenario.yaml", text, play.Options{})
	require.NotNil(t, res.Error)
	require.NotEmpty(t, res.Error.Problems)
	p := res.Error.Problems[0]
	require.Equal(t, 7, p.Line)
	require.True(t, strings.HasPrefix(p.Text, "scenario.yaml:7:"), p.Text)
	require.Nil(t, res.Report)
}

// TestImports: the page's engine builds without the renderers, the
// command line, Redis or the charts (as runner does), expectations
// included, so that it builds small for a browser.
func TestImports(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	require.NoError(t, err)
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"/sweep", "/output", "cobra", "redis", "gonum"} {
			require.NotContains(t, dep, banned, "play depends on %s", dep)
		}
	}
}
