package output

import (
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratesim/ratesim/sim"
)

// seriesDraw is how a report's series are drawn: k buckets of bucketNs per
// drawn step, so that no line has more than maxDrawPoints steps.
type seriesDraw struct {
	tb       timeBase
	bucketNs int64
	k        int
	// spanEnd is the end of a recorded trace's traffic, inside its last
	// bucket (0 for synthetic traffic, whose buckets it fills)
	spanEnd int64
}

// seriesDrawOf returns how r's series are drawn with at most maxPoints
// steps a line, or false when no result has a series.
func seriesDrawOf(r *sim.Report, maxPoints int) (seriesDraw, bool) {
	d := seriesDraw{tb: timeBaseOf(r), k: 1}
	if AbsoluteTimes(r) {
		// the last arrival's instant is in the span: its bucket runs to
		// the next nanosecond
		d.spanEnd = r.StartNs + r.DurationNs + 1
	}
	n := 0
	for i := range r.Results {
		s := &r.Results[i].Series
		if s.BucketNs <= 0 {
			continue
		}
		if d.bucketNs == 0 {
			d.bucketNs = s.BucketNs
		}
		for _, col := range [][]int64{s.Offered, s.Admitted, s.Delayed, s.Rejected} {
			n = max(n, len(col))
		}
	}
	if d.bucketNs == 0 || n == 0 {
		return d, false
	}
	d.k = drawK(n, maxPoints)
	return d, true
}

// drawK is how many buckets of a series of n are drawn as one step for at
// most maxPoints steps: 1, 2 or 5 times a power of ten, for a drawn bucket
// easier to read than 94 times 3.2s.
func drawK(n, maxPoints int) int {
	k := 1
	need := (n + maxPoints - 1) / maxPoints
	for p := 1; k < need; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if k = m * p; k >= need {
				break
			}
		}
	}
	return k
}

// label is the rate axis label, naming the drawn bucket.
func (d seriesDraw) label() string {
	return "requests per second (" + FormatDuration(time.Duration(d.bucketNs*int64(d.k))) + " buckets)"
}

// rates returns the points of a step line of counts per second, k buckets
// of s summed into each step, and a closing point at the end of the last
// bucket; nil for an empty column.
func (d seriesDraw) rates(s *sim.Series, counts []int64) plotter.XYs {
	if len(counts) == 0 || s.BucketNs <= 0 {
		return nil
	}
	k := d.k
	if s.BucketNs != d.bucketNs { // a series of another bucket: same step length
		k = max(1, int(d.bucketNs*int64(d.k)/s.BucketNs))
	}
	xys := make(plotter.XYs, 0, (len(counts)+k-1)/k+1)
	last := len(counts)
	var endNs int64
	for i := 0; i < last; i += k {
		j := min(i+k, last)
		var sum int64
		for _, c := range counts[i:j] {
			sum += c
		}
		if j-i < k && 2*(j-i) < k && i > 0 {
			// a last drawn step of under half the others' buckets: its
			// average would not compare with theirs (a trace that ends
			// after a busy minute of a quiet five)
			last = i
			break
		}
		from := s.StartNs + int64(i)*s.BucketNs
		to := s.StartNs + int64(j)*s.BucketNs
		if d.spanEnd > from && d.spanEnd < to {
			// the traffic ends inside this step: its rate over the part
			// it covers, or none when that is under half of it (with
			// the steps after it, which only releases of delayed
			// requests fill)
			if 2*(d.spanEnd-from) < to-from {
				last = i
				break
			}
			to = d.spanEnd
		}
		secs := float64(to-from) / 1e9
		endNs = to
		xys = append(xys, plotter.XY{X: d.tb.x(from), Y: float64(sum) / secs})
	}
	if len(xys) == 0 {
		return nil
	}
	xys = append(xys, plotter.XY{X: d.tb.x(endNs), Y: xys[len(xys)-1].Y})
	return xys
}

// stepLine is a step line through xys.
func stepLine(xys plotter.XYs, sty draw.LineStyle) *plotter.Line {
	return &plotter.Line{XYs: xys, StepStyle: plotter.PostStep, LineStyle: sty}
}

// line is a plotter.Line without glyph boxes: plotter.Line returns one per
// point, which plot.Draw asks for several times to pad the axes (hundreds
// of megabytes for long series), and a line needs no padding.
type line struct{ l *plotter.Line }

func (l line) Plot(c draw.Canvas, p *plot.Plot)            { l.l.Plot(c, p) }
func (l line) DataRange() (xmin, xmax, ymin, ymax float64) { return l.l.DataRange() }
func (l line) Thumbnail(c *draw.Canvas)                    { l.l.Thumbnail(c) }

// offeredArea is the offered traffic, drawn as a grey area behind lines.
func offeredArea(xys plotter.XYs) *plotter.Line {
	l := stepLine(xys, draw.LineStyle{Color: offeredLine, Width: 0.5})
	l.FillColor = offeredFill
	return l
}

// firstSeries returns the series of the first result that has one.
func firstSeries(r *sim.Report) *sim.Series {
	for i := range r.Results {
		if r.Results[i].Series.BucketNs > 0 {
			return &r.Results[i].Series
		}
	}
	return nil
}

// limitLines are the horizontal lines of the limits the results enforced,
// in requests per second, one per distinct limit, with their legend.
//
// With several keys there are none: the limit is per key, and these
// charts draw every key together (the window chart holds one key to it).
func limitLines(r *sim.Report) ([]*hline, []legendItem) {
	if r.Keys > 1 {
		return nil, nil
	}
	var lines []*hline
	var items []legendItem
	seen := map[float64]bool{}
	for i := range r.Results {
		l := limitOf(r, &r.Results[i])
		ps := perSecond(l)
		if ps <= 0 || seen[ps] {
			continue
		}
		seen[ps] = true
		h := &hline{y: ps, style: draw.LineStyle{Color: limitColor, Width: 1, Dashes: []vg.Length{5, 3}}}
		if len(lines) > 0 {
			h.style.Dashes = []vg.Length{2, 2}
		}
		text := "limit " + limitPer(l, l.PerNs) + "/" + FormatDuration(time.Duration(l.PerNs))
		if r.Keys > 1 {
			text += " per key"
		}
		lines = append(lines, h)
		items = append(items, legendItem{text, h})
	}
	return lines, items
}

// rateChart: admitted requests per second for every algorithm on one
// chart, the offered traffic behind them, the limit as a line.
func rateChart(r *sim.Report) *figure {
	d, ok := seriesDrawOf(r, maxDrawPoints)
	if !ok {
		return nil
	}
	p := newPlot()
	p.X.Label.Text = d.tb.label
	p.X.Tick.Marker = d.tb.ticks()
	p.Y.Label.Text = d.label()
	p.Y.Tick.Marker = niceTicks{}
	var legend []legendItem
	if s := firstSeries(r); s != nil {
		if xys := d.rates(s, s.Offered); xys != nil {
			off := offeredArea(xys)
			p.Add(line{off})
			legend = append(legend, legendItem{"offered (first attempts)", off})
		}
	}
	shades, faultItems := clusterShades(r, d.tb)
	addShades(p, shades) // over the offered area, under the lines
	for i := range r.Results {
		res := &r.Results[i]
		xys := d.rates(&res.Series, res.Series.Admitted)
		if xys == nil {
			continue
		}
		l := stepLine(xys, algStyle(i, i, len(r.Results)))
		p.Add(line{l})
		legend = append(legend, legendItem{res.Label, l})
	}
	lines, items := limitLines(r)
	for _, h := range lines {
		p.Add(h)
	}
	legend = append(legend, items...)
	legend = append(legend, faultItems...)
	p.Y.Min = 0
	p.Y.Max = math.Max(p.Y.Max*1.05, 1)
	sub := subtitle(r) + " (admitted by release time; offered by arrival)"
	if r.Keys > 1 {
		sub += "; all keys together (the per-key limit: window chart)"
	}
	return &figure{
		title:    "Requests admitted to the backend, per second",
		subtitle: sub,
		legend:   legend,
		width:    720, height: 432,
		body: func(c draw.Canvas) { p.Draw(c) },
	}
}

// multiplesChart: one panel per algorithm with offered, admitted, delayed
// and rejected requests per second, the same axes on every panel.
func multiplesChart(r *sim.Report) *figure {
	// as many steps a line as the rate chart has across all panels of a row
	d, ok := seriesDrawOf(r, maxDrawPoints/panelCols(len(r.Results)))
	if !ok {
		return nil
	}
	type panel struct {
		label string
		lines []*plotter.Line
	}
	var (
		panels []panel
		xmin   = math.Inf(1)
		xmax   = math.Inf(-1)
		ymax   = 1.0
	)
	styles := []draw.LineStyle{
		{Color: admitColor, Width: 1.5},
		{Color: delayColor, Width: 1.2},
		{Color: rejectColor, Width: 1.2},
	}
	var legend []legendItem
	for i := range r.Results {
		res := &r.Results[i]
		s := &res.Series
		if s.BucketNs <= 0 {
			continue
		}
		pn := panel{label: res.Label}
		if xys := d.rates(s, s.Offered); xys != nil {
			pn.lines = append(pn.lines, offeredArea(xys))
		} else {
			pn.lines = append(pn.lines, nil)
		}
		for j, col := range [][]int64{s.Admitted, s.Delayed, s.Rejected} {
			if xys := d.rates(s, col); xys != nil {
				pn.lines = append(pn.lines, stepLine(xys, styles[j]))
			} else {
				pn.lines = append(pn.lines, nil)
			}
		}
		for _, l := range pn.lines {
			if l == nil {
				continue
			}
			x0, x1, _, y1 := plotter.XYRange(l.XYs)
			xmin, xmax, ymax = math.Min(xmin, x0), math.Max(xmax, x1), math.Max(ymax, y1)
		}
		if legend == nil {
			legend = []legendItem{
				{"offered (first attempts, by arrival)", offeredArea(nil)},
				{"admitted (by release to the backend)", stepLine(nil, styles[0])},
				{"delayed (by arrival)", stepLine(nil, styles[1])},
				{"rejected (attempts, by arrival)", stepLine(nil, styles[2])},
			}
		}
		panels = append(panels, pn)
	}
	if len(panels) == 0 {
		return nil
	}
	cols := panelCols(len(panels))
	rows := (len(panels) + cols - 1) / cols
	plots := make([]*plot.Plot, len(panels))
	var series []Series
	for _, pn := range panels {
		for j, l := range pn.lines {
			if l != nil {
				series = append(series, seriesOf(pn.label, []string{"offered", "admitted", "delayed", "rejected"}[j], l.XYs))
			}
		}
	}
	for i, pn := range panels {
		p := newPlot()
		p.Title.Text = pn.label
		for _, l := range pn.lines {
			if l != nil {
				p.Add(line{l})
			}
		}
		p.X.Min, p.X.Max = xmin, xmax
		p.X.Tick.Marker = d.tb.ticks()
		p.Y.Min, p.Y.Max = 0, ymax*1.05
		if i/cols == rows-1 || i+cols >= len(panels) {
			p.X.Label.Text = d.tb.label
		}
		if i%cols == 0 {
			p.Y.Label.Text = "requests/s"
		}
		plots[i] = p
	}
	return &figure{
		series:   series,
		title:    "Offered, admitted, delayed and rejected, per second, per algorithm",
		subtitle: subtitle(r) + "; same axes on every panel, " + d.label(),
		legend:   legend,
		width:    720,
		height:   vg.Length(70 + 170*rows),
		body:     func(c draw.Canvas) { drawPanels(c, plots, cols) },
	}
}

// panelCols is how many columns a grid of n panels has: n up to 3, then as
// square a grid as fits them.
func panelCols(n int) int {
	if n <= 3 {
		return max(n, 1)
	}
	return int(math.Ceil(math.Sqrt(float64(n))))
}
