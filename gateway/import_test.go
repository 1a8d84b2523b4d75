package gateway

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
)

// pending are the row fields that other branches bring (calendar windows,
// x-time-rate's idle-reset): until they are merged, parseImported reads a
// scenario with them replaced (per: 1mo by 720h, 1y by 8760h) or removed
// (idle-reset), so that everything else in it is checked by the
// scenario parser; the goldens hold the text with them.
var pending = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`per: 1mo\b`), "per: 720h"},
	{regexp.MustCompile(`per: 1y\b`), "per: 8760h"},
	{regexp.MustCompile(`, idle-reset: [0-9a-z]+`), ""},
}

// parseImported parses an imported scenario, with the pending fields
// replaced only when the parser does not take them yet.
func parseImported(t testing.TB, out string) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Parse("import.yaml", []byte(out))
	if err != nil && (strings.Contains(err.Error(), `"mo"`) || strings.Contains(err.Error(), `"y"`) || strings.Contains(err.Error(), "idle-reset")) {
		for _, p := range pending {
			out = p.re.ReplaceAllString(out, p.with)
		}
		sc, err = scenarios.Parse("import.yaml", []byte(out))
	}
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
