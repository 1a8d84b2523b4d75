package traffic

import (
	"bufio"
	"compress/gzip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// replayDir holds the small traces of these tests.
const replayDir = "testdata/replay/"

// s2000 is 10/Oct/2000:13:55:36 +0000, the stamp of the small logs:
// 971186136 s since the epoch (calendar.timegm of that date).
const s2000 = 971186136 * time.Second

// replayed is what a replay stream sent.
type replayed struct {
	at    []time.Duration
	keys  []string
	costs []int64
	stats *ReplayStats
	err   error
}

// replayWith opens r (as source 0, with seed) and reads it to its end.
func replayWith(t testing.TB, r *Replay, seed uint64) replayed {
	t.Helper()
	k := NewKeys()
	s, err := r.Open(k, 0, seed)
	require.NoError(t, err)
	var out replayed
	var a Arrival
	prev := time.Duration(-1)
	for s.Next(&a) {
		if a.At < prev { // require only on failure: it is slow in a loop
			require.GreaterOrEqual(t, a.At, prev, "arrivals in time order")
		}
		prev = a.At
		out.at = append(out.at, a.At)
		out.keys = append(out.keys, k.Name(a.Key))
		out.costs = append(out.costs, a.Cost)
	}
	out.err = s.Err()
	out.stats = r.Stats()
	require.NotNil(t, out.stats, "stats are published at the end")
	require.Equal(t, out.stats.Lines, out.stats.Used+out.stats.Malformed+out.stats.Sliced, "counts add up")
	if out.err == nil {
		require.Equal(t, out.stats.Used, int64(len(out.at)), "every used line is sent")
	}
	return out
}

func replayAll(t testing.TB, r *Replay) replayed { t.Helper(); return replayWith(t, r, 1) }

// writeTrace writes content to a file called name in a temporary folder.
func writeTrace(t testing.TB, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func ones(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// TestReplaySpread: combined.log has three lines stamped 13:55:36 and one
// at 15:55:37 +0200, i.e. 13:55:37 UTC.
func TestReplaySpread(t *testing.T) {
	keys := []string{"1.1.1.1", "2.2.2.2", "1.1.1.1", "3.3.3.3"}
	t.Run("even", func(t *testing.T) {
		got := replayAll(t, &Replay{Path: replayDir + "combined.log"})
		// k-th of 3 at s + floor((2k+1)*1s/6): 1/6, 3/6, 5/6 s, floored;
		// the one line of the next second at its middle
		require.Equal(t, []time.Duration{s2000 + 166666666, s2000 + 500000000, s2000 + 833333333, s2000 + 1500*time.Millisecond}, got.at)
		require.Equal(t, keys, got.keys)
		require.Equal(t, ones(4), got.costs)
		require.Equal(t, &ReplayStats{Path: replayDir + "combined.log", Format: "combined", Lines: 4, Used: 4,
			ByReason: map[string]int64{}, First: s2000 + 166666666, Last: s2000 + 1500*time.Millisecond,
			// 3 in [s+1/6, s+7/6); at most 2 once the 4th is in
			Keys: 3, PeakPerSecond: 3}, got.stats)
	})
	t.Run("none", func(t *testing.T) {
		got := replayAll(t, &Replay{Path: replayDir + "combined.log", Spread: "none"})
		require.Equal(t, []time.Duration{s2000, s2000, s2000, s2000 + time.Second}, got.at)
		require.Equal(t, keys, got.keys)
		require.Equal(t, int64(3), got.stats.PeakPerSecond) // [s, s+1s) holds three
	})
	t.Run("random", func(t *testing.T) {
		r := func() *Replay { return &Replay{Path: replayDir + "combined.log", Spread: "random"} }
		got := replayWith(t, r(), 42)
		// file order kept: the draws are sorted before they are handed out
		require.Equal(t, keys, got.keys)
		for i, at := range got.at {
			sec := s2000
			if i == 3 {
				sec += time.Second
			}
			require.GreaterOrEqual(t, at, sec)
			require.Less(t, at, sec+time.Second)
		}
		require.Equal(t, got.at, replayWith(t, r(), 42).at, "one seed, one spread")
		require.NotEqual(t, got.at, replayWith(t, r(), 43).at, "another seed, another spread")
	})
}

// TestReplayLogFields: the key from each field of a log line, and the cost
// from its size.
func TestReplayLogFields(t *testing.T) {
	for _, tt := range []struct {
		field string
		want  []string
	}{
		{"", []string{"1.1.1.1", "2.2.2.2", "1.1.1.1", "3.3.3.3"}},
		{"ip", []string{"1.1.1.1", "2.2.2.2", "1.1.1.1", "3.3.3.3"}},
		{"ident", []string{"-", "-", "-", "-"}},
		{"user", []string{"-", "bob", "-", "-"}},
		{"request", []string{"GET / HTTP/1.1", "GET /a HTTP/1.1", "GET /b HTTP/1.1", `GET /c?q=\"x\" HTTP/1.1`}},
		{"status", []string{"200", "200", "404", "200"}},
		{"referer", []string{"-", "http://example.com/", "-", "-"}},
		// as written, escapes and all
		{"agent", []string{"curl/8.0", "curl/8.0", "curl/8.0", `Mozilla/5.0 \"quoted\"`}},
		{"none", []string{"global", "global", "global", "global"}},
	} {
		t.Run(tt.field, func(t *testing.T) {
			got := replayAll(t, &Replay{Path: replayDir + "combined.log", KeyField: tt.field})
			require.Equal(t, tt.want, got.keys)
		})
	}
	t.Run("cost from size", func(t *testing.T) {
		got := replayAll(t, &Replay{Path: replayDir + "combined.log", CostField: "size"})
		// the 404's size is "-": a bad cost; the two others of that second
		// are spread at 1/4 and 3/4
		require.Equal(t, []int64{100, 200, 50}, got.costs)
		require.Equal(t, []time.Duration{s2000 + 250*time.Millisecond, s2000 + 750*time.Millisecond, s2000 + 1500*time.Millisecond}, got.at)
		require.Equal(t, map[string]int64{"bad cost": 1}, got.stats.ByReason)
		require.Equal(t, []LineError{{File: replayDir + "combined.log", Line: 3, Col: 64, Msg: `bad cost: "-" is not an integer >= 1`}}, got.stats.FirstBad)
	})
	t.Run("a source's cost", func(t *testing.T) {
		got := replayAll(t, &Replay{Common: Common{Cost: 5}, Path: replayDir + "combined.log"})
		require.Equal(t, []int64{5, 5, 5, 5}, got.costs)
	})
	t.Run("common", func(t *testing.T) {
		got := replayAll(t, &Replay{Path: replayDir + "common.log", KeyField: "user"})
		require.Equal(t, "common", got.stats.Format)
		require.Equal(t, []string{"-", "bob", "-", "-"}, got.keys)
		require.Equal(t, []time.Duration{s2000 + 166666666, s2000 + 500000000, s2000 + 833333333, s2000 + 1500*time.Millisecond}, got.at)
	})
	t.Run("combined read as common", func(t *testing.T) {
		// what follows the size is ignored
		got := replayAll(t, &Replay{Path: replayDir + "combined.log", Format: "common"})
		require.Equal(t, "common", got.stats.Format)
		require.Equal(t, int64(4), got.stats.Used)
	})
	t.Run("agent of a line cut short", func(t *testing.T) {
		path := writeTrace(t, "cut.log", `1.1.1.1 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "Mozilla/5.0 (compatible; Googlebot/2.1`+"\n")
		// the request is whole: used, whatever its agent
		require.Equal(t, int64(1), replayAll(t, &Replay{Path: path}).stats.Used)
		got := replayAll(t, &Replay{Path: path, KeyField: "agent"})
		require.Equal(t, []LineError{{File: path, Line: 1, Msg: "missing field: truncated: no closing quote of the agent (key-field agent)"}}, got.stats.FirstBad)
	})
}

// TestReplayLayout: a log stamped [2015-09-02 10:42:51.003372] (1441190571 s)
// through time-layout; the microseconds are kept, so nothing is spread, and
// the second line, 3272 us earlier than the first, is put before it.
func TestReplayLayout(t *testing.T) {
	s := 1441190571 * time.Second
	want := []time.Duration{s + 100*time.Microsecond, s + 3372*time.Microsecond, s + 1500*time.Millisecond}
	for _, layout := range []string{"[2006-01-02 15:04:05.000000]", "2006-01-02 15:04:05.000000", "2006-01-02 15:04:05.999999999"} {
		t.Run(layout, func(t *testing.T) {
			got := replayAll(t, &Replay{Path: replayDir + "layout.log", TimeLayout: layout, Reorder: time.Minute})
			require.Equal(t, want, got.at)
			require.Equal(t, []string{"10.0.0.2", "10.0.0.1", "10.0.0.1"}, got.keys)
			require.Equal(t, int64(0), got.stats.Late)
		})
	}
	t.Run("timezone", func(t *testing.T) {
		ny, err := time.LoadLocation("America/New_York")
		require.NoError(t, err)
		// EDT in September: UTC-4
		got := replayAll(t, &Replay{Path: replayDir + "layout.log", TimeLayout: "[2006-01-02 15:04:05.000000]", Timezone: ny, Reorder: time.Minute})
		require.Equal(t, want[0]+4*time.Hour, got.at[0])
	})
}

// TestReplayCSV: header.csv, a header and Azure-style stamps with 100 ns
// digits (1700158546 s is 2023-11-16 18:15:46 UTC).
func TestReplayCSV(t *testing.T) {
	s := 1700158546 * time.Second
	want := []time.Duration{s + 680590000, s + 680590000, s + time.Second + 100}
	for _, tt := range []struct {
		name string
		r    Replay
	}{
		// TIMESTAMP is found as the time column, ignoring case
		{"by name", Replay{KeyField: "user", CostField: "tokens"}},
		{"names ignoring case", Replay{TimeField: "timestamp", KeyField: "USER", CostField: "Tokens"}},
		{"by number", Replay{TimeField: "1", KeyField: "2", CostField: "3"}},
		{"format csv", Replay{Format: "csv", KeyField: "user", CostField: "tokens"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			r.Path = replayDir + "header.csv"
			got := replayAll(t, &r)
			require.Equal(t, want, got.at)
			require.Equal(t, []string{"alice", "bob, jr", `say "hi"`}, got.keys)
			require.Equal(t, []int64{374, 10, 5}, got.costs)
			// the header is not a line of the trace
			require.Equal(t, int64(3), got.stats.Lines)
			require.Equal(t, "csv", got.stats.Format)
		})
	}
	t.Run("no key field", func(t *testing.T) {
		got := replayAll(t, &Replay{Path: replayDir + "header.csv"})
		require.Equal(t, []string{"global", "global", "global"}, got.keys)
		require.Equal(t, ones(3), got.costs)
	})
	t.Run("timezone", func(t *testing.T) {
		paris, err := time.LoadLocation("Europe/Paris")
		require.NoError(t, err)
		// CET in November: UTC+1, so an hour earlier in UTC
		got := replayAll(t, &Replay{Path: replayDir + "header.csv", Timezone: paris})
		require.Equal(t, want[0]-time.Hour, got.at[0])
	})
}

// TestReplayTSV: columns.tsv has no header; its times are Unix seconds,
// one whole (spread to the middle of its second) and two with decimals.
func TestReplayTSV(t *testing.T) {
	s := 1438936711 * time.Second
	want := []time.Duration{s + 3372*time.Microsecond, s + 500*time.Millisecond, s + 1500*time.Millisecond}
	for _, tt := range []struct {
		name string
		r    Replay
	}{
		{"unit s", Replay{TimeField: "t", TimeUnit: "s"}},
		// 10 integer digits: seconds
		{"guessed unit", Replay{TimeField: "t"}},
		{"format tsv", Replay{Format: "tsv", TimeField: "1", TimeUnit: "s"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			// dave's whole second starts before carol's first stamp: in
			// order within a window
			r.Path, r.Columns, r.KeyField, r.CostField = replayDir+"columns.tsv", []string{"t", "who", "n"}, "who", "n"
			r.Reorder = time.Minute
			got := replayAll(t, &r)
			require.Equal(t, want, got.at)
			require.Equal(t, []string{"carol", "dave", "carol"}, got.keys)
			require.Equal(t, []int64{7, 1, 2}, got.costs)
			require.Equal(t, "tsv", got.stats.Format)
			require.Equal(t, int64(3), got.stats.Lines)
		})
	}
}

// TestReplayJSONL: lines.jsonl: an RFC 3339 time with a fraction, a
// number (guessed seconds, .5 kept), an RFC 3339 time with a zone and no
// fraction (a whole second: spread to its middle); a number as key, a
// string as cost.
func TestReplayJSONL(t *testing.T) {
	got := replayAll(t, &Replay{Path: replayDir + "lines.jsonl", KeyField: "user", CostField: "cost"})
	require.Equal(t, []time.Duration{s2000 + 250*time.Millisecond, s2000 + 500*time.Millisecond, s2000 + 1500*time.Millisecond}, got.at)
	require.Equal(t, []string{"alice", "42", "carol"}, got.keys)
	require.Equal(t, []int64{3, 2, 1}, got.costs)
	require.Equal(t, "jsonl", got.stats.Format)
	t.Run("time field by name", func(t *testing.T) {
		got := replayAll(t, &Replay{Path: replayDir + "lines.jsonl", TimeField: "ts", Format: "jsonl"})
		require.Equal(t, []string{"global", "global", "global"}, got.keys)
		require.Equal(t, int64(3), got.stats.Used)
	})
}

// TestReplayAuto: what auto recognises in each small trace.
func TestReplayAuto(t *testing.T) {
	for file, want := range map[string]string{
		"combined.log": "combined", "common.log": "common", "layout.log": "combined", "bad.log": "combined",
		"header.csv": "csv", "columns.tsv": "tsv", "lines.jsonl": "jsonl",
	} {
		t.Run(file, func(t *testing.T) {
			r := &Replay{Path: replayDir + file, TimeField: "1"}
			if want == "jsonl" || want == "combined" || want == "common" {
				r.TimeField = ""
			}
			s, err := r.Open(NewKeys(), 0, 1)
			require.NoError(t, err)
			require.Equal(t, want, s.(*replayStream).format)
			require.NoError(t, s.(*replayStream).Close())
		})
	}
}

// TestReplayGzip: each small trace gzipped, named with .gz or not, gives
// the same arrivals: gzip is recognised by its magic bytes.
func TestReplayGzip(t *testing.T) {
	for _, tt := range []Replay{
		{Path: "combined.log"}, {Path: "common.log", KeyField: "user"}, {Path: "bad.log"},
		{Path: "layout.log", TimeLayout: "[2006-01-02 15:04:05.000000]"},
		{Path: "header.csv", KeyField: "user", CostField: "tokens"},
		{Path: "columns.tsv", Columns: []string{"t", "who", "n"}, TimeField: "t", KeyField: "who"},
		{Path: "lines.jsonl", KeyField: "user", CostField: "cost"},
	} {
		t.Run(tt.Path, func(t *testing.T) {
			plain := tt
			plain.Path = replayDir + tt.Path
			want := replayAll(t, &plain)
			for _, name := range []string{tt.Path + ".gz", tt.Path} {
				gz := tt
				gz.Path = gzipFile(t, plain.Path, name)
				got := replayAll(t, &gz)
				require.Equal(t, want.at, got.at, name)
				require.Equal(t, want.keys, got.keys, name)
				require.Equal(t, want.costs, got.costs, name)
				require.Equal(t, want.stats.ByReason, got.stats.ByReason, name)
				require.Equal(t, want.stats.Format, got.stats.Format, name)
			}
		})
	}
}

// TestReplayReorder: out-of-order lines within and beyond the window
// (times in ms by the column's name: precise stamps, never spread).
func TestReplayReorder(t *testing.T) {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	for _, tt := range []struct {
		name    string
		lines   string
		reorder time.Duration
		at      []time.Duration
		keys    []string
		late    []LineError // with the file's path filled in
	}{
		{
			// 11s comes after 12s but within 5s of it: put in its place
			name: "within the window", lines: "10000,a\n12000,b\n11000,c\n13000,d\n", reorder: 5 * time.Second,
			at: []time.Duration{sec(10), sec(11), sec(12), sec(13)}, keys: []string{"a", "c", "b", "d"},
		},
		{
			// equal stamps keep file order, wherever they come
			name: "equal stamps", lines: "12000,a\n11000,b\n12000,c\n11000,d\n", reorder: 5 * time.Second,
			at: []time.Duration{sec(11), sec(11), sec(12), sec(12)}, keys: []string{"b", "d", "a", "c"},
		},
		{
			// d (11s) comes 3s after 14s was read, beyond the 1s window; by
			// then 12s was sent (everything before 14s-1s is sent): d goes
			// at 12s, the earliest instant still possible
			name: "beyond the window", lines: "10000,a\n12000,b\n14000,c\n11000,d\n", reorder: time.Second,
			at: []time.Duration{sec(10), sec(12), sec(12), sec(14)}, keys: []string{"a", "b", "d", "c"},
			late: []LineError{{Line: 5, Msg: "late: stamped 3s before line 4 (the latest stamp so far), beyond the reorder window 1s: sent at 1970-01-01T00:00:12Z"}},
		},
		{
			// c (10.5s) is beyond the 1s window of 12s, but only 10s was
			// sent: its own instant is still possible
			name: "late but still in time", lines: "10000,a\n12000,b\n10500,c\n", reorder: time.Second,
			at: []time.Duration{sec(10), sec(10.5), sec(12)}, keys: []string{"a", "c", "b"},
			late: []LineError{{Line: 4, Msg: "late: stamped 1.5s before line 3 (the latest stamp so far), beyond the reorder window 1s: sent at 1970-01-01T00:00:10.5Z"}},
		},
		{
			// no window: any line before the latest stamp is late; equal
			// stamps are not. When d comes, 10s was sent (before 11s, the
			// latest), 11s was not: d keeps its 10.999s
			name: "no window", lines: "10000,a\n10000,b\n11000,c\n10999,d\n", reorder: 0,
			at: []time.Duration{sec(10), sec(10), sec(10.999), sec(11)}, keys: []string{"a", "b", "d", "c"},
			late: []LineError{{Line: 5, Msg: "late: stamped 1ms before line 4 (the latest stamp so far), beyond the reorder window 0: sent at 1970-01-01T00:00:10.999Z"}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTrace(t, "t.csv", "time_ms,key\n"+tt.lines)
			got := replayAll(t, &Replay{Path: path, KeyField: "key", Reorder: tt.reorder})
			require.Equal(t, tt.at, got.at)
			require.Equal(t, tt.keys, got.keys)
			for i := range tt.late {
				tt.late[i].File = path
			}
			require.Equal(t, tt.late, got.stats.FirstBad)
			require.Equal(t, int64(len(tt.late)), got.stats.Late)
			require.Equal(t, int64(0), got.stats.Malformed)
		})
	}
	t.Run("whole seconds out of order", func(t *testing.T) {
		// two lines of second 100 around one of 101: the second 100 has
		// n = 2 (at 1/4 and 3/4, in file order), 101 has one
		path := writeTrace(t, "t.csv", "time_s,key\n100,a\n101,b\n100,c\n")
		got := replayAll(t, &Replay{Path: path, KeyField: "key", Reorder: time.Minute})
		require.Equal(t, []time.Duration{sec(100.25), sec(100.75), sec(101.5)}, got.at)
		require.Equal(t, []string{"a", "c", "b"}, got.keys)
	})
	t.Run("a whole second too late", func(t *testing.T) {
		// with no window, c (second 100) comes after 101 was read: second
		// 100 was spread with a alone (100.5) and sent; c goes at 100.5 too
		path := writeTrace(t, "t.csv", "time_s,key\n100,a\n101,b\n102,d\n100,c\n")
		got := replayAll(t, &Replay{Path: path, KeyField: "key"})
		require.Equal(t, []time.Duration{sec(100.5), sec(101.5), sec(101.5), sec(102.5)}, got.at)
		require.Equal(t, []string{"a", "b", "c", "d"}, got.keys)
		require.Equal(t, int64(1), got.stats.Late)
	})
}

// TestReplaySpeed: speed scales from the first stamp kept.
func TestReplaySpeed(t *testing.T) {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	path := writeTrace(t, "t.csv", "time_ms\n10000\n11000\n13000\n")
	for _, tt := range []struct {
		speed Fraction
		want  []time.Duration
	}{
		{Fraction{}, []time.Duration{sec(10), sec(11), sec(13)}},
		{Fraction{1, 1}, []time.Duration{sec(10), sec(11), sec(13)}},
		// twice as fast: gaps of 1s and 2s become 0.5s and 1s
		{Fraction{2, 1}, []time.Duration{sec(10), sec(10.5), sec(11.5)}},
		// half as fast: the gaps double
		{Fraction{1, 2}, []time.Duration{sec(10), sec(12), sec(16)}},
		// 1s/3 = 333333333.33 ns, rounded down
		{Fraction{3, 1}, []time.Duration{sec(10), sec(10) + 333333333, sec(11)}},
	} {
		got := replayAll(t, &Replay{Path: path, Speed: tt.speed})
		require.Equal(t, tt.want, got.at, "%v", tt.speed)
	}
	t.Run("whole seconds", func(t *testing.T) {
		// spread first (100.25, 100.75, 102.5), then scaled from 100
		path := writeTrace(t, "t.csv", "time_s\n100\n100\n102\n")
		got := replayAll(t, &Replay{Path: path, Speed: Fraction{2, 1}})
		require.Equal(t, []time.Duration{sec(100.125), sec(100.375), sec(101.25)}, got.at)
		require.Equal(t, sec(100.125), got.stats.First)
		require.Equal(t, sec(101.25), got.stats.Last)
	})
	t.Run("a line before the first", func(t *testing.T) {
		// 9s comes second, within the window: 10 - (10-9)*2 = 8s
		path := writeTrace(t, "t.csv", "time_ms\n10000\n9000\n")
		got := replayAll(t, &Replay{Path: path, Speed: Fraction{1, 2}, Reorder: time.Minute})
		require.Equal(t, []time.Duration{sec(8), sec(10)}, got.at)
	})
}

// TestReplaySlice: start and end cut on the stamps, from the first one.
func TestReplaySlice(t *testing.T) {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	// the first stamp is 100s; 99.5s comes last (within the window)
	path := writeTrace(t, "t.csv", "time_ms\n100000\n101000\n102000\n103000\n99500\n")
	for _, tt := range []struct {
		name       string
		start, end time.Duration
		speed      Fraction
		want       []time.Duration
		sliced     int64
	}{
		{"no cut", 0, 0, Fraction{}, []time.Duration{sec(99.5), sec(100), sec(101), sec(102), sec(103)}, 0},
		// [101s, 103s): 100, 103 and 99.5 are cut
		{"start and end", time.Second, 3 * time.Second, Fraction{}, []time.Duration{sec(101), sec(102)}, 3},
		// [100s, 102s): 99.5 is before 100 but start 0 cuts nothing
		{"end only", 0, 2 * time.Second, Fraction{}, []time.Duration{sec(99.5), sec(100), sec(101)}, 2},
		// from 101s, scaled from 101s, the first kept
		{"start with speed", time.Second, 0, Fraction{2, 1}, []time.Duration{sec(101), sec(101.5), sec(102)}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := replayAll(t, &Replay{Path: path, SliceStart: tt.start, SliceEnd: tt.end, Speed: tt.speed, Reorder: time.Minute})
			require.Equal(t, tt.want, got.at)
			require.Equal(t, tt.sliced, got.stats.Sliced)
			require.Equal(t, int64(5), got.stats.Lines)
		})
	}
}

// TestReplayBufferBounded: a trace of 20,000 seconds, a line a second,
// with a 1m window: the reorder buffer never holds more than the window's
// lines, however long the trace.
func TestReplayBufferBounded(t *testing.T) {
	const n = 20000
	path := filepath.Join(t.TempDir(), "t.csv")
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	_, _ = w.WriteString("time_s\n")
	for i := range n {
		_, _ = w.WriteString(strconv.Itoa(1_000_000_000+i) + "\n")
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	r := &Replay{Path: path, Reorder: time.Minute}
	st, err := r.Open(NewKeys(), 0, 1)
	require.NoError(t, err)
	s := st.(*replayStream)
	var a Arrival
	most := 0
	for s.Next(&a) {
		most = max(most, s.fifo.len()+len(s.heap)+len(s.ready)-s.readyHead)
	}
	// the window holds 61 seconds (stamps within 60s of the latest)
	require.LessOrEqual(t, most, 62)
	// 62 lines fit in a chunk; one more chunk while the front one empties
	require.LessOrEqual(t, s.fifo.held(), 2)
	require.Equal(t, int64(n), r.Stats().Used)
}

// gzipFile writes src gzipped to a file called name in a temporary folder.
func gzipFile(t testing.TB, src, name string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	require.NoError(t, err)
	zw := gzip.NewWriter(f)
	_, err = zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	return path
}
