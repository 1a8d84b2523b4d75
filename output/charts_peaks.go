package output

import (
	"image/color"
	"math"
	"time"

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
// grouped bars, the limit (ratio 1.0) as a line. With several keys the
// limit is per key, and the bars are the key peaks: the most one key
// released, over its limit (every key together is held against no limit,
// and shows in the rate chart).
func peaksChart(r *sim.Report) *figure {
	ws := windows(r)
	if len(ws) == 0 {
		return nil
	}
	perKey := r.Keys > 1
	n := len(r.Results)
	p := newPlot()
	p.Y.Label.Text = "peak / limit over the window"
	if perKey {
		p.Y.Label.Text = "one key's peak / its limit over the window"
	}
	const width = 720
	group := vg.Length(width-120) / vg.Length(n)
	bar := min(28, group*0.8/vg.Length(len(ws)))
	var legend []legendItem
	top := 1.0
	labelSty := textStyle(sansFont, 7)
	labelSty.XAlign, labelSty.YAlign = draw.XCenter, draw.YBottom
	for j, v := range ws {
		vals := make(plotter.Values, n)
		var xys plotter.XYs
		var texts []string
		for i := range r.Results {
			pk, ok := findPeak(r.Results[i].Peaks, v)
			if perKey {
				var kp sim.KeyPeak
				kp, ok = findKeyPeak(r.Results[i].KeyPeaks, v)
				pk.Ratio = kp.Ratio
			}
			if !ok {
				continue
			}
			vals[i] = float64(pk.Ratio)
			top = math.Max(top, vals[i])
			xys = append(xys, plotter.XY{X: float64(i), Y: vals[i]})
			texts = append(texts, FormatRatio(vals[i]))
		}
		b, err := plotter.NewBarChart(vals, bar)
		if err != nil {
			return nil
		}
		b.Color = windowColors[j%len(windowColors)]
		b.LineStyle = draw.LineStyle{Color: color.Gray{Y: 0x44}, Width: 0.5}
		b.Offset = bar * (vg.Length(j) - vg.Length(len(ws)-1)/2)
		p.Add(b)
		what := "peak in any "
		if perKey {
			what = "one key's peak in any "
		}
		legend = append(legend, legendItem{what + FormatDuration(time.Duration(v)) + " (limit " +
			limitPer(r.Limit, v) + ")", b})
		if len(xys) > 0 {
			styles := make([]text.Style, len(xys))
			for k := range styles {
				styles[k] = labelSty
			}
			p.Add(&plotter.Labels{XYs: xys, Labels: texts, TextStyle: styles,
				Offset: vg.Point{X: b.Offset, Y: 2}})
		}
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
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	}
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.Y.Min, p.Y.Max = 0, top*1.12
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
	}
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
