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

	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
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
	seed       uint64
	seedSet    bool
	top        int
	baseline   string
	charts     chartFlags
	timeline   timelineFlags
	redis      redisFlags
	// check is replay --check-field's (nil for compare)
	check *sim.Check
}

// addOutputFlags adds the flags that say what compare and replay print and
// write besides the comparison itself.
func addOutputFlags(fl *pflag.FlagSet, f *compareFlags) {
	fl.StringVar(&f.baseline, "baseline", "", "hold every row against this row (a label, usually sliding-log): requests decided differently")
	addChartFlags(fl, &f.charts)
	addTimelineFlags(fl, &f.timeline)
	addRedisFlags(fl, &f.redis)
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
	return compareScenario(stdout, stderr, sc, f)
}

// outcome is a finished comparison: the scenario, the report, and, for a
// small scenario, every decision of every algorithm (for timelines).
type outcome struct {
	sc  *scenarios.Scenario
	rep *sim.Report
	// decisions[i] are algorithm i's decisions in processing order, or
	// nil when the run made more than maxTimelineDecisions.
	decisions [][]sim.Decision
}

// maxTimelineDecisions is the most decisions per algorithm kept for the
// timelines: a few hundred requests and their retries.
const maxTimelineDecisions = 2000

// compareScenario runs a scenario and prints the comparison: the main job
// of compare and replay.
func compareScenario(stdout, stderr io.Writer, sc *scenarios.Scenario, f compareFlags) error {
	o, err := runScenario(stderr, sc, f)
	if err != nil {
		return err
	}
	if err := render(stdout, o.rep, f.format); err != nil {
		return err
	}
	if f.format == "table" {
		if err := printTimeline(stdout, o, f.timeline); err != nil {
			return err
		}
	}
	return writeCharts(stderr, o, f.charts)
}

// runScenario checks the flags against the scenario, runs it, and writes
// the decisions file.
func runScenario(stderr io.Writer, sc *scenarios.Scenario, f compareFlags) (*outcome, error) {
	if !slices.Contains(formats, f.format) {
		return nil, usagef("--format: %q is not a format (want %s)", f.format, strings.Join(formats, ", "))
	}
	for _, sk := range restoreLeftOut(sc, f.algorithms) {
		fmt.Fprintf(stderr, "note: %s left out: %s\n", sk.Name, sk.Reason)
	}
	if f.seedSet {
		sc.Seed = f.seed
		sc.Traffic.Seed = f.seed
	}
	var err error
	if err = selectAlgorithms(sc, f.algorithms); err != nil {
		return nil, err
	}
	if f.top < 1 {
		return nil, usagef("--top: %d: want at least 1", f.top)
	}
	cfg := configOf(sc)
	cfg.TopKeys = f.top
	if cfg.Baseline, err = baselineOf(sc, f.baseline, f.algorithms); err != nil {
		return nil, err
	}
	cfg.Check = f.check
	if err := prepareCharts(sc, &cfg, f.charts); err != nil {
		return nil, err
	}

	var dec *decisionFiles
	if f.decisions != "" {
		if dec, err = newDecisionFiles(f.decisions, cfg.Algorithms, cfg.Cluster != nil); err != nil {
			return nil, err
		}
		defer dec.cleanup()
	}
	collectors := make([]*collector, len(cfg.Algorithms))
	cfg.Observe = func(i int) sim.Observer {
		collectors[i] = &collector{max: maxTimelineDecisions}
		if dec == nil {
			return collectors[i]
		}
		return &tee{collectors[i], dec.observer(i)}
	}
	bar := newProgress(stderr) // nil unless stderr is a terminal
	cfg.Progress = bar.hook()
	warnReplays(sc, stderr)
	rep, err := sim.Run(cfg)
	bar.done()
	if err != nil {
		return nil, inputError(err)
	}
	rep.Traces = sim.TraceSummaries(sc.Traffic)
	if err := checkOnRedis(cfg, rep, f.redis); err != nil {
		return nil, err
	}
	if dec != nil {
		if err := dec.finish(); err != nil {
			return nil, err
		}
	}
	o := &outcome{sc: sc, rep: rep, decisions: make([][]sim.Decision, len(collectors))}
	for i, c := range collectors {
		if c == nil || c.over {
			o.decisions = nil // too many to draw: no timelines
			break
		}
		o.decisions[i] = c.got
	}
	return o, nil
}

// baselineOf checks --baseline against the scenario's rows (after
// --algorithms kept some) and returns the baseline row's label: the value
// given, a label, or the name of exactly one row.
func baselineOf(sc *scenarios.Scenario, want, algorithms string) (string, error) {
	want = strings.TrimSpace(want)
	if want == "" {
		return "", nil
	}
	var have, byName []string
	for _, a := range sc.Algorithms {
		if a.Label == want {
			return want, nil
		}
		if a.Name == want {
			byName = append(byName, a.Label)
		}
		have = append(have, a.Label)
	}
	if len(byName) == 1 {
		return byName[0], nil
	}
	if len(byName) > 1 {
		return "", usagef("--baseline: %q names %d rows of %s (%s): give one label", want, len(byName),
			sc.Name, strings.Join(byName, ", "))
	}
	hint := ""
	if algorithms != "" {
		hint = " after --algorithms"
	}
	return "", usagef("--baseline: %q is not a row of %s%s (it has %s)", want, sc.Name, hint, strings.Join(have, ", "))
}

// collector keeps the decisions of a small run, up to max.
type collector struct {
	got  []sim.Decision
	max  int
	over bool
}

func (c *collector) Observe(d *sim.Decision) error {
	if len(c.got) == c.max {
		c.got, c.over = nil, true
		return sim.ErrStopObserving
	}
	c.got = append(c.got, *d)
	return nil
}

// tee sends every decision to two observers, until each stops observing.
type tee [2]sim.Observer

func (t *tee) Observe(d *sim.Decision) error {
	for i, o := range t {
		if o == nil {
			continue
		}
		err := o.Observe(d)
		if errors.Is(err, sim.ErrStopObserving) {
			t[i] = nil
		} else if err != nil {
			return err
		}
	}
	if t[0] == nil && t[1] == nil {
		return sim.ErrStopObserving
	}
	return nil
}

// render writes the report in one of the formats.
func render(w io.Writer, rep *sim.Report, format string) error {
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case "json":
		err = output.JSON(bw, rep)
	case "csv":
		err = output.CSV(bw, rep)
	case "markdown":
		err = output.Markdown(bw, rep)
	default:
		err = output.Table(bw, rep)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// restoreLeftOut puts back, in their places, the algorithms the default
// list left out only because they would decide nothing (Skipped.Kept) when
// list (--algorithms) names them, and returns the others to note: every
// one left out without a list; with one, those it names (the note says
// why it cannot have them), since those it does not name are no news.
func restoreLeftOut(sc *scenarios.Scenario, list string) []scenarios.Skipped {
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	var notes, back []scenarios.Skipped
	for _, sk := range sc.Skipped {
		switch {
		case len(want) == 0:
			notes = append(notes, sk)
		case !want[sk.Name]:
		case sk.Kept != nil:
			back = append(back, sk)
		default:
			notes = append(notes, sk)
		}
	}
	// the last first, so that each place (an index of the list without
	// them) stays right
	for i := len(back) - 1; i >= 0; i-- {
		at := min(back[i].At, len(sc.Algorithms))
		sc.Algorithms = slices.Insert(sc.Algorithms, at, *back[i].Kept)
	}
	return notes
}

// selectAlgorithms keeps the algorithms named in list (labels or names),
// in the scenario's order.
func selectAlgorithms(sc *scenarios.Scenario, list string) error {
	if strings.TrimSpace(list) == "" {
		return nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = false
		}
	}
	var kept []scenarios.Algorithm
	for _, a := range sc.Algorithms {
		_, byLabel := want[a.Label]
		_, byName := want[a.Name]
		if byLabel || byName {
			kept = append(kept, a)
			if byLabel {
				want[a.Label] = true
			}
			if byName {
				want[a.Name] = true
			}
		}
	}
	var missing []string
	for n, found := range want {
		if !found {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		var have []string
		for _, a := range sc.Algorithms {
			have = append(have, a.Label)
		}
		return usagef("--algorithms: %s not in scenario %s (it has %s)",
			strings.Join(missing, ", "), sc.Name, strings.Join(have, ", "))
	}
	sc.Algorithms = kept
	return nil
}

// decisionFiles writes each algorithm's decisions to a temporary file
// beside the destination while the algorithms run in parallel, then joins
// them in the scenario's order: rows of each label stay in processing
// order and no decision is held in memory.
type decisionFiles struct {
	path    string
	parts   []*os.File
	writers []*output.Decisions
}

func newDecisionFiles(path string, algs []sim.Algorithm, cluster bool) (*decisionFiles, error) {
	d := &decisionFiles{path: path}
	dir := filepath.Dir(path)
	for i, a := range algs {
		f, err := os.CreateTemp(dir, ".ratesim-decisions-*")
		if err != nil {
			d.cleanup()
			return nil, usagef("--decisions: %v", err)
		}
		d.parts = append(d.parts, f)
		if cluster {
			d.writers = append(d.writers, output.NewClusterDecisions(f, a.Name, a.Label, i == 0))
		} else {
			d.writers = append(d.writers, output.NewDecisions(f, a.Name, a.Label, i == 0))
		}
	}
	return d, nil
}

func (d *decisionFiles) observer(i int) sim.Observer { return d.writers[i] }

func (d *decisionFiles) finish() error {
	out, err := os.Create(d.path)
	if err != nil {
		return usagef("--decisions: %v", err)
	}
	for i, f := range d.parts {
		if err := d.writers[i].Flush(); err != nil {
			out.Close()
			return fmt.Errorf("--decisions: %w", err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			out.Close()
			return err
		}
		if _, err := io.Copy(out, f); err != nil {
			out.Close()
			return fmt.Errorf("--decisions: %w", err)
		}
	}
	return out.Close()
}

func (d *decisionFiles) cleanup() {
	for _, f := range d.parts {
		f.Close()
		os.Remove(f.Name())
	}
}
