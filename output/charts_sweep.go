package output

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/brewer"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SweepGrid is what a sweep's charts draw: one or two varied fields, the
// algorithms (labels) and, per metric, its figure at every point.
type SweepGrid struct {
	Scenario string
	// X is the last varied field (the table's fastest), Y the first when
	// there are two ("" for one).
	XField, YField string
	// XValues and YValues are the fields' values as written; XNums the X
	// values as numbers for a line chart (nil: the values are not numbers,
	// drawn evenly spaced), XDuration when they are durations in ns.
	XValues, YValues []string
	XNums            []float64
	XDuration        bool
	Labels           []string
	Metrics          []SweepMetric
}

// SweepMetric is one metric over the grid: Values[label][y][x] (NaN where
// the point has no figure, an error or a row without it), and the goal's
// best point per label (BestX -1 when none).
type SweepMetric struct {
	// Name is the file name (without extension), Title what the chart
	// says it shows.
	Name, Title string
	Duration    bool
	Values      [][][]float64
	BestX       []int
	BestY       []int
}

// SweepCharts draws a heatmap per metric for two varied fields (a panel
// per algorithm, one colour scale across the panels, each cell labelled
// with its figure, the goal's best point ringed), or a line chart per
// metric for one (a line per algorithm, the best point ringed).
func SweepCharts(g *SweepGrid) []Chart {
	var out []Chart
	for i := range g.Metrics {
		m := &g.Metrics[i]
		var fig *figure
		if g.YField != "" {
			fig = heatmapFigure(g, m)
		} else {
			fig = sweepLineFigure(g, m)
		}
		if fig != nil {
			out = append(out, Chart{Name: m.Name, Title: fig.title, fig: *fig})
		}
	}
	return out
}

// cellGrid is one panel's figures as a plotter.GridXYZ: column c is X
// value c, row r is Y value r.
type cellGrid [][]float64

func (g cellGrid) Dims() (c, r int)   { return len(g[0]), len(g) }
func (g cellGrid) Z(c, r int) float64 { return g[r][c] }
func (g cellGrid) X(c int) float64    { return float64(c) }
func (g cellGrid) Y(r int) float64    { return float64(r) }

// sweepPalette is the colour scale: ColorBrewer's YlOrRd, low to high.
func sweepPalette() palette.Palette {
	p, err := brewer.GetPalette(brewer.TypeSequential, "YlOrRd", 9)
	if err != nil {
		panic(err) // a palette of gonum's own
	}
	return p
}

// categoryTicks label positions 0..n-1 with the values as written.
type categoryTicks []string

func (t categoryTicks) Ticks(lo, hi float64) []plot.Tick {
	out := make([]plot.Tick, len(t))
	for i, s := range t {
		out[i] = plot.Tick{Value: float64(i), Label: s}
	}
	return out
}

func figureText(v float64, duration bool) string {
	switch {
	case math.IsNaN(v):
		return ""
	case duration:
		return FormatDuration(time.Duration(v))
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatInt(int64(v), 10)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	return strings.TrimSuffix(s, "0") // 1.6, not 1.60
}

func heatmapFigure(g *SweepGrid, m *SweepMetric) *figure {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, panel := range m.Values {
		for _, row := range panel {
			for _, v := range row {
				if !math.IsNaN(v) {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
	}
	if math.IsInf(lo, 1) {
		return nil // no point has this figure
	}
	if hi == lo {
		hi = lo + 1
	}
	pal := sweepPalette()
	var plots []*plot.Plot
	var series []Series
	for li, label := range g.Labels {
		for r, row := range m.Values[li] { // a row of cells: X the column, Y the figure
			sr := Series{Panel: label, Label: g.YField + "=" + g.YValues[r]}
			for c, v := range row {
				sr.X = append(sr.X, float64(c))
				sr.Y = append(sr.Y, v)
			}
			series = append(series, sr)
		}
		p := newPlot()
		p.Title.Text = label
		p.X.Label.Text, p.Y.Label.Text = g.XField, g.YField
		p.X.Tick.Marker, p.Y.Tick.Marker = categoryTicks(g.XValues), categoryTicks(g.YValues)
		grid := cellGrid(m.Values[li])
		hm := plotter.NewHeatMap(grid, pal)
		hm.Min, hm.Max = lo, hi
		hm.NaN = color.Gray{Y: 0xee}
		p.Add(hm)
		var xys plotter.XYs
		var texts []string
		var styles []text.Style
		for r, row := range grid {
			for c, v := range row {
				xys = append(xys, plotter.XY{X: float64(c), Y: float64(r)})
				texts = append(texts, figureText(v, m.Duration))
				st := textStyle(sansFont, 8)
				st.XAlign, st.YAlign = draw.XCenter, draw.YCenter
				if !math.IsNaN(v) && (v-lo)/(hi-lo) > 0.6 {
					st.Color = color.White
				}
				styles = append(styles, st)
			}
		}
		labels, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
		if err == nil {
			labels.TextStyle = styles
			p.Add(labels)
		}
		if li < len(m.BestX) && m.BestX[li] >= 0 {
			p.Add(bestMark(float64(m.BestX[li]), float64(m.BestY[li]), 11))
		}
		p.X.Min, p.X.Max = -0.5, float64(len(g.XValues))-0.5
		p.Y.Min, p.Y.Max = -0.5, float64(len(g.YValues))-0.5
		plots = append(plots, p)
	}
	ncols := min(3, len(plots))
	nrows := (len(plots) + ncols - 1) / ncols
	width := vg.Length(max(240*ncols, 480))
	height := vg.Length(90 + 220*nrows)
	sub := fmt.Sprintf("%s: one colour scale from %s (light) to %s (dark) across the panels", g.Scenario, figureText(lo, m.Duration), figureText(hi, m.Duration))
	if len(m.BestX) > 0 {
		sub += "; ringed: the goal's best point"
	}
	return &figure{title: m.Title, subtitle: sub, width: width, height: height,
		body: func(c draw.Canvas) { drawPanels(c, plots, ncols) }, series: series}
}

// bestMark rings a point.
func bestMark(x, y float64, radius vg.Length) plot.Plotter {
	s, _ := plotter.NewScatter(plotter.XYs{{X: x, Y: y}})
	s.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: radius, Shape: ringGlyph{}}
	return s
}

// ringGlyph is a circle outline, two points wide.
type ringGlyph struct{}

func (ringGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: 2})
	var p vg.Path
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
}

func sweepLineFigure(g *SweepGrid, m *SweepMetric) *figure {
	p := newPlot()
	p.X.Label.Text = g.XField
	p.Y.Label.Text, _, _ = strings.Cut(m.Title, ":")
	xOf := func(i int) float64 {
		if g.XNums != nil {
			if g.XDuration {
				return g.XNums[i] / 1e9
			}
			return g.XNums[i]
		}
		return float64(i)
	}
	if g.XNums == nil {
		p.X.Tick.Marker = categoryTicks(g.XValues)
	} else if g.XDuration {
		p.X.Label.Text += " (s)"
	}
	if m.Duration {
		p.Y.Label.Text += " (s)"
	}
	var legend []legendItem
	any := false
	for li, label := range g.Labels {
		var xys plotter.XYs
		for i, v := range m.Values[li][0] {
			if math.IsNaN(v) {
				continue
			}
			if m.Duration {
				v /= 1e9
			}
			xys = append(xys, plotter.XY{X: xOf(i), Y: v})
		}
		if len(xys) == 0 {
			continue
		}
		any = true
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			continue
		}
		line.LineStyle = algStyle(li, li, len(g.Labels))
		points.GlyphStyle = draw.GlyphStyle{Color: algColors[li%len(algColors)], Radius: 2.5, Shape: draw.CircleGlyph{}}
		p.Add(line, points)
		legend = append(legend, legendItem{text: label, thumb: line})
		if li < len(m.BestX) && m.BestX[li] >= 0 {
			y := m.Values[li][0][m.BestX[li]]
			if m.Duration {
				y /= 1e9
			}
			p.Add(bestMark(xOf(m.BestX[li]), y, 6))
		}
	}
	if !any {
		return nil
	}
	sub := g.Scenario + ": one line per algorithm"
	if len(m.BestX) > 0 {
		sub += "; ringed: the goal's best point"
	}
	return &figure{title: m.Title, subtitle: sub, legend: legend, width: 720, height: 405,
		body: func(c draw.Canvas) { p.Draw(c) }}
}
