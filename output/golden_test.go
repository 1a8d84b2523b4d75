package output

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ratesim/ratesim/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var goldenReports = []struct {
	name   string
	report func() *sim.Report
}{
	{"double-burst", doubleBurst},
	{"retry-storm", retryStorm},
	{"access-log", replayed},
}

var goldenFormats = []struct {
	ext    string
	render Renderer
}{
	{"table.txt", Table},
	{"json", JSON},
	{"csv", CSV},
	{"md", Markdown},
}

// TestGolden renders each hand-built report in each format and compares the
// bytes with testdata/NAME.EXT. Regenerate with `go test ./output/ -update`
// and review the diff.
func TestGolden(t *testing.T) {
	for _, rep := range goldenReports {
		for _, f := range goldenFormats {
			name := rep.name + "." + f.ext
			t.Run(name, func(t *testing.T) {
				var buf bytes.Buffer
				if err := f.render(&buf, rep.report()); err != nil {
					t.Fatal(err)
				}
				// Rendering twice gives the same bytes.
				var again bytes.Buffer
				if err := f.render(&again, rep.report()); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf.Bytes(), again.Bytes()) {
					t.Fatalf("two renderings differ:\n%s\n---\n%s", buf.Bytes(), again.Bytes())
				}
				path := filepath.Join("testdata", name)
				if *update {
					if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./output/ -update to create it)", err)
				}
				if !bytes.Equal(buf.Bytes(), want) {
					t.Errorf("%s differs from the golden file (go test ./output/ -update rewrites it)\ngot:\n%s\nwant:\n%s",
						path, buf.Bytes(), want)
				}
			})
		}
	}
}

// TestRenderersNilReport checks that a nil report is an error, not a panic.
func TestRenderersNilReport(t *testing.T) {
	for _, name := range Formats() {
		render, ok := ForFormat(name)
		if !ok {
			t.Fatalf("ForFormat(%q) not found", name)
		}
		if err := render(&bytes.Buffer{}, nil); err == nil {
			t.Errorf("%s(nil): no error", name)
		}
	}
	if _, ok := ForFormat("yaml"); ok {
		t.Error(`ForFormat("yaml") found a renderer`)
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestRenderersReturnWriteErrors(t *testing.T) {
	for _, f := range goldenFormats {
		if err := f.render(errWriter{}, doubleBurst()); err == nil {
			t.Errorf("%s: no error from a failing writer", f.ext)
		}
	}
}

// TestEmptyReport renders a report without results in every format.
func TestEmptyReport(t *testing.T) {
	r := &sim.Report{Scenario: "empty", Seed: 1, Limit: sim.Limit{Rate: 1, PerNs: s, Burst: 1}}
	for _, f := range goldenFormats {
		var buf bytes.Buffer
		if err := f.render(&buf, r); err != nil {
			t.Errorf("%s: %v", f.ext, err)
		}
	}
	var buf bytes.Buffer
	if err := JSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"results": []`)) {
		t.Errorf("empty results not written as []:\n%s", buf.Bytes())
	}
}
