package output

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/ratesim/ratesim/sim"
)

// MaxTimelineDecisions is the most decisions one algorithm may have made
// for the timeline chart to be drawn: a few hundred requests and their
// retries. Beyond it the marks would merge into a smear.
const MaxTimelineDecisions = 500

// maxDrawPoints bounds the points of one drawn line: about one a pixel of
// a chart's width (the small multiples share it among the panels of a row).
const maxDrawPoints = 1000

// chartDPI is the resolution of PNG charts: 96 dots per inch, so a chart
// of 720x405 points is 960x540 pixels.
const chartDPI = 96

// ChartFormats returns the image formats a chart renders to: png (the
// default) and svg.
func ChartFormats() []string { return []string{"png", "svg"} }

// Chart is one picture of a report, written to a file named Name plus the
// format's extension.
type Chart struct {
	// Name is the file name without extension: rate, multiples, peaks,
	// delay, state, timeline, extra or backend.
	Name string
	// Title is the chart's title as drawn.
	Title string

	fig figure
}

// Charts returns the pictures that can be drawn of r, in this order, with
// gonum.org/v1/plot:
//
//   - rate: requests admitted to the backend per second, every algorithm
//     on one chart, the offered traffic behind them and the limit as a line;
//   - multiples: one panel per algorithm with offered, admitted, delayed
//     and rejected requests per second, the same axes on every panel;
//   - peaks: peak/limit for every algorithm and report window, as grouped
//     bars on a logarithmic axis (1x, 2x, 5x, 10x...), with the limit
//     (1.0) marked;
//   - delay: the distribution (CDF) of the delays of admitted requests, for
//     the algorithms that delayed any (no chart when none did);
//   - state: the watched key's state over time (sim.Result.State), a panel
//     per algorithm that can show it (no chart when none can);
//   - timeline: every decision of a small run as a mark at its arrival
//     time, one row per algorithm (on a cluster, one per node of each),
//     coloured by verdict, delayed ones joined to their release, window
//     boundaries drawn (only when the decisions are given and no algorithm
//     made more than MaxTimelineDecisions);
//   - extra: on a cluster, what each row admitted beyond one exact limiter
//     on the same traffic, as a share of that limiter's, beside the store
//     operations per request it took;
//   - backend: when rows have a backend with workers, its health over time,
//     a row of panels per algorithm: the queue, the p99 response time and
//     the goodput per bucket, the faults' windows shaded (backendChart);
//   - adaptive-limits: when rows are adaptive concurrency limits, each
//     one's limit over time, its mean per step over a band from its least
//     to its greatest, the faults shaded (limitsChart).
//
// Time axes are in seconds from the start: from time 0 for synthetic
// traffic, from the first arrival (to the whole second) for replayed
// traffic, whose start instant the axis label gives.
//
// Drawing never changes a figure of the report, but long series are drawn
// coarser: at most about 1,000 points a line, each the average rate of as
// many consecutive buckets as it takes (the axis label says the drawn
// bucket). Charts are byte-deterministic: fonts are the embedded Liberation
// fonts, nothing depends on the clock, the locale or map order.
//
// decisions[i] are the decisions of r.Results[i] in processing order
// (sim.Observer), or nil when they were not kept; the timeline needs them.
func Charts(r *sim.Report, decisions [][]sim.Decision) []Chart {
	if r == nil || len(r.Results) == 0 {
		return nil
	}
	var charts []Chart
	add := func(name string, fig *figure) {
		if fig != nil {
			charts = append(charts, Chart{Name: name, Title: fig.title, fig: *fig})
		}
	}
	add("window", windowChart(r))
	add("rate", rateChart(r))
	add("multiples", multiplesChart(r))
	add("peaks", peaksChart(r))
	add("delay", delayChart(r))
	add("state", stateChart(r))
	tr, td := r, decisions
	if clustered(r) {
		var labels []string
		for i := range r.Results {
			labels = append(labels, r.Results[i].Label)
		}
		if pr, pd, ok := PerNode(r, decisions, labels); ok {
			tr, td = pr, pd
		}
	}
	add("timeline", timelineChart(tr, td))
	add("extra", extraChart(r))
	add("backend", backendChart(r))
	add("adaptive-limits", limitsChart(r))
	return charts
}

// Render draws the chart and writes it to w as format (ChartFormats).
func (c Chart) Render(w io.Writer, format string) (err error) {
	if c.fig.body == nil {
		return errors.New("output: empty chart")
	}
	var cw vg.CanvasWriterTo
	switch format {
	case "png":
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(c.fig.width, c.fig.height), vgimg.UseDPI(chartDPI))}
	case "svg":
		cw = vgsvg.New(c.fig.width, c.fig.height)
	default:
		return fmt.Errorf("output: chart format %q (want png or svg)", format)
	}
	defer func() {
		// gonum/plot panics on what it cannot draw; say which chart
		if p := recover(); p != nil {
			err = fmt.Errorf("output: drawing the %s chart: %v", c.Name, p)
		}
	}()
	c.fig.draw(draw.New(cw))
	_, err = cw.WriteTo(w)
	return err
}

// figure is a chart's layout: a title and a subtitle at the top, a legend
// under them in rows, and the body (one plot or a grid of panels) below.
type figure struct {
	title, subtitle string
	legend          []legendItem
	width, height   vg.Length
	body            func(c draw.Canvas)
	// plot is the one plot a single-plot body draws, for tests
	plot *plot.Plot
	// series are the lines drawn, for the charts that list them (Series)
	series []Series
}

// legendItem is one entry of a figure's legend: a thumbnail (usually the
// plotter itself) and its text.
type legendItem struct {
	text  string
	thumb plot.Thumbnailer
}

const (
	figPad      = vg.Length(8)  // around the figure
	legendThumb = vg.Length(20) // width of a legend thumbnail
	legendGap   = vg.Length(14) // between legend entries
)

// The fonts: Liberation Sans, embedded in gonum/plot, so every machine
// draws the same pixels.
var (
	sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	boldFont = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
)

// textStyle is a text style in the chart font.
func textStyle(f font.Font, size vg.Length) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(f, size),
		Handler: plot.DefaultTextHandler,
	}
}

func (f *figure) draw(dc draw.Canvas) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	c := draw.Crop(dc, figPad, -figPad, figPad, -figPad)
	top := c.Max.Y
	title := textStyle(boldFont, 13)
	title.XAlign, title.YAlign = draw.XCenter, draw.YTop
	mid := (c.Min.X + c.Max.X) / 2
	avail := c.Max.X - c.Min.X
	for _, line := range fitLines(title, f.title, avail) {
		c.FillText(title, vg.Point{X: mid, Y: top}, line)
		top -= title.Height(line) + 3
	}
	if f.subtitle != "" {
		sub := textStyle(sansFont, 9)
		sub.Color = color.Gray{Y: 0x55}
		sub.XAlign, sub.YAlign = draw.XCenter, draw.YTop
		for _, line := range fitLines(sub, f.subtitle, avail) {
			c.FillText(sub, vg.Point{X: mid, Y: top}, line)
			top -= sub.Height(line) + 1
		}
		top -= 2
	}
	top -= drawLegend(c, top, f.legend)
	body := c
	body.Max.Y = top - 4
	f.body(body)
}

// fitLines breaks s into lines no wider than avail in sty: between its
// clauses (after "; " or ": ") where it can, else between words; a word
// wider than a line by itself (a long trace path) is shortened in its
// middle, "…" standing for what is left out, keeping its start and its
// end (the file's name).
func fitLines(sty text.Style, s string, avail vg.Length) []string {
	if sty.Width(s) <= avail {
		return []string{s}
	}
	fits := func(t string) bool { return sty.Width(t) <= avail }
	var lines []string
	line := ""
	add := func(piece string) { // piece: a clause or a word, with the space before it
		switch {
		case line == "":
			line = strings.TrimLeft(piece, " ")
		case fits(line + piece):
			line += piece
		default:
			lines = append(lines, line)
			line = strings.TrimLeft(piece, " ")
		}
	}
	for i, clause := range clauses(s) {
		if i > 0 {
			clause = " " + clause
		}
		if fits(strings.TrimLeft(clause, " ")) { // on this line, or the next
			add(clause)
			continue
		}
		for j, word := range strings.Fields(clause) {
			sep := ""
			if i > 0 || j > 0 {
				sep = " "
			}
			if !fits(word) {
				// in what is left of this line, if that is a third of
				// it, else on a line of its own
				room := avail
				if line != "" && avail-sty.Width(line+sep) >= avail/3 {
					room = avail - sty.Width(line+sep)
				}
				word = shortenToWidth(sty, word, room)
			}
			add(sep + word)
		}
	}
	return append(lines, line)
}

// clauses splits s after each "; " and ": ", the separators kept at the
// end of their clause and the space after them dropped.
func clauses(s string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(s); i++ {
		if (s[i] == ';' || s[i] == ':') && s[i+1] == ' ' {
			out = append(out, s[start:i+1])
			start = i + 2
		}
	}
	return append(out, s[start:])
}

// shortenToWidth leaves out the middle of word, as few characters as make it fit
// in avail, with "…" in their place; the end keeps twice the characters of
// the start, as a path's file name tells the most.
func shortenToWidth(sty text.Style, word string, avail vg.Length) string {
	r := []rune(word)
	for keep := len(r) - 1; keep > 1; keep-- {
		tail := keep * 2 / 3
		w := string(r[:keep-tail]) + "…" + string(r[len(r)-tail:])
		if sty.Width(w) <= avail {
			return w
		}
	}
	return "…"
}

// drawLegend draws the legend in rows centred under y and returns the
// height it took.
func drawLegend(c draw.Canvas, y vg.Length, items []legendItem) vg.Length {
	if len(items) == 0 {
		return 0
	}
	sty := textStyle(sansFont, 9)
	sty.YAlign = draw.YCenter
	h := sty.Height("Mg") + 4
	width := func(it legendItem) vg.Length { return legendThumb + 4 + sty.Width(it.text) }
	// split into rows that fit the width
	var rows [][]legendItem
	var row []legendItem
	var w vg.Length
	avail := c.Max.X - c.Min.X
	for _, it := range items {
		iw := width(it)
		if len(row) > 0 && w+legendGap+iw > avail {
			rows = append(rows, row)
			row, w = nil, 0
		}
		if len(row) > 0 {
			w += legendGap
		}
		row = append(row, it)
		w += iw
	}
	rows = append(rows, row)
	for i, row := range rows {
		var total vg.Length
		for j, it := range row {
			if j > 0 {
				total += legendGap
			}
			total += width(it)
		}
		x := (c.Min.X+c.Max.X)/2 - total/2
		yc := y - h*vg.Length(i) - h/2
		for _, it := range row {
			thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: yc - h/2 + 2},
				Max: vg.Point{X: x + legendThumb, Y: yc + h/2 - 2},
			}}
			it.thumb.Thumbnail(&thumb)
			c.FillText(sty, vg.Point{X: x + legendThumb + 4, Y: yc}, it.text)
			x += width(it) + legendGap
		}
	}
	return h*vg.Length(len(rows)) + 2
}

// newPlot returns a plot in the chart fonts, with a light grid.
func newPlot() *plot.Plot {
	p := plot.New()
	p.Title.TextStyle.Font = font.From(boldFont, 10)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sansFont, 10)
		a.Tick.Label.Font = font.From(sansFont, 9)
		a.Tick.Marker = plainTicks{}
		a.Padding = 0
	}
	p.Legend.TextStyle.Font = font.From(sansFont, 9)
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xe4}
	grid.Horizontal.Color = color.Gray{Y: 0xe4}
	grid.Vertical.Width, grid.Horizontal.Width = 0.5, 0.5
	p.Add(grid)
	return p
}

// plainTicks are gonum's default ticks labelled with as few decimals as
// tell them apart: "250000", "2.5", never "250000.00".
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	var major []int
	for i, t := range ticks {
		if t.Label != "" {
			major = append(major, i)
		}
	}
	step := hi - lo
	if len(major) > 1 {
		step = ticks[major[1]].Value - ticks[major[0]].Value
	}
	for dec := 0; dec <= 9; dec++ {
		exact := true
		for _, i := range major {
			v := ticks[i].Value
			r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', dec, 64), 64)
			exact = exact && math.Abs(r-v) <= math.Abs(step)*1e-6
		}
		if exact || dec == 9 {
			for _, i := range major {
				v := ticks[i].Value
				if math.Abs(v) <= math.Abs(step)*1e-9 {
					v = 0 // not "-0"
				}
				ticks[i].Label = strconv.FormatFloat(v, 'f', dec, 64)
			}
			break
		}
	}
	return ticks
}

// drawPanels draws plots in a grid of cols columns, aligned so that their
// data areas have the same size.
func drawPanels(c draw.Canvas, plots []*plot.Plot, cols int) {
	rows := (len(plots) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
		for j := range cols {
			if k := i*cols + j; k < len(plots) {
				grid[i][j] = plots[k]
			}
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 14, PadY: 10}
	canvases := plot.Align(grid, tiles, c)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
}

// Colours: one per algorithm, in the order of the report (d3's category10,
// which stays distinct for the colour-blind in most pairs), and one per
// kind of count.
var (
	algColors = []color.Color{
		rgb(0x1f77b4), rgb(0xff7f0e), rgb(0x2ca02c), rgb(0xd62728), rgb(0x9467bd),
		rgb(0x8c564b), rgb(0xe377c2), rgb(0x7f7f7f), rgb(0xbcbd22), rgb(0x17becf),
	}
	offeredFill  = rgb(0xdddddd)
	offeredLine  = rgb(0x999999)
	admitColor   = rgb(0x1f77b4)
	acceptColor  = rgb(0x2ca02c)
	delayColor   = rgb(0xff7f0e)
	rejectColor  = rgb(0xd62728)
	limitColor   = color.Black
	boundaryGray = rgb(0xaaaaaa)
)

func rgb(v uint32) color.RGBA {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// algStyle is the line of algorithm i, drawn rank-th of n lines: the
// algorithm's colour, dashed once the colours run out; the first line
// drawn widest and the last narrowest, so that lines that coincide
// (algorithms that admit the same) show as stripes instead of hiding each
// other.
func algStyle(i, rank, n int) draw.LineStyle {
	width := vg.Length(1.2)
	if n > 1 {
		width += vg.Length(2.4 * float64(n-1-rank) / float64(n-1))
	}
	sty := draw.LineStyle{Color: algColors[i%len(algColors)], Width: width}
	switch (i / len(algColors)) % 3 {
	case 1:
		sty.Dashes = []vg.Length{6, 3}
	case 2:
		sty.Dashes = []vg.Length{2, 2}
	}
	return sty
}

// timeBase turns instants into the seconds of a time axis.
type timeBase struct {
	origin int64  // ns at 0 on the axis
	label  string // the axis label
}

// timeBaseOf is the time axis of r: seconds from time 0 for synthetic
// traffic; for replayed traffic (absolute timestamps) seconds from the
// start of the traffic (its first arrival, to the whole second before),
// whose instant the label gives.
func timeBaseOf(r *sim.Report) timeBase {
	if !AbsoluteTimes(r) {
		return timeBase{label: "time (s)"}
	}
	origin := r.StartNs - r.StartNs%int64(time.Second)
	return timeBase{origin: origin,
		label: "time (UTC) from " + time.Unix(0, origin).UTC().Format(time.RFC3339)}
}

func (t timeBase) x(ns int64) float64 { return float64(ns-t.origin) / 1e9 }

// ticks are the ticks of a time axis: seconds for synthetic traffic, the
// clock (UTC) for replayed traffic.
func (t timeBase) ticks() plot.Ticker {
	if t.origin == 0 {
		return niceTicks{}
	}
	return clockTicks{origin: t.origin}
}

// niceTicks label an axis at 1, 2 or 5 times a power of ten, five to ten
// labels, with unlabelled minor ticks between; integer keeps steps of at
// least 1 (an axis of counts).
type niceTicks struct{ integer bool }

func (n niceTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	if !(span > 0) || math.IsInf(span, 0) {
		return plainTicks{}.Ticks(lo, hi)
	}
	step := math.Pow(10, math.Floor(math.Log10(span/10)))
	for _, m := range []float64{1, 2, 5, 10, 20} {
		if span/(step*m) <= 10 {
			step *= m
			break
		}
	}
	if n.integer && step < 1 {
		step = 1
	}
	minor := step / 5
	if step/minor != 5 || (n.integer && minor < 1) {
		minor = step
	}
	dec := 0
	for v := step; v < 1-1e-9 && dec < 9; v *= 10 {
		dec++
	}
	var ticks []plot.Tick
	for k := math.Ceil(lo / minor); k*minor <= hi+minor*1e-9; k++ {
		v := k * minor
		t := plot.Tick{Value: v}
		if r := math.Mod(math.Abs(v)+step*1e-9, step); r < step*1e-6 {
			if math.Abs(v) < step*1e-9 {
				v = 0
			}
			t.Label = strconv.FormatFloat(v, 'f', dec, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// clockSteps are the steps of a clock axis, in seconds.
var clockSteps = []int64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200,
	3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400}

// clockTicks label an axis of seconds from origin (ns since the epoch) with
// the time of day, UTC, at round steps (a minute, 15 minutes, 6 hours, a
// day), at most eight labels: "14:05", "14:05:30" under a minute, "Mar 4"
// for steps of days, "Mar 4 18:00" when the axis spans several days.
type clockTicks struct{ origin int64 }

func (c clockTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	step := clockSteps[len(clockSteps)-1]
	for _, s := range clockSteps {
		if span/float64(s) <= 8 {
			step = s
			break
		}
	}
	layout := "15:04"
	switch {
	case step >= 86400:
		layout = "Jan 2"
	case span > 86400:
		layout = "Jan 2 15:04"
	case step < 60:
		layout = "15:04:05"
	}
	stepNs := step * int64(time.Second)
	first := c.origin + int64(math.Floor(lo*1e9))
	first -= first % stepNs
	var ticks []plot.Tick
	for t := first; float64(t-c.origin)/1e9 <= hi; t += stepNs {
		x := float64(t-c.origin) / 1e9
		if x < lo {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: x, Label: time.Unix(0, t).UTC().Format(layout)})
	}
	return ticks
}

// subtitle is the line under a chart's title: the scenario, its policy and
// how many keys shared it.
func subtitle(r *sim.Report) string {
	name := r.Scenario
	if name == "" {
		name = "(unnamed scenario)"
	}
	s := name + ": limit " + policyString(r.Limit)
	if r.Keys > 1 {
		s += " per key, " + strconv.FormatInt(r.Keys, 10) + " keys"
	}
	return s
}

// perSecond is the limit of l in requests per second.
func perSecond(l sim.Limit) float64 {
	if l.PerNs <= 0 {
		return 0
	}
	return float64(l.Rate) * 1e9 / float64(l.PerNs)
}

// hline is a horizontal line across the plot's X range at y; it does not
// widen the X range.
type hline struct {
	y     float64
	style draw.LineStyle
}

func (h *hline) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(h.y)
	if y < c.Min.Y || y > c.Max.Y {
		return
	}
	c.StrokeLine2(h.style, c.Min.X, y, c.Max.X, y)
}

func (h *hline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), h.y, h.y
}

func (h *hline) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(h.style, c.Min.X, y, c.Max.X, y)
}

// vlines are vertical lines at xs, across the plot's Y range.
type vlines struct {
	xs    []float64
	style draw.LineStyle
}

func (v *vlines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, x := range v.xs {
		if px := trX(x); px >= c.Min.X && px <= c.Max.X {
			c.StrokeLine2(v.style, px, c.Min.Y, px, c.Max.Y)
		}
	}
}

func (v *vlines) Thumbnail(c *draw.Canvas) {
	x := c.Center().X
	c.StrokeLine2(v.style, x, c.Min.Y, x, c.Max.Y)
}

// unitOf picks the unit of a duration axis for values up to maxNs: the
// largest of s, ms and µs in which maxNs is at least 2.
func unitOf(maxNs int64) (name string, ns float64) {
	switch {
	case maxNs >= 2*int64(time.Second):
		return "s", 1e9
	case maxNs >= 2*int64(time.Millisecond):
		return "ms", 1e6
	case maxNs >= 2*int64(time.Microsecond):
		return "µs", 1e3
	}
	return "ns", 1
}
