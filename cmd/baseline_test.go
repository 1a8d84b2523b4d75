package cmd

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// --baseline in every format, on the double burst: the fixed window (and
// concurrency) admit the ten the sliding log rejects.
func TestBaselineGolden(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			status, out, errOut := run(t, "compare", "double-burst", "--baseline", "sliding-log", "--format", format)
			require.Equal(t, 0, status, errOut)
			ext := map[string]string{"table": "txt", "json": "json", "csv": "csv", "markdown": "md"}[format]
			golden(t, filepath.Join("compare", "baseline", "double-burst."+ext), out)
		})
	}
}

func TestBaselineJSON(t *testing.T) {
	status, out, errOut := run(t, "compare", "double-burst", "--baseline", "sliding-log", "--format", "json")
	require.Equal(t, 0, status, errOut)
	var rep struct {
		Results []struct {
			Label    string          `json:"label"`
			Baseline json.RawMessage `json:"baseline"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "fixed-window", rep.Results[0].Label)
	require.JSONEq(t, `{"label": "sliding-log", "compared": 20, "differs": 10, "wrongly_allowed": 10,
		"wrongly_limited": 0, "first_divergences": 1}`, string(rep.Results[0].Baseline))
	require.Equal(t, "sliding-log", rep.Results[1].Label)
	require.Nil(t, rep.Results[1].Baseline)
}

func TestBaselineBadLabel(t *testing.T) {
	status, out, errOut := run(t, "compare", "double-burst", "--baseline", "exact")
	require.Equal(t, 2, status)
	require.Empty(t, out)
	require.Contains(t, errOut, `--baseline: "exact" is not a row of double-burst (it has fixed-window, sliding-log,`)

	status, _, errOut = run(t, "compare", "double-burst", "--algorithms", "gcra,fixed-window", "--baseline", "sliding-log")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, `--baseline: "sliding-log" is not a row of double-burst after --algorithms (it has fixed-window, gcra)`)

	status, _, errOut = run(t, "replay", "../traffic/testdata/replay/combined.log", "--limit", "1/s", "--baseline", "x")
	require.Equal(t, 2, status, errOut)
	require.Contains(t, errOut, `--baseline: "x" is not a row of replay`)
}

// A name stands for its row's label when one row has it.
func TestBaselineByName(t *testing.T) {
	_, byLabel, _ := run(t, "compare", "double-burst", "--baseline", "sliding-log", "--format", "csv")
	status, byName, errOut := run(t, "compare", "double-burst", "--baseline", " sliding-log", "--format", "csv")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, byLabel, byName)
}
