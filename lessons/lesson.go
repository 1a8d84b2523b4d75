// Package lessons holds the guided lessons of `ratesim demo`: one file per
// lesson, each with its words, the built-in scenarios it runs and the
// figures it computes from them, and a registry that lists them.
//
// A lesson's words never hold a number: every figure it prints comes from
// its runs, through the {placeholders} its figures function fills. Nothing
// here prints or exits: the command finds the lesson's scenarios
// (Lesson.Runs), Lesson.Run runs each through the runner with the
// lesson's choices, and Write writes the lesson to the io.Writer it is
// given.
//
// Adding a lesson is one file here: a Lesson value passed to register from
// a package-level variable, with its place in the list (order: the next
// number), its words, the built-in scenarios it runs and its figures
// function. `ratesim demo` lists and runs it without a change to cmd; its
// golden output (cmd/testdata/demo/NAME.txt and NAME.ascii.txt) is written
// by `go test ./cmd/ -run TestDemo -update`.
package lessons

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/runner"
	"github.com/ratesim/ratesim/scenarios"
)

// Lesson is one guided lesson. Its words live in its file; every number it
// prints comes from the runs, through the {placeholders} its figures fill.
type Lesson struct {
	// Name is what `ratesim demo NAME` takes.
	Name string
	// Title is the one line of the list.
	Title string
	// Runs are the built-in scenarios the lesson runs, in order.
	Runs []RunSpec

	// order is the lesson's place in the list, smallest first.
	order int
	// explain is what to look for, one paragraph per string.
	explain []string
	// shows are the sentences that prove the point, one a line.
	shows []string
	// next suggests what to run after.
	next string
	// figures computes the placeholders from the runs, in the order of
	// Runs.
	figures func(runs []*Run) (map[string]string, error)
	// picture draws the runs; nil draws the timeline of the first.
	picture func(w io.Writer, runs []*Run, opt output.TermOptions) error
	// charts draws the lesson's own charts of its runs (Charts); nil:
	// none.
	charts func(runs []*Run) []output.Chart
	// lead is the chart of each run that proves the lesson's point, drawn
	// first (Lead); "" keeps the usual order, whose first is the window
	// chart.
	lead string

	// Baseline, when set, holds every row of each run against this row
	// (--baseline, docs/accuracy.md).
	Baseline string
}

// RunSpec is one built-in scenario a lesson runs, with the algorithms it
// shows (comma-separated labels; "" for all); or, with Replay, the replay
// of a bundled trace, which Scenario then only names (a directory for the
// run's charts).
type RunSpec struct {
	Scenario, Algorithms string
	Replay               *Replay
}

// Replay is a run that replays a trace bundled with ratesim
// (scenarios.Trace), as `ratesim replay` would with these flags.
type Replay struct {
	// Trace is the bundled trace's name; Name the scenario's.
	Trace, Name string
	// Limit is --limit; Fields the trace's other flags by name (format,
	// time-field, key-field, time-unit, spread, ...).
	Limit  string
	Fields map[string]string
}

// Lead is the name of the chart of each run to draw first ("": the usual
// order); the lesson's own charts (Charts) come before it.
func (l *Lesson) Lead() string { return l.lead }

// Charts draws the lesson's own charts of its runs, besides each run's
// (none for most lessons).
func (l *Lesson) Charts(runs []*Run) []output.Chart {
	if l.charts == nil {
		return nil
	}
	return l.charts(runs)
}

// Run is one finished run of a lesson: the scenario as run, its report
// and, for a small run, every decision of every algorithm (Decisions[i]
// are Report.Results[i]'s in processing order), nil when there were too
// many to keep.
type Run = runner.Report

// Run runs the scenario of the lesson's run i (Runs[i]) through the
// runner, with the algorithms it shows, the lesson's baseline, and the
// decisions of a small run kept for its figures; o holds the caller's
// hooks and charts' choices.
func (l *Lesson) Run(i int, sc *scenarios.Scenario, o runner.Options) (*Run, error) {
	o.Algorithms = l.Runs[i].Algorithms
	o.Baseline = l.Baseline
	o.KeepDecisions = runner.TimelineDecisions
	return runner.Run(sc, o)
}

// registry holds the lessons, sorted by order once all have registered.
var registry []*Lesson

// register adds a lesson to the list; each lesson's file calls it from a
// package-level variable.
func register(l Lesson) *Lesson {
	registry = append(registry, &l)
	slices.SortStableFunc(registry, func(a, b *Lesson) int { return cmp.Compare(a.order, b.order) })
	return &l
}

// All returns the lessons in the order `ratesim demo` lists them.
func All() []*Lesson { return slices.Clone(registry) }

// Named returns the lesson called name.
func Named(name string) (*Lesson, bool) {
	for _, l := range registry {
		if l.Name == name {
			return l, true
		}
	}
	return nil, false
}

// Names returns the lessons' names in order.
func Names() []string {
	var names []string
	for _, l := range registry {
		names = append(names, l.Name)
	}
	return names
}

// Options say how Write lays a lesson out.
type Options struct {
	// Width is the column to fold the words at.
	Width int
	// Timeline draws the lesson's picture of its runs, with Term.
	Timeline bool
	Term     output.TermOptions
}

// Write writes the lesson with the figures of its runs (one per RunSpec,
// in order): the title and what to look for, the picture, the sentences
// with the numbers and what to run next. Nothing is written when a figure
// cannot be computed.
func (l *Lesson) Write(w io.Writer, runs []*Run, opt Options) error {
	text, err := l.text(runs)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.WriteString(wrap(text.head, opt.Width))
	if opt.Timeline {
		buf.WriteByte('\n')
		draw := l.picture
		if draw == nil {
			draw = firstTimeline
		}
		if err := draw(&buf, runs, opt.Term); err != nil {
			return err
		}
	}
	buf.WriteString("\nWhat the run shows:\n")
	for _, s := range text.shows {
		lines := strings.Split(s, "\n")
		buf.WriteString(wrapIndent(lines[0], opt.Width, "- ", "  "))
		for _, l := range lines[1:] { // a table, as laid out
			buf.WriteString("  " + l + "\n")
		}
	}
	buf.WriteString("\n" + wrap(l.next, opt.Width))
	_, err = w.Write(buf.Bytes())
	return err
}

// firstTimeline draws the timeline of the first run, when its decisions
// were kept.
func firstTimeline(w io.Writer, runs []*Run, opt output.TermOptions) error {
	if runs[0].Decisions == nil {
		return nil
	}
	return output.TermTimeline(w, runs[0].Report, runs[0].Decisions, opt)
}

// filled is a lesson's words with its figures filled in.
type filled struct {
	head  string   // the title line and the paragraphs
	shows []string // the sentences with the numbers (a table after a sentence's first line)
}

// text fills the lesson's placeholders with the figures of its runs.
func (l *Lesson) text(runs []*Run) (filled, error) {
	if len(runs) != len(l.Runs) {
		return filled{}, fmt.Errorf("lesson %s: want %d runs, have %d", l.Name, len(l.Runs), len(runs))
	}
	vals, err := l.figures(runs)
	if err != nil {
		return filled{}, fmt.Errorf("lesson %s: %w", l.Name, err)
	}
	var out filled
	paras := []string{"Lesson " + l.Name + ": " + l.Title + "."}
	for _, p := range l.explain {
		s, err := fill(p, vals)
		if err != nil {
			return out, fmt.Errorf("lesson %s: %w", l.Name, err)
		}
		paras = append(paras, s)
	}
	out.head = strings.Join(paras, "\n\n")
	for _, p := range l.shows {
		s, err := fill(p, vals)
		if err != nil {
			return out, fmt.Errorf("lesson %s: %w", l.Name, err)
		}
		out.shows = append(out.shows, s)
	}
	return out, nil
}

var placeholder = regexp.MustCompile(`\{[a-z0-9_]+\}`)

// fill replaces every {name} in s with vals[name]; a name without a value
// is an error.
func fill(s string, vals map[string]string) (string, error) {
	var missing []string
	out := placeholder.ReplaceAllStringFunc(s, func(m string) string {
		v, ok := vals[m[1:len(m)-1]]
		if !ok {
			missing = append(missing, m)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("no figure for %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// wrap folds each paragraph of s (separated by blank lines) to width
// columns and ends it with a newline; lines of a paragraph that start
// with two spaces are kept as they are (tables).
func wrap(s string, width int) string {
	var b strings.Builder
	for i, p := range strings.Split(s, "\n\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(wrapIndent(p, width, "", ""))
	}
	return b.String()
}

// wrapIndent folds one paragraph to width, the first line after first and
// the others after rest.
func wrapIndent(p string, width int, first, rest string) string {
	if strings.HasPrefix(p, "  ") {
		return first + p + "\n" // preformatted
	}
	var b strings.Builder
	line := first
	n := len([]rune(first))
	empty := true
	for _, word := range strings.Fields(p) {
		wl := len([]rune(word))
		if !empty && n+1+wl > width {
			b.WriteString(line + "\n")
			line, n, empty = rest, len([]rune(rest)), true
		}
		if !empty {
			line += " "
			n++
		}
		line += word
		n += wl
		empty = false
	}
	b.WriteString(line + "\n")
	return b.String()
}
