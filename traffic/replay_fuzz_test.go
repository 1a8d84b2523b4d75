package traffic

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fuzzReplay reads data as a trace with r: it never panics, the arrivals
// come in time order, and the counts add up.
func fuzzReplay(t *testing.T, r *Replay, data []byte) {
	r.Path = "fuzz"
	in, err := newTraceInput(r, bytes.NewReader(data), nil)
	if err != nil {
		var re *ReplayError
		require.True(t, errors.As(err, &re), "%v", err)
		return
	}
	s, err := r.openInput(in, NewKeys(), 0, 1)
	if err != nil {
		var re *ReplayError
		require.True(t, errors.As(err, &re), "%v", err)
		return
	}
	var a Arrival
	prev := time.Duration(-1)
	n := int64(0)
	for s.Next(&a) {
		require.GreaterOrEqual(t, a.At, prev)
		require.GreaterOrEqual(t, a.At, time.Duration(0))
		require.GreaterOrEqual(t, a.Cost, int64(1))
		prev = a.At
		n++
	}
	st := r.Stats()
	require.NotNil(t, st)
	require.Equal(t, st.Lines, st.Used+st.Malformed+st.Sliced)
	sum := int64(0)
	for _, c := range st.ByReason {
		sum += c
	}
	require.Equal(t, st.Malformed, sum)
	require.LessOrEqual(t, st.Late, st.Used)
	require.LessOrEqual(t, len(st.FirstBad), 2*maxReported)
	require.LessOrEqual(t, st.Keys, n)
	if err := s.Err(); err != nil {
		var le *LineError
		var re *ReplayError
		require.True(t, errors.As(err, &le) && r.Strict || errors.As(err, &re), "%v", err)
		return
	}
	require.Equal(t, st.Used, n)
	if n > 0 {
		require.Equal(t, st.First, time.Duration(0)+st.First)
		require.LessOrEqual(t, st.First, st.Last)
		require.GreaterOrEqual(t, st.PeakPerSecond, int64(1))
	}
}

// addSeeds adds the small traces, plain and gzipped, to the corpus.
func addSeeds(f *testing.F, files ...string) {
	for _, name := range files {
		data, err := os.ReadFile(replayDir + name)
		require.NoError(f, err)
		f.Add(data)
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(data)
		_ = zw.Close()
		f.Add(b.Bytes())
		f.Add(data[:len(data)/2]) // cut short
	}
}

var allTraces = []string{"combined.log", "common.log", "layout.log", "bad.log", "header.csv", "columns.tsv", "lines.jsonl"}

func FuzzReplayCombined(f *testing.F) {
	addSeeds(f, "combined.log", "common.log", "bad.log", "layout.log")
	f.Add([]byte("1.1.1.1 - - [10/Oct/2000:13:55:36 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"a\\\"b\"\n\n\n"))
	// the times a log without time-layout may hold (docs/replay.md)
	f.Add([]byte("1.1.1.1 - - [2000-10-10T13:55:36.5+02:00] \"GET / HTTP/1.1\" 200 1\n1.1.1.1 - - [2000-10-10 13:55:37 +0000] \"GET / HTTP/1.1\" 200 1\n"))
	f.Add([]byte("1.1.1.1 - - [971186136.25] \"GET / HTTP/1.1\" 200 1\n1.1.1.1 - - [971186137250] \"GET / HTTP/1.1\" 200 1\n"))
	f.Add([]byte("1.1.1.1 - - [2000/10/10 13h55] \"GET / HTTP/1.1\" 200 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzReplay(t, &Replay{Format: "combined", Reorder: time.Second}, data)
		fuzzReplay(t, &Replay{Format: "auto", Reorder: time.Second}, data)
		fuzzReplay(t, &Replay{Format: "common", KeyField: "user", CostField: "size", Spread: "random", Speed: Fraction{3, 2}}, data)
		fuzzReplay(t, &Replay{Format: "combined", KeyField: "agent", TimeLayout: "[2006-01-02 15:04:05.000000]", Reorder: time.Minute, Strict: true}, data)
		fuzzReplay(t, &Replay{Format: "combined", SliceStart: time.Second, SliceEnd: time.Hour, Spread: "none"}, data)
	})
}

func FuzzReplayCSV(f *testing.F) {
	addSeeds(f, "header.csv", "columns.tsv")
	f.Add([]byte("time_ms,key,cost\n1,\"a\"\"b\",2\n0,,\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzReplay(t, &Replay{Format: "csv", TimeField: "1", KeyField: "2", CostField: "3", Reorder: time.Second}, data)
		fuzzReplay(t, &Replay{Format: "csv", Columns: []string{"t", "k"}, TimeField: "t", KeyField: "k", TimeUnit: "ms", Spread: "random"}, data)
		fuzzReplay(t, &Replay{Format: "tsv", TimeField: "1", KeyField: "2", Strict: true, Reorder: time.Hour}, data)
		fuzzReplay(t, &Replay{Format: "tsv", Columns: []string{"t", "k", "c"}, TimeField: "t", CostField: "c", Speed: Fraction{1, 3}}, data)
	})
}

func FuzzReplayJSONL(f *testing.F) {
	addSeeds(f, "lines.jsonl")
	f.Add([]byte(`{"time_ns": 5, "key": "a", "cost": 1}` + "\n" + `{"ts": "x"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzReplay(t, &Replay{Format: "jsonl", KeyField: "user", CostField: "cost", Reorder: time.Second}, data)
		fuzzReplay(t, &Replay{Format: "jsonl", TimeField: "ts", TimeUnit: "us", Strict: true}, data)
	})
}

func FuzzReplayAuto(f *testing.F) {
	addSeeds(f, allTraces...)
	f.Add([]byte{})
	f.Add([]byte("\n\n\n"))
	f.Add([]byte("time\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzReplay(t, &Replay{Reorder: 5 * time.Minute}, data)
		fuzzReplay(t, &Replay{Spread: "random", Reorder: 0}, data)
	})
}
