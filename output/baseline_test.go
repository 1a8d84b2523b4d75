package output

import (
	"testing"

	"github.com/ratesim/ratesim/sim"
	"github.com/stretchr/testify/require"
)

func TestSmallPercent(t *testing.T) {
	for _, c := range []struct {
		num, den int64
		want     string
	}{
		{451, 30969, "1.46%"}, {3, 100000, "0.003%"}, {0, 5, "0%"}, {1, 2, "50%"}, {1, 3, "33.33%"},
		{1, 1_000_000_000, "0.0000001%"}, {5, 0, "-"}, {2, 5, "40%"},
	} {
		require.Equal(t, c.want, SmallPercent(c.num, c.den), "%d/%d", c.num, c.den)
	}
}

func TestBaselineFindings(t *testing.T) {
	one := int64(1)
	b := func(d, wa, wl int64, first *int64) *sim.BaselineResult {
		return &sim.BaselineResult{Label: "log", Compared: 200, Differs: d, WronglyAllowed: wa, WronglyLimited: wl, FirstDivergences: first}
	}
	r := &sim.Report{Results: []sim.Result{
		{Label: "log"},
		{Label: "a", Baseline: b(4, 1, 3, &one)},
		{Label: "b", Baseline: b(4, 1, 3, &one)},
		{Label: "c", Baseline: b(2, 2, 0, nil)},
	}}
	require.Equal(t, []string{"a and b stray furthest from log, mostly too strict: each decided 4 of 200 requests " +
		"differently (2%), 1 wrongly allowed and 3 wrongly limited; 1 of them a first divergence, the other 3 after " +
		"an earlier difference on the same key."}, baselineFindings(r))
	r.Results[1].Baseline, r.Results[2].Baseline = b(0, 0, 0, nil), b(0, 0, 0, nil)
	r.Results[3].Baseline = b(0, 0, 0, nil)
	require.Equal(t, []string{"Every row decided every request as log did."}, baselineFindings(r))
	require.Nil(t, baselineFindings(&sim.Report{Results: []sim.Result{{Label: "x"}}}))
}
