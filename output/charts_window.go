package output

import (
	"math"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/sim"
)

// Series is one line a chart draws, for tests and for pages that redraw
// it: the panel it is in ("" for a chart of one plot), its legend and its
// points in the units of the axes (a step line holds each Y until the next
// X).
type Series struct {
	Panel, Label string
	X, Y         []float64
}

// Series returns the lines the chart draws, for the charts that list them
// (window, multiples, backend, accuracy; a sweep's heatmap, a series per
// row of cells, Y the cells' figures; nil for the others).
func (c Chart) Series() []Series { return c.fig.series }

// seriesOf is a Series of the points xys.
func seriesOf(panel, label string, xys plotter.XYs) Series {
	s := Series{Panel: panel, Label: label}
	for _, xy := range xys {
		s.X = append(s.X, xy.X)
		s.Y = append(s.Y, xy.Y)
	}
	return s
}

// rateRow reports whether res holds a rate (so much per window), which a
// limit line on the window chart stands for: not a concurrency limit, an
// adaptive one or none.
func rateRow(res *sim.Result) bool {
	info, ok := algorithms.Lookup(res.Algorithm)
	if !ok {
		return true
	}
	return !info.InFlight && !info.Adaptive && info.Name != "none"
}

// ruleAllows is the most res's own rule lets through in one window of its
// policy when that is more than the limit, and how: a bucket's burst and
// the window's refill, a fixed window's two counters where two windows
// meet (docs/algorithms.md); 0 when the rule holds the limit.
func ruleAllows(l sim.Limit, res *sim.Result) (int64, string) {
	switch res.Algorithm {
	case "token-bucket", "gcra", "x-time-rate":
		if l.Burst > 0 {
			return l.Burst + l.Rate, "burst " + strconv.FormatInt(l.Burst, 10) + " + rate " + strconv.FormatInt(l.Rate, 10)
		}
	case "fixed-window":
		return 2 * l.Rate, strconv.FormatInt(l.Rate, 10) + " on each side of a boundary"
	}
	return 0, ""
}

// windowPoints are the points of a step line of s on tb's axis, from x0
// (0 before the first step) to the series' end, at most maxDrawPoints
// steps: a drawn step is the largest of the steps it joins, so no peak is
// lost.
func windowPoints(s *sim.WindowSeries, tb timeBase, x0 float64) plotter.XYs {
	k := (len(s.Max) + maxDrawPoints - 1) / maxDrawPoints
	k = max(k, 1)
	xys := make(plotter.XYs, 0, len(s.Max)/k+3)
	if x := tb.x(s.StartNs); x > x0 {
		xys = append(xys, plotter.XY{X: x0, Y: 0})
	}
	for i := 0; i < len(s.Max); i += k {
		var m int64
		for _, v := range s.Max[i:min(i+k, len(s.Max))] {
			m = max(m, v)
		}
		xys = append(xys, plotter.XY{X: tb.x(s.StartNs + int64(i)*s.StepNs), Y: float64(m)})
	}
	end := s.StartNs + int64(len(s.Max))*s.StepNs
	return append(xys, plotter.XY{X: tb.x(end), Y: xys[len(xys)-1].Y})
}

// windowChart: for every row, what its policy bounds, the cost admitted in
// the trailing policy window at every instant, against the limit. With
// several keys the limit is per key: the upper panel draws, for each row,
// the key of its key peak against the limit, and the lower one every key
// together, with no limit line (no limit holds the sum).
func windowChart(r *sim.Report) *figure {
	keyed := r.Keys > 1
	any := false
	for i := range r.Results {
		res := &r.Results[i]
		any = any || res.Window != nil || res.KeyWindow != nil
	}
	if !any {
		return nil
	}
	tb := timeBaseOf(r)
	x0 := tb.x(r.StartNs)
	if !AbsoluteTimes(r) {
		x0 = 0
	}
	xEnd := tb.x(r.StartNs + r.DurationNs)
	w := time.Duration(r.Limit.PerNs)
	yLabel := countUnit(r) + " admitted in the last " + FormatDuration(w)
	var (
		legend []legendItem
		series []Series
		plots  []*plot.Plot
	)
	shades, faultItems := clusterShades(r, tb)
	newPanel := func(title string) *plot.Plot {
		p := newPlot()
		addShades(p, shades)
		p.Title.Text = title
		p.Y.Label.Text = yLabel
		return p
	}
	addLine := func(p *plot.Plot, panel string, i int, s *sim.WindowSeries, label string, withLegend bool) {
		xys := windowPoints(s, tb, x0)
		l := stepLine(xys, algStyle(i, i, len(r.Results)))
		p.Add(line{l})
		xEnd = math.Max(xEnd, xys[len(xys)-1].X)
		if withLegend {
			legend = append(legend, legendItem{label, l})
		}
		series = append(series, seriesOf(panel, label, xys))
	}
	// the panel held to the limit: one key's, or the only key's
	limited := newPanel("")
	limitedName := "every request"
	oneKey := false // every row's key peak is one key's, which the title names
	if keyed {
		limitedName = "the busiest key"
		keys := map[string]bool{}
		for i := range r.Results {
			if s := r.Results[i].KeyWindow; s != nil {
				keys[s.Key] = true
			}
		}
		limited.Title.Text = "the key of each row's key peak (the limit is per key)"
		oneKey = len(keys) == 1
		if oneKey {
			for k := range keys {
				limited.Title.Text = "key " + k + ", the busiest (the limit is per key)"
			}
		}
	}
	for i := range r.Results {
		res := &r.Results[i]
		s := res.Window
		if keyed {
			s = res.KeyWindow
		}
		if s == nil {
			continue
		}
		label := res.Label
		l := limitOf(r, res)
		if !rateRow(res) {
			label += " (no rate limit)"
		} else if n, how := ruleAllows(l, res); n > l.Rate && res.Cluster == nil {
			// (on a cluster every node has a rule of its own: see extra)
			label += " (its rule lets up to " + strconv.FormatInt(n, 10) + " through in any " +
				FormatDuration(time.Duration(l.PerNs)) + ": " + how + ")"
		}
		if keyed && !oneKey {
			label += ", key " + s.Key
		}
		addLine(limited, limitedName, i, s, label, true)
	}
	// the limit lines, one per distinct limit of the rows that hold a rate
	seen := map[int64]bool{}
	for i := range r.Results {
		res := &r.Results[i]
		l := limitOf(r, res)
		if !rateRow(res) || l.PerNs <= 0 || seen[l.Rate] {
			continue
		}
		seen[l.Rate] = true
		h := &hline{y: float64(l.Rate), style: draw.LineStyle{Color: rejectColor, Width: 1.2, Dashes: []vg.Length{5, 3}}}
		if len(seen) > 1 {
			h.style.Dashes = []vg.Length{2, 2}
		}
		limited.Add(h)
		text := "limit " + strconv.FormatInt(l.Rate, 10) + " per " + FormatDuration(time.Duration(l.PerNs))
		if keyed {
			text += " per key"
		}
		legend = append(legend, legendItem{text, h})
		series = append(series, Series{Panel: limitedName, Label: text, Y: []float64{float64(l.Rate)}})
	}
	legend = append(legend, faultItems...)
	plots = append(plots, limited)
	if keyed {
		all := newPanel("every key together (no limit holds the sum)")
		for i := range r.Results {
			if s := r.Results[i].Window; s != nil {
				addLine(all, "every key", i, s, r.Results[i].Label, false)
			}
		}
		plots = append(plots, all)
	}
	// one key busy in a small part of a long run (a replay of days): its
	// panel shows that part, said in its title
	var zoom [2]float64
	if keyed {
		lo, hi := math.Inf(1), math.Inf(-1)
		for i := range r.Results {
			if s := r.Results[i].KeyWindow; s != nil {
				lo = math.Min(lo, tb.x(s.StartNs))
				hi = math.Max(hi, tb.x(s.StartNs+int64(len(s.Max))*s.StepNs))
			}
		}
		if hi > lo && hi-lo < (xEnd-x0)/10 {
			pad := (hi - lo) / 20
			zoom = [2]float64{math.Max(x0, lo-pad), math.Min(xEnd, hi+pad)}
			limited.Title.Text += ", zoomed to its span"
		}
	}
	for i, p := range plots {
		p.X.Min, p.X.Max = x0, xEnd
		if i == 0 && zoom[1] > zoom[0] {
			p.X.Min, p.X.Max = zoom[0], zoom[1]
			p.X.Label.Text = tb.label
		}
		p.Y.Min = 0
		p.Y.Max = math.Max(p.Y.Max*1.08, 1)
		p.X.Tick.Marker = tb.ticks()
		p.Y.Tick.Marker = niceTicks{integer: true}
	}
	plots[len(plots)-1].X.Label.Text = tb.label
	height := vg.Length(432)
	if keyed {
		height = 600
	}
	return &figure{
		title:    "What the limit bounds: admitted in the last " + FormatDuration(w) + ", at every instant",
		subtitle: subtitle(r) + "; by release to the backend, exact",
		legend:   legend,
		width:    720, height: height,
		body:   func(c draw.Canvas) { drawPanels(c, plots, 1) },
		series: series,
	}
}
