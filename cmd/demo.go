package cmd

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/ratesim/ratesim/internal/didyoumean"
	"github.com/ratesim/ratesim/lessons"
	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/spf13/cobra"
)

// demoFlags are the options of `ratesim demo`.
type demoFlags struct {
	charts   chartFlags
	timeline timelineFlags
	report   string
	command  string // the command line, for the page of --report
}

func newDemoCmd() *cobra.Command {
	var f demoFlags
	c := &cobra.Command{
		Use:   "demo [LESSON]",
		Short: "Guided lessons for a class: what to look for, the timeline, the numbers",
		Long: `Without an argument, lists the lessons. With one, runs the lesson's built-in
scenario and prints what to look for in plain words, the timeline of the run
and the numbers that prove the point, computed from the run. With --charts
DIR it also writes the run's charts there (a lesson of two runs writes each
run's charts into a directory named after its scenario).`,
		Example: `  ratesim demo
  ratesim demo double-burst
  ratesim demo double-burst --charts out/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return listLessons(c.OutOrStdout())
			}
			l, ok := lessons.Named(args[0])
			if !ok {
				hint := ""
				if s := didyoumean.Closest(args[0], lessons.Names()); s != "" {
					hint = fmt.Sprintf("; did you mean %q?", s)
				}
				return usagef("no lesson %q (lessons: %s)%s", args[0], strings.Join(lessons.Names(), ", "), hint)
			}
			f.command = commandLine(c)
			return runLesson(c.OutOrStdout(), c.ErrOrStderr(), l, scenarios.Builtin, f)
		},
	}
	fl := c.Flags()
	addChartFlags(fl, &f.charts)
	addTimelineFlags(fl, &f.timeline)
	fl.StringVar(&f.report, "report", "", "write the lesson as one self-contained HTML page (its words, scenarios, tables, findings and charts) to this file")
	return c
}

// listLessons prints the lessons, one a line: the name and the title.
func listLessons(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, l := range lessons.All() {
		fmt.Fprintf(tw, "%s\t%s\n", l.Name, l.Title)
	}
	return tw.Flush()
}

// runLesson runs the lesson's scenarios (load finds them by name), prints
// the lesson and writes the runs' charts when asked to.
func runLesson(stdout, stderr io.Writer, l *lessons.Lesson, load func(string) (*scenarios.Scenario, error), f demoFlags) error {
	if err := checkChartFlags(f.charts); err != nil {
		return err
	}
	if err := checkOutPaths(
		outPath{flag: "--charts", path: f.charts.dir, dir: true},
		outPath{flag: "--report", path: f.report},
	); err != nil {
		return err
	}
	var runs []*lessons.Run
	var texts []string // the scenarios' texts, for --report
	for i, lr := range l.Runs {
		var sc *scenarios.Scenario
		var err error
		var text string
		if lr.Replay != nil {
			var doc []byte
			sc, doc, err = lessonReplay(lr.Replay)
			text = string(doc)
		} else {
			sc, err = load(lr.Scenario)
			if err == nil && f.report != "" {
				var data []byte
				_, data, err = scenarios.ResolveText(lr.Scenario)
				text = string(data)
			}
		}
		if err != nil {
			return err
		}
		texts = append(texts, "# "+lr.Scenario+"\n"+text)
		o := runOptions(stderr, lessonCharts(l, lr, f.charts), f.report != "")
		bar := newProgress(stderr) // nil unless stderr is a terminal
		o.Progress, o.KeyProgress = bar.hook(), bar.keyHook()
		run, err := l.Run(i, sc, o)
		bar.done()
		if err != nil {
			return runError(err)
		}
		runs = append(runs, run)
	}
	opt := lessons.Options{
		Width:    min(termWidth(stdout), 80),
		Timeline: !f.timeline.off,
		Term:     termOptions(stdout, f.timeline),
	}
	if err := l.Write(stdout, runs, opt); err != nil {
		return err
	}
	// the lesson's own charts first: they are the picture it reads
	if f.charts.dir != "" {
		if err := os.MkdirAll(f.charts.dir, 0o755); err != nil {
			return usagef("--charts: %v", err)
		}
		format := cmp.Or(f.charts.format, "png")
		for _, c := range l.Charts(runs) {
			path := filepath.Join(f.charts.dir, c.Name+"."+format)
			if err := writeChart(path, c, format); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "wrote %s\n", path)
		}
	}
	for i, lr := range l.Runs {
		if err := writeCharts(stderr, runs[i], lessonCharts(l, lr, f.charts)); err != nil {
			return err
		}
	}
	if f.report == "" {
		return nil
	}
	// the page: the lesson's words and its own charts, then each run
	var words bytes.Buffer
	opt.Width, opt.Term = 80, output.TermOptions{Width: 100}
	if err := l.Write(&words, runs, opt); err != nil {
		return err
	}
	p := output.Page{
		Title:    "ratesim demo " + l.Name + ": " + l.Title,
		Command:  f.command,
		Scenario: strings.Join(texts, "---\n"),
		Parts:    []output.PagePart{{Heading: "Lesson", Text: words.String(), Charts: l.Charts(runs)}},
	}
	for i, lr := range l.Runs {
		p.Parts = append(p.Parts, output.PagePart{Heading: "Run: " + lr.Scenario, Report: runs[i].Report, Charts: runCharts(runs[i], l.Lead())})
	}
	return writeReport(stderr, f.report, p)
}

// lessonCharts are the chart flags of one run of a lesson: a lesson of
// several runs writes each run's charts into a directory named after its
// scenario.
func lessonCharts(l *lessons.Lesson, lr lessons.RunSpec, f chartFlags) chartFlags {
	if len(l.Runs) > 1 && f.dir != "" {
		f.dir = filepath.Join(f.dir, lr.Scenario)
	}
	f.lead = l.Lead()
	return f
}
