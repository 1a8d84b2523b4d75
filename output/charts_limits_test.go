package output

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/ratesim/ratesim/sim"
)

// adaptiveReport runs testdata/adaptive.yaml as `ratesim compare` does.
func adaptiveReport(t testing.TB) *sim.Report { return fileReport(t, "adaptive.yaml") }

// TestLimitsChart: rows with an adaptive limit get the adaptive-limits
// chart, after the backend's, naming each of them and the fault, and not
// the token bucket, which has no limit series. What it draws is the
// backend's figures: each row's steps reach down to its limit's least and
// up to its greatest over the run, and every step's mean lies between its
// least and greatest. A report with no adaptive row has no such chart.
func TestLimitsChart(t *testing.T) {
	rep := adaptiveReport(t)
	charts := Charts(rep, nil)
	if got := chartNames(charts); got[len(got)-1] != "adaptive-limits" || !slices.Contains(got, "backend") {
		t.Fatalf("charts %v: want backend, then adaptive-limits last", got)
	}
	c := chartNamed(charts, "adaptive-limits")
	svg := renderChart(t, *c, "svg")
	for _, want := range []string{"Adaptive limits over time", "aimd", "gradient2", "envoy-adaptive", "fault: pause", "least to greatest"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("adaptive-limits.svg: %q not in it", want)
		}
	}
	if bytes.Contains(svg, []byte("token-bucket")) {
		t.Error("adaptive-limits.svg names token-bucket, which has no limit")
	}
	tb := timeBaseOf(rep)
	for _, res := range rep.Results {
		b := res.Backend
		mean, lo, hi := limitSteps(&b.Series, tb, b.Series.BucketNs*10)
		if res.Algorithm == "token-bucket" {
			if b.Limit != nil || mean != nil {
				t.Errorf("token-bucket has a limit: %+v", b.Limit)
			}
			continue
		}
		if b.Limit == nil || len(mean) == 0 {
			t.Fatalf("%s: no limit", res.Label)
		}
		least, greatest := math.Inf(1), math.Inf(-1)
		for i := range mean {
			least, greatest = math.Min(least, lo[i].Y), math.Max(greatest, hi[i].Y)
			if mean[i].Y < lo[i].Y || mean[i].Y > hi[i].Y {
				t.Errorf("%s: step %d: mean %v outside [%v, %v]", res.Label, i, mean[i].Y, lo[i].Y, hi[i].Y)
			}
		}
		if least != float64(b.Limit.Min) || greatest != float64(b.Limit.Max) {
			t.Errorf("%s: drawn from %v to %v, the limit went from %d to %d", res.Label, least, greatest, b.Limit.Min, b.Limit.Max)
		}
	}
	if slices.Contains(chartNames(Charts(backendReport(t), nil)), "adaptive-limits") {
		t.Error("a report without adaptive rows has an adaptive-limits chart")
	}
}
