package traffic

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tracesDir holds the project's real sample traces, beside the repository
// (../shared/traces from its root). They are read from there, never copied.
const tracesDir = "../../shared/traces"

// trace returns the path of a real trace, or skips the test when the
// folder is absent (a clone of the repository alone).
func trace(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(tracesDir, name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("skipped: the real trace %s is absent (%v); these tests read the project's shared traces beside the repository", path, err)
	}
	return path
}

// The elastic log (Apache combined, whole seconds, +0000): 10,000 lines,
// 1,753 client IPs, 17-20 May 2015. Its minute field was rewritten upstream
// (every line says minute 05), so the lines are out of order within each
// hour squeezed into one minute.
const (
	// 17/May/2015:10:05:00 and 20/May/2015:21:05:59 +0000, the earliest
	// and latest stamps (calendar.timegm)
	elasticFirst = 1431857100 * time.Second
	elasticLast  = 1432155959 * time.Second
)

func TestRealElasticLog(t *testing.T) {
	path := trace(t, "elastic_apache_logs.log")
	t.Run("combined, 5m window", func(t *testing.T) {
		for _, format := range []string{"", "combined"} {
			got := replayAll(t, &Replay{Path: path, Format: format, Reorder: 5 * time.Minute})
			st := got.stats
			require.Equal(t, "combined", st.Format)
			require.Equal(t, int64(10000), st.Lines)
			// every line is used: line 8899 is cut short in its user agent
			// (no closing quote) but has all a request needs
			require.Equal(t, int64(10000), st.Used)
			require.Equal(t, int64(0), st.Malformed)
			// Each hour is squeezed into minute 05, so no line is more than
			// 59s before the latest stamp read: none is late with a 5m
			// window (9,448 are out of order, see below).
			require.Equal(t, int64(0), st.Late)
			require.Equal(t, int64(1753), st.Keys)
			// two lines share each of the first and last seconds: the first
			// is at 1/4 of its second, the last at 3/4
			require.Equal(t, elasticFirst+250*time.Millisecond, st.First)
			require.Equal(t, elasticLast+750*time.Millisecond, st.Last)
			// measured: the busiest second after spreading
			require.Equal(t, int64(9), st.PeakPerSecond)
		}
	})
	t.Run("out of order in file order", func(t *testing.T) {
		// With no window, a line is late when it is stamped before the
		// latest stamp read so far: that is the trace's 9,448 lines out of
		// order (README of the traces).
		got := replayAll(t, &Replay{Path: path, Reorder: 0})
		require.Equal(t, int64(9448), got.stats.Late)
		require.Equal(t, int64(10000), got.stats.Used)
		// late lines are sent, never dropped: the first two lines of the
		// file are stamped 10:05:03 and 10:05:43, the latter's second spread
		// to its middle
		require.Equal(t, elasticFirst+3500*time.Millisecond, got.stats.First)
		require.Len(t, got.stats.FirstBad, 5)
		require.Equal(t, LineError{File: path, Line: 4, Msg: "late: stamped 35s before line 3 (the latest stamp so far), beyond the reorder window 0: sent at 2015-05-17T10:05:43.5Z"}, got.stats.FirstBad[0])
		// measured: with a 10s window, 7,813 lines are still late
		got = replayAll(t, &Replay{Path: path, Reorder: 10 * time.Second})
		require.Equal(t, int64(7813), got.stats.Late)
	})
	t.Run("spread none", func(t *testing.T) {
		got := replayAll(t, &Replay{Path: path, Spread: "none", Reorder: 5 * time.Minute})
		require.Equal(t, elasticFirst, got.stats.First)
		require.Equal(t, elasticLast, got.stats.Last)
	})
	t.Run("common and gzip", func(t *testing.T) {
		// the same lines cut after the size: a common log
		common := filepath.Join(t.TempDir(), "common.log")
		out, err := os.Create(common)
		require.NoError(t, err)
		in, err := os.Open(path)
		require.NoError(t, err)
		defer in.Close()
		w := bufio.NewWriter(out)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			line := sc.Text()
			i := strings.Index(line, ` "`)               // the request
			j := strings.Index(line[i+2:], `" `) + i + 2 // its end
			fields := strings.Fields(line[j+2:])         // status, size, ...
			w.WriteString(line[:j+2] + fields[0] + " " + fields[1] + "\n")
		}
		require.NoError(t, sc.Err())
		require.NoError(t, w.Flush())
		require.NoError(t, out.Close())
		for _, p := range []string{common, gzipFile(t, common, "common.log.gz"), gzipFile(t, path, "elastic.gz")} {
			got := replayAll(t, &Replay{Path: p, Reorder: 5 * time.Minute})
			require.Equal(t, int64(10000), got.stats.Used, p)
			require.Equal(t, int64(1753), got.stats.Keys, p)
			require.Equal(t, elasticFirst+250*time.Millisecond, got.stats.First, p)
			require.Equal(t, elasticLast+750*time.Millisecond, got.stats.Last, p)
		}
		require.Equal(t, "common", replayAll(t, &Replay{Path: common}).stats.Format)
	})
	t.Run("keys by agent", func(t *testing.T) {
		// the one line whose agent is cut short cannot give an agent key
		got := replayAll(t, &Replay{Path: path, KeyField: "agent", Reorder: 5 * time.Minute})
		require.Equal(t, map[string]int64{"missing field": 1}, got.stats.ByReason)
		require.Equal(t, int64(8899), got.stats.FirstBad[0].Line)
	})
}

// The Azure LLM inference trace: CSV TIMESTAMP,ContextTokens,GeneratedTokens,
// 19,366 requests over 58 minutes, stamps with 100 ns digits and no zone.
const (
	// 2023-11-16 18:15:46.6805900 and 19:14:08.4025270 UTC
	azureFirst = 1700158546*time.Second + 680590000
	azureLast  = 1700162048*time.Second + 402527000
	// the sum of ContextTokens (awk -F, 'NR>1{s+=$2} END{print s}')
	azureTokens = 22361870
)

func TestRealAzureTrace(t *testing.T) {
	path := trace(t, "azure_llm_2023_conv.csv")
	check := func(t *testing.T, r *Replay, format string) {
		t.Helper()
		got := replayAll(t, r)
		st := got.stats
		require.Equal(t, format, st.Format)
		require.Equal(t, int64(19366), st.Lines)
		require.Equal(t, int64(19366), st.Used)
		require.Equal(t, int64(0), st.Late) // sorted
		require.Equal(t, int64(1), st.Keys) // one global key
		require.Equal(t, azureFirst, st.First)
		require.Equal(t, azureLast, st.Last)
		sum := int64(0)
		for _, c := range got.costs {
			sum += c
		}
		require.Equal(t, int64(azureTokens), sum)
		// measured: the busiest second
		require.Equal(t, int64(19), st.PeakPerSecond)
	}
	t.Run("csv", func(t *testing.T) {
		check(t, &Replay{Path: path, CostField: "ContextTokens"}, "csv")
		check(t, &Replay{Path: path, Format: "csv", TimeField: "TIMESTAMP", CostField: "2", Reorder: 0}, "csv")
		check(t, &Replay{Path: gzipFile(t, path, "azure.csv.gz"), CostField: "ContextTokens"}, "csv")
	})
	// the same rows as TSV, header-less TSV and JSON lines
	rows := readCSV(t, path)
	dir := t.TempDir()
	write := func(name string, rows [][]string, line func(row []string) string) string {
		var b strings.Builder
		for _, row := range rows {
			b.WriteString(line(row) + "\n")
		}
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
		return p
	}
	t.Run("tsv", func(t *testing.T) {
		p := write("azure.tsv", rows, func(row []string) string { return strings.Join(row, "\t") })
		check(t, &Replay{Path: p, CostField: "ContextTokens"}, "tsv")
	})
	t.Run("tsv without header", func(t *testing.T) {
		p := write("azure-noheader.tsv", rows[1:], func(row []string) string { return strings.Join(row, "\t") })
		check(t, &Replay{Path: p, Columns: []string{"ts", "in", "out"}, CostField: "in"}, "tsv")
	})
	t.Run("jsonl", func(t *testing.T) {
		header := rows[0]
		p := write("azure.jsonl", rows, func(row []string) string {
			if row[0] == header[0] {
				return `{"comment": "no time here"}` // a line with no time: malformed
			}
			b, _ := json.Marshal(map[string]any{"timestamp": row[0], "tokens": json.Number(row[1])})
			return string(b)
		})
		got := replayAll(t, &Replay{Path: p, CostField: "tokens"})
		require.Equal(t, int64(19367), got.stats.Lines)
		require.Equal(t, map[string]int64{"missing field": 1}, got.stats.ByReason)
		require.Equal(t, azureFirst, got.stats.First)
		require.Equal(t, azureLast, got.stats.Last)
	})
	t.Run("slice and speed", func(t *testing.T) {
		// the first 10 minutes, twice as fast: 5 minutes of traffic
		got := replayAll(t, &Replay{Path: path, SliceEnd: 10 * time.Minute, Speed: Fraction{2, 1}})
		require.Equal(t, azureFirst, got.stats.First)
		require.Less(t, got.stats.Last, azureFirst+5*time.Minute)
		require.Greater(t, got.stats.Last, azureFirst+4*time.Minute)
		require.Equal(t, int64(19366), got.stats.Used+got.stats.Sliced)
	})
}

// readCSV reads a whole CSV file, header included, to write it otherwise.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return rows
}
