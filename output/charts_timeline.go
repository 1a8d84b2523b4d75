package output

import (
	"image/color"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/intmath"
	"github.com/ratesim/ratesim/sim"
)

// releaseDrop is how far below its row a delayed request's release is
// drawn, in rows: the lines from arrivals to releases fan out beneath the
// row instead of lying on top of each other.
const releaseDrop = 0.4

// Decisions at one instant are stacked at most maxStack rows above their
// row, at most maxStep apart.
const (
	maxStack = 0.5
	maxStep  = 0.12
)

// maxBoundaries is the most window boundaries the timeline draws; past it
// only every k-th is drawn.
const maxBoundaries = 80

// rowsOf says what the timeline's rows are.
func rowsOf(r *sim.Report) string {
	if clustered(r) {
		return "; one row per node of each algorithm on the cluster"
	}
	return "; one row per algorithm"
}

// timelineChart: every decision of a small run as a mark at its arrival
// time, one row per algorithm (the first at the top), coloured by verdict,
// delayed ones joined to their release, window boundaries drawn.
func timelineChart(r *sim.Report, decisions [][]sim.Decision) *figure {
	if len(decisions) != len(r.Results) {
		return nil
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, ds := range decisions {
		if len(ds) > MaxTimelineDecisions {
			return nil
		}
		for i := range ds {
			t := int64(ds[i].Time)
			lo, hi = min(lo, t), max(hi, t+int64(ds[i].Delay))
		}
	}
	if lo > hi {
		return nil // no decisions
	}
	tb := timeBaseOf(r)
	w := r.Limit.PerNs
	// the span of the decisions and their releases, with a margin
	span := max(hi-lo, int64(time.Millisecond))
	from, to := lo-span/20, hi+span/20

	n := len(r.Results)
	p := newPlot()
	p.X.Label.Text = tb.label
	p.X.Tick.Marker = tb.ticks()
	row := func(i int) float64 { return float64(n - 1 - i) }
	var acc, del, rej, rel plotter.XYs
	var lines [][2]plotter.XY
	for i, ds := range decisions {
		for j := 0; j < len(ds); {
			// decisions at one instant are stacked upwards from the row,
			// in processing order
			same := 1
			for j+same < len(ds) && ds[j+same].Time == ds[j].Time {
				same++
			}
			dy := 0.0
			if same > 1 {
				dy = min(maxStep, maxStack/float64(same-1))
			}
			for k := range same {
				d := &ds[j+k]
				x := tb.x(int64(d.Time))
				y := row(i) + float64(k)*dy
				switch d.Verdict {
				case algorithms.Accept:
					acc = append(acc, plotter.XY{X: x, Y: y})
				case algorithms.Delay:
					del = append(del, plotter.XY{X: x, Y: y})
					end := plotter.XY{X: tb.x(int64(d.Time + d.Delay)), Y: row(i) - releaseDrop}
					rel = append(rel, end)
					lines = append(lines, [2]plotter.XY{{X: x, Y: y}, end})
				default:
					rej = append(rej, plotter.XY{X: x, Y: y})
				}
			}
			j += same
		}
	}
	fan := &segments{lines: lines, style: draw.LineStyle{Color: withAlpha(delayColor, 0x99), Width: 0.7}}
	releases := &plotter.Scatter{XYs: rel, GlyphStyle: draw.GlyphStyle{Color: delayColor, Radius: 1.6, Shape: draw.RingGlyph{}}}
	accepted := &plotter.Scatter{XYs: acc, GlyphStyle: draw.GlyphStyle{Color: acceptColor, Radius: 2.6, Shape: draw.CircleGlyph{}}}
	delayed := &plotter.Scatter{XYs: del, GlyphStyle: draw.GlyphStyle{Color: delayColor, Radius: 3, Shape: draw.TriangleGlyph{}}}
	rejected := &plotter.Scatter{XYs: rej, GlyphStyle: draw.GlyphStyle{Color: rejectColor, Radius: 2.6, Shape: draw.CrossGlyph{}}}

	var legend []legendItem
	if w > 0 {
		k := max(1, (to-from)/w/maxBoundaries+1)
		var xs []float64
		for b := intmath.FloorDiv(from, w*k) * w * k; b <= to; b += w * k {
			if b >= from {
				xs = append(xs, tb.x(b))
			}
		}
		bounds := &vlines{xs: xs, style: draw.LineStyle{Color: boundaryGray, Width: 1, Dashes: []vg.Length{4, 3}}}
		p.Add(bounds)
		text := "window boundary (every " + FormatDuration(time.Duration(w*k)) + ")"
		if k > 1 {
			text = "every " + ordinal(k) + " window boundary (" + FormatDuration(time.Duration(w*k)) + ")"
		}
		legend = append(legend, legendItem{text, bounds})
	}
	p.Add(fan, releases, accepted, delayed, rejected)
	legend = append(legend,
		legendItem{"accepted", accepted},
		legendItem{"delayed, joined to its release", composite{fan, delayed, releases}},
		legendItem{"rejected", rejected},
	)
	names := make([]string, n)
	for i := range r.Results {
		names[n-1-i] = r.Results[i].Label
	}
	p.NominalY(names...)
	p.X.Min, p.X.Max = tb.x(from), tb.x(to)
	p.Y.Min, p.Y.Max = -releaseDrop-0.2, float64(n)-1+maxStack+0.2
	return &figure{
		title:    "Every decision at its arrival time",
		subtitle: subtitle(r) + rowsOf(r),
		legend:   legend,
		width:    864,
		height:   vg.Length(120 + 48*max(n, 3)),
		body:     func(c draw.Canvas) { p.Draw(c) },
	}
}

// segments are straight lines between pairs of points.
type segments struct {
	lines [][2]plotter.XY
	style draw.LineStyle
}

func (s *segments) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, l := range s.lines {
		pts := []vg.Point{{X: trX(l[0].X), Y: trY(l[0].Y)}, {X: trX(l[1].X), Y: trY(l[1].Y)}}
		c.StrokeLines(s.style, c.ClipLinesXY(pts)...)
	}
}

func (s *segments) Thumbnail(c *draw.Canvas) {
	c.StrokeLine2(s.style, c.Min.X, c.Max.Y, c.Max.X, c.Min.Y)
}

// composite is a legend thumbnail made of several.
type composite []plot.Thumbnailer

func (cs composite) Thumbnail(c *draw.Canvas) {
	// the first across the whole box, the second at its left, the third
	// at its right
	cs[0].Thumbnail(c)
	left, right := *c, *c
	left.Max.X = c.Min.X + (c.Max.X-c.Min.X)/3
	right.Min.X = c.Max.X - (c.Max.X-c.Min.X)/3
	left.Min.Y = (c.Min.Y + c.Max.Y) / 2
	right.Max.Y = (c.Min.Y + c.Max.Y) / 2
	if len(cs) > 1 {
		cs[1].Thumbnail(&left)
	}
	if len(cs) > 2 {
		cs[2].Thumbnail(&right)
	}
}

// withAlpha is c with opacity a.
func withAlpha(c color.RGBA, a uint8) color.NRGBA {
	return color.NRGBA{R: c.R, G: c.G, B: c.B, A: a}
}

// ordinal writes 2nd, 3rd, 10th.
func ordinal(k int64) string {
	s := strconv.FormatInt(k, 10)
	switch {
	case k%100 >= 11 && k%100 <= 13:
		return s + "th"
	case k%10 == 1:
		return s + "st"
	case k%10 == 2:
		return s + "nd"
	case k%10 == 3:
		return s + "rd"
	}
	return s + "th"
}
