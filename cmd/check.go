package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/expect"
	"github.com/ratesim/ratesim/runner"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/spf13/cobra"
)

var checkFormats = []string{"table", "json"}

type checkFlags struct {
	builtins bool
	format   string
	junit    string
	baseline string
	budget   budgetFlags
}

func newCheckCmd() *cobra.Command {
	var f checkFlags
	c := &cobra.Command{
		Use:   "check FILE...",
		Short: "Run scenarios and hold each against its expect: section",
		Long: `Runs each scenario (a file or a built-in's name) and holds every assertion of
its expect: section (docs/expect.md) against the run's figures, printing what
each expects beside what was measured. Exits 0 when every assertion holds, 1
when one fails, 2 for bad input (a scenario that does not read, an unknown
figure or row, a scenario without expectations).`,
		Example: `  ratesim check examples/expect.yaml
  ratesim check limits/*.yaml --junit ratesim.xml
  ratesim check --builtins`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 && !f.builtins {
				return fmt.Errorf("requires at least 1 arg(s), only received 0 (or --builtins)")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if f.builtins {
				args = append(args, builtinsWithExpectations()...)
			}
			return runCheck(c.OutOrStdout(), c.ErrOrStderr(), args, f)
		},
	}
	fl := c.Flags()
	fl.BoolVar(&f.builtins, "builtins", false, "check every built-in scenario that has an expect: section (the reproductions of docs/reproductions.md among them)")
	fl.StringVar(&f.format, "format", "table", "output format: "+strings.Join(checkFormats, ", "))
	fl.StringVar(&f.junit, "junit", "", "also write a JUnit XML report to this file (a testsuite per file, a testcase per assertion)")
	fl.StringVar(&f.baseline, "baseline", "", "hold every row against this row, for the baseline_* figures (a label)")
	addBudgetFlags(fl, &f.budget, "a run")
	return c
}

// builtinsWithExpectations lists the built-ins with an expect section, in
// the order ratesim scenarios lists them.
func builtinsWithExpectations() []string {
	var names []string
	for _, b := range scenarios.Builtins() {
		if sc, err := scenarios.Builtin(b.Name); err == nil && len(sc.Expect) > 0 {
			names = append(names, b.Name)
		}
	}
	return names
}

func runCheck(stdout, stderr io.Writer, files []string, f checkFlags) error {
	if !slices.Contains(checkFormats, f.format) {
		return usagef("--format: %q is not a format (want %s)", f.format, strings.Join(checkFormats, ", "))
	}
	if err := checkOutPaths(outPath{flag: "--junit", path: f.junit}); err != nil {
		return err
	}
	var results []expect.FileResult
	var bad []error
	for _, name := range files {
		r := checkFile(stderr, name, f)
		if r.Err != nil {
			var ue usageError
			if !errors.As(r.Err, &ue) {
				return r.Err // not the input's fault: stop
			}
			bad = append(bad, r.Err)
		}
		results = append(results, r)
	}
	var out bytes.Buffer
	if f.format == "json" {
		if err := expect.JSON(&out, results); err != nil {
			return err
		}
	} else {
		writeCheckTable(&out, results)
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		return err
	}
	if f.junit != "" {
		var x bytes.Buffer
		if err := expect.JUnit(&x, results); err != nil {
			return err
		}
		if err := os.WriteFile(f.junit, x.Bytes(), 0o644); err != nil {
			return usagef("--junit: %v", err)
		}
	}
	if len(bad) > 0 {
		return usageError{errors.Join(bad...)}
	}
	failed := 0
	for _, r := range results {
		failed += expect.CountOf(r.Outcomes).Fails
	}
	if failed > 0 {
		return fmt.Errorf("%d %s failed", failed, plural(failed, "expectation", "expectations"))
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// checkFile runs one scenario and holds its claims.
func checkFile(stderr io.Writer, name string, f checkFlags) expect.FileResult {
	r := expect.FileResult{File: name}
	sc, err := scenarios.Resolve(name)
	if err == nil {
		err = scenarios.CheckFiles(sc)
	}
	if err != nil {
		r.Err = usageError{err}
		return r
	}
	r.Scenario = sc.Name
	claims, err := claimsOf(sc)
	if err != nil {
		r.Err = err
		return r
	}
	if len(claims) == 0 {
		r.Err = usagef("%s: no expect: section, nothing to check (docs/expect.md)", name)
		return r
	}
	o := runOptions(stderr, chartFlags{}, false)
	o.Budget = f.budget.budget()
	o.Baseline = f.baseline
	plan := expect.Prepare(claims, sc, &o)
	bar := newProgress(stderr)
	o.Progress = bar.hook()
	rep, err := runner.Run(sc, o)
	bar.done()
	if err != nil {
		r.Err = runError(err)
		return r
	}
	if r.Outcomes, err = plan.Evaluate(rep); err != nil {
		r.Err = err
	}
	return r
}

// writeCheckTable writes each file's outcomes: a heading with its counts,
// then the outcomes, expected beside measured.
func writeCheckTable(w io.Writer, results []expect.FileResult) {
	var total expect.Counts
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if r.Err != nil {
			fmt.Fprintf(w, "%s: not checked (bad input, below)\n", r.File)
			continue
		}
		c := expect.CountOf(r.Outcomes)
		total.Holds += c.Holds
		total.Fails += c.Fails
		total.NotApplicable += c.NotApplicable
		name := r.File
		if r.Scenario != r.File {
			name += " (" + r.Scenario + ")"
		}
		fmt.Fprintf(w, "%s: %s\n", name, c)
		for _, l := range expect.Lines(r.Outcomes) {
			fmt.Fprintln(w, "  "+l)
		}
	}
	if len(results) > 1 {
		fmt.Fprintf(w, "\n%d files: %s\n", len(results), total)
	}
}

// claimsOf reads the assertions of the scenario's expect section: a
// mistake is bad input, named at file:line:col.
func claimsOf(sc *scenarios.Scenario) ([]expect.Claim, error) {
	claims, err := expect.Compile(sc)
	if err != nil {
		return nil, usageError{err}
	}
	return claims, nil
}

// printExpectations writes, under compare's and replay's table, what
// became of the scenario's expectations; the exit status stays the run's
// (ratesim check is the command that fails on them).
func printExpectations(w io.Writer, outs []expect.Outcome) {
	fmt.Fprintf(w, "\nExpectations: %s\n", expect.CountOf(outs))
	for _, l := range expect.Lines(outs) {
		fmt.Fprintln(w, "  "+l)
	}
}
