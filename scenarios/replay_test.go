package scenarios

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/traffic"
)

// replayHead is the head of the replay snippets.
const replayHead = "name: t\nlimit: 10/s\ntraffic:\n"

func paris(t testing.TB) *time.Location {
	loc, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	return loc
}

// validReplays are replay snippets and the source Parse makes of each
// (file "s.yaml"). FuzzParse is seeded with them too.
var validReplays = []struct {
	name, src string
	want      func(t testing.TB) *traffic.Replay
	duration  time.Duration
}{
	{
		// defaults: auto format, the 5m window, cost 1; no duration needed
		// (0: until the trace ends)
		"minimal", replayHead + "  - type: replay\n    path: access.log\n",
		func(testing.TB) *traffic.Replay {
			return &traffic.Replay{Common: traffic.Common{Cost: 1}, Path: "access.log", Reorder: 5 * time.Minute}
		}, 0,
	},
	{
		// every field; start and end cut the trace; speed 1.5 is 3/2
		"everything", replayHead + "  - type: replay\n    path: /var/log/llm.tsv.gz\n    format: tsv\n" +
			"    columns: [t, ip, tokens]\n    time-field: t\n    key-field: 2\n    cost-field: tokens\n" +
			"    time-unit: ms\n    timezone: Europe/Paris\n    reorder: 30s\n    spread: random\n    speed: 1.5\n" +
			"    start: 10m\n    end: 1h\n    strict: true\n    retry: {policy: retry-after}\n",
		func(t testing.TB) *traffic.Replay {
			return &traffic.Replay{
				Common: traffic.Common{Cost: 1, Retry: &traffic.RetryPolicy{Policy: "retry-after", Resolution: time.Second, MaxAttempts: 3}},
				Path:   "/var/log/llm.tsv.gz", Format: "tsv", Columns: []string{"t", "ip", "tokens"},
				TimeField: "t", KeyField: "2", CostField: "tokens", TimeUnit: "ms", Timezone: paris(t),
				Reorder: 30 * time.Second, Spread: "random", Speed: traffic.Fraction{Num: 3, Den: 2},
				SliceStart: 10 * time.Minute, SliceEnd: time.Hour, Strict: true,
			}
		}, 0,
	},
	{
		// a log with its own stamp; no window; half as fast; a fixed cost
		"log with a layout", replayHead + "  - {type: replay, path: app.log, format: combined, time-layout: '[2006-01-02 15:04:05.000000]', " +
			"key-field: user, spread: none, reorder: 0s, speed: 0.5, cost: 3, timezone: UTC}\n",
		func(testing.TB) *traffic.Replay {
			return &traffic.Replay{Common: traffic.Common{Cost: 3}, Path: "app.log", Format: "combined",
				TimeLayout: "[2006-01-02 15:04:05.000000]", KeyField: "user", Spread: "none",
				Speed: traffic.Fraction{Num: 1, Den: 2}, Timezone: time.UTC}
		}, 0,
	},
	{
		"common log, cost from the size, one key", replayHead + "  - {type: replay, path: a.log, format: common, key-field: none, cost-field: size, time-field: time}\n",
		func(testing.TB) *traffic.Replay {
			return &traffic.Replay{Common: traffic.Common{Cost: 1}, Path: "a.log", Format: "common",
				KeyField: "none", CostField: "size", TimeField: "time", Reorder: 5 * time.Minute}
		}, 0,
	},
	{
		"nginx log_format, a check field", replayHead + "  - {type: replay, path: a.log, log-format: '$msec $http_x_client $limit_req_status', log-escape: json, key-field: $http_x_client, check-field: limit_req_status}\n",
		func(testing.TB) *traffic.Replay {
			return &traffic.Replay{Common: traffic.Common{Cost: 1}, Path: "a.log", LogFormat: "$msec $http_x_client $limit_req_status",
				LogEscape: "json", KeyField: "$http_x_client", CheckField: "limit_req_status", Reorder: 5 * time.Minute}
		}, 0,
	},
	{
		"combined log, status checked", replayHead + "  - {type: replay, path: a.log, format: combined, check-field: status}\n",
		func(testing.TB) *traffic.Replay {
			return &traffic.Replay{Common: traffic.Common{Cost: 1}, Path: "a.log", Format: "combined", CheckField: "status", Reorder: 5 * time.Minute}
		}, 0,
	},
}

func TestParseReplay(t *testing.T) {
	for _, tc := range validReplays {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse("s.yaml", []byte(tc.src))
			require.NoError(t, err)
			checkInvariants(t, sc)
			require.Equal(t, tc.duration, sc.Duration)
			require.Equal(t, tc.want(t), sc.Traffic.Sources[0])
			require.Equal(t, "replay:path="+sc.Traffic.Sources[0].(*traffic.Replay).Path+"#0", sc.Traffic.SeedNames[0])
		})
	}
}

// TestParseReplayPaths: a relative path is read from the scenario file's
// folder; absolute paths and built-ins' paths are kept.
func TestParseReplayPaths(t *testing.T) {
	src := replayHead + "  - {type: replay, path: logs/access.log}\n  - {type: replay, path: /abs/x.log}\n"
	for _, tc := range []struct{ file, want string }{
		{"s.yaml", "logs/access.log"},
		{"dir/sub/s.yaml", "dir/sub/logs/access.log"},
		{"/etc/ratesim/s.yaml", "/etc/ratesim/logs/access.log"},
		{"builtin:demo", "logs/access.log"},
	} {
		sc, err := Parse(tc.file, []byte(src))
		require.NoError(t, err)
		require.Equal(t, tc.want, sc.Traffic.Sources[0].(*traffic.Replay).Path)
		require.Equal(t, "/abs/x.log", sc.Traffic.Sources[1].(*traffic.Replay).Path)
		// seeded by the path as written, wherever the file is
		require.Equal(t, []string{"replay:path=logs/access.log#0", "replay:path=/abs/x.log#0"}, sc.Traffic.SeedNames)
	}
}

// invalidReplays are replay snippets and the exact errors Parse reports.
var invalidReplays = []struct{ name, src, want string }{
	{"no path", replayHead + "  - type: replay\n",
		`s.yaml:4:5: traffic[0].path: missing (want the trace file: an access log, CSV, TSV or JSON lines, maybe gzipped)`},
	{"empty path", replayHead + "  - {type: replay, path: ''}\n", `s.yaml:4:26: traffic[0].path: "": want a non-empty string`},
	{"path a number", replayHead + "  - {type: replay, path: 7}\n", `s.yaml:4:26: traffic[0].path: found integer 7, want a string (quote it: "7")`},
	{"key", replayHead + "  - type: replay\n    path: a.log\n    key: alice\n",
		`s.yaml:6:5: traffic[0].key: does not apply to a replay source: its keys come from the trace (set key-field: a log's ip or user, a column, or none for one key)`},
	{"clients and key-prefix", replayHead + "  - {type: replay, path: a.log, clients: 3, key-prefix: u}\n",
		"s.yaml:4:33: traffic[0].clients: does not apply to a replay source: its keys come from the trace (set key-field: a log's ip or user, a column, or none for one key)\n" +
			"s.yaml:4:45: traffic[0].key-prefix: does not apply to a replay source: its keys come from the trace (set key-field: a log's ip or user, a column, or none for one key)"},
	{"unknown field", replayHead + "  - {type: replay, path: a.log, keyfield: ip}\n",
		`s.yaml:4:33: traffic[0].keyfield: unknown field (a replay source takes path, format, time-field, key-field, cost-field, columns, time-layout, time-unit, timezone, reorder, spread, speed, strict, log-format, log-escape, check-field, attribute-fields and type, cost, start, end, retry); did you mean "key-field"?`},
	{"rate", replayHead + "  - {type: replay, path: a.log, rate: 10/s}\n",
		`s.yaml:4:33: traffic[0].rate: unknown field (a replay source takes path, format, time-field, key-field, cost-field, columns, time-layout, time-unit, timezone, reorder, spread, speed, strict, log-format, log-escape, check-field, attribute-fields and type, cost, start, end, retry); did you mean "path"?`},
	{"format", replayHead + "  - {type: replay, path: a.log, format: xml}\n",
		`s.yaml:4:41: traffic[0].format: "xml": unknown format (want auto, combined, common, csv, tsv or jsonl)`},
	{"log key-field", replayHead + "  - {type: replay, path: a.log, format: combined, key-field: path}\n",
		`s.yaml:4:62: traffic[0].key-field: "path": not a field of a combined log (want ip, ident, user, request, status, referer or agent, or none)`},
	{"common log agent", replayHead + "  - {type: replay, path: a.log, format: common, key-field: agent}\n",
		`s.yaml:4:60: traffic[0].key-field: "agent": not a field of a common log (want ip, ident, user, request or status, or none)`},
	{"log time-field", replayHead + "  - {type: replay, path: a.log, format: combined, time-field: ts}\n",
		`s.yaml:4:51: traffic[0].time-field: does not apply to a combined log: its time is the [time] field (set time-layout for another stamp)`},
	{"log-format and format", replayHead + "  - {type: replay, path: a.log, format: csv, log-format: '$msec $status'}\n",
		`s.yaml:4:46: traffic[0].log-format: a log-format is the trace's format: leave format unset (found format csv)`},
	{"log-format unsplittable", replayHead + "  - {type: replay, path: a.log, log-format: '$msec$status'}\n",
		`s.yaml:4:45: traffic[0].log-format: "$msec$status": $status follows $msec with no text between them: a log line cannot be split there`},
	{"log-escape alone", replayHead + "  - {type: replay, path: a.log, log-escape: json}\n",
		`s.yaml:4:33: traffic[0].log-escape: applies to a log-format only`},
	{"combined check-field", replayHead + "  - {type: replay, path: a.log, format: combined, check-field: agent}\n",
		`s.yaml:4:64: traffic[0].check-field: "agent": a combined log's verdict is its status (want status)`},
	{"log cost-field", replayHead + "  - {type: replay, path: a.log, format: common, cost-field: bytes}\n",
		`s.yaml:4:61: traffic[0].cost-field: "bytes": not a numeric field of a common log (want size)`},
	{"cost and cost-field", replayHead + "  - type: replay\n    path: a.csv\n    cost-field: tokens\n    cost: 2\n",
		`s.yaml:7:5: traffic[0].cost: want cost or cost-field, not both`},
	{"column number in JSON", replayHead + "  - {type: replay, path: a.jsonl, format: jsonl, time-field: 2}\n",
		`s.yaml:4:62: traffic[0].time-field: found integer 2, want a field name (column numbers are for csv and tsv)`},
	{"column 0", replayHead + "  - {type: replay, path: a.csv, key-field: 0}\n",
		`s.yaml:4:44: traffic[0].key-field: 0: want a column number from 1, or a name`},
	{"field a list", replayHead + "  - {type: replay, path: a.csv, cost-field: [a]}\n",
		`s.yaml:4:45: traffic[0].cost-field: found a list, want a string`},
	{"columns of a log", replayHead + "  - {type: replay, path: a.log, format: combined, columns: [a, b]}\n",
		`s.yaml:4:51: traffic[0].columns: applies to csv and tsv only (a header-less file), not combined`},
	{"empty columns", replayHead + "  - {type: replay, path: a.csv, columns: []}\n",
		`s.yaml:4:42: traffic[0].columns: empty list (want a list of column names like [time, ip, path])`},
	{"duplicate column", replayHead + "  - {type: replay, path: a.csv, columns: [t, ip, t]}\n",
		`s.yaml:4:50: traffic[0].columns[2]: "t": duplicate column (also traffic[0].columns[0])`},
	{"columns not a list", replayHead + "  - {type: replay, path: a.csv, columns: t}\n",
		`s.yaml:4:42: traffic[0].columns: found string "t", want a list of column names like [time, ip, path]`},
	{"bad layout", replayHead + "  - {type: replay, path: a.csv, time-layout: yyyy-mm-dd}\n",
		`s.yaml:4:46: traffic[0].time-layout: "yyyy-mm-dd": no element of Go's reference time (want a layout like 2006-01-02 15:04:05.000)`},
	{"layout without a date", replayHead + "  - {type: replay, path: a.csv, time-layout: '15:04:05'}\n",
		`s.yaml:4:46: traffic[0].time-layout: "15:04:05": does not give the date and time to the second (2006-01-02 15:04:05 reads back as 0000-01-01 15:04:05)`},
	{"layout and unit", replayHead + "  - {type: replay, path: a.csv, time-layout: '2006-01-02 15:04:05', time-unit: s}\n",
		`s.yaml:4:69: traffic[0].time-unit: want time-layout or time-unit, not both`},
	{"unit", replayHead + "  - {type: replay, path: a.csv, time-unit: min}\n",
		`s.yaml:4:44: traffic[0].time-unit: "min": unknown unit (want s, ms, us or ns)`},
	{"timezone", replayHead + "  - {type: replay, path: a.csv, timezone: Mars/Olympus}\n",
		`s.yaml:4:43: traffic[0].timezone: "Mars/Olympus": unknown time zone (want an IANA name like Europe/Paris, or UTC)`},
	{"local timezone", replayHead + "  - {type: replay, path: a.csv, timezone: Local}\n",
		`s.yaml:4:43: traffic[0].timezone: "Local": the machine's zone would make runs differ between machines (want an IANA name like Europe/Paris, or UTC)`},
	{"negative reorder", replayHead + "  - {type: replay, path: a.csv, reorder: -1s}\n",
		`s.yaml:4:42: traffic[0].reorder: "-1s": want a duration >= 0`},
	{"spread", replayHead + "  - {type: replay, path: a.csv, spread: uniform}\n",
		`s.yaml:4:41: traffic[0].spread: "uniform": unknown spread (want even, none or random)`},
	{"speed 0", replayHead + "  - {type: replay, path: a.csv, speed: 0}\n",
		`s.yaml:4:40: traffic[0].speed: 0: want a decimal > 0 like 2, 0.5 or 1.5`},
	{"speed 0.0", replayHead + "  - {type: replay, path: a.csv, speed: 0.0}\n",
		`s.yaml:4:40: traffic[0].speed: 0.0: want a decimal > 0 like 2, 0.5 or 1.5`},
	{"negative speed", replayHead + "  - {type: replay, path: a.csv, speed: -2}\n",
		`s.yaml:4:40: traffic[0].speed: -2: want a decimal > 0 like 2, 0.5 or 1.5`},
	{"speed with an exponent", replayHead + "  - {type: replay, path: a.csv, speed: 1e3}\n",
		`s.yaml:4:40: traffic[0].speed: found string "1e3", want a decimal > 0 like 2, 0.5 or 1.5`},
	{"speed as a string", replayHead + "  - {type: replay, path: a.csv, speed: fast}\n",
		`s.yaml:4:40: traffic[0].speed: found string "fast", want a decimal > 0 like 2, 0.5 or 1.5`},
	{"speed too precise", replayHead + "  - {type: replay, path: a.csv, speed: 0.0000000000000000001}\n",
		`s.yaml:4:40: traffic[0].speed: 0.0000000000000000001: too many digits (want a decimal > 0 like 2, 0.5 or 1.5)`},
	{"strict", replayHead + "  - {type: replay, path: a.csv, strict: yes}\n",
		`s.yaml:4:41: traffic[0].strict: found string "yes", want true or false`},
	{"end before start", replayHead + "  - {type: replay, path: a.csv, start: 2s, end: 1s}\n",
		`s.yaml:4:49: traffic[0].end: "1s": want an end after start 2s`},
	// a trace keeps its recorded times, synthetic traffic starts at 0: on
	// one clock they would be decades apart
	{"mixed with a synthetic source", replayHead + "  - {type: replay, path: a.log}\n  - {type: times, at: [0s]}\n",
		`s.yaml:5:5: traffic[1]: a times source cannot be mixed with a replay: a trace keeps its recorded times, synthetic traffic starts at 0 (replay the trace alone, or export the synthetic traffic with ratesim traffic and replay both)`},
	// a duration would cut at 0 + duration, decades before the trace
	{"duration with replays", replayHead + "  - {type: replay, path: a.log}\nduration: 1h\n",
		`s.yaml:5:11: duration: "1h": does not apply to replay sources, which run until their traces end (cut a slice with the source's start and end)`},
}

func TestParseReplayInvalid(t *testing.T) {
	for _, tc := range invalidReplays {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse("s.yaml", []byte(tc.src))
			require.Nil(t, sc)
			require.EqualError(t, err, tc.want)
		})
	}
}

// TestParseReplayStreams: a scenario replaying the small combined log of
// the traffic package: the arrivals keep their absolute times.
func TestParseReplayStreams(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../traffic/testdata/replay/combined.log")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "access.log"), data, 0o644))
	file := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(file, []byte(replayHead+"  - {type: replay, path: access.log, spread: none}\n"), 0o644))
	sc, err := Load(file)
	require.NoError(t, err)
	require.NoError(t, CheckFiles(sc))
	keys, s, err := sc.Traffic.Open()
	require.NoError(t, err)
	var got []string
	var a traffic.Arrival
	for s.Next(&a) {
		got = append(got, time.Unix(0, int64(a.At)).UTC().Format(time.RFC3339)+" "+keys.Name(a.Key))
	}
	require.NoError(t, s.Err())
	require.Equal(t, []string{"2000-10-10T13:55:36Z 1.1.1.1", "2000-10-10T13:55:36Z 2.2.2.2",
		"2000-10-10T13:55:36Z 1.1.1.1", "2000-10-10T13:55:37Z 3.3.3.3"}, got)
}

// TestCheckFiles: the errors of the trace files, at their path fields.
func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write("access.log", `1.1.1.1 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 1`+"\n")
	write("garbage.txt", "hello world\n")
	write("bad.log", "1.1.1.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /\n"+`1.1.1.1 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 1`+"\n")
	write("a.csv", "when,user\n1,a\n")
	write("empty.log", "")
	file := filepath.Join(dir, "s.yaml")
	src := replayHead +
		"  - {type: replay, path: access.log}\n" +
		"  - {type: replay, path: nope.log}\n" +
		"  - {type: replay, path: garbage.txt}\n" +
		"  - {type: replay, path: bad.log, strict: true}\n" +
		"  - {type: replay, path: a.csv, key-field: ip}\n" +
		"  - {type: replay, path: empty.log}\n" +
		"  - {type: replay, path: " + filepath.Join(dir, "nope.log") + "}\n"
	require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
	sc, err := Load(file)
	require.NoError(t, err)
	err = CheckFiles(sc)
	var list Errors
	require.ErrorAs(t, err, &list)
	read := func(name string) string {
		return " (read as " + filepath.Join(dir, name) + ", relative to the scenario file)"
	}
	require.Equal(t, []string{
		file + `:5:26: traffic[1].path: "nope.log": no such file or directory` + read("nope.log"),
		file + `:6:26: traffic[2].path: "garbage.txt": cannot recognise the format from the first lines (want combined, common, csv, tsv or jsonl; set --trace-format, or format in a scenario file)` + read("garbage.txt"),
		file + `:7:26: traffic[3].path: "bad.log": line 1, column 42: missing field: truncated: no closing quote of the request (strict stops there)` + read("bad.log"),
		file + `:8:26: traffic[4].path: "a.csv": no time column: set time-field (columns: when, user)` + read("a.csv"),
		file + `:9:26: traffic[5].path: "empty.log": empty: no line to replay` + read("empty.log"),
		file + `:10:26: traffic[6].path: ` + quote(filepath.Join(dir, "nope.log")) + `: no such file or directory`,
	}, errorLines(list))

	// the scenarios without replays have nothing to check
	sc, err = Builtin(Default)
	require.NoError(t, err)
	require.NoError(t, CheckFiles(sc))
}

func errorLines(list Errors) []string {
	var out []string
	for _, e := range list {
		out = append(out, e.Error())
	}
	return out
}

func TestParseSpeed(t *testing.T) {
	for in, want := range map[string]traffic.Fraction{
		"2": {Num: 2, Den: 1}, "0.5": {Num: 1, Den: 2}, "1.5": {Num: 3, Den: 2}, "1": {Num: 1, Den: 1},
		"1.0": {Num: 1, Den: 1}, "0.125": {Num: 1, Den: 8}, "+3": {Num: 3, Den: 1}, ".25": {Num: 1, Den: 4},
		"100": {Num: 100, Den: 1}, "0.001": {Num: 1, Den: 1000},
	} {
		got, msg := parseSpeed(in)
		require.Empty(t, msg, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"0", "0.0", "-1", "1e3", "", ".", "1.2.3", "x", "1/2"} {
		_, msg := parseSpeed(in)
		require.NotEmpty(t, msg, in)
	}
}
