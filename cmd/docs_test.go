package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ratesim/ratesim/internal/chartcmp"
	"github.com/stretchr/testify/require"
)

// TestDocsCharts: the charts the pages of docs/ show are made by ratesim's
// own command, `ratesim compare NAME --charts docs/charts/NAME
// --chart-format svg`, and are up to date: each is rendered again here and
// must draw the same, element by element (chartcmp: coordinates to within
// a hundredth of a point, so that it holds on every CPU, which the bytes of
// a PNG do not). -update rewrites them; look at the new pictures before
// committing them.
func TestDocsCharts(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob("../docs/charts/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			status, _, errOut := run(t, "compare", name, "--charts", out, "--chart-format", "svg")
			require.Equal(t, 0, status, errOut)
			made, err := filepath.Glob(filepath.Join(out, "*.svg"))
			require.NoError(t, err)
			have, err := filepath.Glob(filepath.Join(dir, "*"))
			require.NoError(t, err)
			if *update {
				require.NoError(t, os.RemoveAll(dir))
				require.NoError(t, os.MkdirAll(dir, 0o755))
				for _, f := range made {
					data, err := os.ReadFile(f)
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644))
				}
				return
			}
			require.Equal(t, len(made), len(have), "the same charts")
			for _, f := range made {
				got, err := os.ReadFile(f)
				require.NoError(t, err)
				want, err := os.ReadFile(filepath.Join(dir, filepath.Base(f)))
				require.NoError(t, err)
				d := chartcmp.Diff(got, want)
				require.Empty(t, d, "%s/%s is out of date: go test ./cmd/ -run TestDocsCharts -update", dir, filepath.Base(f))
			}
		})
	}
}
