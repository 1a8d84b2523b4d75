package cmd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/expect"
	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/runner"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sweep"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// addSweepChartFlags adds --charts and --chart-format (a sweep draws no
// key's state: no --chart-key).
func addSweepChartFlags(fl *pflag.FlagSet, f *chartFlags) {
	fl.StringVar(&f.dir, "charts", "", "write a heatmap per metric (two varied fields) or a line chart per metric (one) to this directory, creating it")
	fl.StringVar(&f.format, "chart-format", "png", "chart image format: "+strings.Join(output.ChartFormats(), ", "))
}

type sweepFlags struct {
	output   string
	report   string
	page     output.Page // what --report says besides the sweep: the command, the scenario
	vary     []string
	format   string
	goal     string
	shard    string
	baseline string
	charts   chartFlags
	budget   budgetFlags
	// total is --max-total-requests
	total int64
}

func newSweepCmd() *cobra.Command {
	var f sweepFlags
	c := &cobra.Command{
		Use:   "sweep SCENARIO --vary FIELD=VALUES [--vary ...]",
		Short: "Run a scenario over a grid of parameter values and choose the best",
		Long: `Runs the scenario once for every combination of the values of the varied
fields (the grid; the last field varies fastest) and prints one row per point
and algorithm. Each point's results are exactly what 'ratesim compare' prints
for the scenario file with those values written in. FIELD is a scenario path:
limit.burst, algorithms[LABEL].burst, cluster.store.rtt, traffic[0].rate, ...
VALUES is a list (5,10,20), a range with a step (5..50:5, 10ms..100ms:10ms)
or a geometric range (1ms..1s*10). A value the scenario rejects is that
point's error; the other points run.

--goal ranks the points per algorithm: "minimize|maximize METRIC [subject to
METRIC OP NUMBER and ...]" (see docs/sweep.md). --shard K/N runs the points
whose index mod N is K and writes them as JSON; 'ratesim sweep merge' joins
the shards into the output of one whole run.`,
		Example: `  ratesim sweep double-burst --vary limit.burst=5..20:5
  ratesim sweep choose-burst --vary limit.burst=10..60:10 --goal "minimize burst subject to reject_pct(key=user-*) <= 1"
  ratesim sweep sync-interval --vary cluster.nodes=2,4,8 --vary algorithms[sync-100ms].sync=10ms..1s*10 --shard 0/4 > shard-0.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f.page.Command = commandLine(c)
			return runSweep(c.OutOrStdout(), c.ErrOrStderr(), args[0], f, c.Flags().Changed("format"))
		},
	}
	fl := c.Flags()
	fl.StringArrayVar(&f.vary, "vary", nil, "FIELD=VALUES: a scenario field and its values (repeat for more fields)")
	fl.StringVar(&f.format, "format", "table", "output format: "+strings.Join(sweep.Formats, ", "))
	fl.StringVar(&f.goal, "goal", "", `rank the points: "minimize|maximize METRIC [subject to METRIC OP NUMBER and ...]"`)
	fl.StringVar(&f.baseline, "baseline", "", "hold every row of each point against this row of the same point (as compare --baseline; each point then runs alone): gives baseline_differs_pct")
	fl.StringVarP(&f.output, "output", "o", "", "write the output to this file instead of standard output (a shard's JSON, say)")
	fl.StringVar(&f.shard, "shard", "", "K/N: run only the points whose index mod N is K, and write them as JSON for 'sweep merge'")
	addSweepChartFlags(fl, &f.charts)
	addBudgetFlags(fl, &f.budget, "a sweep with a point")
	f.total = runner.DefaultMaxTotalRequests
	fl.Var(budgetValue{n: &f.total}, "max-total-requests", "refuse a sweep whose points together decide more requests than this (2e10, unlimited)")
	addSweepReportFlag(fl, &f.report)
	c.AddCommand(newSweepMergeCmd())
	return c
}

func newSweepMergeCmd() *cobra.Command {
	var f sweepFlags
	c := &cobra.Command{
		Use:   "merge SHARD.json...",
		Short: "Join the shards of a sweep into the output of one whole run",
		Long: `Reads the JSON that 'ratesim sweep --shard K/N' wrote for every K of one N and
prints what one unsharded run prints, in any format, with --goal and --charts
as the sweep takes them.`,
		Example: `  ratesim sweep merge shard-*.json --goal "minimize burst subject to reject_pct <= 1"`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f.page.Command = commandLine(c)
			return runSweepMerge(c.OutOrStdout(), c.ErrOrStderr(), args, f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.format, "format", "table", "output format: "+strings.Join(sweep.Formats, ", "))
	fl.StringVar(&f.goal, "goal", "", "rank the points, as sweep --goal")
	fl.StringVarP(&f.output, "output", "o", "", "write the output to this file instead of standard output")
	addSweepChartFlags(fl, &f.charts)
	addSweepReportFlag(fl, &f.report)
	return c
}

// addSweepReportFlag adds --report to sweep and sweep merge.
func addSweepReportFlag(fl *pflag.FlagSet, report *string) {
	fl.StringVar(report, "report", "", "write the sweep as one self-contained HTML page (scenario, command, table, charts) to this file")
}

// checkSweepPaths checks the output paths of a sweep before it runs.
func checkSweepPaths(f sweepFlags) error {
	return checkOutPaths(
		outPath{flag: "--charts", path: f.charts.dir, dir: true},
		outPath{flag: "--output", path: f.output},
		outPath{flag: "--report", path: f.report},
	)
}

// sweepUsage makes the sweep package's flag errors, and a sweep over its
// budget, usage errors.
func sweepUsage(err error) error {
	var u *sweep.Usage
	var be *runner.BudgetError
	if errors.As(err, &u) || errors.As(err, &be) {
		return usageError{err}
	}
	return err
}

func runSweep(stdout, stderr io.Writer, name string, f sweepFlags, formatSet bool) error {
	if !slices.Contains(sweep.Formats, f.format) {
		return usagef("--format: %q is not a format (want %s)", f.format, strings.Join(sweep.Formats, ", "))
	}
	var shard sweep.Shard
	if f.shard != "" {
		var err error
		if shard, err = parseShard(f.shard); err != nil {
			return err
		}
		if formatSet && f.format != "json" {
			return usagef("--format: %s with --shard: a shard is written as JSON for 'ratesim sweep merge' (leave --format out, or give json)", f.format)
		}
		f.format = "json"
	}
	var fields []sweep.Field
	for _, v := range f.vary {
		fd, err := sweep.ParseVary(v)
		if err != nil {
			return sweepUsage(err)
		}
		fields = append(fields, fd)
	}
	file, data, err := scenarios.ResolveText(name)
	if err != nil {
		return usageError{err}
	}
	sf, err := scenarios.Decode(file, data)
	if err != nil {
		return usageError{err}
	}
	base, err := sweep.BaseOf(sf)
	if err != nil {
		return usageError{err}
	}
	if err := scenarios.CheckFiles(base.Sc); err != nil {
		return usageError{err}
	}
	if err := sweep.CheckFields(base, fields); err != nil {
		return sweepUsage(err)
	}
	if shard.N > 0 && shard.N > sweep.GridSize(fields) {
		return usagef("--shard: %s: the grid has %d points, want N at most that", f.shard, sweep.GridSize(fields))
	}
	var goal *sweep.Goal
	if f.goal != "" {
		if goal, err = sweep.ParseGoal(f.goal, fields); err != nil {
			return sweepUsage(err)
		}
	}
	if err := checkChartFlags(f.charts); err != nil {
		return err
	}
	if f.charts.dir != "" && len(fields) > 2 {
		return usagef("--charts: a sweep draws charts for one or two varied fields, this one has %d", len(fields))
	}
	if err := checkSweepPaths(f); err != nil {
		return err
	}
	f.page.Title, f.page.Scenario = pageTitle("sweep", base.Sc.Name), string(data)
	for _, sk := range base.Sc.Skipped {
		fmt.Fprintf(stderr, "note: %s left out: %s\n", sk.Name, sk.Reason)
	}
	opts := sweep.Options{Base: base, Fields: fields, Shard: shard, Budget: f.budget.budget(), MaxTotalRequests: f.total}
	if f.baseline != "" {
		if opts.Baseline, err = runner.Baseline(base.Sc, f.baseline); err != nil {
			return usageError{err}
		}
	}
	if goal != nil {
		opts.KeyGlobs = goal.Globs()
	}
	if opts.Claims, err = claimsOf(base.Sc); err != nil {
		return err
	}
	for _, g := range expect.Globs(opts.Claims) {
		if !slices.Contains(opts.KeyGlobs, g) {
			opts.KeyGlobs = append(opts.KeyGlobs, g)
		}
	}
	bar := newProgress(stderr)
	if bar != nil {
		opts.Progress = bar.points
	}
	s, err := sweep.Run(opts)
	bar.done()
	if err != nil {
		return sweepUsage(err)
	}
	if shard.N > 0 {
		goal = nil // the shards' ranking is merge's
	}
	return finishSweep(stdout, stderr, s, goal, opts.Claims, f)
}

// finishSweep prints a sweep (run or merged) and draws its charts; under
// a table, a line per point says what became of the scenario's
// expectations (claims) there.
func finishSweep(stdout, stderr io.Writer, s *sweep.Sweep, goal *sweep.Goal, claims []expect.Claim, f sweepFlags) error {
	var bests []sweep.Best
	if goal != nil {
		for _, g := range goal.Unmatched(s) {
			fmt.Fprintf(stderr, "note: --goal: key=%s matches no key of the traffic\n", g)
		}
		var err error
		if bests, err = goal.Rank(s); err != nil {
			return err
		}
	}
	var file *os.File
	if f.output != "" {
		var err error
		if file, err = os.Create(f.output); err != nil {
			return usagef("--output: %v", err)
		}
		defer file.Close()
		stdout = file
	}
	bw := bufio.NewWriter(stdout)
	var err error
	switch f.format {
	case "json":
		err = sweep.JSON(bw, s, goal, bests)
	case "csv":
		err = sweep.CSV(bw, s, goal)
	case "markdown":
		err = sweep.Markdown(bw, s, goal, bests)
	default:
		err = sweep.Table(bw, s, goal, bests)
		if err == nil && len(claims) > 0 {
			var pts []sweep.PointOutcomes
			if pts, err = s.Hold(claims); err == nil {
				fmt.Fprintln(bw)
				for _, l := range sweep.ExpectationLines(s.Fields, pts) {
					fmt.Fprintln(bw, l)
				}
			}
		}
	}
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if file != nil {
		if err := file.Close(); err != nil {
			return err
		}
	}
	if err := writeSweepCharts(stderr, s, goal, bests, f.charts); err != nil {
		return err
	}
	if err := writeSweepReport(stderr, s, goal, bests, f); err != nil {
		return err
	}
	failed := 0
	for _, p := range s.Points {
		if p.Error != "" {
			failed++
			if f.format != "table" && f.format != "markdown" {
				fmt.Fprintf(stderr, "ratesim: point %d (%s): %s\n", p.Index, sweep.Describe(s.Fields, p.Values), p.Error)
			}
		}
	}
	if len(s.Points) > 0 && failed == len(s.Points) {
		return usagef("every point failed: the scenario rejects the values (see above)")
	}
	return nil
}

func runSweepMerge(stdout, stderr io.Writer, files []string, f sweepFlags) error {
	if !slices.Contains(sweep.Formats, f.format) {
		return usagef("--format: %q is not a format (want %s)", f.format, strings.Join(sweep.Formats, ", "))
	}
	var shards []*sweep.Sweep
	for _, name := range files {
		r, err := os.Open(name)
		if err != nil {
			return usageError{err}
		}
		s, err := sweep.ReadJSON(bufio.NewReader(r))
		r.Close()
		if err != nil {
			return usagef("%s: %v", name, err)
		}
		shards = append(shards, s)
	}
	s, err := sweep.Merge(shards)
	if err != nil {
		return usageError{err}
	}
	var goal *sweep.Goal
	if f.goal != "" {
		if goal, err = sweep.ParseGoal(f.goal, s.Fields); err != nil {
			return sweepUsage(err)
		}
		for _, g := range goal.Globs() {
			if !slices.Contains(s.KeyGlobs, g) {
				return usagef("--goal: the shards hold no per-key totals for key=%s: give the same --goal to 'ratesim sweep --shard' when running them", g)
			}
		}
	}
	if err := checkChartFlags(f.charts); err != nil {
		return err
	}
	if err := checkSweepPaths(f); err != nil {
		return err
	}
	claims, err := expect.CompileAll(s.Expect)
	if err != nil {
		return usageError{err}
	}
	f.page.Title = pageTitle("sweep", s.Scenario)
	return finishSweep(stdout, stderr, s, goal, claims, f)
}

// parseShard reads --shard K/N.
func parseShard(s string) (sweep.Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	ki, err1 := strconv.Atoi(k)
	ni, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || ni < 1 || ki < 0 || ki >= ni {
		return sweep.Shard{}, usagef("--shard: %q: want K/N with 0 <= K < N, e.g. 0/4 (from a batch runner's index: --shard $JOB_COMPLETION_INDEX/4)", s)
	}
	return sweep.Shard{K: ki, N: ni}, nil
}

// writeSweepReport writes the page of --report: the sweep's table as the
// terminal shows it, and its charts when it has one or two varied fields.
func writeSweepReport(stderr io.Writer, s *sweep.Sweep, goal *sweep.Goal, bests []sweep.Best, f sweepFlags) error {
	if f.report == "" {
		return nil
	}
	var table bytes.Buffer
	if err := sweep.Table(&table, s, goal, bests); err != nil {
		return err
	}
	var charts []output.Chart
	if len(s.Fields) <= 2 {
		var err error
		if charts, err = sweep.Charts(s, goal, bests); err != nil {
			return usagef("--report: %v", err)
		}
	}
	p := f.page
	p.Parts = []output.PagePart{{Text: table.String(), Charts: charts}}
	return writeReport(stderr, f.report, p)
}

// writeSweepCharts draws the sweep's charts into --charts DIR and says on
// stderr what it wrote.
func writeSweepCharts(stderr io.Writer, s *sweep.Sweep, goal *sweep.Goal, bests []sweep.Best, f chartFlags) error {
	if f.dir == "" {
		return nil
	}
	charts, err := sweep.Charts(s, goal, bests)
	if err != nil {
		return usagef("--charts: %v", err)
	}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return usagef("--charts: %v", err)
	}
	format := f.format
	if format == "" {
		format = "png"
	}
	for _, c := range charts {
		path := filepath.Join(f.dir, c.Name+"."+format)
		out, err := os.Create(path)
		if err != nil {
			return usagef("--charts: %v", err)
		}
		err = c.Render(out, format)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s\n", path)
	}
	return nil
}
