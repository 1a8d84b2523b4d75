package output

import (
	"image/color"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratesim/ratesim/sim"
)

// windowColors are the bars of each report window, longest first as the
// report lists them: dark for W, light for W/10.
var windowColors = []color.Color{
	rgb(0x1f77b4), rgb(0x9ecae1), rgb(0xff7f0e), rgb(0xfdae6b), rgb(0x2ca02c), rgb(0xa1d99b),
}

// peaksChart: peak/limit for every algorithm and every report window, as
// grouped bars on a logarithmic axis, the limit (ratio 1.0) as a line.
// The axis is logarithmic so that a 2.0x reads as plainly as a 50x beside
// it: each doubling is the same height, and the ticks go 1x, 2x, 5x, 10x.
// With several keys the limit is per key, and the bars are the key peaks:
// the most one key released, over its limit (every key together is held
// against no limit, and shows in the rate chart).
//
// The policy's own window is drawn against its limit; the report's other
// windows only when the scenario named them in report.windows
// (shownWindows), grey and labelled as observation windows: a
// count over a shorter window held to the limit pro rata is no breach (a
// leaky bucket at 5/s releases one request in some 100ms, "2x" a tenth of
// the limit, by design).
func peaksChart(r *sim.Report) *figure {
	ws, observed := shownWindows(r)
	if len(ws) == 0 {
		return nil
	}
	perKey := r.Keys > 1
	n := len(r.Results)
	p := newPlot()
	p.Y.Label.Text = "peak / limit over the window (log scale)"
	if perKey {
		p.Y.Label.Text = "one key's peak / its limit over the window (log scale)"
	}
	const width = 720
	group := vg.Length(width-120) / vg.Length(n)
	bar := min(28, group*0.8/vg.Length(len(ws)))
	var legend []legendItem
	top, low := 1.0, 1.0 // the largest ratio and the smallest above 0
	labelSty := textStyle(sansFont, 7)
	labelSty.XAlign, labelSty.YAlign = draw.XCenter, draw.YBottom
	type barSet struct {
		b     *logBars
		xys   plotter.XYs
		texts []string
	}
	var sets []barSet
	for j, v := range ws {
		obs := observed[v]
		col := windowColors[j%len(windowColors)]
		if obs {
			col = observationColors[j%len(observationColors)]
		}
		lb := &logBars{values: make([]float64, n), width: bar, color: col,
			line: draw.LineStyle{Color: color.Gray{Y: 0x44}, Width: 0.5}}
		lb.offset = bar * (vg.Length(j) - vg.Length(len(ws)-1)/2)
		var set barSet
		for i := range r.Results {
			pk, ok := findPeak(r.Results[i].Peaks, v)
			if perKey {
				var kp sim.KeyPeak
				kp, ok = findKeyPeak(r.Results[i].KeyPeaks, v)
				pk.Ratio, pk.Count = kp.Ratio, kp.Count
			}
			if !ok {
				continue
			}
			val := float64(pk.Ratio)
			lb.values[i] = val
			top = math.Max(top, val)
			if val > 0 {
				low = math.Min(low, val)
			}
			set.xys = append(set.xys, plotter.XY{X: float64(i), Y: val})
			if obs { // a count, not a verdict
				set.texts = append(set.texts, strconv.FormatInt(pk.Count, 10))
			} else {
				set.texts = append(set.texts, FormatRatio(val))
			}
		}
		set.b = lb
		sets = append(sets, set)
		what := "peak in any "
		if perKey {
			what = "one key's peak in any "
		}
		if obs {
			legend = append(legend, legendItem{"observation window " + FormatDuration(time.Duration(v)) +
				" (no limit of its own; height against " + limitPer(r.Limit, v) + " pro rata, label the count)", lb})
			continue
		}
		legend = append(legend, legendItem{what + FormatDuration(time.Duration(v)) + " (limit " +
			limitPer(r.Limit, v) + ")", lb})
	}
	ymin, ymax := logAxisRange(low, top)
	for _, set := range sets {
		set.b.floor = ymin
		p.Add(set.b)
		if len(set.xys) == 0 {
			continue
		}
		for k := range set.xys {
			set.xys[k].Y = math.Max(set.xys[k].Y, ymin) // a 0 is labelled on the axis
		}
		styles := make([]text.Style, len(set.xys))
		for k := range styles {
			styles[k] = labelSty
		}
		p.Add(&plotter.Labels{XYs: set.xys, Labels: set.texts, TextStyle: styles,
			Offset: vg.Point{X: set.b.offset, Y: 2}})
	}
	limit := &hline{y: 1, style: draw.LineStyle{Color: rejectColor, Width: 1.2, Dashes: []vg.Length{5, 3}}}
	p.Add(limit)
	legend = append(legend, legendItem{"the limit (ratio 1.0)", limit})
	names := make([]string, n)
	long := false
	for i := range r.Results {
		names[i] = r.Results[i].Label
		long = long || p.X.Tick.Label.Width(names[i]) > group*0.95
	}
	p.NominalX(names...)
	if long {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop
	}
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = ratioTicks{}
	p.Y.Min, p.Y.Max = ymin, ymax
	sub := subtitle(r) + "; peaks are of what reached the backend"
	title := "Peak rate reaching the backend, as a multiple of the limit"
	if perKey {
		sub += ", the busiest key of each algorithm"
		title = "Peak rate of one key reaching the backend, as a multiple of its limit"
	}
	return &figure{
		title:    title,
		subtitle: sub,
		legend:   legend,
		width:    width, height: 432,
		body: func(c draw.Canvas) { p.Draw(c) },
		plot: p,
	}
}

// observationColors are the bars of observation windows: greys, never a
// colour that reads as a verdict.
var observationColors = []color.Color{rgb(0xbdbdbd), rgb(0x969696), rgb(0xd9d9d9)}

// ratioSteps are the ticks of a ratio axis in each decade: 1x, 2x, 5x.
var ratioSteps = []float64{1, 2, 5}

// logAxisRange is the range of a logarithmic ratio axis for ratios from
// low (the smallest above 0) to top: from the 1-2-5 step at or below
// low/1.2, at most 0.5, to the whole multiple of a power of ten at or
// above top*1.5 (room for the bars' labels, no more: a 2.0x reaches to
// 3x, not 5x), at least 2.
func logAxisRange(low, top float64) (ymin, ymax float64) {
	ymin = math.Min(0.5, stepBelow(low/1.2))
	ymax = math.Max(2, wholeAbove(top*1.5))
	return ymin, ymax
}

// wholeAbove is the smallest k*10^e (k from 1 to 9) at or above v > 0:
// one of the axis's ticks (ratioTicks).
func wholeAbove(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	return math.Ceil(v/d*(1-1e-9)) * d
}

// stepBelow is the largest 1-2-5 value at or below v > 0.
func stepBelow(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	best := d
	for _, s := range ratioSteps {
		if s*d <= v*(1+1e-9) {
			best = s * d
		}
	}
	return best
}

// ratioTicks label a logarithmic ratio axis at 1x, 2x and 5x of every
// decade ("0.5x", "1x", "2x", "50x"), with unlabelled minor ticks at the
// other whole multiples.
type ratioTicks struct{}

func (ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi*(1+1e-9); e++ {
		d := math.Pow(10, e)
		for k := 1; k <= 9; k++ {
			v := float64(k) * d
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if k == 1 || k == 2 || k == 5 {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64) + "x"
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// logBars are the bars of one report window on a logarithmic axis, where
// a bar cannot start at 0: each rises from floor, the bottom of the axis,
// to its value (none for a 0), at x = its index + offset.
type logBars struct {
	values []float64
	floor  float64
	width  vg.Length
	offset vg.Length
	color  color.Color
	line   draw.LineStyle
}

func (b *logBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, v := range b.values {
		if v <= b.floor {
			continue
		}
		x := trX(float64(i)) + b.offset
		rect := vg.Rectangle{Min: vg.Point{X: x - b.width/2, Y: trY(b.floor)}, Max: vg.Point{X: x + b.width/2, Y: trY(v)}}
		poly := c.ClipPolygonY([]vg.Point{rect.Min, {X: rect.Min.X, Y: rect.Max.Y}, rect.Max, {X: rect.Max.X, Y: rect.Min.Y}})
		c.FillPolygon(b.color, poly)
		outline := c.ClipLinesY(append(poly, poly[0]))
		c.StrokeLines(b.line, outline...)
	}
}

func (b *logBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = math.Inf(1), math.Inf(-1)
	for _, v := range b.values {
		if v > 0 {
			ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
		}
	}
	return 0, float64(len(b.values) - 1), ymin, ymax
}

func (b *logBars) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(b.color, c.ClipPolygonY(pts))
	c.StrokeLines(b.line, append(pts, pts[0]))
}

// delayChart: the CDF of the delays of admitted requests, for every
// algorithm that delayed any.
func delayChart(r *sim.Report) *figure {
	var maxNs int64
	for i := range r.Results {
		res := &r.Results[i]
		if res.Delayed > 0 && len(res.Delays) > 0 {
			maxNs = max(maxNs, res.Delays[len(res.Delays)-1].DelayNs, res.DelayNs.Max)
		}
	}
	if maxNs <= 0 {
		return nil
	}
	unit, unitNs := unitOf(maxNs)
	xmax := float64(maxNs) / unitNs * 1.04
	p := newPlot()
	p.X.Label.Text = "delay (" + unit + ")"
	p.Y.Label.Text = "share of admitted requests delayed at most this"
	var legend []legendItem
	var delaying []int
	for i := range r.Results {
		if r.Results[i].Delayed > 0 && len(r.Results[i].Delays) > 0 {
			delaying = append(delaying, i)
		}
	}
	for rank, i := range delaying {
		res := &r.Results[i]
		xys := cdfPoints(res.Delays, unitNs, xmax)
		l := stepLine(xys, algStyle(i, rank, len(delaying)))
		p.Add(line{l})
		legend = append(legend, legendItem{res.Label + " (p50 " + roundDuration(res.DelayNs.P50) +
			", p99 " + roundDuration(res.DelayNs.P99) + ", max " + roundDuration(res.DelayNs.Max) + ")", l})
	}
	p.X.Min, p.X.Max = 0, xmax
	p.Y.Min, p.Y.Max = 0, 1.02
	return &figure{
		title:    "Delay of admitted requests (cumulative distribution)",
		subtitle: subtitle(r) + "; accepted requests count as a delay of 0",
		legend:   legend,
		width:    720, height: 432,
		body: func(c draw.Canvas) { p.Draw(c) },
	}
}

// cdfPoints returns the points of a CDF step line of a delay distribution
// (sorted by delay), in units of unitNs, ending at xmax. Past maxDrawPoints
// distinct delays only every k-th step is kept (and the last): the line
// then passes through the exact CDF at every kept point.
func cdfPoints(dist []sim.DelayCount, unitNs, xmax float64) plotter.XYs {
	var total int64
	for _, dc := range dist {
		total += dc.Count
	}
	k := (len(dist) + maxDrawPoints - 1) / maxDrawPoints
	xys := make(plotter.XYs, 0, len(dist)/max(k, 1)+3)
	if dist[0].DelayNs > 0 {
		xys = append(xys, plotter.XY{X: 0, Y: 0})
	}
	var cum int64
	for i, dc := range dist {
		cum += dc.Count
		if i%k == k-1 || i == len(dist)-1 {
			xys = append(xys, plotter.XY{X: float64(dc.DelayNs) / unitNs, Y: float64(cum) / float64(total)})
		}
	}
	xys = append(xys, plotter.XY{X: xmax, Y: 1})
	return xys
}

// roundDuration writes ns to three significant digits for a legend:
// "544ms" for 543.666667ms.
func roundDuration(ns int64) string {
	scale := int64(1)
	for v := ns; v >= 1000; v /= 10 {
		scale *= 10
	}
	return FormatDuration(time.Duration((ns + scale/2) / scale * scale))
}
