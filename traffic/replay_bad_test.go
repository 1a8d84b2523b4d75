package traffic

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// badLog is bad.log: lines 1 and 8 are good, 2-7 are bad in every way a
// log line can be.
var badLog = struct {
	reasons map[string]int64
	first   []LineError
}{
	reasons: map[string]int64{"missing field": 2, "bad time": 1, "bad month": 1, "not UTF-8": 1, "empty line": 1},
	first: []LineError{
		{File: replayDir + "bad.log", Line: 2, Col: 42, Msg: "missing field: truncated: no closing quote of the request"},
		{File: replayDir + "bad.log", Line: 3, Col: 14, Msg: `bad time: "32/Oct/2000:13:55:36 +0000": no day 32 of month 10`},
		{File: replayDir + "bad.log", Line: 4, Col: 14, Msg: `bad month: "Okt" is not a month (want Jan, Feb, Mar, Apr, May, Jun, Jul, Aug, Sep, Oct, Nov or Dec)`},
		{File: replayDir + "bad.log", Line: 5, Col: 62, Msg: "missing field: no size after the status"},
		{File: replayDir + "bad.log", Line: 6, Msg: "not UTF-8: binary or mis-encoded bytes"},
		// line 7, the empty one, is the sixth: counted, not listed
	},
}

func TestReplayBadLines(t *testing.T) {
	got := replayAll(t, &Replay{Path: replayDir + "bad.log"})
	require.NoError(t, got.err)
	// the good lines, each alone in its second
	require.Equal(t, []time.Duration{s2000 + 500*time.Millisecond, s2000 + 1500*time.Millisecond}, got.at)
	require.Equal(t, []string{"1.1.1.1", "4.4.4.4"}, got.keys)
	require.Equal(t, &ReplayStats{Path: replayDir + "bad.log", Format: "combined", Lines: 8, Used: 2, Malformed: 6,
		ByReason: badLog.reasons, FirstBad: badLog.first, First: s2000 + 500*time.Millisecond, Last: s2000 + 1500*time.Millisecond,
		Keys: 2, PeakPerSecond: 1}, got.stats)
}

// TestReplayStrict: strict stops at the first bad line; Err is its
// *LineError, and nothing waiting in the reorder buffer is sent.
func TestReplayStrict(t *testing.T) {
	r := &Replay{Path: replayDir + "bad.log", Strict: true, Reorder: time.Minute}
	got := replayAll(t, r)
	var le *LineError
	require.True(t, errors.As(got.err, &le))
	require.Equal(t, badLog.first[0], *le)
	require.EqualError(t, got.err, "testdata/replay/bad.log:2:42: missing field: truncated: no closing quote of the request")
	require.Empty(t, got.at)
	require.Equal(t, int64(2), got.stats.Lines)
	require.Equal(t, int64(1), got.stats.Malformed)
	// a strict read of a good file is a read
	good := replayAll(t, &Replay{Path: replayDir + "combined.log", Strict: true})
	require.NoError(t, good.err)
	require.Len(t, good.at, 4)
}

// TestReplayLongLines: a line of 1 MB (1,000,000 bytes) is below the
// 1 MiB limit and read; a line of 1 MiB + 1 byte, or of 3 MiB, is "line
// too long", skipped without being held, and the line after it is read.
func TestReplayLongLines(t *testing.T) {
	good := func(host string) string {
		return host + ` - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "curl"` + "\n"
	}
	var b strings.Builder
	b.WriteString(good("1.1.1.1"))
	b.WriteString(`2.2.2.2 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "` + strings.Repeat("x", 1_000_000) + "\"\n")
	b.WriteString(strings.Repeat("y", maxLine+1) + "\n")
	b.WriteString(strings.Repeat("z", 3*maxLine) + "\r\n")
	b.WriteString(strings.Repeat("w", maxLine) + "\n") // at the limit: read, and not a log line
	b.WriteString(good("3.3.3.3"))
	path := writeTrace(t, "long.log", b.String())
	got := replayAll(t, &Replay{Path: path})
	require.Equal(t, []string{"1.1.1.1", "2.2.2.2", "3.3.3.3"}, got.keys)
	require.Equal(t, int64(6), got.stats.Lines)
	require.Equal(t, map[string]int64{"line too long": 2, "missing field": 1}, got.stats.ByReason)
	require.Equal(t, []LineError{
		{File: path, Line: 3, Msg: "line too long: longer than 1048576 bytes"},
		{File: path, Line: 4, Msg: "line too long: longer than 1048576 bytes"},
		{File: path, Line: 5, Col: maxLine + 1, Msg: "missing field: the line ends after the host"},
	}, got.stats.FirstBad)
	t.Run("last line without newline", func(t *testing.T) {
		path := writeTrace(t, "long.log", good("1.1.1.1")+strings.Repeat("y", maxLine+10))
		got := replayAll(t, &Replay{Path: path})
		require.Equal(t, map[string]int64{"line too long": 1}, got.stats.ByReason)
		require.Equal(t, int64(2), got.stats.Lines)
	})
}

// TestReplayBadCSV: every way a CSV, TSV or JSON line can be bad.
func TestReplayBadCSV(t *testing.T) {
	for _, tt := range []struct {
		name, content string
		r             Replay
		msgs          []string
	}{
		{"csv", "time,key,cost\n" +
			"2000-10-10T13:55:36Z,a,1\n" +
			"2000-10-10T13:55:36Z,\"unclosed,1\n" +
			"2000-10-10T13:55:36Z,\"a\"b,1\n" +
			"2000-10-10T13:55:36Z\n" +
			"2000-10-10T13:55:36Z,a\n" +
			"2000-10-10T13:55:36Z,,1\n" +
			"2000-10-10T13:55:36Z,a,0\n" +
			"2000-10-10T13:55:36Z,a,-1\n" +
			"2000-10-10T13:55:36Z,a,1.5\n" +
			"2000-13-10T13:55:36Z,a,1\n" +
			"1969-12-31T23:59:59Z,a,1\n" +
			"2263-01-01T00:00:00Z,a,1\n" +
			"yesterday,a,1\n" +
			"2000-10-10T13:55:36Z,a\"b,1\n",
			Replay{KeyField: "key", CostField: "cost", Format: "csv"},
			[]string{
				"3:1: bad quote: a quoted field is not closed on its line",
				"4:1: bad quote: text after the closing quote of a field",
				"5:21: missing field: the line has 1 columns, the key (key) is column 2",
				"6:23: missing field: the line has 2 columns, the cost (cost) is column 3",
				"7:22: missing field: empty key (column 2, key)",
				`8:24: bad cost: "0" is not an integer >= 1`,
				`9:24: bad cost: "-1" is not an integer >= 1`,
				`10:24: bad cost: "1.5" is not an integer >= 1`,
				`11:1: bad time: "2000-13-10T13:55:36Z": no month 13`,
				`12:1: bad time: "1969-12-31T23:59:59Z" is before 1970`,
				`13:1: bad time: "2263-01-01T00:00:00Z" is beyond 2262-04-11T23:47:16Z`,
				`14:1: bad time: "yesterday" is not a time (want RFC 3339 like 2006-01-02T15:04:05.999Z, 2006-01-02 15:04:05.9999999, 02/Jan/2006:15:04:05 -0700 or a Unix time; or set time-layout or time-unit)`,
				"15:23: bad quote: a quote at column 23, in a field that does not start with one (quote the field and double the quote)",
			}},
		{"tsv", "t\tk\n1438936711\tx\n\n-5\tx\n1e9\tx\n99999999999999999999\tx\n1438936711\n",
			Replay{TimeField: "t", KeyField: "k", Format: "tsv", TimeUnit: "s"},
			[]string{
				"3:1: empty line",
				`4:1: bad time: "-5" is before 1970`,
				`5:1: bad time: "1e9" is not a number (want digits, maybe with a decimal point)`,
				`6:1: bad time: "99999999999999999999" is beyond 2262-04-11T23:47:16Z`,
				"7:11: missing field: the line has 1 columns, the key (k) is column 2",
			}},
		{"jsonl", `{"time": 971186136, "k": "a"}` + "\n" +
			"{not json\n" +
			"[1, 2]\n" +
			"null\n" +
			`{"k": "a"}` + "\n" +
			`{"time": true, "k": "a"}` + "\n" +
			`{"time": 971186136, "k": {"a": 1}}` + "\n" +
			`{"time": 971186136, "k": null}` + "\n" +
			`{"time": 971186136, "k": ""}` + "\n" +
			`{"time": "", "k": "a"}` + "\n",
			Replay{KeyField: "k", Format: "jsonl"},
			[]string{
				"2:2: bad JSON: invalid character 'n' looking for beginning of object key string",
				"3:1: bad JSON: json: cannot unmarshal array into Go value of type map[string]json.RawMessage",
				"4:1: bad JSON: null, want an object",
				"5:1: missing field: no time field (want one named time, timestamp, @timestamp, ts, datetime, time_s, time_ms, time_us or time_ns, or set time-field)",
				`6:2: bad time: field "time" is not a string or a number`,
				`7:21: bad key: field "k" is not a string or a number`,
				`8:1: missing field: no field "k" (the key)`,
				`9:21: missing field: empty key (field "k")`,
				"10:2: missing field: empty time",
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTrace(t, "bad."+tt.name, tt.content)
			r := tt.r
			r.Path = path
			// every line is reported: lift the limit of 5 for the test
			k := NewKeys()
			st, err := r.Open(k, 0, 1)
			require.NoError(t, err)
			s := st.(*replayStream)
			s.bad = -100
			var a Arrival
			n := 0
			for s.Next(&a) {
				n++
			}
			require.NoError(t, s.Err())
			require.Equal(t, 1, n, "the first line is good")
			var msgs []string
			for _, le := range r.Stats().FirstBad {
				require.Equal(t, path, le.File)
				msgs = append(msgs, strings.TrimPrefix(le.Error(), path+":"))
			}
			require.Equal(t, tt.msgs, msgs)
		})
	}
}

// TestReplayEmptyAndMissing: an empty file replays nothing (Check says it
// is empty); a missing file fails to open, naming it.
func TestReplayEmptyAndMissing(t *testing.T) {
	for _, format := range []string{"", "combined", "csv", "jsonl"} {
		path := writeTrace(t, "empty.log", "")
		r := &Replay{Path: path, Format: format}
		got := replayAll(t, r)
		require.Empty(t, got.at)
		require.Equal(t, int64(0), got.stats.Lines)
		require.EqualError(t, r.Check(), path+": empty: no line to replay")
	}
	t.Run("empty gzip", func(t *testing.T) {
		path := gzipFile(t, writeTrace(t, "empty", ""), "empty.gz")
		got := replayAll(t, &Replay{Path: path})
		require.Equal(t, int64(0), got.stats.Lines)
	})
	path := filepath.Join(t.TempDir(), "nope.log")
	r := &Replay{Path: path}
	_, err := r.Open(NewKeys(), 0, 1)
	require.EqualError(t, err, path+": no such file or directory")
	var re *ReplayError
	require.True(t, errors.As(err, &re))
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.EqualError(t, r.Check(), path+": no such file or directory")
	require.Nil(t, r.Stats())
	_, err = (&Replay{Path: t.TempDir()}).Open(NewKeys(), 0, 1)
	require.ErrorContains(t, err, ": is a directory, want a trace file")
}

// TestReplayOpenErrors: options and files a replay cannot run with, with
// the exact messages.
func TestReplayOpenErrors(t *testing.T) {
	csv := writeTrace(t, "a.csv", "time,user\n1,a\n")
	nocol := writeTrace(t, "b.csv", "when,user\n1,a\n")
	garbage := writeTrace(t, "c.txt", "hello world\nhow are you\n")
	gz := writeTrace(t, "d.gz", "\x1f\x8b not really gzip")
	for _, tt := range []struct {
		r    Replay
		want string
	}{
		{Replay{}, "no path"},
		{Replay{Path: csv, Format: "xml"}, `format "xml": want auto, combined, common, csv, tsv or jsonl`},
		{Replay{Path: csv, TimeLayout: "2006", TimeUnit: "s"}, "time-layout and time-unit: want one, not both"},
		{Replay{Path: csv, TimeUnit: "min"}, `time-unit "min": want s, ms, us or ns`},
		{Replay{Path: csv, TimeLayout: "yyyy-mm-dd"}, `time-layout "yyyy-mm-dd": no element of Go's reference time (want a layout like 2006-01-02 15:04:05.000)`},
		{Replay{Path: csv, TimeLayout: "15:04:05"}, `time-layout "15:04:05": does not give the date and time to the second (2006-01-02 15:04:05 reads back as 0000-01-01 15:04:05)`},
		{Replay{Path: csv, Format: "combined", KeyField: "path"}, `key-field "path": a combined log's fields are ip, ident, user, request, status, referer or agent (or none)`},
		{Replay{Path: csv, Format: "common", KeyField: "agent"}, `key-field "agent": a common log's fields are ip, ident, user, request or status (or none)`},
		{Replay{Path: csv, Format: "combined", TimeField: "ts"}, `time-field "ts": a log's time is its [time] field (set time-layout for another stamp)`},
		{Replay{Path: csv, Format: "combined", CostField: "bytes"}, `cost-field "bytes": a log's cost field is size`},
		{Replay{Path: csv, Format: "jsonl", Columns: []string{"a"}}, "columns: applies to csv and tsv only, not jsonl"},
		{Replay{Path: csv, Columns: []string{"a", ""}}, "columns[1]: empty name"},
		{Replay{Path: csv, Columns: []string{"a", "b", "a"}}, `columns[2]: "a" named twice (also columns[0])`},
		{Replay{Path: csv, Reorder: -1}, "reorder -1ns: want a duration >= 0"},
		{Replay{Path: csv, Spread: "uniform"}, `spread "uniform": want even, none or random`},
		{Replay{Path: csv, Speed: Fraction{0, 1}}, "speed 0/1: want a fraction > 0"},
		{Replay{Path: csv, SliceStart: 2 * time.Second, SliceEnd: time.Second}, "end 1s: want an end after start 2s"},
		{Replay{Path: csv, TimeField: "when"}, `time-field "when": no such column (columns: time, user)`},
		{Replay{Path: csv, KeyField: "3"}, "key-field 3: want a column from 1 to 2 (columns: time, user)"},
		{Replay{Path: csv, CostField: "0"}, "cost-field 0: want a column from 1 to 2 (columns: time, user)"},
		{Replay{Path: nocol}, "no time column: set time-field (columns: when, user)"},
		{Replay{Path: garbage}, "cannot recognise the format from the first lines (want combined, common, csv, tsv or jsonl; set --trace-format, or format in a scenario file)"},
		{Replay{Path: replayDir + "combined.log", Columns: []string{"a"}}, "columns: applies to csv and tsv only, and the file looks like a combined log"},
		{Replay{Path: replayDir + "common.log", KeyField: "referer"}, `key-field "referer": a common log's fields are ip, ident, user, request or status (or none) (format common, recognised)`},
		{Replay{Path: gz}, "not a valid gzip file: gzip: invalid header"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			r := tt.r
			_, err := r.Open(NewKeys(), 0, 1)
			require.EqualError(t, err, r.Path+": "+tt.want)
			var re *ReplayError
			require.True(t, errors.As(err, &re))
			require.Equal(t, tt.want, re.Msg)
			require.EqualError(t, r.Check(), r.Path+": "+tt.want)
		})
	}
}

// TestReplayCheck: Check reads the first lines.
func TestReplayCheck(t *testing.T) {
	require.NoError(t, (&Replay{Path: replayDir + "combined.log"}).Check())
	require.NoError(t, (&Replay{Path: replayDir + "bad.log"}).Check())
	// the bad line 2 stops a strict run
	require.EqualError(t, (&Replay{Path: replayDir + "bad.log", Strict: true}).Check(),
		"testdata/replay/bad.log: line 2, column 42: missing field: truncated: no closing quote of the request (strict stops there)")
	// the first 5 lines are all bad
	path := writeTrace(t, "t.log", strings.Repeat(`1.1.1.1 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200`+"\n", 6))
	require.EqualError(t, (&Replay{Path: path, Format: "combined"}).Check(),
		path+": none of the first 5 lines can be read as combined: line 1, column 62: missing field: no size after the status")
	// a layout that does not fit
	require.EqualError(t, (&Replay{Path: replayDir + "header.csv", TimeLayout: "02/01/2006 15:04:05"}).Check(),
		`testdata/replay/header.csv: none of the first 3 lines can be read as csv: line 2, column 1: bad time: "2023-11-16 18:15:46.6805900" does not match time-layout "02/01/2006 15:04:05"`)
}

// TestReplayClose: a stream closed early sends nothing more and closes
// its file; Stats stays nil, as no stream was read to its end.
func TestReplayClose(t *testing.T) {
	r := &Replay{Path: replayDir + "combined.log"}
	st, err := r.Open(NewKeys(), 0, 1)
	require.NoError(t, err)
	var a Arrival
	require.True(t, st.Next(&a))
	require.NoError(t, st.(interface{ Close() error }).Close())
	require.False(t, st.Next(&a))
	require.Nil(t, r.Stats())
}

// TestReplayFirstStats: every stream of a source gives the same figures;
// Stats holds those of the first read to its end.
func TestReplayFirstStats(t *testing.T) {
	r := &Replay{Path: replayDir + "bad.log"}
	first := replayAll(t, r)
	second := replayAll(t, r)
	require.Same(t, first.stats, second.stats)
	require.Equal(t, first.at, second.at)
}

// TestReplayKeysShared: keys interned while reading share the plan's key
// space: a name a synthetic source declared keeps its id.
func TestReplayKeysShared(t *testing.T) {
	plan := Plan{Sources: []Source{
		&Times{Common: Common{Clients: Clients{Key: "3.3.3.3"}, Cost: 1}, At: []time.Duration{0}},
		&Replay{Path: replayDir + "combined.log"},
	}}
	keys, s, err := plan.Open()
	require.NoError(t, err)
	got, err := drain(s)
	require.NoError(t, err)
	require.Len(t, got, 5)
	// 3.3.3.3 was declared first: id 0; the trace's new names follow in
	// first-seen order
	require.Equal(t, []string{"3.3.3.3", "1.1.1.1", "2.2.2.2"}, []string{keys.Name(0), keys.Name(1), keys.Name(2)})
	require.Equal(t, uint32(0), got[4].Key)
	require.Equal(t, int32(1), got[4].Source)
}

// TestReplayConcurrent: each algorithm reads its own stream of a source,
// maybe at once: the streams share nothing but the statistics, published
// once (run with -race).
func TestReplayConcurrent(t *testing.T) {
	r := &Replay{Path: replayDir + "bad.log", Spread: "random"}
	want := replayAll(t, &Replay{Path: replayDir + "bad.log", Spread: "random"})
	done := make(chan []time.Duration)
	for range 4 {
		go func() {
			s, err := r.Open(NewKeys(), 0, 1)
			if err != nil {
				done <- nil
				return
			}
			var at []time.Duration
			var a Arrival
			for s.Next(&a) {
				at = append(at, a.At)
			}
			_ = r.Stats()
			done <- at
		}()
	}
	for range 4 {
		require.Equal(t, want.at, <-done)
	}
	require.Equal(t, want.stats, r.Stats())
}

// TestReplayTruncatedGzip: a gzip file cut short (a log still being
// written) ends the stream with a *ReplayError naming the line where the
// data stopped.
func TestReplayTruncatedGzip(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		b.WriteString(`1.1.1.1 - - [10/Oct/2000:13:55:36 +0000] "GET /` + strings.Repeat("x", i%50) + ` HTTP/1.1" 200 1` + "\n")
	}
	gz := gzipFile(t, writeTrace(t, "a.log", b.String()), "a.log.gz")
	data, err := os.ReadFile(gz)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(gz, data[:len(data)-20], 0o644))
	r := &Replay{Path: gz}
	s, err := r.Open(NewKeys(), 0, 1)
	require.NoError(t, err)
	var a Arrival
	for s.Next(&a) {
	}
	var re *ReplayError
	require.ErrorAs(t, s.Err(), &re)
	require.ErrorIs(t, s.Err(), io.ErrUnexpectedEOF)
	require.Regexp(t, `^line \d+: unexpected EOF$`, re.Msg)
	require.Equal(t, r.Stats().Lines, r.Stats().Used)
}

// TestReplayQuotes: a CSV field may be quoted, with "" for a quote and a
// comma inside; a TSV field is taken as it is, quotes and all.
func TestReplayQuotes(t *testing.T) {
	csvPath := writeTrace(t, "quotes.csv", "time_s,key\n971186136,\"a \"\"b\"\", c\"\n971186137,\"\"\n971186138,d\n")
	got := replayAll(t, &Replay{Path: csvPath, KeyField: "key"})
	require.Equal(t, []string{`a "b", c`, "d"}, got.keys)
	require.Equal(t, map[string]int64{"missing field": 1}, got.stats.ByReason, "an empty quoted key is empty")

	tsvPath := writeTrace(t, "quotes.tsv", "time_s\tkey\n971186136\t\"a\"b\n971186137\t\"c\"\n")
	got = replayAll(t, &Replay{Path: tsvPath, KeyField: "key"})
	require.Equal(t, []string{`"a"b`, `"c"`}, got.keys)
}
