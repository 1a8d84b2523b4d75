package sweep

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/expect"
	"github.com/ratesim/ratesim/sim"
)

func pct(num, den int64) (float64, bool) { return expect.Pct(num, den) }

// MetricNames lists the metrics a goal can name.
func MetricNames() []string { return expect.GoalNames() }

// rowsOf decodes a point's results.
func rowsOf(p *Point) ([]sim.Result, error) {
	if p.Error != "" || p.Results == nil {
		return nil, nil
	}
	var rs []sim.Result
	err := json.Unmarshal(p.Results, &rs)
	return rs, err
}

// labels lists the labels of the points' results in order of first
// appearance.
func labels(s *Sweep) ([]string, error) {
	rows := make([][]sim.Result, len(s.Points))
	for i := range s.Points {
		rs, err := rowsOf(&s.Points[i])
		if err != nil {
			return nil, err
		}
		rows[i] = rs
	}
	return labelsOf(rows), nil
}

// labelsOf lists the labels of decoded results in order of first
// appearance.
func labelsOf(rows [][]sim.Result) []string {
	var out []string
	for _, rs := range rows {
		for _, r := range rs {
			if !slices.Contains(out, r.Label) {
				out = append(out, r.Label)
			}
		}
	}
	return out
}

// fieldIndex finds a varied field by its path.
func fieldIndex(fields []Field, path string) int {
	for i, f := range fields {
		if f.Path == path || strings.EqualFold(f.Path, path) {
			return i
		}
	}
	return -1
}
