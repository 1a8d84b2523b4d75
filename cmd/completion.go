package cmd

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/gateway"
	"github.com/ratesim/ratesim/lessons"
	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/redislua"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sweep"
	"github.com/ratesim/ratesim/traffic"
)

// Shell completion (cobra's `ratesim completion bash|zsh|fish|powershell`,
// docs/commands.md): the built-in scenarios, the lessons, the algorithm
// names, the values of the flags that take one of a list (formats,
// gateways) and --vary's field paths.

// addCompletions registers what each command and flag completes to.
func addCompletions(root *cobra.Command) {
	for _, c := range root.Commands() {
		switch c.Name() {
		case "compare", "validate", "traffic":
			c.ValidArgsFunction = completeScenario
		case "sweep":
			c.ValidArgsFunction = completeScenario
			flagValues(c, "format", sweep.Formats)
			_ = c.RegisterFlagCompletionFunc("vary", completeVary)
			_ = c.RegisterFlagCompletionFunc("baseline", completeLabel)
			for _, sub := range c.Commands() {
				flagValues(sub, "format", sweep.Formats)
			}
		case "demo":
			c.ValidArgsFunction = completeFirst(lessons.Names)
		case "lua":
			c.ValidArgsFunction = completeFirst(func() []string { return append(append(redislua.Names(), redislua.OptInNames()...), redislua.AllOf) })
		case "replay":
			flagValues(c, "trace-format", traffic.ReplayFormats)
			flagValues(c, "spread", traffic.ReplaySpreads)
			flagValues(c, "time-unit", traffic.ReplayTimeUnits)
			flagValues(c, "from", gateway.Supported())
		case "import":
			flagValues(c, "from", gateway.Supported())
			c.ValidArgsFunction = completeFiles
		}
		if c.Name() == "compare" || c.Name() == "replay" {
			flagValues(c, "format", formats)
			_ = c.RegisterFlagCompletionFunc("algorithms", completeAlgorithms)
			_ = c.RegisterFlagCompletionFunc("baseline", completeLabel)
		}
		if c.Name() == "traffic" {
			flagValues(c, "format", traffic.ExportFormats)
		}
		if c.Flags().Lookup("chart-format") != nil {
			flagValues(c, "chart-format", output.ChartFormats())
		}
		if c.Flags().Lookup("columns") != nil {
			_ = c.RegisterFlagCompletionFunc("columns", completeColumns)
		}
		for _, cc := range append([]*cobra.Command{c}, c.Commands()...) {
			if cc.Flags().Lookup("report") != nil {
				_ = cc.MarkFlagFilename("report", "html")
			}
		}
	}
}

// flagValues makes flag name of c complete to values (when c has it).
func flagValues(c *cobra.Command, name string, values []string) {
	if c.Flags().Lookup(name) == nil {
		return
	}
	_ = c.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return withPrefix(values, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
}

// completeFirst completes the first argument to names.
func completeFirst(names func() []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return withPrefix(names(), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFiles completes the first argument to a file.
func completeFiles(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveDefault
}

// completeScenario completes a SCENARIO: the built-ins, each with the
// start of its description, and the shell's files.
func completeScenario(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, b := range scenarios.Builtins() {
		if strings.HasPrefix(b.Name, toComplete) {
			out = append(out, cobra.CompletionWithDesc(b.Name, firstWords(b.Description, 60)))
		}
	}
	return out, cobra.ShellCompDirectiveDefault
}

// firstWords cuts s at a word boundary to at most n bytes, with "...".
func firstWords(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if i := strings.LastIndexByte(s[:n], ' '); i > 0 {
		return s[:i] + " ..."
	}
	return s[:n] + "..."
}

// scenarioOf is the scenario a command line names (its first argument, or
// compare's default), or nil.
func scenarioOf(c *cobra.Command, args []string) *scenarios.Scenario {
	name := ""
	switch {
	case len(args) > 0:
		name = args[0]
	case c.Name() == "compare":
		name = defaultScenario
	default:
		return nil
	}
	sc, err := scenarios.Resolve(name)
	if err != nil {
		return nil
	}
	return sc
}

// completeAlgorithms completes --algorithms, a comma-separated list: the
// rows of the scenario named (labels and names), else every algorithm;
// those already in the list are left out.
func completeAlgorithms(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var names []string
	if sc := scenarioOf(c, args); sc != nil {
		for _, a := range sc.Algorithms {
			names = appendNew(names, a.Label)
			names = appendNew(names, a.Name)
		}
	} else {
		names = algorithms.Names()
		for _, a := range algorithms.OptIn() { // haproxy, the libraries' and vendors' rows
			names = append(names, a.Name)
		}
		names = append(names, "all-of")
	}
	return completeList(names, toComplete)
}

// completeList completes the last item of a comma-separated list from
// names, leaving out those already listed; the shell adds no space after
// it, so that another item can follow.
func completeList(names []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	done, last := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	listed := strings.Split(done, ",")
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, last) && !slices.Contains(listed, n) {
			out = append(out, done+n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeLabel completes --baseline: the scenario's row labels.
func completeLabel(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var labels []string
	if sc := scenarioOf(c, args); sc != nil {
		for _, a := range sc.Algorithms {
			labels = append(labels, a.Label)
		}
	} else {
		labels = algorithms.Names()
	}
	return withPrefix(labels, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeColumns completes --columns, a comma-separated list: the
// columns a table may have, a window's columns by the windows of the
// scenario named (peak/1s, all-keys/1s, attempts/1s; else peak/ and the
// rest, for a window to type), and all; those already in the list are
// left out.
func completeColumns(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var names []string
	var windows []time.Duration
	if sc := scenarioOf(c, args); sc != nil {
		windows = sc.Windows
	}
	for _, n := range output.ColumnNames() {
		prefix, ok := strings.CutSuffix(n, "/W")
		switch {
		case !ok:
			names = append(names, n)
		case len(windows) == 0:
			names = append(names, prefix+"/")
		default:
			for _, w := range windows {
				names = append(names, prefix+"/"+output.FormatDuration(w))
			}
		}
	}
	return completeList(names, toComplete)
}

// completeVary completes --vary's FIELD, followed by "=": the policy, the
// seed and duration, each algorithm row's policy and options by its label
// (the scenario's rows when one is named), the cluster and the backend.
func completeVary(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if strings.Contains(toComplete, "=") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	paths := []string{"limit.rate", "limit.per", "limit.burst", "seed", "duration"}
	var rows []scenarios.Algorithm
	if sc := scenarioOf(c, args); sc != nil {
		rows = sc.Algorithms
	}
	for _, a := range rows {
		sel := fmt.Sprintf("algorithms[%s].", a.Label)
		paths = append(paths, sel+"rate", sel+"per", sel+"burst")
		if info, ok := algorithms.Lookup(a.Name); ok {
			for _, o := range info.Options {
				if o != "limits" {
					paths = appendNew(paths, sel+o)
				}
			}
		}
	}
	paths = append(paths, "cluster.nodes", "cluster.balancer", "cluster.skew", "cluster.store.rtt", "cluster.store.jitter", "cluster.store.timeout",
		"backend.workers", "backend.queue", "backend.timeout", "clients.retry.max-attempts")
	var out []cobra.Completion
	for _, p := range withPrefix(paths, toComplete) {
		out = append(out, p+"=")
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

func withPrefix(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
