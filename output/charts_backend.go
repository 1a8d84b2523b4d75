package output

import (
	"image/color"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/sim"
)

// backendCols is the backend chart's columns: queue, p99 response time,
// goodput.
const backendCols = 3

// Colours of the backend chart: a line per measure, a tint per fault type
// (translucent, so that the grid and overlapping windows show through).
var (
	queueColor    = rgb(0x1f77b4)
	queueMaxColor = rgb(0x9ecae1)
	p99Color      = rgb(0x9467bd)
	goodputColor  = rgb(0x2ca02c)
	faultTints    = map[backend.FaultType]color.NRGBA{
		backend.Pause:   {R: 0xd6, G: 0x27, B: 0x28, A: 0x38},
		backend.Slow:    {R: 0xbc, G: 0xbd, B: 0x22, A: 0x50},
		backend.Workers: {R: 0x7f, G: 0x7f, B: 0x7f, A: 0x48},
		backend.Trigger: {R: 0xff, G: 0x7f, B: 0x0e, A: 0x38},
	}
	// faultOrder is the order of the fault types in the legend.
	faultOrder = []backend.FaultType{backend.Pause, backend.Slow, backend.Workers, backend.Trigger}
)

// backendChart: the health of each row's backend over time, for the
// reports whose rows have a backend with workers (sim.Result.Backend), as
// a grid of small plots: one row of panels per algorithm, stacked, and
// three columns, the same in every row: the queue (its time-average per
// bucket, its maximum as a lighter line), the response-time p99 of the
// responses completed in each bucket (a gap where none completed), and the
// goodput in requests per second with the limit as a line. The faults'
// windows are shaded in every panel.
//
// Why this layout: the three measures have three units, and gonum/plot has
// no twin axes, so each gets its own small plot. Putting them side by side
// in one row per algorithm, with every panel on the same time axis and
// every column on the same Y axis, answers the chart's question, "which
// limiter kept the backend healthy?", by reading down a column: the
// algorithms' queues, p99s or goodputs are stacked on the same scales, the
// faults and bursts at the same x. Reading across a row tells one
// algorithm's story (the queue grows, then the p99, then the goodput
// drops). One figure per measure with a line per algorithm hides the
// lines behind each other where the algorithms agree; three stacked plots
// per algorithm would make the chart three times as tall and put the
// algorithms to compare a screen apart.
func backendChart(r *sim.Report) *figure {
	bp := backendPanelsOf(r)
	if bp == nil {
		return nil
	}
	var plots []*plot.Plot
	for i, pn := range bp.panels {
		p := newPlot()
		p.Title.Text = pn.title
		p.Add(&faultShades{windows: pn.shades})
		for _, l := range pn.lines {
			p.Add(line{l})
		}
		for _, h := range pn.hlines {
			p.Add(h)
		}
		p.X.Min, p.X.Max = bp.xmin, bp.xmax
		p.X.Tick.Marker = bp.tb.ticks()
		p.Y.Min, p.Y.Max = 0, bp.ymax[i%backendCols]*1.05
		p.Y.Label.Text = pn.ylabel
		if i+backendCols >= len(bp.panels) {
			p.X.Label.Text = bp.tb.label
		}
		plots = append(plots, p)
	}
	rows := len(bp.panels) / backendCols
	var series []Series
	for _, pn := range bp.panels {
		for _, l := range pn.lines {
			label := ""
			if strings.HasSuffix(pn.title, ": goodput") {
				label = "goodput"
			}
			series = append(series, seriesOf(pn.title, label, l.XYs))
		}
	}
	return &figure{
		series: series,
		title:  "Backend health over time, per algorithm",
		subtitle: subtitle(bp.r) + "; " + FormatDuration(time.Duration(bp.stepNs)) +
			" buckets, the same axes in every column",
		legend: bp.legend,
		width:  720,
		height: vg.Length(90 + 120*rows),
		body:   func(c draw.Canvas) { drawPanels(c, plots, backendCols) },
	}
}

// backendPanel is one panel of the backend chart: its lines, the limits
// drawn across it and the fault windows shaded behind them.
type backendPanel struct {
	title, ylabel string
	lines         []*plotter.Line
	hlines        []*hline
	shades        []faultShade
}

// backendPanels are the backend chart's panels, backendCols a row, and
// what they share: the time axis, each column's Y maximum, the legend.
type backendPanels struct {
	r          *sim.Report
	tb         timeBase
	stepNs     int64 // the drawn bucket
	panels     []backendPanel
	xmin, xmax float64
	ymax       [backendCols]float64
	legend     []legendItem
}

// backendPanelsOf lays out the backend chart of r, nil when no result has
// a backend series. Each line is drawn in steps of k buckets, k chosen as
// the other charts' (drawK) for at most maxDrawPoints/backendCols steps: a
// step's queue is the mean of its buckets' time-averages (they are equally
// long), its maximum and p99 the largest of its buckets' (as the backend
// does when it merges buckets), its goodput their sum over its length.
func backendPanelsOf(r *sim.Report) *backendPanels {
	var results []*sim.Result
	n := 0
	for i := range r.Results {
		res := &r.Results[i]
		if b := res.Backend; b != nil && b.Series.BucketNs > 0 && len(b.Series.Queue) > 0 {
			results = append(results, res)
			n = max(n, len(b.Series.Queue))
		}
	}
	if len(results) == 0 {
		return nil
	}
	bp := &backendPanels{r: r, tb: timeBaseOf(r), xmin: math.Inf(1), xmax: math.Inf(-1), ymax: [3]float64{1, 1, 1}}
	tb := bp.tb
	bp.stepNs = results[0].Backend.Series.BucketNs * int64(drawK(n, maxDrawPoints/backendCols))
	queueSty := draw.LineStyle{Color: queueColor, Width: 1.5}
	queueMaxSty := draw.LineStyle{Color: queueMaxColor, Width: 1}
	p99Sty := draw.LineStyle{Color: p99Color, Width: 1.5}
	goodSty := draw.LineStyle{Color: goodputColor, Width: 1.5}
	limits, limitItems := limitLines(r)

	type lines struct {
		queue, queueMax, goodput plotter.XYs
		p99                      []plotter.XYs // runs of steps with responses
	}
	all := make([]lines, len(results))
	var p99TopNs int64
	anyQueueMax := false
	faultTypes := map[backend.FaultType]bool{}
	for ri, res := range results {
		s := &res.Backend.Series
		ls := &all[ri]
		k := max(1, int(bp.stepNs/s.BucketNs)) // another bucket: the same step
		for i := 0; i < len(s.Queue); i += k {
			j := min(i+k, len(s.Queue))
			x := tb.x(s.StartNs + int64(i)*s.BucketNs)
			end := tb.x(s.StartNs + int64(j)*s.BucketNs)
			var q float64
			var qmax, p99, good int64
			for b := i; b < j; b++ {
				q += s.Queue[b]
				if b < len(s.QueueMax) {
					qmax = max(qmax, s.QueueMax[b])
				}
				if b < len(s.ResponseP99Ns) {
					p99 = max(p99, s.ResponseP99Ns[b])
				}
				if b < len(s.Goodput) {
					good += s.Goodput[b]
				}
			}
			rate := float64(good) / (float64(int64(j-i)*s.BucketNs) / 1e9)
			ls.queue = append(ls.queue, plotter.XY{X: x, Y: q / float64(j-i)})
			ls.queueMax = append(ls.queueMax, plotter.XY{X: x, Y: float64(qmax)})
			ls.goodput = append(ls.goodput, plotter.XY{X: x, Y: rate})
			bp.ymax[0] = math.Max(bp.ymax[0], float64(qmax))
			bp.ymax[2] = math.Max(bp.ymax[2], rate)
			anyQueueMax = anyQueueMax || qmax > 0
			if p99 <= 0 {
				continue // no response in the step: a gap
			}
			p99TopNs = max(p99TopNs, p99)
			pt := plotter.XY{X: x, Y: float64(p99)}
			if last := len(ls.p99) - 1; last >= 0 && ls.p99[last][len(ls.p99[last])-1].X == x {
				// the run goes on: the previous step's closing point
				// becomes this one's
				ls.p99[last][len(ls.p99[last])-1] = pt
				ls.p99[last] = append(ls.p99[last], plotter.XY{X: end, Y: pt.Y})
			} else {
				ls.p99 = append(ls.p99, plotter.XYs{pt, {X: end, Y: pt.Y}})
			}
		}
		end := tb.x(s.StartNs + int64(len(s.Queue))*s.BucketNs)
		for _, l := range []*plotter.XYs{&ls.queue, &ls.queueMax, &ls.goodput} {
			*l = append(*l, plotter.XY{X: end, Y: (*l)[len(*l)-1].Y})
		}
		bp.xmin = math.Min(bp.xmin, tb.x(s.StartNs))
		bp.xmax = math.Max(bp.xmax, end)
		for _, f := range res.Backend.FaultWindows {
			faultTypes[f.Type] = true
		}
	}
	unit, unitNs := unitOf(p99TopNs)
	bp.ymax[1] = math.Max(float64(p99TopNs)/unitNs, 1)
	for _, h := range limits {
		bp.ymax[2] = math.Max(bp.ymax[2], h.y)
	}

	clusterFaults, clusterItems := clusterShades(r, tb)
	for ri, res := range results {
		ls := &all[ri]
		var shades []faultShade
		for _, f := range res.Backend.FaultWindows {
			shades = append(shades, faultShade{x0: tb.x(f.StartNs), x1: faultEndX(tb, f.EndNs), tint: faultTints[f.Type]})
		}
		if clusterFaults != nil {
			shades = append(shades, clusterFaults.windows...)
		}
		queue := backendPanel{title: res.Label + ": queue", ylabel: "requests waiting", shades: shades}
		if anyQueueMax {
			queue.lines = append(queue.lines, stepLine(ls.queueMax, queueMaxSty))
		}
		queue.lines = append(queue.lines, stepLine(ls.queue, queueSty))
		p99 := backendPanel{title: res.Label + ": p99 response time", ylabel: "p99 (" + unit + ")", shades: shades}
		for _, run := range ls.p99 {
			xys := make(plotter.XYs, len(run))
			for i, pt := range run {
				xys[i] = plotter.XY{X: pt.X, Y: pt.Y / unitNs}
			}
			p99.lines = append(p99.lines, stepLine(xys, p99Sty))
		}
		good := backendPanel{title: res.Label + ": goodput", ylabel: "requests/s", shades: shades,
			lines: []*plotter.Line{stepLine(ls.goodput, goodSty)}, hlines: limits}
		bp.panels = append(bp.panels, queue, p99, good)
	}

	bp.legend = []legendItem{{"queue: time-average", stepLine(nil, queueSty)}}
	if anyQueueMax {
		bp.legend = append(bp.legend, legendItem{"queue: max", stepLine(nil, queueMaxSty)})
	}
	if p99TopNs > 0 {
		bp.legend = append(bp.legend, legendItem{"p99 of the responses completed (a gap: none)", stepLine(nil, p99Sty)})
	}
	bp.legend = append(bp.legend, legendItem{"goodput (completed OK in time)", stepLine(nil, goodSty)})
	bp.legend = append(bp.legend, limitItems...)
	for _, t := range faultOrder {
		if faultTypes[t] {
			bp.legend = append(bp.legend, legendItem{"fault: " + string(t), &faultShade{tint: faultTints[t]}})
		}
	}
	bp.legend = append(bp.legend, clusterItems...)
	return bp
}

// faultEndX is where a fault's window ends on the time axis; an endless one
// (math.MaxInt64) at +Inf, clipped when drawn.
func faultEndX(tb timeBase, endNs int64) float64 {
	if endNs == math.MaxInt64 {
		return math.Inf(1)
	}
	return tb.x(endNs)
}

// faultShade is a fault's window, a tinted band across the plot's Y range
// from x0 to x1, clipped to its X range.
type faultShade struct {
	x0, x1 float64
	tint   color.NRGBA
}

func (f *faultShade) Thumbnail(c *draw.Canvas) {
	c.SetColor(f.tint)
	c.Fill(c.Rectangle.Path())
}

// faultShades are a plot's fault windows; they do not widen its ranges.
type faultShades struct{ windows []faultShade }

func (s *faultShades) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, f := range s.windows {
		x0 := math.Max(f.x0, p.X.Min)
		x1 := math.Min(f.x1, p.X.Max)
		if x0 >= x1 {
			continue
		}
		rect := vg.Rectangle{Min: vg.Point{X: trX(x0), Y: c.Min.Y}, Max: vg.Point{X: trX(x1), Y: c.Max.Y}}
		c.SetColor(f.tint)
		c.Fill(rect.Path())
	}
}
