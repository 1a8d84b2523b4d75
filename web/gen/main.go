// Command gen writes the generated files of the playground's static
// folder (docs/playground.md, "How it is built"); .ci/build-web runs it:
//
//	presets.json      the built-ins (text, estimate, whether they fit the
//	                  browser's budget) and the lessons (their words as
//	                  `ratesim demo NAME --no-timeline` prints them, the
//	                  runs they make, their own charts as SVG)
//	traces/           the bundled traces the lessons replay, which the
//	                  page fetches when such a run is chosen
//	ratesim.wasm.gz   the engine, gzipped at the best compression with no
//	                  name and no time in its header: the same bytes for
//	                  the same wasm
//
// The lessons' words are the command line's, so a lesson or a figure that
// changes shows on the page after the next build, and .ci/run fails until
// the build is committed.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ratesim/ratesim/lessons"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/web/play"
)

// Lesson is a lesson as the page lists it.
type Lesson struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	Text  string `json:"text"`
	// Runs are the scenarios it runs in the page, with the rows it
	// shows.
	Runs   []Run    `json:"runs"`
	Charts []string `json:"charts,omitempty"` // its own charts, SVG
}

// Run is one run of a lesson: a built-in scenario by name, or the replay
// of a bundled trace, whose scenario is Text and whose trace the page
// fetches from traces/ beside it (Files).
type Run struct {
	Scenario   string   `json:"scenario"`
	Algorithms string   `json:"algorithms,omitempty"`
	Text       string   `json:"text,omitempty"`
	Files      []string `json:"files,omitempty"`
}

func main() {
	exe := flag.String("ratesim", "", "the ratesim binary that prints the lessons")
	wasm := flag.String("wasm", "", "the engine's WebAssembly build")
	out := flag.String("out", "web/static", "the static folder")
	flag.Parse()
	if err := run(*exe, *wasm, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(exe, wasm, out string) error {
	presets, err := play.Presets()
	if err != nil {
		return err
	}
	var ls []Lesson
	for _, l := range lessons.All() {
		lesson, err := lessonOf(exe, l)
		if err != nil {
			return fmt.Errorf("lesson %s: %w", l.Name, err)
		}
		ls = append(ls, lesson)
	}
	if err := writeTraces(ls, out); err != nil {
		return err
	}
	data, err := json.MarshalIndent(map[string]any{
		"builtins": presets,
		"lessons":  ls,
	}, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "presets.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	code, err := os.ReadFile(wasm)
	if err != nil {
		return err
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(code); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "ratesim.wasm.gz"), gz.Bytes(), 0o644)
}

// replayText is the scenario of a lesson's replay, reading the bundled
// trace by its name, beside the scenario.
func replayText(r *lessons.Replay) (string, error) {
	f, err := r.File(r.Trace)
	if err != nil {
		return "", err
	}
	text, err := scenarios.Marshal(f)
	return string(text), err
}

// writeTraces writes into dir/traces the bundled traces the lessons
// replay, for the page to fetch.
func writeTraces(ls []Lesson, dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
		return err
	}
	for _, l := range ls {
		for _, r := range l.Runs {
			for _, name := range r.Files {
				data, err := scenarios.Trace(name)
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(dir, "traces", name), data, 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// lessonOf runs the lesson as `ratesim demo` does and keeps its words and
// its own charts.
func lessonOf(exe string, l *lessons.Lesson) (Lesson, error) {
	dir, err := os.MkdirTemp("", "ratesim-gen-")
	if err != nil {
		return Lesson{}, err
	}
	defer os.RemoveAll(dir)
	var stdout, stderr bytes.Buffer
	c := exec.Command(exe, "demo", l.Name, "--no-timeline", "--charts", dir, "--chart-format", "svg")
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return Lesson{}, fmt.Errorf("%v: %s", err, stderr.String())
	}
	out := Lesson{Name: l.Name, Title: l.Title, Text: stdout.String(), Runs: []Run{}}
	for _, r := range l.Runs {
		run := Run{Scenario: r.Scenario, Algorithms: r.Algorithms}
		if r.Replay != nil {
			if run.Text, err = replayText(r.Replay); err != nil {
				return Lesson{}, err
			}
			run.Files = []string{r.Replay.Trace}
		}
		out.Runs = append(out.Runs, run)
	}
	// demo writes the lesson's own charts first, then each run's, whose
	// first is the window chart (in a directory of its own when the
	// lesson has several runs): the lesson's own are those before
	for _, line := range strings.Split(stderr.String(), "\n") {
		path, ok := strings.CutPrefix(line, "wrote ")
		if !ok {
			continue
		}
		if filepath.Dir(path) != dir || filepath.Base(path) == "window.svg" {
			break
		}
		svg, err := os.ReadFile(path)
		if err != nil {
			return Lesson{}, err
		}
		out.Charts = append(out.Charts, string(svg))
	}
	return out, nil
}
