package cmd

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/runner"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/spf13/cobra"
)

func newScenariosCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "scenarios",
		Short: "List the built-in scenarios, one line each",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 0, 2, ' ', 0)
			for _, s := range scenarios.Builtins() {
				fmt.Fprintf(tw, "%s\t%s\n", s.Name, oneLine(s.Description))
			}
			return tw.Flush()
		},
	}
}

func newAlgorithmsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "algorithms",
		Short: "List the algorithms and their options, one line each",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 0, 2, ' ', 0)
			for _, a := range append(algorithms.All(), algorithms.WithBackend()...) {
				opts := "-"
				if len(a.Options) > 0 {
					opts = strings.Join(a.Options, ", ")
				}
				fmt.Fprintf(tw, "%s\t%s\toptions: %s\n", a.Name, a.Summary, opts)
			}
			return tw.Flush()
		},
	}
}

// oneLine folds a description onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a scenario file and say what is wrong",
		Long: `Checks a scenario file (or a built-in scenario's name) and prints every problem
found as file:line:column: field: what was found and what is expected. Exits
0 when the scenario is valid, 2 when it is not. The traces of replay sources
are opened and their first lines read, to check that their format is
recognised. A valid scenario's estimate follows, the figures a run's budget
holds it to (--max-requests, --max-memory): its requests, the decisions
they make, its keys and its memory; a line says when a run would be refused
under the default budget.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			sc, err := scenarios.Resolve(args[0])
			if err != nil {
				return usageError{err}
			}
			if err := scenarios.CheckFiles(sc); err != nil {
				return usageError{err}
			}
			claims, err := claimsOf(sc)
			if err != nil {
				return err
			}
			expectations := ""
			if len(claims) > 0 {
				expectations = ", " + count(len(claims), "expectation")
			}
			duration := "duration " + output.FormatDuration(sc.Duration)
			if sc.Duration == 0 {
				duration = "until the traces end"
			}
			onCluster := ""
			if sc.Cluster != nil {
				onCluster = ", on a cluster of " + count(sc.Cluster.Nodes, "node")
			}
			fmt.Fprintf(c.OutOrStdout(), "%s: ok: scenario %q, %s, %s, %s, limit %s%s%s\n",
				args[0], sc.Name, count(len(sc.Algorithms), "algorithm"), count(len(sc.Traffic.Sources), "source"), duration,
				fmt.Sprintf("%d/%s burst %d", sc.Limit.Rate, output.FormatDuration(sc.Limit.Per), sc.Limit.Burst), onCluster, expectations)
			est, err := runner.EstimateOf(sc)
			if err != nil {
				return inputError(err)
			}
			for _, l := range est.Lines() {
				fmt.Fprintf(c.OutOrStdout(), "  %s\n", l)
			}
			if runner.DefaultBudget().Check(est) != nil {
				fmt.Fprintf(c.OutOrStdout(), "  over the default budget (%s requests, %s): a run needs --max-requests or --max-memory\n",
					runner.Count(runner.DefaultMaxRequests), runner.Bytes(runner.DefaultMaxMemory))
			}
			return nil
		},
	}
}

// count writes n and a noun, in the plural unless n is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
