package output

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/chartcmp"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
)

// collect keeps every decision of one run.
type collect struct{ got []sim.Decision }

func (c *collect) Observe(d *sim.Decision) error {
	c.got = append(c.got, *d)
	return nil
}

// runBuiltin runs a built-in scenario as `ratesim compare` does and returns
// the report and every decision (for the timeline). The state of the
// busiest key is not sampled here: the state chart has its own test, so
// these golden drawings do not change when algorithms learn to show their
// state.
func runBuiltin(t testing.TB, name string) (*sim.Report, [][]sim.Decision) {
	t.Helper()
	sc, err := scenarios.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{
		Name: sc.Name, Description: sc.Description, Seed: sc.Seed, Duration: sc.Duration,
		Limit: sc.Limit, Traffic: sc.Traffic, Retries: sc.Retries, Windows: sc.Windows, Bucket: sc.Bucket,
	}
	for _, a := range sc.Algorithms {
		cfg.Algorithms = append(cfg.Algorithms, sim.Algorithm{Name: a.Name, Label: a.Label, Params: a.Params, Set: a.Set})
	}
	obs := make([]*collect, len(cfg.Algorithms))
	for i := range obs {
		obs[i] = &collect{}
	}
	cfg.Observe = func(i int) sim.Observer { return obs[i] }
	rep, err := sim.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	decisions := make([][]sim.Decision, len(obs))
	for i, o := range obs {
		decisions[i] = o.got
	}
	return rep, decisions
}

func chartNames(cs []Chart) []string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return names
}

// renderChart renders c twice and checks that both renderings are the
// same bytes.
func renderChart(t *testing.T, c Chart, format string) []byte {
	t.Helper()
	var a, b bytes.Buffer
	if err := c.Render(&a, format); err != nil {
		t.Fatalf("%s.%s: %v", c.Name, format, err)
	}
	if err := c.Render(&b, format); err != nil {
		t.Fatalf("%s.%s: %v", c.Name, format, err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("%s.%s: two renderings differ", c.Name, format)
	}
	return a.Bytes()
}

// goldenChart renders c as SVG and compares what it draws with
// testdata/charts/name (an SVG): the same elements, texts and colours,
// coordinates to within a hundredth of a point (chartcmp). Unlike the bytes
// of a PNG, which the rasterizer's floating point makes differ between
// CPUs (arm64, or amd64 with GOAMD64=v3, fuse multiply-adds), this holds
// on every platform. Under -update it rewrites the golden; on a mismatch
// it leaves the new drawing beside the old one to look at. The PNG is
// rendered too, and must be the same bytes twice.
func goldenChart(t *testing.T, name string, c Chart) {
	t.Helper()
	// the drawing held in SVG; PNG draws the same figure on another
	// canvas, rendered by TestChartsBudget, TestTimeAxisOfReplay and
	// cmd's chart tests (at several times the cost of the SVG)
	got := renderChart(t, c, "svg")
	path := filepath.Join("testdata", "charts", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./output/ -update to create it)", err)
	}
	if d := chartcmp.Diff(got, want); d != "" {
		fresh := strings.TrimSuffix(path, ".svg") + ".new.svg"
		_ = os.WriteFile(fresh, got, 0o644)
		t.Errorf("%s: %s (new one written to %s; review it, then go test ./output/ -update)", path, d, fresh)
	}
}

// TestChartsGolden renders every chart of built-in scenarios and compares
// what each draws with its checked-in SVG (goldenChart). A change in a
// chart is a visible diff: review the new drawings (a *.new.svg is left
// beside each that differs), then regenerate with `go test ./output/
// -update`.
func TestChartsGolden(t *testing.T) {
	cases := []struct {
		scenario string
		want     []string
	}{
		// the double burst: the timeline is the picture of it
		{"double-burst", []string{"rate", "multiples", "peaks", "delay", "timeline"}},
		// burst against smoothing: delays only from leaky-bucket
		{"token-vs-leaky", []string{"rate", "multiples", "peaks", "delay", "timeline"}},
		// too many decisions for a timeline
		{"retry-storm", []string{"rate", "multiples", "peaks", "delay"}},
	}
	for _, tc := range cases {
		t.Run(tc.scenario, func(t *testing.T) {
			rep, decisions := runBuiltin(t, tc.scenario)
			charts := Charts(rep, decisions)
			if got := chartNames(charts); !slices.Equal(got, tc.want) {
				t.Fatalf("charts %v, want %v", got, tc.want)
			}
			for _, c := range charts {
				if c.Title == "" {
					t.Errorf("%s: no title", c.Name)
				}
				goldenChart(t, filepath.Join(tc.scenario, c.Name+".svg"), c)
			}
		})
	}
}

// TestPeaksChartOfOneKey: with several keys (api-gateway: 10,003), the
// peaks chart draws each algorithm's key peak over its limit, says so in
// its title, axis and legend, and is held to a golden drawing; with one key,
// its title is of the peak as before.
func TestPeaksChartOfOneKey(t *testing.T) {
	rep, _ := runBuiltin(t, "api-gateway")
	fig := peaksChart(rep)
	if fig == nil {
		t.Fatal("no peaks chart")
	}
	if !strings.Contains(fig.title, "one key") {
		t.Errorf("title %q does not say the peaks are of one key", fig.title)
	}
	for _, l := range fig.legend[:len(fig.legend)-1] {
		if !strings.HasPrefix(l.text, "one key's peak in any ") {
			t.Errorf("legend %q", l.text)
		}
	}
	c := Chart{Name: "peaks", Title: fig.title, fig: *fig}
	goldenChart(t, filepath.Join("api-gateway", "peaks.svg"), c)

	one, _ := runBuiltin(t, "double-burst")
	if got := peaksChart(one).title; strings.Contains(got, "one key") {
		t.Errorf("one key's chart titled %q", got)
	}
}

// stateReport is double-burst with the state of the key alice in three
// algorithms, sampled every 100ms before the decisions at that instant, as
// the engine samples an algorithms.Inspector; the state is worked out here
// from the run's decisions: fixed-window's count, sliding-window's two
// counts and token-bucket's tokens.
func stateReport(t testing.TB) *sim.Report {
	rep, decisions := runBuiltin(t, "double-burst")
	const w = int64(time.Second)
	for i := range rep.Results {
		res := &rep.Results[i]
		st := &sim.StateSeries{Key: "alice"}
		switch res.Label {
		case "fixed-window":
			st.Names = []string{"count"}
		case "sliding-window":
			st.Names = []string{"previous", "current"}
		case "token-bucket":
			st.Names = []string{"tokens"}
		default:
			continue // cannot show its state
		}
		for at := int64(0); at <= 3*w; at += 100 * int64(time.Millisecond) {
			var prev, cur float64
			tokens, last := 10.0, int64(0)
			for _, d := range decisions[i] {
				if int64(d.Time) >= at || d.Verdict == algorithms.Reject {
					continue
				}
				switch int64(d.Time) / w {
				case at/w - 1:
					prev++
				case at / w:
					cur++
				}
				tokens = min(10, tokens+float64(int64(d.Time)-last)*10/float64(w)) - 1
				last = int64(d.Time)
			}
			tokens = min(10, tokens+float64(at-last)*10/float64(w))
			st.TimesNs = append(st.TimesNs, at)
			switch res.Label {
			case "fixed-window":
				st.Values = append(st.Values, []float64{cur})
			case "sliding-window":
				st.Values = append(st.Values, []float64{prev, cur})
			default:
				st.Values = append(st.Values, []float64{tokens})
			}
		}
		res.State = st
	}
	return rep
}

// TestStateChartGolden draws the state chart of a hand-made state (the
// algorithms' own state is sampled by the engine: see sim's tests).
func TestStateChartGolden(t *testing.T) {
	rep := stateReport(t)
	var state *Chart
	for _, c := range Charts(rep, nil) {
		if c.Name == "state" {
			state = &c
		}
	}
	if state == nil {
		t.Fatal("no state chart")
	}
	if !strings.Contains(state.Title, `"alice"`) {
		t.Errorf("title %q does not name the key", state.Title)
	}
	goldenChart(t, "state.svg", *state)

	// no state, no chart
	for i := range rep.Results {
		rep.Results[i].State = nil
	}
	if slices.Contains(chartNames(Charts(rep, nil)), "state") {
		t.Error("state chart without any state")
	}
}

func TestChartsSVG(t *testing.T) {
	rep, decisions := runBuiltin(t, "double-burst")
	for _, c := range Charts(rep, decisions) {
		got := renderChart(t, c, "svg")
		if !bytes.HasPrefix(got, []byte("<?xml")) || !bytes.Contains(got, []byte("</svg>")) {
			t.Errorf("%s.svg is not an SVG document: %.80q", c.Name, got)
		}
		if !bytes.Contains(got, []byte(c.Title)) {
			t.Errorf("%s.svg: title %q not in the document", c.Name, c.Title)
		}
	}
	var buf bytes.Buffer
	if err := Charts(rep, decisions)[0].Render(&buf, "gif"); err == nil {
		t.Error("format gif: no error")
	}
}

// TestChartsSkip: what is drawn depends on the report.
func TestChartsSkip(t *testing.T) {
	if Charts(nil, nil) != nil {
		t.Error("charts of a nil report")
	}
	rep, decisions := runBuiltin(t, "double-burst")
	if slices.Contains(chartNames(Charts(rep, nil)), "timeline") {
		t.Error("timeline without decisions")
	}
	many := slices.Clone(decisions)
	many[0] = make([]sim.Decision, MaxTimelineDecisions+1)
	if slices.Contains(chartNames(Charts(rep, many)), "timeline") {
		t.Error("timeline of more than MaxTimelineDecisions decisions")
	}
	// a hand-built report: no series, no delay distribution
	names := chartNames(Charts(retryStorm(), nil))
	if !slices.Equal(names, []string{"peaks"}) {
		t.Errorf("retry-storm fixture: charts %v, want [peaks]", names)
	}
	for _, c := range Charts(retryStorm(), nil) {
		renderChart(t, c, "png")
	}
}

// TestTimeAxisOfReplay: replayed traffic is drawn in seconds from its
// first arrival's whole second, that instant in the axis label; synthetic
// traffic in seconds from time 0.
func TestTimeAxisOfReplay(t *testing.T) {
	rep := replayed()
	start := rep.StartNs
	rep.StartNs += 250 * ms // the first arrival: the axis starts at its whole second
	rep.Results[0].Series = sim.Series{BucketNs: 100 * ms, StartNs: rep.StartNs,
		Offered: []int64{1, 2}, Attempts: []int64{1, 2}, Admitted: []int64{1, 2},
		Delayed: []int64{0, 0}, Rejected: []int64{0, 0}}
	tb := timeBaseOf(rep)
	if want := "time (UTC) from 2024-05-01T12:00:00Z"; tb.label != want {
		t.Errorf("label %q, want %q", tb.label, want)
	}
	// the ticks read the clock: a few, at round steps
	for _, c := range []struct {
		hi   float64
		want []string
	}{
		{3, []string{"12:00:00", "12:00:01", "12:00:02", "12:00:03"}},
		{5 * 3600, []string{"12:00", "13:00", "14:00", "15:00", "16:00", "17:00"}},
		{3 * 86400, []string{"May 1 12:00", "May 2 00:00", "May 2 12:00", "May 3 00:00", "May 3 12:00", "May 4 00:00", "May 4 12:00"}},
		{40 * 86400, []string{"May 2", "May 9", "May 16", "May 23", "May 30", "Jun 6"}},
	} {
		var got []string
		for _, tk := range tb.ticks().Ticks(0, c.hi) {
			got = append(got, tk.Label)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ticks of 0 to %vs: %q, want %q", c.hi, got, c.want)
		}
	}
	if x := tb.x(start + 1500*ms); x != 1.5 {
		t.Errorf("1.5s after 12:00:00 drawn at %v", x)
	}
	if tb := timeBaseOf(doubleBurst()); tb.label != "time (s)" || tb.x(900*ms) != 0.9 {
		t.Errorf("synthetic: %q, 900ms at %v", tb.label, tb.x(900*ms))
	}
	for _, c := range Charts(rep, nil) {
		renderChart(t, c, "png")
	}
}

// longReport is a report of a 10,000,000-request-like run: nine
// algorithms, each with a series of sim.MaxSeriesBuckets buckets (29 hours
// of traffic: report.bucket 100ms doubled to 1.6s by the engine, about 170
// requests a bucket, 11 million in all), delays in sim.DelayExactValues
// distinct values and a state of sim.MaxSeriesBuckets samples.
func longReport() *sim.Report {
	rep := doubleBurst()
	const n = sim.MaxSeriesBuckets
	for i := range rep.Results {
		res := &rep.Results[i]
		s := sim.Series{BucketNs: 1600 * ms, StartNs: 0,
			Offered: make([]int64, n), Attempts: make([]int64, n), Admitted: make([]int64, n),
			Delayed: make([]int64, n), Rejected: make([]int64, n)}
		for b := range n {
			off := int64(140 + (b*7919+i*31)%60)
			s.Offered[b], s.Attempts[b] = off, off
			s.Admitted[b] = min(off, 150)
			s.Rejected[b] = off - s.Admitted[b]
			if i%3 == 0 {
				s.Delayed[b] = off / 10
			}
		}
		res.Series = s
		res.Delays = make([]sim.DelayCount, sim.DelayExactValues)
		for d := range res.Delays {
			res.Delays[d] = sim.DelayCount{DelayNs: int64(d) * 1000, Count: int64(1 + d%5)}
		}
		res.Delayed = 1
		st := &sim.StateSeries{Key: "k", Names: []string{"tokens"}}
		for b := range n {
			st.TimesNs = append(st.TimesNs, int64(b)*1600*ms)
			st.Values = append(st.Values, []float64{float64(b % 100)})
		}
		res.State = st
	}
	rep.DurationNs = n * 1600 * ms
	return rep
}

// TestChartsBudget: charts of a 10,000,000-request-like run stay within a
// fixed memory and size budget, whatever the length of the run: long
// series are drawn at most maxDrawPoints points a line.
//
// Budget: preparing the charts (Charts) allocates at most 16 MiB; drawing
// one allocates at most 48 MiB and writes at most 512 KiB of PNG.
// Measured when written (go1.26, amd64): Charts 1.4 MiB; the multiples
// chart, the heaviest to draw, 20 MiB; the others 6-19 MiB and 44-142 KiB.
func TestChartsBudget(t *testing.T) {
	const (
		prepareBudget = 16 << 20
		drawBudget    = 48 << 20
		sizeBudget    = 512 << 10
	)
	rep := longReport()
	var charts []Chart
	alloc := allocated(func() { charts = Charts(rep, nil) })
	t.Logf("Charts: allocated %.1f MiB", float64(alloc)/(1<<20))
	if alloc > prepareBudget {
		t.Errorf("Charts allocated %d bytes, budget %d", alloc, prepareBudget)
	}
	if got := chartNames(charts); !slices.Equal(got, []string{"rate", "multiples", "peaks", "delay", "state"}) {
		t.Fatalf("charts %v", got)
	}
	for _, c := range charts {
		var buf bytes.Buffer
		var err error
		alloc := allocated(func() { err = c.Render(&buf, "png") })
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: allocated %.1f MiB, wrote %.1f KiB", c.Name, float64(alloc)/(1<<20), float64(buf.Len())/1024)
		if alloc > drawBudget {
			t.Errorf("%s: allocated %d bytes, budget %d", c.Name, alloc, drawBudget)
		}
		if buf.Len() > sizeBudget {
			t.Errorf("%s: %d bytes, budget %d", c.Name, buf.Len(), sizeBudget)
		}
	}
}

// allocated returns the bytes fn allocates on the heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestPeaksChartLogScale: on a linear axis a 2.0x beside a 50x
// is a sliver; the peaks chart's axis is logarithmic, labelled 1x, 2x,
// 5x..., so that from 1x to 2x takes as much height as from 25x to 50x,
// and a 0 (nothing released) is drawn at the bottom of the axis.
func TestPeaksChartLogScale(t *testing.T) {
	rep := doubleBurst()
	rep.Results[1].Peaks[0].Ratio = 50
	rep.Results[2].Peaks[0].Ratio = 0
	fig := peaksChart(rep)
	p := fig.plot
	if p == nil {
		t.Fatal("no plot")
	}
	if _, ok := p.Y.Scale.(plot.LogScale); !ok {
		t.Fatalf("Y scale %T, want plot.LogScale", p.Y.Scale)
	}
	one, two, fifty := p.Y.Norm(1), p.Y.Norm(2), p.Y.Norm(50)
	if two-one < 0.1 {
		t.Errorf("1x to 2x is %.3f of the axis, want at least 0.1 (a linear axis to 56x gives 0.018)", two-one)
	}
	if d := (fifty - p.Y.Norm(25)) - (two - one); math.Abs(d) > 1e-9 {
		t.Errorf("a doubling is not the same height everywhere: %v", d)
	}
	if p.Y.Min > 1 || p.Y.Max < 50 {
		t.Errorf("axis from %v to %v", p.Y.Min, p.Y.Max)
	}
	var labels []string
	for _, tk := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := []string{"0.5x", "1x", "2x", "5x", "10x", "20x", "50x"}; !slices.Equal(labels, want) {
		t.Errorf("ticks %q, want %q", labels, want)
	}
	c := Chart{Name: "peaks", Title: fig.title, fig: *fig}
	svg := string(renderChart(t, c, "svg"))
	for _, want := range []string{">50.0x<", ">2.0x<", ">0.0x<", ">1x<", ">2x<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("peaks.svg: no %q", want)
		}
	}
	// from the 1-2-5 step under the lowest bar with room, to the whole
	// multiple over the highest with room for its label: 3 x 1.5 = 4.5
	// -> 5x; 2 x 1.5 -> 3x; 60 x 1.5 -> 90x; never under 0.5x to 2x
	for _, c := range []struct{ low, top, lo, hi float64 }{
		{0.3, 3, 0.2, 5}, {1, 2, 0.5, 3}, {0.9, 60, 0.5, 90}, {1, 1, 0.5, 2}, {1, 7, 0.5, 20},
	} {
		if lo, hi := logAxisRange(c.low, c.top); lo != c.lo || hi != c.hi {
			t.Errorf("logAxisRange(%v, %v) = %v, %v, want %v, %v", c.low, c.top, lo, hi, c.lo, c.hi)
		}
	}
}

// TestStateChartBounds: a gauge that is a bound, constant above
// every other gauge of its panel (a leaky bucket's capacity, nginx's
// burst, the concurrency max), is drawn as a labelled dashed reference
// line and left out of the legend, not drawn as a data line; a gauge that
// merely did not move (a queue that stayed empty) is still data.
func TestStateChartBounds(t *testing.T) {
	rep := stateReport(t)
	var lb *sim.Result
	for i := range rep.Results {
		if rep.Results[i].Label == "token-bucket" {
			lb = &rep.Results[i]
		}
	}
	st := lb.State
	st.Names = []string{"tokens", "capacity", "queue"}
	for i := range st.Values {
		st.Values[i] = append(st.Values[i], 10, 0)
	}
	var gauges []stateGauge
	for _, pn := range statePanelsOf(rep) {
		if pn.title == "token-bucket" {
			gauges = pn.gauges
		}
	}
	want := []stateGauge{{name: "tokens", index: 0}, {name: "capacity", index: 1, constant: true, value: 10}, {name: "queue", index: 2}}
	if !slices.Equal(gauges, want) {
		t.Fatalf("gauges %+v, want %+v", gauges, want)
	}
	fig := stateChart(rep)
	for _, it := range fig.legend {
		if it.text == "capacity" {
			t.Error("the bound is in the legend")
		}
	}
	if !strings.Contains(fig.subtitle, "dashed: a bound") {
		t.Errorf("subtitle %q", fig.subtitle)
	}
	svg := string(renderChart(t, Chart{Name: "state", Title: fig.title, fig: *fig}, "svg"))
	if !strings.Contains(svg, ">capacity 10</text>") {
		t.Error("state.svg: the reference line is not labelled \"capacity 10\"")
	}
	if !strings.Contains(svg, "stroke-dasharray") {
		t.Error("state.svg: no dashed line")
	}

	// its axis counts requests, or the traffic's cost unit
	require.Contains(t, svg, ">requests</text>")
	rep.CostUnit = "tokens"
	svg = string(renderChart(t, Chart{Name: "state", fig: *stateChart(rep)}, "svg"))
	require.Contains(t, svg, ">tokens</text>")
	require.NotContains(t, svg, ">requests</text>", "cost-weighted state counted as requests")

	// a lone gauge that did not move is state, and so is one that another
	// goes above
	one := &sim.StateSeries{Names: []string{"tokens"}, TimesNs: []int64{0, 1}, Values: [][]float64{{10}, {10}}}
	if _, ok := boundGauge(one, 0); ok {
		t.Error("a lone constant gauge taken for a bound")
	}
	two := &sim.StateSeries{Names: []string{"previous", "current"}, TimesNs: []int64{0, 1}, Values: [][]float64{{5, 3}, {5, 7}}}
	if _, ok := boundGauge(two, 0); ok {
		t.Error("a constant gauge that another goes above taken for a bound")
	}
}

// TestNiceTicks: five to ten labels at round steps, counts in whole
// numbers.
func TestNiceTicks(t *testing.T) {
	labels := func(tk plot.Ticker, lo, hi float64) []string {
		var out []string
		for _, x := range tk.Ticks(lo, hi) {
			if x.Label != "" {
				out = append(out, x.Label)
			}
		}
		return out
	}
	require.Equal(t, []string{"0", "1", "2", "3", "4", "5", "6"}, labels(niceTicks{}, 0, 6.5))
	require.Equal(t, []string{"0.0", "0.5", "1.0", "1.5", "2.0", "2.5", "3.0"}, labels(niceTicks{}, 0, 3))
	require.Equal(t, []string{"0", "20", "40", "60", "80", "100", "120"}, labels(niceTicks{}, 0, 125))
	require.Equal(t, []string{"0", "1", "2", "3", "4", "5"}, labels(niceTicks{integer: true}, 0, 5.4))
	require.Equal(t, []string{"0", "1", "2"}, labels(niceTicks{integer: true}, 0, 2.2))
}

// TestPeaksChartWindows: by default the peaks chart holds each row to its
// policy's window only (the default W/10 is no limit: a leaky bucket's one
// request in 100ms at 5/s is no breach); a window the scenario chose is
// drawn as an observation window, grey, labelled with its count, never as
// a multiple of a limit.
func TestPeaksChartWindows(t *testing.T) {
	rep := doubleBurst() // windows 1s and 100ms: the default
	fig := peaksChart(rep)
	var texts []string
	for _, it := range fig.legend {
		texts = append(texts, it.text)
	}
	require.Equal(t, []string{"peak in any 1s (limit 10)", "the limit (ratio 1.0)"}, texts)
	svg := string(renderChart(t, Chart{Name: "peaks", fig: *fig}, "svg"))
	require.NotContains(t, svg, ">10.0x<", "the 100ms bars are not drawn")

	for i := range rep.Results { // report.windows: [1s, 100ms, 250ms]
		rep.Results[i].Peaks = append(rep.Results[i].Peaks, sim.Peak{WindowNs: 250 * ms, Count: 7, Ratio: 2.8})
	}
	fig = peaksChart(rep)
	require.Len(t, fig.legend, 2, "windows the scenario did not name are not drawn")
	rep.NamedWindowsNs = []int64{s, 100 * ms, 250 * ms}
	fig = peaksChart(rep)
	texts = nil
	for _, it := range fig.legend {
		texts = append(texts, it.text)
	}
	require.Contains(t, texts, "observation window 100ms (no limit of its own; height against 1 pro rata, label the count)")
	require.Contains(t, texts, "observation window 250ms (no limit of its own; height against 2.5 pro rata, label the count)")
	svg = string(renderChart(t, Chart{Name: "peaks", fig: *fig}, "svg"))
	require.NotContains(t, svg, ">2.8x<", "an observation window's bar is labelled with its count")
	require.Contains(t, svg, ">7<")

	// a file that writes exactly the default [1s, 100ms] named its 100ms:
	// what it wrote decides, not the values
	rep = doubleBurst()
	rep.NamedWindowsNs = []int64{s, 100 * ms}
	texts = nil
	for _, it := range peaksChart(rep).legend {
		texts = append(texts, it.text)
	}
	require.Equal(t, []string{"peak in any 1s (limit 10)",
		"observation window 100ms (no limit of its own; height against 1 pro rata, label the count)",
		"the limit (ratio 1.0)"}, texts)
}

// TestLongSubtitle: a subtitle wider than the chart (a long trace path)
// is wrapped between its clauses, and a path wider than a line by itself
// is shortened in its middle, keeping the file's name; every line fits.
func TestLongSubtitle(t *testing.T) {
	sty := textStyle(sansFont, 9)
	avail := 720 - 2*figPad
	path := "/data/" + strings.Repeat("x", 80) + "/" + strings.Repeat("y", 80) + "/azure_llm_2023_conversations.csv"
	sub := "replay " + path + ": limit 90000/1m burst 90000; sampled every 600ms"
	lines := fitLines(sty, sub, avail)
	require.Len(t, lines, 2)
	for _, l := range lines {
		require.LessOrEqual(t, sty.Width(l), avail, l)
	}
	require.True(t, strings.HasPrefix(lines[0], "replay /data/xxx"), lines[0])
	require.True(t, strings.HasSuffix(lines[0], "yyy/azure_llm_2023_conversations.csv:"), lines[0])
	require.Contains(t, lines[0], "…")
	require.Equal(t, "limit 90000/1m burst 90000; sampled every 600ms", lines[1], "a clause is not split")
	// a subtitle that fits is one line, as written
	require.Equal(t, []string{"double-burst: limit 10/1s burst 10"}, fitLines(sty, "double-burst: limit 10/1s burst 10", avail))

	// drawn: the chart shows both lines
	rep := doubleBurst()
	rep.Scenario = "replay " + path
	fig := peaksChart(rep)
	svg := string(renderChart(t, Chart{Name: "peaks", fig: *fig}, "svg"))
	require.Contains(t, svg, "yyy/azure_llm_2023_conversations.csv:</text>")
	require.Contains(t, svg, ">limit 10/1s burst 10; peaks are of what reached the backend</text>")
	require.NotContains(t, svg, strings.Repeat("x", 80), "the whole path, wider than the chart")
}
