package output

import (
	"math"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratesim/ratesim/sim"
)

// stateChart: the watched key's state over time, one panel per algorithm
// that can show it (sim.Result.State), or, for a row on a cluster, one per
// node that keeps its state or one for the store (sim.Result.NodeStates),
// one line per gauge, the same axes on every panel.
func stateChart(r *sim.Report) *figure {
	// the panels: a row's state, or a cluster row's on each of its nodes
	// or in its store
	type panel struct {
		title string
		st    *sim.StateSeries
	}
	var panels []panel
	for i := range r.Results {
		res := &r.Results[i]
		if st := res.State; st != nil && len(st.TimesNs) > 0 && len(st.Names) > 0 {
			panels = append(panels, panel{res.Label, st})
		}
		for j := range res.NodeStates {
			if st := &res.NodeStates[j]; len(st.TimesNs) > 0 && len(st.Names) > 0 {
				panels = append(panels, panel{res.Label + " · " + st.Where, st})
			}
		}
	}
	if len(panels) == 0 {
		return nil
	}
	tb := timeBaseOf(r)
	// one colour per gauge name, in order of first appearance
	var names []string
	colorOf := map[string]int{}
	for _, pn := range panels {
		for _, name := range pn.st.Names {
			if _, ok := colorOf[name]; !ok {
				colorOf[name] = len(names)
				names = append(names, name)
			}
		}
	}
	styleOf := func(name string) draw.LineStyle { return algStyle(colorOf[name], 1, 2) }
	var (
		xmin, xmax = math.Inf(1), math.Inf(-1)
		ymin, ymax = 0.0, 1.0
		plots      []*plot.Plot
	)
	for _, pn := range panels {
		st := pn.st
		p := newPlot()
		p.Title.Text = pn.title
		for j, name := range st.Names {
			xys := gaugePoints(tb, st, j)
			if len(xys) == 0 {
				continue
			}
			x0, x1, y0, y1 := plotter.XYRange(xys)
			xmin, xmax = math.Min(xmin, x0), math.Max(xmax, x1)
			ymin, ymax = math.Min(ymin, y0), math.Max(ymax, y1)
			p.Add(line{&plotter.Line{XYs: xys, LineStyle: styleOf(name)}})
		}
		plots = append(plots, p)
	}
	if math.IsInf(xmin, 0) || xmin >= xmax {
		return nil
	}
	cols := 1
	if len(plots) > 4 {
		cols = 2
	}
	rows := (len(plots) + cols - 1) / cols
	for i, p := range plots {
		p.X.Min, p.X.Max = xmin, xmax
		p.Y.Min, p.Y.Max = ymin, ymax*1.05
		if i+cols >= len(plots) {
			p.X.Label.Text = tb.label
		}
		if i%cols == 0 {
			p.Y.Label.Text = "requests"
		}
	}
	var legend []legendItem
	for _, name := range names {
		legend = append(legend, legendItem{name, &plotter.Line{LineStyle: styleOf(name)}})
	}
	key := panels[0].st.Key
	return &figure{
		title:    "State of key " + strconv.Quote(key) + " over time",
		subtitle: subtitle(r) + "; sampled every " + sampleEvery(panels[0].st),
		legend:   legend,
		width:    720,
		height:   vg.Length(70 + 150*rows),
		body:     func(c draw.Canvas) { drawPanels(c, plots, cols) },
	}
}

// gaugePoints returns the points of gauge j of st: every sample, or past
// maxDrawPoints samples the average of k consecutive ones at their mean
// time.
func gaugePoints(tb timeBase, st *sim.StateSeries, j int) plotter.XYs {
	n := min(len(st.TimesNs), len(st.Values))
	k := (n + maxDrawPoints - 1) / maxDrawPoints
	xys := make(plotter.XYs, 0, n/max(k, 1)+1)
	for i := 0; i < n; i += k {
		end := min(i+k, n)
		var x, y float64
		m := 0
		for s := i; s < end; s++ {
			if j >= len(st.Values[s]) {
				continue
			}
			x += tb.x(st.TimesNs[s])
			y += st.Values[s][j]
			m++
		}
		if m > 0 {
			xys = append(xys, plotter.XY{X: x / float64(m), Y: y / float64(m)})
		}
	}
	return xys
}

// sampleEvery writes the interval between the first two samples.
func sampleEvery(st *sim.StateSeries) string {
	if len(st.TimesNs) < 2 {
		return "once"
	}
	return FormatDuration(time.Duration(st.TimesNs[1] - st.TimesNs[0]))
}
