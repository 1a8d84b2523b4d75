package gateway

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
)

// parseImported parses an imported scenario with the scenario parser: an
// import is a scenario that loads as it is.
func parseImported(t testing.TB, out string) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Parse("import.yaml", []byte(out))
	require.NoError(t, err, out)
	return sc
}

// golden compares out with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, out string) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), out)
}
