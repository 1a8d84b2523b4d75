package traffic

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeLines writes a file called name in dir, its lines by write (streamed:
// the benchmarks' traces are large).
func writeLines(tb testing.TB, dir, name string, write func(w io.Writer)) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	write(w)
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// lineAt is line i's instant in the benchmarks' traces: a line a
// millisecond, one in 50 stamped 2s early (out of order, within the
// reorder window).
func lineAt(i int) time.Time {
	t := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
	if i%50 == 7 {
		t = t.Add(-2 * time.Second)
	}
	return t
}

// writeCombinedLog writes n combined log lines to a file in dir: 1000
// clients, about 1000 lines a second (whole-second stamps, so every line is
// spread; lineAt), lines of about 200 bytes as real logs have.
func writeCombinedLog(tb testing.TB, dir string, n int) string {
	return writeLines(tb, dir, "access.log", func(w io.Writer) {
		for i := range n {
			fmt.Fprintf(w, "10.%d.%d.%d - - [%s] \"GET /api/v1/items/%d?page=%d HTTP/1.1\" %d %d \"https://example.com/\" \"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36\"\n",
				i%7, (i/7)%11, i%1000%13, lineAt(i).Format("02/Jan/2006:15:04:05 -0700"), i%997, i%13, 200+(i%3)*100, 1000+i%5000)
		}
	})
}

// writeCSV writes n CSV lines (a header, then time,key,cost) to a file in
// dir: 1000 keys, one in ten quoted (with a comma inside), stamped to the
// millisecond (RFC 3339; lineAt).
func writeCSV(tb testing.TB, dir string, n int) string {
	return writeLines(tb, dir, "trace.csv", func(w io.Writer) {
		fmt.Fprintln(w, "time,key,cost")
		for i := range n {
			key := fmt.Sprintf("user-%d", i%1000)
			if i%10 == 3 {
				key = fmt.Sprintf(`"user, %d"`, i%1000)
			}
			fmt.Fprintf(w, "%s,%s,%d\n", lineAt(i).Format("2006-01-02T15:04:05.000Z"), key, 1+i%5)
		}
	})
}

// benchReplay reads r's trace of lines lines through the whole replay
// stream each round and reports lines per second.
func benchReplay(b *testing.B, r *Replay, lines int) {
	for b.Loop() {
		s, err := r.Open(NewKeys(), 0, 1)
		if err != nil {
			b.Fatal(err)
		}
		var a Arrival
		n := 0
		for s.Next(&a) {
			n++
		}
		if s.Err() != nil || n != lines {
			b.Fatalf("%d arrivals, %v", n, s.Err())
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkReplayCombined reads a 200,000-line combined log through the
// whole replay stream (reading, parsing, key lookup, the 5m reorder buffer,
// even spreading) and reports lines per second; -benchmem gives the
// allocations per whole file (setup and one per new key, none per line).
//
//	go test ./traffic/ -run '^$' -bench BenchmarkReplayCombined -benchmem
func BenchmarkReplayCombined(b *testing.B) {
	const lines = 200_000
	benchReplay(b, &Replay{Path: writeCombinedLog(b, b.TempDir(), lines), Reorder: 5 * time.Minute}, lines)
}

// BenchmarkReplayCSV reads a 200,000-line CSV (writeCSV) through the whole
// replay stream, keyed and costed by its columns, and reports lines per
// second.
//
//	go test ./traffic/ -run '^$' -bench BenchmarkReplayCSV -benchmem
func BenchmarkReplayCSV(b *testing.B) {
	const lines = 200_000
	path := writeCSV(b, b.TempDir(), lines)
	benchReplay(b, &Replay{Path: path, KeyField: "key", CostField: "cost", Reorder: 5 * time.Minute}, lines)
}
