package output

import (
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratesim/ratesim/sim"
)

// extraChart: for the rows on a cluster, what each admitted beyond one
// exact limiter on the same traffic, as a share of what that limiter
// admitted (a bar per row, labelled with its mode, below zero when the row
// refused more), and, in a second panel, the store operations each took
// per request: the price of the consistency it bought.
func extraChart(r *sim.Report) *figure {
	var rows []*sim.Result
	for i := range r.Results {
		if r.Results[i].Cluster != nil {
			rows = append(rows, &r.Results[i])
		}
	}
	if len(rows) == 0 {
		return nil
	}
	n := len(rows)
	const width = 720
	group := vg.Length(width-120) / vg.Length(n)
	bar := min(36, group*0.6)
	names := make([]string, n)
	extra := make(plotter.Values, n)
	ops := make(plotter.Values, n)
	var extraText, opsText []string
	var extraXY, opsXY plotter.XYs
	lo, hi, opsTop := 0.0, 1.0, 1.0
	for i, res := range rows {
		c := res.Cluster
		names[i] = res.Label + "\n" + modeCell(c)
		if c.ReferenceAdmitted > 0 {
			extra[i] = 100 * float64(c.ExtraAdmitted) / float64(c.ReferenceAdmitted)
		}
		ops[i] = float64(c.StoreOpsPerAttempt)
		lo, hi = math.Min(lo, extra[i]), math.Max(hi, extra[i])
		opsTop = math.Max(opsTop, ops[i])
		extraXY = append(extraXY, plotter.XY{X: float64(i), Y: math.Max(extra[i], 0)})
		extraText = append(extraText, signed(c.ExtraAdmitted))
		opsXY = append(opsXY, plotter.XY{X: float64(i), Y: ops[i]})
		opsText = append(opsText, formatFixed(ops[i], 2))
	}
	labelSty := textStyle(sansFont, 7)
	labelSty.XAlign, labelSty.YAlign = draw.XCenter, draw.YBottom
	panel := func(vals plotter.Values, col color.Color, ylabel string, xys plotter.XYs, texts []string, ymin, ymax float64) *plot.Plot {
		p := newPlot()
		p.Y.Label.Text = ylabel
		b, err := plotter.NewBarChart(vals, bar)
		if err != nil {
			return nil
		}
		b.Color = col
		b.LineStyle = draw.LineStyle{Color: color.Gray{Y: 0x44}, Width: 0.5}
		p.Add(b)
		styles := make([]text.Style, len(xys))
		for k := range styles {
			styles[k] = labelSty
		}
		p.Add(&plotter.Labels{XYs: xys, Labels: texts, TextStyle: styles, Offset: vg.Point{Y: 2}})
		p.NominalX(names...)
		p.X.Min, p.X.Max = -0.5, float64(n)-0.5
		p.Y.Min, p.Y.Max = ymin, ymax
		return p
	}
	span := hi - lo
	pe := panel(extra, rgb(0xd62728), "extra admitted, % of one exact limiter's", extraXY, extraText,
		lo-0.05*span, hi+0.12*span)
	po := panel(ops, rgb(0x1f77b4), "store operations per request", opsXY, opsText, 0, opsTop*1.15)
	if pe == nil || po == nil {
		return nil
	}
	zero := &hline{y: 0, style: draw.LineStyle{Color: color.Gray{Y: 0x44}, Width: 0.8}}
	pe.Add(zero)
	nodes := rows[0].Cluster.Nodes
	return &figure{
		title:    "What each way of sharing the limit let through, and what it cost",
		subtitle: subtitle(r) + "; " + strconv.Itoa(nodes) + " nodes; bars labelled with the extra requests",
		width:    width,
		height:   520,
		body:     func(c draw.Canvas) { drawPanels(c, []*plot.Plot{pe, po}, 1) },
	}
}
