package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTableShowsThePolicyWindow: by default a table holds each row to
// its policy's own window; the default W/10 is in the JSON and behind
// --columns; a window report.windows named is an observation window, a
// count with no ratio, and a sentence under the table says so.
func TestTableShowsThePolicyWindow(t *testing.T) {
	table := func(named []int64, names []string) string {
		r := doubleBurst()
		r.NamedWindowsNs = named
		var b bytes.Buffer
		require.NoError(t, TableOf(&b, r, names))
		return b.String()
	}
	row := func(text, label string) string {
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "| "+label+" ") {
				return line
			}
		}
		t.Fatalf("no row %s in\n%s", label, text)
		return ""
	}

	def := table(nil, nil)
	require.Contains(t, def, "peak/1s")
	require.NotContains(t, def, "100ms", "the default W/10 is no column of the default table")
	require.Contains(t, row(def, "fixed-window"), "| 20 (2.0x) |")
	require.NotContains(t, def, "observation window")

	// the file wrote [1s, 100ms], the default's values: its 100ms shows,
	// as an observation window
	named := table([]int64{s, 100 * ms}, nil)
	require.Contains(t, named, "obs. peak/100ms")
	require.Regexp(t, `\| 20 \(2\.0x\) \|\s+10 \|`, row(named, "fixed-window"))
	require.NotContains(t, named, "10.0x", "an observation window is never a multiple of a limit")
	require.Contains(t, named, "obs. peak: an observation window, the most released in any 100ms, held to no limit.")

	// --columns all or by name brings the default W/10 back, as a count
	all := table(nil, []string{"all"})
	require.Contains(t, all, "obs. peak/100ms")
	require.NotContains(t, all, "10.0x")
	require.Contains(t, table(nil, []string{"peak/100ms"}), "obs. peak/100ms")

	// the JSON keeps every window
	var js bytes.Buffer
	require.NoError(t, JSON(&js, doubleBurst()))
	require.Contains(t, js.String(), `"window_ns": 100000000`)
}
