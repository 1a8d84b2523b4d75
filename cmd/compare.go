package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/expect"
	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/runner"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// defaultScenario is what `ratesim compare` runs without an argument.
const defaultScenario = "double-burst"

var formats = []string{"table", "json", "csv", "markdown"}

type compareFlags struct {
	format     string
	algorithms string
	decisions  string
	columns    string
	report     string
	seed       uint64
	seedSet    bool
	top        int
	baseline   string
	charts     chartFlags
	timeline   timelineFlags
	redis      redisFlags
	budget     budgetFlags
	// check is replay --check-field's (nil for compare)
	check *sim.Check
	// page is what --report says of the run besides its figures: the
	// command line, the title and the scenario's text
	page output.Page
	// maxBad is --max-bad, the malformed lines a trace may have
	maxBad string
}

// addOutputFlags adds the flags that say what compare and replay print and
// write besides the comparison itself.
func addOutputFlags(fl *pflag.FlagSet, f *compareFlags) {
	fl.StringVar(&f.baseline, "baseline", "", "hold every row against this row (a label, usually sliding-log): requests decided differently")
	fl.StringVar(&f.columns, "columns", "", "the table's columns, comma-separated (all: every one; default: those that fit 120 columns): "+strings.Join(output.ColumnNames(), ", "))
	fl.StringVar(&f.report, "report", "", "write the run as one self-contained HTML page (scenario, command, table, findings, charts) to this file")
	addChartFlags(fl, &f.charts)
	addTimelineFlags(fl, &f.timeline)
	addRedisFlags(fl, &f.redis)
	addBudgetFlags(fl, &f.budget, "a run")
	fl.StringVar(&f.maxBad, "max-bad", "", "a trace with more malformed lines than this, a count (10) or a share (5%), is an error (exit 2); without it, more than 10% warns")
}

func newCompareCmd() *cobra.Command {
	var f compareFlags
	c := &cobra.Command{
		Use:   "compare [SCENARIO]",
		Short: "Run every algorithm of a scenario and compare them",
		Long: `Runs every algorithm of the scenario on its own copy of the traffic and prints
the comparison. SCENARIO is a scenario file or the name of a built-in scenario
(see 'ratesim scenarios'); without one, the built-in double-burst runs.`,
		Example: `  ratesim compare
  ratesim compare token-vs-leaky --format markdown
  ratesim compare my-api.yaml --algorithms fixed-window,gcra --decisions decisions.csv`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f.seedSet = c.Flags().Changed("seed")
			f.page.Command = commandLine(c)
			name := defaultScenario
			if len(args) == 1 {
				name = args[0]
			}
			return runCompare(c.OutOrStdout(), c.ErrOrStderr(), name, f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.format, "format", "table", "output format: "+strings.Join(formats, ", "))
	fl.StringVar(&f.algorithms, "algorithms", "", "run only these algorithms (comma-separated labels or names)")
	fl.StringVar(&f.decisions, "decisions", "", "write every decision to this CSV file")
	fl.Uint64Var(&f.seed, "seed", 0, "override the scenario's seed")
	fl.IntVar(&f.top, "top", sim.DefaultTopKeys, "list this many keys per algorithm by rejections")
	addOutputFlags(fl, &f)
	return c
}

func runCompare(stdout, stderr io.Writer, name string, f compareFlags) error {
	if !slices.Contains(formats, f.format) {
		return usagef("--format: %q is not a format (want %s)", f.format, strings.Join(formats, ", "))
	}
	sc, err := scenarios.Resolve(name)
	if err != nil {
		return usageError{err}
	}
	if err := scenarios.CheckFiles(sc); err != nil {
		return usageError{err}
	}
	if f.report != "" {
		_, data, err := scenarios.ResolveText(name)
		if err != nil {
			return usageError{err}
		}
		f.page.Title, f.page.Scenario = pageTitle("compare", sc.Name), string(data)
	}
	return compareScenario(stdout, stderr, sc, f)
}

// compareScenario runs a scenario and prints the comparison: the main job
// of compare and replay.
func compareScenario(stdout, stderr io.Writer, sc *scenarios.Scenario, f compareFlags) error {
	maxBad, err := parseMaxBad(f.maxBad)
	if err != nil {
		return err
	}
	claims, err := claimsOf(sc)
	if err != nil {
		return err
	}
	var plan *expect.Plan
	o, err := runScenario(stderr, sc, f, func(o *runner.Options) {
		if len(claims) > 0 {
			plan = expect.Prepare(claims, sc, o)
		}
	})
	if err != nil {
		return err
	}
	if err := checkBadLines(stderr, o.Report.Traces, maxBad); err != nil {
		return err
	}
	warnNoValue(stderr, o.Report.Traces)
	cols, _ := parseColumns(f.columns) // checked by runScenario
	if cols != nil && (f.format == "table" || f.format == "markdown") {
		for _, name := range output.MissingColumns(o.Report, cols) {
			fmt.Fprintf(stderr, "note: --columns: this run has no column %s\n", name)
		}
	}
	var outs []expect.Outcome
	if plan != nil {
		if outs, err = plan.Evaluate(o); err != nil {
			return err
		}
	}
	if err := render(stdout, o.Report, f.format, cols, outs); err != nil {
		return err
	}
	if f.format == "table" {
		if plan != nil {
			printExpectations(stdout, outs)
		}
		if err := printTimeline(stdout, o, f.timeline); err != nil {
			return err
		}
	}
	if err := writeCharts(stderr, o, f.charts); err != nil {
		return err
	}
	if f.report == "" {
		return nil
	}
	p := f.page
	if p.Title == "" {
		p.Title = pageTitle("compare", o.Report.Scenario)
	}
	p.Parts = []output.PagePart{{Report: o.Report, Charts: runCharts(o, "")}}
	return writeReport(stderr, f.report, p)
}

// parseColumns reads --columns: nil for "" (the default columns).
func parseColumns(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	cols, err := output.ParseColumns(s)
	if err != nil {
		return nil, usagef("--columns: %v", err)
	}
	return cols, nil
}

// runScenario checks the flags, runs the scenario through the runner
// with them (and what prepare adds to its options), writing the decisions
// file, and checks the run on Redis.
func runScenario(stderr io.Writer, sc *scenarios.Scenario, f compareFlags, prepare func(*runner.Options)) (*runner.Report, error) {
	if !slices.Contains(formats, f.format) {
		return nil, usagef("--format: %q is not a format (want %s)", f.format, strings.Join(formats, ", "))
	}
	if f.top < 1 {
		return nil, usagef("--top: %d: want at least 1", f.top)
	}
	if err := checkChartFlags(f.charts); err != nil {
		return nil, err
	}
	if _, err := parseColumns(f.columns); err != nil {
		return nil, err
	}
	if err := checkOutPaths(
		outPath{flag: "--charts", path: f.charts.dir, dir: true},
		outPath{flag: "--decisions", path: f.decisions},
		outPath{flag: "--report", path: f.report},
	); err != nil {
		return nil, err
	}
	o := runOptions(stderr, f.charts, f.report != "")
	o.Algorithms = f.algorithms
	o.Baseline = f.baseline
	o.TopKeys = f.top
	o.Check = f.check
	if f.format == "table" && !f.timeline.off || f.charts.dir != "" || f.report != "" {
		// the terminal timeline, the timeline chart and the page draw
		// a small run's decisions; nothing else prints them
		o.KeepDecisions = runner.TimelineDecisions
	}
	o.Budget = f.budget.budget()
	if f.seedSet {
		o.Seed = &f.seed
	}
	if f.decisions != "" {
		files := &decisionFiles{path: f.decisions, granted: grantsPartly(sc), limits: slices.ContainsFunc(sc.Algorithms, func(a scenarios.Algorithm) bool {
			return len(a.Params.Members) > 0
		}), keys: memberKeyColumns(sc), routes: routeNames(sc)}
		defer files.cleanup()
		o.Decisions = files.decisions()
	}
	prepare(&o)
	bar := newProgress(stderr) // nil unless stderr is a terminal
	o.Progress, o.KeyProgress = bar.hook(), bar.keyHook()
	rep, err := runner.Run(sc, o)
	bar.done()
	if err != nil {
		return nil, runError(err)
	}
	if err := checkOnRedis(stderr, rep.Config, rep.Report, f.redis); err != nil {
		return nil, err
	}
	return rep, nil
}

// runOptions are the options of every run of the command line: its
// notes and warnings on stderr, the key the charts inspect (when charts
// are drawn: --charts, or the page of --report), and the default budget.
func runOptions(stderr io.Writer, charts chartFlags, report bool) runner.Options {
	return runner.Options{
		Budget:     runner.DefaultBudget(),
		Inspect:    charts.dir != "" || report,
		Windows:    charts.dir != "" || report,
		InspectKey: charts.key,
		Note: func(sk scenarios.Skipped) {
			fmt.Fprintf(stderr, "note: %s left out: %s\n", sk.Name, sk.Reason)
		},
		Warn: func(msg string) { fmt.Fprintf(stderr, "ratesim: warning: %s\n", msg) },
	}
}

// runError marks the errors of a run that come from its options or its
// input as usage errors: they exit 2.
func runError(err error) error {
	var oe *runner.OptionError
	var be *runner.BudgetError
	if errors.As(err, &oe) || errors.As(err, &be) {
		return usageError{err}
	}
	return inputError(err)
}

// render writes the report in one of the formats; cols are the columns
// of a table (nil: the default ones).
func render(w io.Writer, rep *sim.Report, format string, cols []string, outs []expect.Outcome) error {
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case "json":
		var x any
		if outs != nil {
			x = expect.JSONValue(outs)
		}
		err = output.JSONWith(bw, rep, x)
	case "csv":
		var x []output.Column
		if outs != nil {
			x = expectColumns(outs)
		}
		err = output.CSVWith(bw, rep, x)
	case "markdown":
		if err = output.MarkdownOf(bw, rep, cols); err == nil && outs != nil {
			err = expect.Markdown(bw, outs)
		}
	default:
		err = output.TableOf(bw, rep, cols)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// decisionFiles are the files of --decisions: the destination, and a
// temporary part per row beside it, which the runner joins into it in the
// rows' order (runner.Decisions).
type decisionFiles struct {
	path  string
	parts []*os.File
	// granted adds the granted column: a row of the run may admit part
	// of a cost
	granted bool
	// limits: a row is an all-of, so every row's decisions end with the
	// limit that decided each (output.NewLimitDecisions), after the
	// cluster's columns on a cluster
	limits bool
	// keys: the most limits of an all-of row whose limits count by
	// different keys, so many key columns after the limit (0: none)
	keys int
	// routes: the routes of a gateway's config that route the replay,
	// by name, for the route column after all others (nil: none)
	routes []string
}

// routeNames are the names of the routes that route sc's requests to its
// rows (replay --gateway), in the router's order; nil when no row takes
// a route's requests.
func routeNames(sc *scenarios.Scenario) []string {
	if !slices.ContainsFunc(sc.Algorithms, func(a scenarios.Algorithm) bool { return a.Route != 0 }) {
		return nil
	}
	for _, src := range sc.Traffic.Sources {
		if r, ok := src.(*traffic.Replay); ok && r.Router != nil {
			names := []string{}
			for _, rt := range r.Router.Routes() {
				names = append(names, rt.Name)
			}
			return names
		}
	}
	return nil
}

// memberKeyColumns is how many key columns the decisions of sc end with:
// the most limits of an all-of row of which a limit counts by another key
// than the request's (by: global or an attribute), 0 when there is none.
func memberKeyColumns(sc *scenarios.Scenario) int {
	n := 0
	for _, a := range sc.Algorithms {
		if slices.ContainsFunc(a.Params.Members, func(m algorithms.Member) bool { return m.By != algorithms.ByKey }) {
			n = max(n, len(a.Params.Members))
		}
	}
	return n
}

// grantsPartly reports whether a row of sc may admit less than the cost
// asked (redis-rate-at-most): its decisions then carry the cost granted.
func grantsPartly(sc *scenarios.Scenario) bool {
	return slices.ContainsFunc(sc.Algorithms, func(a scenarios.Algorithm) bool {
		info, _ := algorithms.Lookup(a.Name)
		return info.Partial
	})
}

// decisions writes the run's decisions as CSV into the files.
func (d *decisionFiles) decisions() *runner.Decisions {
	return &runner.Decisions{
		Part: func() (io.ReadWriteSeeker, error) {
			f, err := os.CreateTemp(filepath.Dir(d.path), ".ratesim-decisions-*")
			if err != nil {
				return nil, usagef("--decisions: %v", err)
			}
			d.parts = append(d.parts, f)
			return f, nil
		},
		Writer: func(part io.Writer, row sim.Algorithm, cluster, header bool) runner.DecisionWriter {
			if d.limits || d.routes != nil {
				var names []string
				for i, m := range row.Params.Members {
					names = append(names, sim.LimitName(m, i))
				}
				return decisionWriter{output.NewDecisionsWith(part, row.Name, row.Label, header, output.DecisionColumns{
					Cluster: cluster, Granted: d.granted, Limits: d.limits, LimitNames: names, Keys: d.keys, Routes: d.routes})}
			}
			return decisionWriter{output.NewDecisionsOf(part, row.Name, row.Label, header, cluster, d.granted)}
		},
		Create: func() (io.WriteCloser, error) {
			out, err := os.Create(d.path)
			if err != nil {
				return nil, usagef("--decisions: %v", err)
			}
			return decisionsOut{out}, nil
		},
	}
}

func (d *decisionFiles) cleanup() {
	for _, f := range d.parts {
		f.Close()
		os.Remove(f.Name())
	}
}

// decisionWriter and decisionsOut name --decisions in their errors.
type decisionWriter struct{ *output.Decisions }

func (w decisionWriter) Flush() error {
	if err := w.Decisions.Flush(); err != nil {
		return fmt.Errorf("--decisions: %w", err)
	}
	return nil
}

type decisionsOut struct{ f *os.File }

func (o decisionsOut) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	if err != nil {
		err = fmt.Errorf("--decisions: %w", err)
	}
	return n, err
}

func (o decisionsOut) Close() error { return o.f.Close() }
