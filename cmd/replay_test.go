package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const okLine = `1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5 "-" "curl"` + "\n"

// TestReplayBadLines: every kind of bad line is counted by reason and
// reported with its line number, the run goes on, and nothing panics.
func TestReplayBadLines(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	log.WriteString(okLine)                                                                                                  // 1: good
	log.WriteString(`1.2.3.4 - - [17/May/2015:10:05`)                                                                        // 2: truncated
	log.WriteString("\n")                                                                                                    //
	log.WriteString(`1.2.3.4 - - [32/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5` + "\n")                                // 3: bad date
	log.WriteString(`1.2.3.4 - - [17/Mai/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5` + "\n")                                // 4: bad month
	log.WriteString(`1.2.3.4 - -` + "\n")                                                                                    // 5: missing field
	log.WriteString("\x00\x01\xfe\xffgarbage\n")                                                                             // 6: binary
	log.WriteString("9.9.9.9 - - [17/May/2015:10:05:04 +0000] \"GET /" + strings.Repeat("a", 1<<20) + " HTTP/1.1\" 200 5\n") // 7: 1 MB
	log.WriteString(strings.Replace(okLine, "10:05:03", "10:05:05", 1))                                                      // 8: good
	path := filepath.Join(dir, "bad.log")
	require.NoError(t, os.WriteFile(path, log.Bytes(), 0o644))

	status, out, errOut := run(t, "replay", path, "--limit", "10/s", "--trace-format", "combined")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "8 lines read, 2 used, 6 malformed")
	// each bad line with the column of what is wrong in it
	for _, want := range []string{":2:13: missing field", ":3:14: bad time", ":4:14: bad month", ":5:12: missing field", ":6:1: not UTF-8"} {
		require.Contains(t, out, want)
	}
	require.Contains(t, out, "line too long 1")
	require.Contains(t, out, "not UTF-8 1")
	require.NotContains(t, out+errOut, "panic")

	// strict: exit 2 at the first bad line, naming it
	status, out, errOut = run(t, "replay", path, "--limit", "10/s", "--strict")
	require.Equal(t, 2, status)
	require.Empty(t, out)
	require.Contains(t, errOut, "bad.log: line 2, column 13: missing field")
}

func TestReplayMissingAndEmpty(t *testing.T) {
	dir := t.TempDir()
	status, _, errOut := run(t, "replay", filepath.Join(dir, "nope.log"), "--limit", "10/s")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "nope.log: no such file or directory")

	empty := filepath.Join(dir, "empty.log")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	status, _, errOut = run(t, "replay", empty, "--limit", "10/s")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "empty.log: empty: no line to replay")

	status, _, errOut = run(t, "replay", empty)
	require.Equal(t, 2, status, "--limit is required")
	require.Contains(t, errOut, `"limit" not set`)

	status, _, errOut = run(t, "replay", empty, "--limit", "10/x")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, `--limit: "10/x": unknown unit "x"`)
}

// TestTrafficRoundTrip: exporting a scenario's traffic and replaying the
// file gives the same decisions as the scenario itself (csv and jsonl carry
// times to the nanosecond, keys and costs).
func TestTrafficRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// the scenario's own decisions, once for both formats
	want := filepath.Join(dir, "want.csv")
	status, _, errOut := run(t, "compare", "api-gateway", "--decisions", want, "--format", "json")
	require.Equal(t, 0, status, errOut)
	for _, format := range []string{"csv", "jsonl"} {
		t.Run(format, func(t *testing.T) {
			file := filepath.Join(dir, "api."+format)
			status, _, errOut := run(t, "traffic", "api-gateway", "--format", format, "--output", file)
			require.Equal(t, 0, status, errOut)

			got := filepath.Join(dir, "got-"+format+".csv")
			status, _, errOut = run(t, "replay", file, "--limit", "10/s", "--burst", "20",
				"--key-field", "key", "--cost-field", "cost", "--decisions", got, "--format", "json")
			require.Equal(t, 0, status, errOut)

			w, err := os.ReadFile(want)
			require.NoError(t, err)
			g, err := os.ReadFile(got)
			require.NoError(t, err)
			require.Greater(t, bytes.Count(w, []byte("\n")), 8*18000, "every decision of eight algorithms (no service time: no concurrency)")
			require.Equal(t, string(w), string(g), "the same decisions, row for row")
		})
	}
}

// TestReplayRealTrace replays the Apache log of ../shared/traces through the
// command, as a user would, with one row (TestEngineOutputUnchanged holds
// all nine to their digests with RATESIM_LONG=1).
func TestReplayRealTrace(t *testing.T) {
	t.Parallel()
	path := "../../shared/traces/elastic_apache_logs.log"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("the shared traces are not here (%v): they come with the team's workspace, not the repository", err)
	}
	status, out, errOut := run(t, "replay", path, "--limit", "1/s", "--burst", "5", "--algorithms", "gcra", "--format", "json")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, `"lines": 10000`)
	require.Contains(t, out, `"keys": 1753`)
	require.Contains(t, out, `"format": "combined"`)
}

// TestReplayLongDurationForPeople: a trace of 27 days prints its
// span as people read it, in the heading and the trace summary, and the
// JSON keeps nanoseconds.
func TestReplayLongDurationForPeople(t *testing.T) {
	csv := "time_ns,key\n0,a\n" + "2378989808395000,a\n" // 660h49m49.808395s later
	path := writeFile(t, "long.csv", csv)
	status, out, errOut := run(t, "replay", path, "--limit", "10/s", "--time-unit", "ns", "--algorithms", "gcra")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "duration 27d12h49m49.8s,")
	require.Contains(t, out, "(27d12h49m49.8s)")
	require.NotContains(t, out, "660h")

	status, out, errOut = run(t, "replay", path, "--limit", "10/s", "--time-unit", "ns", "--algorithms", "gcra", "--format", "json")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, `"duration_ns": 2378989808395000`)
}

// A trace's times print as UTC dates whatever their year and format: a
// TSV of epoch seconds from 1995 printed "from 224238h0m0.5s" once.
func TestReplayTimesAsDates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "epoch.tsv")
	require.NoError(t, os.WriteFile(path, []byte("time\tip\n807235200.5\ta\n807235201\tb\n807235201\ta\n807235202\ta\n"), 0o644))
	status, out, errOut := run(t, "replay", path, "--limit", "1/s", "--time-field", "time", "--key-field", "ip",
		"--algorithms", "fixed-window,sliding-log")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "from 1995-08-01T00:00:00.5Z to 1995-08-01T00:00:02.5Z (2s)")
	require.Contains(t, out, "starting at 1995-08-01T00:00:01.75Z")
	require.Contains(t, out, "Timeline from 1995-08-01T00:00:00.5Z")
	require.NotContains(t, out, "224238h")
}

// TestReplayTemplateColumns: a line read through a log_format, given
// with --log-format or taken from the gateway's config by --gateway, is
// placed at the column of its bad field: the time at 1, the verdict at
// 16 (after "1796159250.024 "), the key at 23 (after "... PASSED ").
func TestReplayTemplateColumns(t *testing.T) {
	lines, err := os.ReadFile("../examples/nginx-check-two.log")
	require.NoError(t, err)
	good := strings.SplitAfter(string(lines), "\n")[:3]
	path := writeFile(t, "two.log", strings.Join(good, "")+
		"1796159250.0x5 PASSED client-1 0.000 \"GET /two HTTP/1.1\" 200\n"+
		"1796159250.025 PASSEDX client-1 0.000 \"GET /two HTTP/1.1\" 200\n"+
		"1796159250.025 PASSED - 0.000 \"GET /two HTTP/1.1\" 200\n")
	want := []string{"two.log:4:1: bad time", "two.log:5:16: bad check", "two.log:6:23: missing field"}
	for _, args := range [][]string{
		{"--gateway", "../examples/nginx-check.conf", "--from", "nginx", "--scope", "/two", "--check-field", "limit_req_status"},
		{"--log-format", `$msec $limit_req_status $http_x_client $request_time "$request" $status`, "--key-field", "http_x_client",
			"--check-field", "limit_req_status", "--limit", "4/s"},
	} {
		status, out, errOut := run(t, append([]string{"replay", path}, args...)...)
		require.Equal(t, 0, status, errOut)
		for _, w := range want {
			require.Contains(t, out, w, args[0])
		}
		status, _, errOut = run(t, append([]string{"replay", path, "--strict"}, args...)...)
		require.Equal(t, 2, status)
		require.Contains(t, errOut, "two.log: line 4, column 1: bad time", args[0])
	}
}
