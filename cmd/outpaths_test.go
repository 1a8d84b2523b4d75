package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOutputPathsCheckedFirst: a path that cannot be written exits 2
// before the run, with a message naming the flag, and prints no table.
func TestOutputPathsCheckedFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "typo.yaml")
	require.NoError(t, os.WriteFile(file, []byte("name: x\n"), 0o644))
	missing := filepath.Join(dir, "no", "such")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "double-burst", "--charts", file}, "ratesim: --charts: " + file + ": is a file, want a directory (the charts are written into it)\n"},
		{[]string{"compare", "double-burst", "--charts", filepath.Join(file, "sub")}, "ratesim: --charts: " + filepath.Join(file, "sub") + ": " + file + " is not a directory\n"},
		{[]string{"compare", "double-burst", "--report", filepath.Join(missing, "r.html")}, "ratesim: --report: " + filepath.Join(missing, "r.html") + ": no such directory: " + missing + "\n"},
		{[]string{"compare", "double-burst", "--report", dir}, "ratesim: --report: " + dir + ": is a directory, want a file\n"},
		{[]string{"compare", "double-burst", "--decisions", filepath.Join(missing, "d.csv")}, "ratesim: --decisions: " + filepath.Join(missing, "d.csv") + ": no such directory: " + missing + "\n"},
		{[]string{"replay", "../../shared/traces/azure_llm_2023_conv.csv", "--limit", "10/s", "--key-field", "none", "--charts", file}, "ratesim: --charts: " + file + ": is a file, want a directory (the charts are written into it)\n"},
		{[]string{"sweep", "double-burst", "--vary", "limit.burst=5,10", "--output", filepath.Join(missing, "o.json")}, "ratesim: --output: " + filepath.Join(missing, "o.json") + ": no such directory: " + missing + "\n"},
		{[]string{"sweep", "double-burst", "--vary", "limit.burst=5,10", "--report", dir}, "ratesim: --report: " + dir + ": is a directory, want a file\n"},
		{[]string{"demo", "double-burst", "--charts", file}, "ratesim: --charts: " + file + ": is a file, want a directory (the charts are written into it)\n"},
		{[]string{"demo", "double-burst", "--report", filepath.Join(missing, "r.html")}, "ratesim: --report: " + filepath.Join(missing, "r.html") + ": no such directory: " + missing + "\n"},
	} {
		status, out, errOut := run(t, c.args...)
		require.Equal(t, 2, status, "%v: %s", c.args, errOut)
		require.Empty(t, out, "%v: nothing runs", c.args)
		require.Contains(t, errOut, c.want, "%v", c.args)
	}
	// nothing is left behind
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
}
