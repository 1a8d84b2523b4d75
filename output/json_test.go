package output

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestJSONFields decodes the JSON into a generic map and checks that it has
// exactly the field names of docs/commands.md, plus what the sim types add
// (description, each result's limit and series).
func TestJSONFields(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, doubleBurst()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.HasSuffix(out, "}\n") || strings.HasSuffix(out, "\n\n") {
		t.Errorf("JSON does not end with one newline: %q", out[len(out)-10:])
	}
	// the version that made it first (docs/commands.md): "dev" under go test
	if !strings.HasPrefix(out, "{\n  \"ratesim_version\": \"dev\",\n  \"scenario\": ") {
		t.Errorf("JSON is not indented with two spaces: %q", out[:20])
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	checkKeys(t, "report", doc, "ratesim_version", "scenario", "description", "seed", "start_ns", "duration_ns", "limit", "keys", "results")
	checkKeys(t, "limit", doc["limit"], "rate", "per_ns", "burst")
	results := doc["results"].([]any)
	if len(results) != 9 {
		t.Fatalf("%d results, want 9", len(results))
	}
	for _, x := range results {
		res := x.(map[string]any)
		checkKeys(t, "result", res, "algorithm", "label", "params", "limit",
			"offered", "attempts", "accepted", "delayed", "rejected", "gave_up",
			"delay_ns", "peaks", "key_peaks", "attempt_peaks", "memory", "keys", "series")
		checkKeys(t, "keys", res["keys"], "limited", "top")
		checkKeys(t, "result.limit", res["limit"], "rate", "per_ns", "burst")
		checkKeys(t, "delay_ns", res["delay_ns"], "p50", "p90", "p99", "max")
		checkKeys(t, "memory", res["memory"], "bytes_per_key_max", "keys_peak", "bytes_peak")
		checkKeys(t, "series", res["series"], "bucket_ns", "start_ns", "offered", "attempts", "admitted", "delayed", "rejected")
		if _, ok := res["params"].(map[string]any); !ok {
			t.Errorf("%v: params is %T, want an object", res["label"], res["params"])
		}
		for _, p := range res["peaks"].([]any) {
			checkKeys(t, "peak", p, "window_ns", "count", "start_ns", "ratio")
		}
		for _, p := range res["key_peaks"].([]any) {
			checkKeys(t, "key peak", p, "window_ns", "count", "key", "start_ns", "ratio")
		}
	}
	// key_peaks comes right after peaks, its fields in the order docs/metrics.md gives
	if i, j := strings.Index(out, `"peaks"`), strings.Index(out, `"key_peaks"`); j < i || strings.Contains(out[i:j], `"attempt_peaks"`) {
		t.Errorf("key_peaks is not right after peaks")
	}
	if !strings.Contains(out, `"key_peaks": [
        {
          "window_ns": 1000000000,
          "count": 20,
          "key": "alice",
          "start_ns": 900000000,
          "ratio": 2.0
        },`) {
		t.Errorf("fixed-window's key peak over 1s is not written in its documented order")
	}
	// a result without key peaks writes []
	r := doubleBurst()
	r.Results[0].KeyPeaks = nil
	buf.Reset()
	if err := JSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"key_peaks": [],`) {
		t.Errorf("no key peaks are not written []")
	}
	fw := results[0].(map[string]any)
	peak := fw["peaks"].([]any)[0].(map[string]any)
	if peak["count"] != 20.0 || peak["ratio"] != 2.0 || peak["start_ns"] != 9e8 || peak["window_ns"] != 1e9 {
		t.Errorf("fixed-window peak = %v", peak)
	}
	// The ratio is written 2.0 and 10.0, as docs/commands.md shows it.
	for _, want := range []string{`"ratio": 2.0`, `"ratio": 10.0`, `"ratio": 1.0`, `"ratio": 1.1`} {
		if !strings.Contains(out, want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	// Absent series lists are [], never null.
	if strings.Contains(out, "null") {
		t.Errorf("JSON contains null")
	}
}

// TestJSONRoundTrip decodes and re-encodes the JSON of every golden report:
// the numbers survive (they all fit in a float64 exactly) and the document
// stays valid.
func TestJSONRoundTrip(t *testing.T) {
	for _, rep := range goldenReports {
		var buf bytes.Buffer
		if err := JSON(&buf, rep.report()); err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("%s: %v", rep.name, err)
		}
		if doc["scenario"] != rep.report().Scenario {
			t.Errorf("%s: scenario = %v", rep.name, doc["scenario"])
		}
		if dec.More() {
			t.Errorf("%s: more than one JSON value", rep.name)
		}
	}
}

func checkKeys(t *testing.T, what string, v any, want ...string) {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Errorf("%s is %T, want an object", what, v)
		return
	}
	got := make([]string, 0, len(m))
	for k := range m {
		got = append(got, k)
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s fields = %v, want %v", what, got, want)
	}
}
