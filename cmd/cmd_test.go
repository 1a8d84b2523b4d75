package cmd

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// run runs the CLI in-process, as benchstat's tests do.
func run(t *testing.T, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	status = Run(args, strings.NewReader(""), &out, &errb)
	return status, out.String(), errb.String()
}

// jsonReport runs the command with --format json, which must succeed, and
// returns the report it prints.
func jsonReport(t *testing.T, args ...string) *sim.Report {
	t.Helper()
	status, out, errOut := run(t, append(args, "--format", "json")...)
	require.Equal(t, 0, status, errOut)
	var rep sim.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	return &rep
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file: run go test ./cmd/ -update")
	require.Equal(t, string(want), got, "golden %s differs: review, then go test ./cmd/ -update", path)
}

func TestCompareBuiltinsGolden(t *testing.T) {
	t.Parallel()
	for _, b := range scenarios.Builtins() {
		for _, format := range formats {
			t.Run(b.Name+"/"+format, func(t *testing.T) {
				status, out, errOut := run(t, "compare", b.Name, "--format", format)
				require.Equal(t, 0, status, errOut)
				require.Regexp(t, "^(note: [a-z-]+ left out: .*\n)*$", errOut, "nothing on stderr but what the default list left out")
				ext := map[string]string{"table": "txt", "json": "json", "csv": "csv", "markdown": "md"}[format]
				golden(t, filepath.Join("compare", b.Name+"."+ext), out)
			})
		}
	}
}

func TestCompareDefaultIsDoubleBurst(t *testing.T) {
	status, def, _ := run(t, "compare")
	require.Equal(t, 0, status)
	_, named, _ := run(t, "compare", "double-burst")
	require.Equal(t, named, def)
}

func TestCompareDeterministic(t *testing.T) {
	// The same scenario and seed give byte-identical output, however the
	// algorithms are scheduled on the cores.
	var first string
	for i := 0; i < 5; i++ {
		status, out, errOut := run(t, "compare", "double-burst", "--format", "json")
		require.Equal(t, 0, status, errOut)
		if i == 0 {
			first = out
		}
		require.Equal(t, first, out)
	}
}

func TestCompareAlgorithmsFlag(t *testing.T) {
	status, out, errOut := run(t, "compare", "--algorithms", "sliding-log,fixed-window", "--format", "csv")
	require.Equal(t, 0, status, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, "header and two rows")
	require.True(t, strings.HasPrefix(lines[1], "fixed-window,"), "scenario order is kept: %s", lines[1])
	require.True(t, strings.HasPrefix(lines[2], "sliding-log,"))

	status, _, errOut = run(t, "compare", "--algorithms", "nope")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "--algorithms: nope not in scenario double-burst")
}

func TestCompareDecisionsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.csv")
	status, _, errOut := run(t, "compare", "--algorithms", "fixed-window,sliding-log", "--decisions", path)
	require.Equal(t, 0, status, errOut)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Equal(t, "algorithm,label,time_ns,key,cost,attempt,verdict,delay_ns,retry_after_ns", lines[0])
	require.Len(t, lines, 1+20+20, "one row per decision of each algorithm")
	// fixed-window's first decision: alice at 900ms, accepted.
	require.Equal(t, "fixed-window,fixed-window,900000000,alice,1,1,accept,0,", lines[1])
	// sliding-log's rows follow all of fixed-window's; its 11th decision
	// (1000ms) is the first rejected one: the oldest entry (900ms) leaves
	// the log at 1900ms, so retry after 900ms.
	require.Equal(t, "sliding-log,sliding-log,1000000000,alice,1,1,reject,0,900000000", lines[21+10])
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary files are left behind")
}

func TestListings(t *testing.T) {
	status, out, _ := run(t, "scenarios")
	require.Equal(t, 0, status)
	require.Contains(t, out, "double-burst")
	require.Equal(t, len(scenarios.Builtins()), strings.Count(out, "\n"), "one line each")

	status, out, _ = run(t, "algorithms")
	require.Equal(t, 0, status)
	for _, n := range []string{"fixed-window", "sliding-log", "sliding-window", "token-bucket", "gcra", "leaky-bucket", "nginx", "concurrency", "x-time-rate"} {
		require.Contains(t, out, n+" ")
	}
	require.Equal(t, 15, strings.Count(out, "\n"), "the nine, none and the five adaptive limits")
}

func TestValidate(t *testing.T) {
	status, out, errOut := run(t, "validate", "double-burst")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "ok")
}

// writeFile writes a scenario file into a temporary directory.
func writeFile(t *testing.T, name, body string) string {
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

const okScenario = `name: mine
duration: 2s
limit: 10/s
traffic:
  - type: steady
    rate: 20/s
`

func TestBadInputExitsTwo(t *testing.T) {
	for _, tc := range []struct {
		name, file, body string
		args             []string
		want             string
	}{
		{name: "unknown field", file: "a.yaml", body: okScenario + "colour: red\n", want: "a.yaml:7:1: colour"},
		{name: "bad rate unit", file: "b.yaml", body: strings.Replace(okScenario, "20/s", "20/x", 1), want: `b.yaml:6:11: traffic[0].rate: "20/x": unknown unit "x"`},
		{name: "negative duration", file: "c.yaml", body: strings.Replace(okScenario, "2s", "-2s", 1), want: "c.yaml:2:11: duration"},
		{name: "empty file", file: "e.yaml", body: "", want: "e.yaml:1:1:"},
		{name: "unknown algorithm", file: "f.yaml", body: okScenario + "algorithms: [fixed-window, leaky-window]\n", want: `f.yaml:7:28: algorithms[1]: "leaky-window": unknown algorithm`},
		{name: "burst 0", file: "g.yaml", body: strings.Replace(okScenario, "limit: 10/s", "limit: {rate: 10, burst: 0}", 1), want: "g.yaml:3:26: limit.burst: 0: want an integer >= 1"},
		{name: "cluster of no node", file: "h.yaml", body: okScenario + "cluster: {nodes: 0}\n", want: "h.yaml:7:18: cluster.nodes: 0: want an integer from 1 to 1024"},
		{name: "fault on a node that does not exist", file: "i.yaml", body: okScenario + "cluster:\n  nodes: 2\n  faults: [{type: node-down, node: 2, at: 1s, for: 1s}]\n",
			want: "i.yaml:9:36: cluster.faults[0].node: 2: a fault on a node that does not exist (want a node from 0 to 1: the cluster has 2 nodes)"},
		{name: "coordination without a cluster", file: "j.yaml", body: okScenario + "algorithms: [{name: gcra, coordination: racy}]\n",
			want: "j.yaml:7:27: algorithms[0].coordination: needs a cluster section"},
		{name: "mode the algorithm does not take", file: "k.yaml", body: okScenario + "cluster: {nodes: 3}\nalgorithms: [{name: gcra, coordination: sync, sync: 1s}]\n",
			want: `k.yaml:8:41: algorithms[0].coordination: "sync": not a mode of gcra`},
		{name: "bad zone size", file: "l.yaml", body: okScenario + "algorithms: [{name: nginx, zone: 10x}]\n",
			want: `l.yaml:7:34: algorithms[0].zone: "10x": want a size as nginx writes it`},
		{name: "zone below nginx's smallest", file: "m.yaml", body: okScenario + "algorithms: [{name: nginx, zone: 4k}]\n",
			want: `m.yaml:7:34: algorithms[0].zone: "4k": want a zone of at least 32k`},
		{name: "missing file", args: []string{"compare", "no/such/file.yaml"}, want: "no/such/file.yaml"},
		{name: "bad format", args: []string{"compare", "--format", "xml"}, want: `--format: "xml" is not a format`},
		{name: "unknown flag", args: []string{"compare", "--colour"}, want: "unknown flag: --colour"},
		{name: "unknown command", args: []string{"frobnicate"}, want: "unknown command"},
		{name: "too many args", args: []string{"compare", "a", "b"}, want: "accepts at most 1 arg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args == nil {
				path := writeFile(t, tc.file, tc.body)
				args = []string{"compare", path}
				for _, cmd := range [][]string{{"validate", path}, args} {
					status, out, errOut := run(t, cmd...)
					require.Equal(t, 2, status, "%v: %s", cmd, errOut)
					require.Empty(t, out)
					require.Contains(t, errOut, tc.want)
					require.NotContains(t, errOut, "goroutine")
					require.NotContains(t, errOut, "panic")
				}
				return
			}
			status, out, errOut := run(t, args...)
			require.Equal(t, 2, status, errOut)
			require.Empty(t, out)
			require.Contains(t, errOut, tc.want)
		})
	}
}

// A scenario with a cluster section validates, and compare runs it (the
// default list on a cluster leaves x-time-rate out, with a note, and
// without a service time concurrency).
func TestValidateCluster(t *testing.T) {
	path := writeFile(t, "c.yaml", okScenario+"cluster: {nodes: 4, skew: 2ms, faults: [{type: node-down, node: 1, at: 1s, for: 500ms}]}\n")
	status, out, errOut := run(t, "validate", path)
	require.Equal(t, 0, status, errOut)
	first, _, _ := strings.Cut(out, "\n")
	require.Equal(t, path+`: ok: scenario "mine", 7 algorithms, 1 source, duration 2s, limit 10/1s burst 10, on a cluster of 4 nodes`, first)
	status, out, errOut = run(t, "compare", path, "--format", "csv")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, "note: concurrency left out: backend.service is 0, so no request is ever in flight and it could refuse none; name it in algorithms to keep it\n"+
		"note: x-time-rate left out: cannot run in the store (coordination central, the default on a cluster); list it with coordination: local or split\n", errOut)
	require.NotContains(t, out, "x-time-rate")
}

// TestBenchScenarioValid: the scenarios of BENCHMARKS.md (the README's
// "Big runs" among them) stay valid, each with the rows its figures are
// of, over 10s (running them takes seconds, so the test only validates
// them): the nine algorithms; the nine and none with a backend (the
// backend target in BENCHMARKS.md names those ten, not the adaptive rows a scenario with
// workers runs by default), and the same ten without workers (its
// baseline); the nine on 4 nodes in local and split, the
// eight that run in a store in central.
func TestBenchScenarioValid(t *testing.T) {
	t.Parallel()
	for file, want := range map[string]string{
		"poisson-10m":                `scenario "poisson-10m", 9 algorithms, 1 source, duration 10s`,
		"poisson-10m-backend":        `scenario "poisson-10m-backend", 10 algorithms, 1 source, duration 10s`,
		"poisson-10m-delay":          `scenario "poisson-10m-delay", 10 algorithms, 1 source, duration 10s`,
		"poisson-10m-local":          `scenario "poisson-10m-local", 9 algorithms, 1 source, duration 10s, limit 100/1s burst 10, on a cluster of 4 nodes`,
		"poisson-10m-split":          `scenario "poisson-10m-split", 9 algorithms, 1 source, duration 10s, limit 100/1s burst 10, on a cluster of 4 nodes`,
		"poisson-10m-central":        `scenario "poisson-10m-central", 8 algorithms, 1 source, duration 10s, limit 100/1s burst 10, on a cluster of 4 nodes`,
		"poisson-10m-central-jitter": `scenario "poisson-10m-central-jitter", 8 algorithms, 1 source, duration 10s, limit 100/1s burst 10, on a cluster of 4 nodes`,
	} {
		status, out, errOut := run(t, "validate", "../scenarios/bench/"+file+".yaml")
		require.Equal(t, 0, status, errOut)
		require.Contains(t, out, want)
	}
	files, err := filepath.Glob("../scenarios/bench/*.yaml")
	require.NoError(t, err)
	require.Len(t, files, 7, "a new bench scenario: add it above")
}

// TestConcurrencyLeftOutWithoutService: with backend.service 0
// the default set leaves out the concurrency limiter, which could refuse
// nothing, and says so in one line on stderr; --algorithms naming it, or
// the scenario listing it, keeps it; --algorithms without it says nothing.
func TestConcurrencyLeftOutWithoutService(t *testing.T) {
	status, out, errOut := run(t, "compare", "double-burst")
	require.Equal(t, 0, status, errOut)
	require.NotContains(t, out, "concurrency")
	require.Equal(t, "note: concurrency left out: backend.service is 0, so no request is ever in flight and it could refuse none; name it in algorithms to keep it\n", errOut)

	status, out, errOut = run(t, "compare", "double-burst", "--algorithms", "x-time-rate,concurrency,gcra", "--format", "csv")
	require.Equal(t, 0, status, errOut)
	require.Empty(t, errOut)
	var labels []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		labels = append(labels, strings.SplitN(line, ",", 2)[0])
	}
	require.Equal(t, []string{"gcra", "concurrency", "x-time-rate"}, labels, "in the default list's order")

	status, _, errOut = run(t, "compare", "double-burst", "--algorithms", "gcra")
	require.Equal(t, 0, status, errOut)
	require.Empty(t, errOut, "not asked for: no note")

	path := writeFile(t, "listed.yaml", okScenario+"algorithms: [gcra, concurrency]\n")
	status, out, errOut = run(t, "compare", path)
	require.Equal(t, 0, status, errOut)
	require.Empty(t, errOut)
	require.Contains(t, out, "| concurrency ")

	path = writeFile(t, "service.yaml", okScenario+"backend: {service: 20ms}\n")
	status, out, errOut = run(t, "compare", path)
	require.Equal(t, 0, status, errOut)
	require.Empty(t, errOut)
	require.Contains(t, out, "| concurrency ")
}
