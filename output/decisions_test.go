package output

import (
	"bytes"
	"encoding/csv"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/sim"
)

// TestDecisions writes the leaky-bucket rows of docs/algorithms.md, worked example 2
// (L=4 per 1s, B=4), and a request that can never be admitted.
func TestDecisions(t *testing.T) {
	var buf bytes.Buffer
	d := NewDecisions(&buf, "leaky-bucket", "leaky-bucket", true)
	rows := []sim.Decision{
		{Time: 0, Key: "alice", Cost: 1, Attempt: 1, Decision: algorithms.Decision{Verdict: algorithms.Accept}},
		{Time: 0, Key: "alice", Cost: 1, Attempt: 1, Decision: algorithms.Decision{Verdict: algorithms.Delay, Delay: 250 * time.Millisecond}},
		{Time: 0, Key: "alice", Cost: 1, Attempt: 1, Decision: algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: 250 * time.Millisecond}},
		{Time: 100 * time.Millisecond, Key: "alice", Cost: 1, Attempt: 2, Decision: algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: 150 * time.Millisecond}},
		{Time: 1700 * time.Millisecond, Key: "bob", Cost: 5, Attempt: 1, Decision: algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: algorithms.Never}},
	}
	for i := range rows {
		if err := d.Observe(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if buf.Len() != 0 {
		t.Errorf("rows written before Flush: %q", buf.String())
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `algorithm,label,time_ns,key,cost,attempt,verdict,delay_ns,retry_after_ns
leaky-bucket,leaky-bucket,0,alice,1,1,accept,0,
leaky-bucket,leaky-bucket,0,alice,1,1,delay,250000000,
leaky-bucket,leaky-bucket,0,alice,1,1,reject,0,250000000
leaky-bucket,leaky-bucket,100000000,alice,1,2,reject,0,150000000
leaky-bucket,leaky-bucket,1700000000,bob,5,1,reject,0,-1
`
	if got := buf.String(); got != want {
		t.Errorf("decisions CSV:\n got:\n%s\nwant:\n%s", got, want)
	}

	// A second run appends to the same file without a header.
	d2 := NewDecisions(&buf, "gcra", "gcra-b8", false)
	if err := d2.Observe(&rows[0]); err != nil {
		t.Fatal(err)
	}
	if err := d2.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String()[len(want):], "gcra,gcra-b8,0,alice,1,1,accept,0,\n"; got != want {
		t.Errorf("second run: got %q, want %q", got, want)
	}
}

// TestDecisionsQuoting checks that fields are quoted exactly as
// encoding/csv quotes them, and read back.
func TestDecisionsQuoting(t *testing.T) {
	keys := []string{"plain", "a,b", `say "hi"`, " leading space", "\ttab", "line\nbreak", "cr\r", `\.`, "", "µ-ü", "trailing "}
	for _, key := range keys {
		var got bytes.Buffer
		d := NewDecisions(&got, "fixed-window", "fw, strict", false)
		x := sim.Decision{Time: 5, Key: key, Cost: 1, Attempt: 1}
		if err := d.Observe(&x); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		w := csv.NewWriter(&want)
		w.Write([]string{"fixed-window", "fw, strict", "5", key, "1", "1", "accept", "0", ""})
		w.Flush()
		if got.String() != want.String() {
			t.Errorf("key %q: got %q, want %q", key, got.String(), want.String())
		}
		rec, err := csv.NewReader(&got).Read()
		if err != nil {
			t.Fatalf("key %q: %v", key, err)
		}
		// encoding/csv reads \r\n inside a quoted field back as \n.
		if want := strings.ReplaceAll(key, "\r", "\n"); rec[3] != key && rec[3] != want {
			t.Errorf("key %q read back as %q", key, rec[3])
		}
	}
}

// TestDecisionsWriteError checks that a failing writer's error comes back.
func TestDecisionsWriteError(t *testing.T) {
	d := NewDecisions(errWriter{}, "gcra", "gcra", true)
	x := sim.Decision{Key: "k", Cost: 1, Attempt: 1}
	var err error
	for i := 0; i < 10000 && err == nil; i++ {
		err = d.Observe(&x)
	}
	if err == nil {
		err = d.Flush()
	}
	if err == nil {
		t.Fatal("no error from a failing writer")
	}
	if d.Flush() == nil || d.Observe(&x) == nil {
		t.Error("the error is not kept")
	}
}

func TestDecisionsAllocs(t *testing.T) {
	d := NewDecisions(io.Discard, "leaky-bucket", "leaky-bucket", true)
	x := sim.Decision{Time: 123456789, Key: "client-42", Cost: 1, Attempt: 1,
		Decision: algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: 250 * time.Millisecond}}
	if n := testing.AllocsPerRun(1000, func() { d.Observe(&x) }); n != 0 {
		t.Errorf("Observe allocates %v times per row, want 0", n)
	}
}

// BenchmarkDecisions measures the row path of the decisions CSV: mixed
// verdicts over a thousand keys, written to io.Discard.
func BenchmarkDecisions(b *testing.B) {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "client-" + strings.Repeat("x", i%7) + string(rune('a'+i%26))
	}
	verdicts := []algorithms.Decision{
		{Verdict: algorithms.Accept},
		{Verdict: algorithms.Delay, Delay: 90 * time.Millisecond},
		{Verdict: algorithms.Reject, RetryAfter: 910 * time.Millisecond},
		{Verdict: algorithms.Reject, RetryAfter: algorithms.Never},
	}
	d := NewDecisions(io.Discard, "leaky-bucket", "leaky-bucket", true)
	x := sim.Decision{Cost: 1, Attempt: 1}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		x.Time = time.Duration(i) * time.Millisecond
		x.Key = keys[i%len(keys)]
		x.Decision = verdicts[i%len(verdicts)]
		if err := d.Observe(&x); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/row")
}

// TestDecisionsRoute: a routed replay's rows end with the route that took
// each request, after the limit and key columns, quoted as CSV quotes; a
// request of no route has an empty one.
func TestDecisionsRoute(t *testing.T) {
	var buf bytes.Buffer
	d := NewDecisionsWith(&buf, "nginx", "/a/ + /b/", true, DecisionColumns{Limits: true, Routes: []string{"/a/", "shop, /b/"}})
	for _, x := range []sim.Decision{
		{Time: 0, Key: "c", Cost: 1, Attempt: 1, Route: 1, Decision: algorithms.Decision{Verdict: algorithms.Accept}},
		{Time: 10, Key: "c", Cost: 1, Attempt: 1, Route: 2, Decision: algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: 90}},
		{Time: 20, Key: "c", Cost: 1, Attempt: 1, Decision: algorithms.Decision{Verdict: algorithms.Accept}},
	} {
		if err := d.Observe(&x); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `algorithm,label,time_ns,key,cost,attempt,verdict,delay_ns,retry_after_ns,limit,route
nginx,/a/ + /b/,0,c,1,1,accept,0,,,/a/
nginx,/a/ + /b/,10,c,1,1,reject,0,90,,"shop, /b/"
nginx,/a/ + /b/,20,c,1,1,accept,0,,,
`
	if got := buf.String(); got != want {
		t.Errorf("decisions CSV:\n got:\n%s\nwant:\n%s", got, want)
	}
}
