package output

import (
	"bytes"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
)

// backendReport runs testdata/backend.yaml as `ratesim compare` does: two
// limiters in front of a backend of two workers with a pause on [8s, 9s)
// and a slow spell on [14s, 16s).
func backendReport(t testing.TB) *sim.Report { return fileReport(t, "backend.yaml") }

// fileReport runs testdata/NAME as `ratesim compare` does.
func fileReport(t testing.TB, name string) *sim.Report {
	t.Helper()
	sc, err := scenarios.Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{
		Name: sc.Name, Description: sc.Description, Seed: sc.Seed, Duration: sc.Duration,
		Limit: sc.Limit, Traffic: sc.Traffic, Retries: sc.Retries, Windows: sc.Windows, Bucket: sc.Bucket,
		Backend: sc.Backend,
	}
	for _, a := range sc.Algorithms {
		cfg.Algorithms = append(cfg.Algorithms, sim.Algorithm{Name: a.Name, Label: a.Label, Params: a.Params, Set: a.Set})
	}
	rep, err := sim.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// chartNamed returns the chart of cs named name, or nil.
func chartNamed(cs []Chart, name string) *Chart {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

// TestBackendChartGolden: a report whose rows have a backend gets the
// backend chart, last, held to a golden drawing; its SVG names it; without
// the backends the other charts are the same bytes and there is no
// backend chart.
func TestBackendChartGolden(t *testing.T) {
	rep := backendReport(t)
	charts := Charts(rep, nil)
	if got, want := chartNames(charts), []string{"rate", "multiples", "peaks", "delay", "backend"}; !slices.Equal(got, want) {
		t.Fatalf("charts %v, want %v", got, want)
	}
	c := chartNamed(charts, "backend")
	if c.Title != "Backend health over time, per algorithm" {
		t.Errorf("title %q", c.Title)
	}
	goldenChart(t, filepath.Join("backend", "backend.svg"), *c)
	svg := renderChart(t, *c, "svg")
	for _, want := range []string{c.Title, "token-bucket: queue", "leaky-bucket: goodput", "fault: pause", "fault: slow"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("backend.svg: %q not in it", want)
		}
	}

	// the same report without its backends: no backend chart, and the
	// others unchanged (they do not draw the backend)
	plain := *rep
	plain.Results = slices.Clone(rep.Results)
	for i := range plain.Results {
		plain.Results[i].Backend = nil
	}
	without := Charts(&plain, nil)
	if got, want := chartNames(without), []string{"rate", "multiples", "peaks", "delay"}; !slices.Equal(got, want) {
		t.Fatalf("without backends: charts %v, want %v", got, want)
	}
	for _, w := range without {
		if !bytes.Equal(renderChart(t, w, "svg"), renderChart(t, *chartNamed(charts, w.Name), "svg")) {
			t.Errorf("%s: drawn differently with backends", w.Name)
		}
	}
	// nor for a built-in without a backend
	rep2, decisions := runBuiltin(t, "double-burst")
	if slices.Contains(chartNames(Charts(rep2, decisions)), "backend") {
		t.Error("double-burst has a backend chart")
	}
}

// TestBackendPanels: three panels a row, in the order queue, p99, goodput;
// the queue's two lines (time-average, max), the p99 broken where no
// response completed (the pause), the goodput with the limit; the faults
// shaded in every panel where the configuration puts them; the legend.
func TestBackendPanels(t *testing.T) {
	bp := backendPanelsOf(backendReport(t))
	if bp == nil {
		t.Fatal("no panels")
	}
	if len(bp.panels) != 2*backendCols {
		t.Fatalf("%d panels, want %d", len(bp.panels), 2*backendCols)
	}
	for i, label := range []string{"token-bucket", "leaky-bucket"} {
		queue, p99, good := bp.panels[3*i], bp.panels[3*i+1], bp.panels[3*i+2]
		if queue.title != label+": queue" || p99.title != label+": p99 response time" || good.title != label+": goodput" {
			t.Errorf("row %d: titles %q, %q, %q", i, queue.title, p99.title, good.title)
		}
		if len(queue.lines) != 2 || queue.lines[0].LineStyle.Color != queueMaxColor || queue.lines[1].LineStyle.Color != queueColor {
			t.Errorf("%s: queue lines %d, want max then time-average", label, len(queue.lines))
		}
		// a run before the pause, one after: nothing completes in it
		if len(p99.lines) < 2 {
			t.Errorf("%s: p99 in %d runs, want a gap at the pause", label, len(p99.lines))
		}
		for _, l := range p99.lines {
			for _, pt := range l.XYs {
				if pt.X > 8.1 && pt.X < 9 {
					t.Errorf("%s: p99 drawn at %vs, in the pause", label, pt.X)
				}
			}
		}
		if len(good.lines) != 1 || len(good.hlines) != 1 || good.hlines[0].y != 40 {
			t.Errorf("%s: goodput %d lines, %d limits", label, len(good.lines), len(good.hlines))
		}
		for _, pn := range []backendPanel{queue, p99, good} {
			want := []faultShade{{x0: 8, x1: 9, tint: faultTints[backend.Pause]}, {x0: 14, x1: 16, tint: faultTints[backend.Slow]}}
			if !slices.Equal(pn.shades, want) {
				t.Errorf("%s: shades %v, want %v", pn.title, pn.shades, want)
			}
		}
	}
	if bp.stepNs != 100*ms || bp.xmin != 0 || bp.xmax < 20 {
		t.Errorf("step %dns, x from %v to %v", bp.stepNs, bp.xmin, bp.xmax)
	}
	var legend []string
	for _, it := range bp.legend {
		legend = append(legend, it.text)
	}
	want := []string{"queue: time-average", "queue: max", "p99 of the responses completed (a gap: none)",
		"goodput (completed OK in time)", "limit 40/1s", "fault: pause", "fault: slow"}
	if !slices.Equal(legend, want) {
		t.Errorf("legend %q, want %q", legend, want)
	}
}

// handBackend is double-burst's report with a hand-made backend series of
// n buckets of 100ms on every row: bucket i's time-average queue i%5, its
// max queue i%7, its p99 (i%10)ms except in every third step of 5 buckets,
// one response in time a bucket; an endless workers fault from 10s.
func handBackend(n int) *sim.Report {
	rep := doubleBurst()
	for r := range rep.Results {
		se := backend.Series{StartNs: 0, BucketNs: 100 * ms}
		for i := range n {
			se.Queue = append(se.Queue, float64(i%5))
			se.QueueMax = append(se.QueueMax, int64(i%7))
			p := int64(i%10) * ms
			if (i/5)%3 == 1 {
				p = 0
			}
			se.ResponseP99Ns = append(se.ResponseP99Ns, p)
			se.Goodput = append(se.Goodput, 1)
			se.Shed = append(se.Shed, 0)
			se.TimedOut = append(se.TimedOut, 0)
		}
		rep.Results[r].Backend = &backend.Result{Series: se, Faults: 1,
			FaultWindows: []backend.FaultWindow{{Type: backend.Workers, StartNs: 10 * s, EndNs: math.MaxInt64}}}
	}
	return rep
}

// TestBackendSteps: past maxDrawPoints/3 buckets, a drawn step of k
// buckets has their mean time-average queue, their largest max and p99 and
// their goodput per second; a step without responses is a gap in the p99;
// an endless fault is shaded to the end of the axis.
func TestBackendSteps(t *testing.T) {
	rep := handBackend(700) // 700 buckets > 333: steps of 5 (500ms)
	bp := backendPanelsOf(rep)
	if bp.stepNs != 500*ms {
		t.Fatalf("step %dns, want 500ms", bp.stepNs)
	}
	if len(bp.panels) != 9*backendCols {
		t.Fatalf("%d panels", len(bp.panels))
	}
	queue, p99, good := bp.panels[0], bp.panels[1], bp.panels[2]
	qmax, qavg := queue.lines[0].XYs, queue.lines[1].XYs
	if len(qavg) != 141 || qavg[0].Y != 2 || qavg[140].X != 70 {
		t.Errorf("queue: %d points, first %v, last %v", len(qavg), qavg[0], qavg[len(qavg)-1])
	}
	// step 1: buckets 5-9, maxima 5, 6, 0, 1, 2
	if qmax[1] != (plotter.XY{X: 0.5, Y: 6}) {
		t.Errorf("queue max step 1: %v", qmax[1])
	}
	// p99 in ms: step 0 (buckets 0-4) 4ms, step 1 none, step 2 (10-14)
	// 4ms, step 3 (15-19) 9ms; runs of two steps then a gap
	if p99.ylabel != "p99 (ms)" {
		t.Errorf("p99 axis %q", p99.ylabel)
	}
	if first := p99.lines[0].XYs; len(first) != 2 || first[0].Y != 4 || first[1].X != 0.5 {
		t.Errorf("first p99 run %v", first)
	}
	if second := p99.lines[1].XYs; len(second) != 3 || second[0] != (plotter.XY{X: 1, Y: 4}) ||
		second[1] != (plotter.XY{X: 1.5, Y: 9}) || second[2].X != 2 {
		t.Errorf("second p99 run %v", second)
	}
	if g := good.lines[0].XYs; g[0].Y != 10 {
		t.Errorf("goodput %v/s, want 10", g[0].Y)
	}
	if sh := queue.shades[0]; sh.x0 != 10 || !math.IsInf(sh.x1, 1) {
		t.Errorf("endless fault shaded %v", sh)
	}
	c := Chart{Name: "backend", fig: *backendChart(rep)}
	png := renderChart(t, c, "png")
	if len(png) == 0 {
		t.Error("empty PNG")
	}
	if !strings.Contains(c.fig.subtitle, "500ms buckets") {
		t.Errorf("subtitle %q does not give the drawn bucket", c.fig.subtitle)
	}
}

// TestBackendChartBudget: nine rows of a backend series of
// backend.DefaultMaxBuckets buckets are drawn within the other charts'
// budget (TestChartsBudget): at most 48 MiB allocated, 512 KiB of PNG.
func TestBackendChartBudget(t *testing.T) {
	rep := handBackend(backend.DefaultMaxBuckets)
	c := Chart{Name: "backend", fig: *backendChart(rep)}
	var buf bytes.Buffer
	var err error
	alloc := allocated(func() { err = c.Render(&buf, "png") })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("backend: allocated %.1f MiB, wrote %.1f KiB", float64(alloc)/(1<<20), float64(buf.Len())/1024)
	if alloc > 48<<20 || buf.Len() > 512<<10 {
		t.Errorf("allocated %d bytes, wrote %d", alloc, buf.Len())
	}
}
