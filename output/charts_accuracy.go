package output

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratesim/ratesim/sim"
)

// AccuracyRun is one run of an accuracy sweep over limits: its limit
// (named as the axis shows it, e.g. "10/1m") and its report, whose rows
// were held against a baseline (sim.Result.Baseline).
type AccuracyRun struct {
	Limit  string
	Report *sim.Report
}

// AccuracyChart draws how far each row strays from the baseline against
// the limit: for each row, the share of first attempts it decided
// differently (solid) and the share it wrongly allowed (dashed), one
// point per run, the runs evenly spaced along the x axis in the order
// given and labelled by their limit; a grey line marks reference, a share
// in percent to hold them against (0 draws none). The file is named
// "accuracy". Shares are exact ratios of the counts, drawn as floats.
func AccuracyChart(runs []AccuracyRun, subtitle string, reference float64, referenceText string) Chart {
	type series struct {
		label          string
		index          int
		differs, wrong plotter.XYs
	}
	var rows []*series
	find := func(label string, i int) *series {
		for _, s := range rows {
			if s.label == label {
				return s
			}
		}
		s := &series{label: label, index: i}
		rows = append(rows, s)
		return s
	}
	var ticks []plot.Tick
	ymax := reference
	base := ""
	for x, run := range runs {
		ticks = append(ticks, plot.Tick{Value: float64(x), Label: run.Limit})
		for i := range run.Report.Results {
			res := &run.Report.Results[i]
			b := res.Baseline
			if b == nil || b.Compared == 0 {
				continue
			}
			base = b.Label
			s := find(res.Label, i)
			d := 100 * float64(b.Differs) / float64(b.Compared)
			w := 100 * float64(b.WronglyAllowed) / float64(b.Compared)
			s.differs = append(s.differs, plotter.XY{X: float64(x), Y: d})
			s.wrong = append(s.wrong, plotter.XY{X: float64(x), Y: w})
			ymax = math.Max(ymax, d)
		}
	}
	p := newPlot()
	p.X.Label.Text = "limit per client (requests per window)"
	p.Y.Label.Text = "% of requests decided unlike " + base
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.3, float64(len(runs)-1)+0.3
	p.Y.Min, p.Y.Max = 0, math.Max(ymax*1.1, 0.01)
	var legend []legendItem
	for rank, s := range rows {
		sty := algStyle(s.index, rank, len(rows))
		l := &plotter.Line{XYs: s.differs, LineStyle: sty}
		dashed := sty
		dashed.Dashes = []vg.Length{5, 3}
		dashed.Width = 1.2
		lw := &plotter.Line{XYs: s.wrong, LineStyle: dashed}
		dots, _ := plotter.NewScatter(s.differs)
		dots.GlyphStyle = draw.GlyphStyle{Color: sty.Color, Radius: 3, Shape: draw.CircleGlyph{}}
		p.Add(line{l}, line{lw}, dots)
		legend = append(legend, legendItem{s.label + ": differs", l}, legendItem{s.label + ": wrongly allowed", lw})
	}
	if reference > 0 {
		ref := &hline{y: reference, style: draw.LineStyle{Color: color.Gray{Y: 0x80}, Width: 1, Dashes: []vg.Length{2, 2}}}
		p.Add(ref)
		legend = append(legend, legendItem{referenceText, ref})
	}
	var drawn []Series
	for _, s := range rows {
		drawn = append(drawn, seriesOf("", s.label+": differs", s.differs), seriesOf("", s.label+": wrongly allowed", s.wrong))
	}
	fig := figure{
		series:   drawn,
		title:    "Disagreement with " + base + " against the limit",
		subtitle: subtitle,
		legend:   legend,
		width:    720,
		height:   405,
		body:     func(c draw.Canvas) { p.Draw(c) },
	}
	return Chart{Name: "accuracy", Title: fig.title, fig: fig}
}
