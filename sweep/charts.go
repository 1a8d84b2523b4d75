package sweep

import (
	"fmt"
	"math"
	"strings"

	"github.com/ratesim/ratesim/expect"
	"github.com/ratesim/ratesim/output"
)

// chartTerms are the metrics every sweep chart set draws, then the
// cluster's and the backend's when rows have them, then the goal's.
var chartTerms = []string{"reject_pct", "p99_delay", "key_peak_ratio"}

// Charts returns the sweep's pictures: with two varied fields a heatmap
// per metric (the first field down, the second across, a panel per
// algorithm), with one a line chart per metric. The metrics are
// reject_pct, p99_delay and key_peak_ratio, baseline_differs_pct with a
// baseline, extra_pct for cluster rows, goodput for backend rows, and the
// goal's own (its objective and
// constraints, key filters included); the goal's best point is ringed.
func Charts(s *Sweep, g *Goal, bests []Best) ([]output.Chart, error) {
	if len(s.Fields) > 2 {
		return nil, fmt.Errorf("a sweep draws charts for one or two varied fields, this one has %d", len(s.Fields))
	}
	ls, err := labels(s)
	if err != nil {
		return nil, err
	}
	d, err := decode(s)
	if err != nil {
		return nil, err
	}
	var terms []Term
	add := func(t Term) {
		if t.field >= 0 {
			return
		}
		for _, u := range terms {
			if u.Text == t.Text {
				return
			}
		}
		terms = append(terms, t)
	}
	for _, name := range chartTerms {
		add(figureTerm(name))
	}
	cl, be, bl := false, false, false
	for _, rs := range d.rows {
		for _, r := range rs {
			cl, be, bl = cl || r.Cluster != nil, be || r.Backend != nil, bl || r.Baseline != nil
		}
	}
	if bl {
		add(figureTerm("baseline_differs_pct"))
	}
	if cl {
		add(figureTerm("extra_pct"))
	}
	if be {
		add(figureTerm("goodput"))
	}
	if g != nil {
		add(g.Objective)
		for _, c := range g.Constraints {
			add(c.Term)
		}
	}
	grid := &output.SweepGrid{Scenario: s.Scenario, Labels: ls}
	x := s.Fields[len(s.Fields)-1]
	grid.XField = x.Path
	numeric := true
	for _, v := range x.Values {
		grid.XValues = append(grid.XValues, v.Text)
		grid.XNums = append(grid.XNums, v.Num)
		numeric = numeric && (v.Kind == "int" || v.Kind == "decimal" || v.Kind == "duration")
		grid.XDuration = v.Kind == "duration"
	}
	if !numeric {
		grid.XNums, grid.XDuration = nil, false
	}
	ny := 1
	if len(s.Fields) == 2 {
		grid.YField = s.Fields[0].Path
		for _, v := range s.Fields[0].Values {
			grid.YValues = append(grid.YValues, v.Text)
		}
		ny = len(s.Fields[0].Values)
	}
	nx := len(x.Values)
	for _, t := range terms {
		doc := t.fig.Doc()
		if g := t.glob(); g != "" {
			doc = "the keys matching " + g
			if t.fig.Name() == "reject_pct" {
				doc = "100 × rejected / requests of the keys matching " + g
			}
		}
		m := output.SweepMetric{Name: fileName(t.Text), Title: t.Text + ": " + doc, Duration: t.fig.Kind() == expect.Duration}
		for range ls {
			panel := make([][]float64, ny)
			for y := range panel {
				panel[y] = make([]float64, nx)
				for i := range panel[y] {
					panel[y][i] = math.NaN()
				}
			}
			m.Values = append(m.Values, panel)
		}
		for pi := range s.Points {
			p := &s.Points[pi]
			for row, r := range d.rows[pi] {
				li := indexOfString(ls, r.Label)
				if v, ok := t.value(p, row, &r); ok {
					m.Values[li][p.Index/nx][p.Index%nx] = v
				}
			}
		}
		if g != nil {
			for _, b := range bests {
				bx, by := -1, -1
				if b.Best != nil {
					bx, by = b.Best.Index%nx, b.Best.Index/nx
				}
				m.BestX, m.BestY = append(m.BestX, bx), append(m.BestY, by)
			}
		}
		grid.Metrics = append(grid.Metrics, m)
	}
	return output.SweepCharts(grid), nil
}

func indexOfString(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// fileName makes a chart's file name of a metric: reject_pct(key=user-*)
// is reject_pct-key-user.
func fileName(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
		if ok {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(c)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}
