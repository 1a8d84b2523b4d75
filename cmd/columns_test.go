package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/scenarios"
)

// TestDefaultTableFits: the default table of every built-in fits in 120
// columns, and says which columns it left out; --columns all shows them.
func TestDefaultTableFits(t *testing.T) {
	t.Parallel()
	for _, b := range scenarios.Builtins() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			// what `compare NAME` prints, which TestCompareBuiltinsGolden
			// holds to this file (the timeline under the table aside)
			data, err := os.ReadFile(filepath.Join("testdata", "compare", b.Name+".txt"))
			require.NoError(t, err)
			out := string(data)
			table := tableLines(out)
			require.NotEmpty(t, table)
			for _, l := range table {
				require.LessOrEqual(t, utf8.RuneCountInString(l), output.TableWidth, "%s: %s", b.Name, l)
			}
			if !strings.Contains(out, "More columns with --columns all: ") {
				return
			}
			status, all, errOut := run(t, "compare", b.Name, "--no-timeline", "--columns", "all")
			require.Equal(t, 0, status, errOut)
			require.Greater(t, len(tableLines(all)[0]), len(table[0]), "--columns all shows more")
		})
	}
}

// tableLines are the lines of the table in a compare's output.
func tableLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "+-") || strings.HasPrefix(l, "| ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestColumnsFlag: --columns keeps the columns named, in the table's
// order, the algorithm first; a name that is no column exits 2 before the
// run; one that this run lacks is a note.
func TestColumnsFlag(t *testing.T) {
	t.Parallel()
	status, out, errOut := run(t, "compare", "double-burst", "--no-timeline", "--columns", "peak/1s,accepted")
	require.Equal(t, 0, status, errOut)
	table := tableLines(out)
	require.Equal(t, "| algorithm      | accepted |   peak/1s |", table[1])
	require.Equal(t, "|                | requests |  requests |", table[2])
	require.Contains(t, out, "| fixed-window   |       20 | 20 (2.0x) |")

	status, _, errOut = run(t, "compare", "double-burst", "--columns", "accepted,goodput")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, errOut, "note: --columns: this run has no column goodput")

	status, out, errOut = run(t, "compare", "double-burst", "--columns", "acepted")
	require.Equal(t, 2, status)
	require.Empty(t, out)
	require.Contains(t, errOut, `ratesim: --columns: "acepted" is not a column (want algorithm, mode, accepted,`)
}

// TestObservationWindows: the table holds each row to its policy's own
// window; a window the file names in report.windows shows as an
// observation window, a count with no ratio, even when the file writes
// exactly the default [W, W/10]; the JSON keeps every window either way.
func TestObservationWindows(t *testing.T) {
	t.Parallel()
	status, out, errOut := run(t, "compare", "double-burst", "--no-timeline")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, "| algorithm      | accepted |  delayed | rejected | accept % | p99 delay |   peak/1s | bytes/key |", tableLines(out)[1])
	require.Contains(t, out, "| fixed-window   |       20 |        0 |        0 |    100.0 |         0 | 20 (2.0x) |")
	require.NotContains(t, out, "100ms")

	_, text, err := scenarios.ResolveText("double-burst")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "named.yaml")
	require.NoError(t, os.WriteFile(path, append(text, "report:\n  windows: [1s, 100ms]\n"...), 0o644))
	status, out, errOut = run(t, "compare", path, "--no-timeline")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, tableLines(out)[1], "|   peak/1s | obs. peak/100ms |")
	require.Contains(t, out, "| 20 (2.0x) |              10 |")
	require.NotContains(t, out, "10.0x")
	require.Contains(t, out, "obs. peak: an observation window, the most released in any 100ms, held to no limit.")

	for _, args := range [][]string{{"compare", "double-burst"}, {"compare", path}} {
		status, out, errOut = run(t, append(args, "--format", "json")...)
		require.Equal(t, 0, status, errOut)
		require.Contains(t, out, `"window_ns": 100000000`, "the JSON keeps every window")
	}
}

// TestUnitsNamed: the figures say what they count. A replay whose cost is
// a token count gives its peaks in tokens, never as requests; a run with
// retries counts its rejections as attempts.
func TestUnitsNamed(t *testing.T) {
	t.Parallel()
	status, out, errOut := run(t, "replay", "../../shared/traces/azure_llm_2023_conv.csv", "--limit", "90000/m",
		"--cost-field", "ContextTokens", "--key-field", "none", "--no-timeline")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "token-bucket, gcra and x-time-rate let 179786 tokens through in 1m")
	require.NotContains(t, out, "179786 requests")
	require.Contains(t, out, "| token-bucket   |     9626 |")
	require.Contains(t, out, "Peaks and limits count tokens (each request's cost); accepted, delayed and rejected count requests.")
	heading := tableLines(out)[2]
	require.Equal(t, 1, strings.Count(heading, "tokens"), "the peak column, of the policy's 1m, counts tokens: %s", heading)
	require.Equal(t, 3, strings.Count(heading, "requests"), "accepted, delayed and rejected count requests: %s", heading)

	status, out, errOut = run(t, "compare", "retry-storm", "--no-timeline")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "rejected counts attempts: a request refused, retried and refused again counts twice.")
	require.Contains(t, out, "rejected the most attempts (")
	require.Contains(t, tableLines(out)[2], "| attempts |")

	status, out, errOut = run(t, "compare", "token-vs-leaky", "--no-timeline")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "p99 delay is over every admitted request, 0 for those not delayed; the findings give the longest.")
	require.Contains(t, out, "accept % counts the delayed requests as accepted: (accepted + delayed) / attempts.")
}

// TestSweepTableFits: a sweep's table fits in 120 columns too, saying
// which columns it left out; the CSV keeps them.
func TestSweepTableFits(t *testing.T) {
	t.Parallel()
	status, out, errOut := run(t, "sweep", "kong-local-pods-backend", "--vary", "limit.burst=5,10")
	require.Equal(t, 0, status, errOut)
	for _, l := range strings.Split(out, "\n") {
		require.LessOrEqual(t, utf8.RuneCountInString(l), output.TableWidth, l)
	}
	require.Contains(t, out, "Left out to fit 120 columns (in --format csv and json): delayed, p99 delay, store ops/req, p99 added, shed.\n")
	require.Contains(t, tableLines(out)[1], "| accepted | rejected | reject % |  key peak   |      extra      | goodput  | p99 response |")
	status, csv, errOut := run(t, "sweep", "kong-local-pods-backend", "--vary", "limit.burst=5,10", "--format", "csv")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, strings.SplitN(csv, "\n", 2)[0], "store_ops_per_attempt")
}
