package sweep

import (
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/expect"
	"github.com/ratesim/ratesim/sim"
)

// PointOutcomes are the outcomes of the scenario's expectations at one
// point.
type PointOutcomes struct {
	Index    int
	Values   []Value
	Outcomes []expect.Outcome
	// Error is the point's, when it did not run.
	Error string
}

// Hold holds the claims against every point's rows: the figures of rows
// (a claim on one decision is read by check and compare, not here).
func (s *Sweep) Hold(claims []expect.Claim) ([]PointOutcomes, error) {
	var out []PointOutcomes
	for i := range s.Points {
		p := &s.Points[i]
		po := PointOutcomes{Index: p.Index, Values: p.Values, Error: p.Error}
		if p.Error == "" {
			rs, err := rowsOf(p)
			if err != nil {
				return nil, err
			}
			groups := make([][]sim.KeyGroup, len(rs))
			for row := range rs {
				if row < len(p.KeyGroups) {
					groups[row] = p.KeyGroups[row]
				}
			}
			po.Outcomes = expect.Rows(claims, rs, groups)
		}
		out = append(out, po)
	}
	return out, nil
}

// ExpectationLines writes a line per point: its counts, then each claim
// that fails there with what was measured.
func ExpectationLines(fields []Field, pts []PointOutcomes) []string {
	lines := []string{"Expectations per point:"}
	for _, p := range pts {
		l := "  point " + strconv.Itoa(p.Index) + " (" + Describe(fields, p.Values) + "): "
		if p.Error != "" {
			lines = append(lines, l+"not run")
			continue
		}
		l += expect.CountOf(p.Outcomes).String()
		var fails []string
		for _, o := range p.Outcomes {
			if o.Status == expect.Fails {
				fails = append(fails, o.Row+" "+o.Claim.String()+" (measured "+o.MeasuredText()+")")
			}
		}
		if len(fails) > 0 {
			l += "; fails: " + strings.Join(fails, ", ")
		}
		lines = append(lines, l)
	}
	return lines
}
