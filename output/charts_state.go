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
// one line per gauge, the same axes on every panel. A gauge that is a
// bound rather than state (a bucket's capacity, nginx's burst, the
// concurrency limit: see boundGauge) is drawn as a dashed reference line
// across its panel, labelled with its name and value, and not in the
// legend unless it is data in another panel.
func stateChart(r *sim.Report) *figure {
	panels := statePanelsOf(r)
	if len(panels) == 0 {
		return nil
	}
	tb := timeBaseOf(r)
	// one colour per gauge name drawn as data, in order of first
	// appearance; the reference lines are grey, each labelled
	var names []string
	colorOf := map[string]int{}
	refs := false // any gauge drawn as a reference line
	for _, pn := range panels {
		for _, g := range pn.gauges {
			refs = refs || g.constant
			if _, ok := colorOf[g.name]; !ok && !g.constant {
				colorOf[g.name] = len(names)
				names = append(names, g.name)
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
		p := newPlot()
		p.Title.Text = pn.title
		for _, g := range pn.gauges {
			xys := gaugePoints(tb, pn.st, g.index)
			if len(xys) == 0 {
				continue
			}
			x0, x1, y0, y1 := plotter.XYRange(xys)
			xmin, xmax = math.Min(xmin, x0), math.Max(xmax, x1)
			ymin, ymax = math.Min(ymin, y0), math.Max(ymax, y1)
			if g.constant {
				sty := draw.LineStyle{Color: refColor, Width: 1, Dashes: []vg.Length{4, 3}}
				p.Add(&refLine{hline: hline{y: g.value, style: sty}, label: g.name + " " + formatGauge(g.value)})
				continue
			}
			p.Add(line{&plotter.Line{XYs: xys, LineStyle: styleOf(g.name)}})
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
		p.X.Tick.Marker = tb.ticks()
		p.Y.Min, p.Y.Max = ymin, ymax*1.05
		if refs {
			p.Y.Max = ymax * 1.12 // room for a reference line's label
		}
		if i+cols >= len(plots) {
			p.X.Label.Text = tb.label
		}
		if i%cols == 0 {
			// a gauge counts what the limit counts: requests, or the
			// traffic's cost unit (a token bucket's tokens of cost)
			p.Y.Label.Text = countUnit(r)
		}
	}
	var legend []legendItem
	for _, name := range names {
		legend = append(legend, legendItem{name, &plotter.Line{LineStyle: styleOf(name)}})
	}
	key := panels[0].st.Key
	sub := subtitle(r) + "; sampled every " + sampleEvery(panels[0].st)
	if refs {
		sub += "; dashed: a bound that did not change"
	}
	return &figure{
		title:    "State of key " + strconv.Quote(key) + " over time",
		subtitle: sub,
		legend:   legend,
		width:    720,
		height:   vg.Length(70 + 150*rows),
		body:     func(c draw.Canvas) { drawPanels(c, plots, cols) },
	}
}

// statePanel is one panel of the state chart: a row's state, or a cluster
// row's on one of its nodes or in its store.
type statePanel struct {
	title  string
	st     *sim.StateSeries
	gauges []stateGauge
}

// stateGauge is one gauge of a panel: its name and index in the state, and
// whether it is a bound drawn as a reference line (constant, at value).
type stateGauge struct {
	name     string
	index    int
	constant bool
	value    float64
}

// statePanelsOf returns the state chart's panels, in report order.
func statePanelsOf(r *sim.Report) []statePanel {
	var panels []statePanel
	add := func(title string, st *sim.StateSeries) {
		if len(st.TimesNs) == 0 || len(st.Names) == 0 {
			return
		}
		pn := statePanel{title: title, st: st}
		for j, name := range st.Names {
			v, ok := boundGauge(st, j)
			pn.gauges = append(pn.gauges, stateGauge{name: name, index: j, constant: ok, value: v})
		}
		panels = append(panels, pn)
	}
	for i := range r.Results {
		res := &r.Results[i]
		if res.State != nil {
			add(res.Label, res.State)
		}
		for j := range res.NodeStates {
			st := &res.NodeStates[j]
			add(res.Label+" · "+st.Where, st)
		}
	}
	return panels
}

// boundGauge says whether gauge j of st is a bound the others are held
// to, not state, and its value: it holds one value above 0 in every sample
// (at least two), st has other gauges, and none of them ever goes above
// it. So a leaky bucket's capacity, nginx's burst and the concurrency
// limit are bounds, while a queue that stayed empty, or a lone gauge that
// did not move (a bucket that stayed full), is state. Gauges carry no flag
// saying so (algorithms.Gauge is a name and a value), hence the rule.
func boundGauge(st *sim.StateSeries, j int) (float64, bool) {
	if len(st.Names) < 2 {
		return 0, false
	}
	var v float64
	n := 0
	for _, vals := range st.Values {
		if j >= len(vals) {
			continue
		}
		if n > 0 && vals[j] != v {
			return 0, false
		}
		v = vals[j]
		n++
	}
	if n < 2 || v <= 0 {
		return 0, false
	}
	for _, vals := range st.Values {
		for k, x := range vals {
			if k != j && x > v {
				return 0, false
			}
		}
	}
	return v, true
}

// formatGauge writes a gauge's value for a label: "10", "2.5".
func formatGauge(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// refColor is the colour of the state chart's reference lines.
var refColor = rgb(0x666666)

// refLine is a horizontal reference line (hline) with its label written
// above its right end.
type refLine struct {
	hline
	label string
}

func (l *refLine) Plot(c draw.Canvas, p *plot.Plot) {
	l.hline.Plot(c, p)
	_, trY := p.Transforms(&c)
	y := trY(l.y)
	if y < c.Min.Y || y > c.Max.Y {
		return
	}
	sty := textStyle(sansFont, 8)
	sty.Color = l.style.Color
	sty.XAlign, sty.YAlign = draw.XRight, draw.YBottom
	c.FillText(sty, vg.Point{X: c.Max.X - 2, Y: y + 1}, l.label)
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
