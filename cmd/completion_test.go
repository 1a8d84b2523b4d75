package cmd

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
)

// complete runs cobra's hidden __complete command, as a shell's completion
// script does, and returns the candidates (without their descriptions) and
// the directive line.
func complete(t *testing.T, args ...string) (candidates []string, directive string) {
	t.Helper()
	status, out, errOut := run(t, append([]string{"__complete"}, args...)...)
	require.Equal(t, 0, status, errOut)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	directive = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		candidates = append(candidates, name)
	}
	return candidates, directive
}

func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
		// directive: 4 no file completion, 6 no file and no space, 0 the
		// shell's files too
		directive string
	}{
		// built-in scenarios, with the files of the shell
		{[]string{"compare", "retry-"}, []string{"retry-storm", "retry-storm-jitter"}, ":0"},
		{[]string{"sweep", "choose"}, []string{"choose-burst"}, ":0"},
		{[]string{"validate", "double"}, []string{"double-burst"}, ":0"},
		// lessons, Lua scripts
		{[]string{"demo", "meta"}, []string{"metastable"}, ":4"},
		{[]string{"lua", "sliding"}, []string{"sliding-log", "sliding-window"}, ":4"},
		// algorithm names: the scenario's rows, a comma-separated list
		{[]string{"compare", "token-vs-leaky", "--algorithms", ""}, []string{"token-bucket", "gcra", "leaky-bucket"}, ":6"},
		{[]string{"compare", "--algorithms", "gcra,sl"}, []string{"gcra,sliding-log", "gcra,sliding-window"}, ":6"},
		{[]string{"replay", "access.log", "--algorithms", "x"}, []string{"x-time-rate"}, ":6"},
		{[]string{"compare", "token-vs-leaky", "--baseline", ""}, []string{"token-bucket", "gcra", "leaky-bucket"}, ":4"},
		// formats
		{[]string{"compare", "--format", ""}, []string{"table", "json", "csv", "markdown"}, ":4"},
		{[]string{"replay", "access.log", "--trace-format", "c"}, []string{"combined", "common", "csv"}, ":4"},
		{[]string{"traffic", "double-burst", "--format", ""}, []string{"csv", "jsonl", "combined"}, ":4"},
		{[]string{"compare", "--chart-format", ""}, []string{"png", "svg"}, ":4"},
		{[]string{"import", "--from", "envoy"}, []string{"envoy", "envoy-local"}, ":4"},
		// --columns, a comma-separated list: a window's columns by the
		// scenario's windows (the default scenario's 1s and 100ms), or
		// to be typed after peak/ on a replay
		{[]string{"compare", "double-burst", "--columns", "accepted,pe"}, []string{"accepted,peak/1s", "accepted,peak/100ms"}, ":6"},
		{[]string{"compare", "--columns", "a"}, []string{"algorithm", "accepted", "accept%", "agrees", "all-keys/1s", "all-keys/100ms",
			"attempts/1s", "attempts/100ms", "all"}, ":6"},
		{[]string{"replay", "access.log", "--columns", "peak"}, []string{"peak/"}, ":6"},
		// --report: HTML files (8: filter the shell's files by extension)
		{[]string{"compare", "--report", ""}, []string{"html"}, ":8"},
		{[]string{"demo", "metastable", "--report", ""}, []string{"html"}, ":8"},
		{[]string{"sweep", "merge", "--report", ""}, []string{"html"}, ":8"},
		// --vary's field paths, by the scenario's labels
		{[]string{"sweep", "choose-burst", "--vary", "limit."}, []string{"limit.rate=", "limit.per=", "limit.burst="}, ":6"},
		{[]string{"sweep", "token-vs-leaky", "--vary", "algorithms[gcra]."}, []string{"algorithms[gcra].rate=", "algorithms[gcra].per=", "algorithms[gcra].burst=", "algorithms[gcra].max-delay="}, ":6"},
		{[]string{"sweep", "choose-burst", "--vary", "cluster.store."}, []string{"cluster.store.rtt=", "cluster.store.jitter=", "cluster.store.timeout="}, ":6"},
	} {
		got, directive := complete(t, tc.args...)
		require.Equal(t, tc.want, got, "%q", tc.args)
		require.Equal(t, tc.directive, directive, "%q", tc.args)
	}
}

// Every built-in completes, with the start of its description.
func TestCompletionBuiltinsDescribed(t *testing.T) {
	_, out, _ := run(t, "__complete", "compare", "")
	require.Contains(t, out, "double-burst\tA fixed window lets twice the limit through at a window ...\n")
	require.Equal(t, len(scenarios.Builtins())+1, strings.Count(out, "\n"), out) // and the directive
}
