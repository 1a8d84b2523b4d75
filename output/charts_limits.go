package output

import (
	"image/color"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/sim"
)

// limitsChart: the limit of every adaptive concurrency row over time
// (backend.Series' LimitMin, LimitMean and LimitMax, docs/backend.md), one
// plot: each row's time-weighted mean limit per step as a line in its
// algorithm's colour, over a band of its colour from the least to the
// greatest limit in force in the step, the backend's faults shaded behind.
// nil when no row has a limit.
//
// Why one plot: the limits are all concurrency limits on the same
// backend, in requests in flight, so one axis compares them directly
// (which one learned the lower limit, which reacted first to a fault or a
// load step); the band shows how far a limit moved within a step without
// hiding the others' lines.
func limitsChart(r *sim.Report) *figure {
	var rows []int
	n := 0
	for i := range r.Results {
		if b := r.Results[i].Backend; b != nil && len(b.Series.LimitMean) > 0 {
			rows = append(rows, i)
			n = max(n, len(b.Series.LimitMean))
		}
	}
	if len(rows) == 0 {
		return nil
	}
	tb := timeBaseOf(r)
	first := r.Results[rows[0]].Backend
	stepNs := first.Series.BucketNs * int64(drawK(n, maxDrawPoints))
	p := newPlot()
	p.Y.Label.Text = "concurrency limit (requests in flight)"
	p.X.Label.Text = tb.label
	p.X.Tick.Marker = tb.ticks()
	var shades []faultShade
	for _, f := range first.FaultWindows {
		shades = append(shades, faultShade{x0: tb.x(f.StartNs), x1: faultEndX(tb, f.EndNs), tint: faultTints[f.Type]})
	}
	p.Add(&faultShades{windows: shades})
	var legend []legendItem
	ymax := 1.0
	for rank, i := range rows {
		res := &r.Results[i]
		mean, lo, hi := limitSteps(&res.Backend.Series, tb, stepNs)
		if len(mean) == 0 {
			continue
		}
		for _, pt := range hi {
			ymax = math.Max(ymax, pt.Y)
		}
		sty := algStyle(i, rank, len(rows))
		band := &stepBand{lo: lo, hi: hi, fill: tint(sty.Color, 0x40)}
		l := stepLine(mean, sty)
		p.Add(band, line{l})
		legend = append(legend, legendItem{res.Label, l})
	}
	p.Y.Min, p.Y.Max = 0, ymax*1.05
	legend = append(legend, legendItem{"band: least to greatest limit in the step", &stepBand{fill: color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0x40}}})
	for _, t := range faultOrder {
		for _, f := range first.FaultWindows {
			if f.Type == t {
				legend = append(legend, legendItem{"fault: " + string(t), &faultShade{tint: faultTints[t]}})
				break
			}
		}
	}
	return &figure{
		title:    "Adaptive limits over time",
		subtitle: subtitle(r) + "; " + FormatDuration(time.Duration(stepNs)) + " steps, the mean limit weighted by time",
		legend:   legend,
		width:    720,
		height:   405,
		body:     func(c draw.Canvas) { p.Draw(c) },
	}
}

// limitSteps are the lines of a limit series drawn in steps of stepNs (a
// whole number of its buckets): each step's mean of its buckets' means
// (they are equally long; buckets before the first limit left out), and
// the least and greatest limit in the step, each line closed at the
// series' end. Empty when the series has no limit.
func limitSteps(s *backend.Series, tb timeBase, stepNs int64) (mean, lo, hi plotter.XYs) {
	k := max(1, int(stepNs/s.BucketNs))
	for b := 0; b < len(s.LimitMean); b += k {
		e := min(b+k, len(s.LimitMean))
		sum, cnt := 0.0, 0
		var mn, mx int64 = math.MaxInt64, 0
		for j := b; j < e; j++ {
			if math.IsNaN(s.LimitMean[j]) {
				continue
			}
			sum += s.LimitMean[j]
			cnt++
			mn, mx = min(mn, s.LimitMin[j]), max(mx, s.LimitMax[j])
		}
		if cnt == 0 {
			continue // before the first decision
		}
		x := tb.x(s.StartNs + int64(b)*s.BucketNs)
		mean = append(mean, plotter.XY{X: x, Y: sum / float64(cnt)})
		lo = append(lo, plotter.XY{X: x, Y: float64(mn)})
		hi = append(hi, plotter.XY{X: x, Y: float64(mx)})
	}
	if len(mean) == 0 {
		return nil, nil, nil
	}
	end := tb.x(s.StartNs + int64(len(s.LimitMean))*s.BucketNs)
	for _, l := range []*plotter.XYs{&mean, &lo, &hi} {
		*l = append(*l, plotter.XY{X: end, Y: (*l)[len(*l)-1].Y})
	}
	return mean, lo, hi
}

// tint is c made translucent.
func tint(c color.Color, alpha uint8) color.NRGBA {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: alpha}
}

// stepBand fills the area between two step lines that share their X
// values: lo and hi hold, for each step, its start and value, the last
// point closing the last step.
type stepBand struct {
	lo, hi plotter.XYs
	fill   color.Color
}

func (s *stepBand) Plot(c draw.Canvas, p *plot.Plot) {
	if len(s.hi) < 2 {
		return
	}
	trX, trY := p.Transforms(&c)
	var path vg.Path
	path.Move(vg.Point{X: trX(s.hi[0].X), Y: trY(s.hi[0].Y)})
	for i := 0; i+1 < len(s.hi); i++ {
		path.Line(vg.Point{X: trX(s.hi[i].X), Y: trY(s.hi[i].Y)})
		path.Line(vg.Point{X: trX(s.hi[i+1].X), Y: trY(s.hi[i].Y)})
	}
	for i := len(s.lo) - 2; i >= 0; i-- {
		path.Line(vg.Point{X: trX(s.lo[i+1].X), Y: trY(s.lo[i].Y)})
		path.Line(vg.Point{X: trX(s.lo[i].X), Y: trY(s.lo[i].Y)})
	}
	path.Close()
	c.SetColor(s.fill)
	c.Fill(path)
}

func (s *stepBand) Thumbnail(c *draw.Canvas) {
	c.SetColor(s.fill)
	c.Fill(c.Rectangle.Path())
}
