// Package sweep runs a scenario over a grid of parameter values
// (docs/sweep.md): every combination of the values of the varied fields is a
// grid point, the scenario file with those values written in, and its
// results are exactly what `ratesim compare` gives for that file.
//
// Points are independent, and each runs through the runner, as compare
// runs a scenario. Those whose scenarios differ only in the algorithm rows
// (the limit's rate and burst, an algorithm's options) run together as the
// rows of one run (runner.RunTogether), which generates their traffic
// once and decides every row on it (sim's feed); other points run beside
// them, several runs at once. Results come back in grid order (the
// last field varies fastest) whatever the number of cores, since every
// row's result depends only on its own configuration and the traffic.
// Memory is bounded by the points in flight (PointsPerRun per run,
// Parallel runs), not by the grid; what is kept per point is its results'
// JSON.
//
// Nothing here prints or exits: cmd/sweep.go parses the flags and writes
// what Run returns.
package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ratesim/ratesim/expect"
	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/runner"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

// PointsPerRun is how many points share one sim.Run at most (and so one
// generation of their traffic) unless Options say otherwise.
const PointsPerRun = 64

// Shard selects the points whose index mod N is K; N 0 selects all.
type Shard struct{ K, N int }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// Has reports whether point i is in the shard.
func (s Shard) Has(i int) bool { return s.N == 0 || i%s.N == s.K }

// Options say what to sweep.
type Options struct {
	Base   *Base
	Fields []Field
	Shard  Shard
	// KeyGlobs are the key patterns the goal's metrics filter by: each
	// point's result then carries the totals of the matching keys.
	KeyGlobs []string
	// TopKeys is compare's --top (0: its default).
	TopKeys int
	// Baseline, when set, holds every row of each point against the row
	// of that point with this label (compare's --baseline): each point
	// then runs alone, since sim.Config's baseline is one row of a run.
	Baseline string
	// Parallel is how many sim.Runs go at once (default GOMAXPROCS);
	// PointsPerRun how many points one holds (default PointsPerRun).
	Parallel     int
	PointsPerRun int
	// Progress, when set, is told how far the sweep is: how many points
	// are done (fractions for the points under way) out of the total, and
	// how far into a trace of unknown length a run is. It is called from
	// several goroutines, one at a time.
	Progress func(Progress)
	// Budget, when not zero, bounds each point's estimate
	// (runner.EstimateOf), and MaxTotalRequests (when > 0) the decisions
	// of the points of the shard together: a sweep over either does not
	// start, and Run returns a *runner.BudgetError.
	Budget           runner.Budget
	MaxTotalRequests int64
	// Claims are the scenario's expectations (expect.Compile): each
	// point's report windows include those they read.
	Claims []expect.Claim
}

// Sweep is the outcome: the points of the grid (of the shard) in grid
// order.
type Sweep struct {
	Scenario string
	Fields   []Field
	// Expect is the scenario's expect section as written (the claims'
	// Expectations), which the JSON keeps so that ratesim sweep merge
	// holds the merged points to it as the sweep does.
	Expect []scenarios.Expectation
	// Total is the number of points of the whole grid.
	Total    int
	Shard    Shard
	KeyGlobs []string
	Points   []Point
	// CostUnit is what the peaks count when a request may cost more than
	// 1 (traffic.CostUnit of the scenario's traffic); "" for requests.
	CostUnit string
}

// Point is one grid point: its index in the grid, the value of each field,
// and its results as compare's JSON writes them (compact), or the reason
// the scenario or the run refused it.
type Point struct {
	Index   int
	Values  []Value
	Results json.RawMessage
	Error   string
	// KeyGroups[i] are result i's totals for Sweep.KeyGlobs.
	KeyGroups [][]sim.KeyGroup
}

// GridSize is the number of points of the grid of fields.
func GridSize(fields []Field) int {
	n := 1
	for _, f := range fields {
		n *= len(f.Values)
	}
	return n
}

// ValuesAt returns the values of point i, the last field varying fastest.
func ValuesAt(fields []Field, i int) []Value {
	vs := make([]Value, len(fields))
	for j := len(fields) - 1; j >= 0; j-- {
		n := len(fields[j].Values)
		vs[j] = fields[j].Values[i%n]
		i /= n
	}
	return vs
}

// Describe names a point by its values: limit.burst=5 cluster.nodes=4.
func Describe(fields []Field, vs []Value) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Path + "=" + vs[i].Text
	}
	return strings.Join(parts, " ")
}

// CheckFields checks the fields against the base scenario: each must be
// one the scenario can take, and no field twice. The error is a *Usage.
func CheckFields(b *Base, fields []Field) error {
	if len(fields) == 0 {
		return usagef("--vary", "none given, want at least one --vary FIELD=VALUES")
	}
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.Path] {
			return usagef("--vary", "%s is varied twice, want each field once (give all its values in one --vary)", f.Path)
		}
		seen[f.Path] = true
		if err := b.Check(f); err != nil {
			return err
		}
	}
	if n := GridSize(fields); n > MaxPoints || n <= 0 {
		return usagef("--vary", "the grid has more than %d points, want fewer values", MaxPoints)
	}
	return nil
}

// prepared is a point ready to run: its scenario, with the values
// written in.
type prepared struct {
	point *Point
	sc    *scenarios.Scenario
}

// Run runs the points of the grid in the shard.
func Run(o Options) (*Sweep, error) {
	if err := CheckFields(o.Base, o.Fields); err != nil {
		return nil, err
	}
	total := GridSize(o.Fields)
	s := &Sweep{Scenario: o.Base.Sc.Name, Fields: o.Fields, Total: total, Shard: o.Shard, KeyGlobs: o.KeyGlobs,
		CostUnit: traffic.CostUnit(o.Base.Sc.Traffic)}
	for _, c := range o.Claims {
		s.Expect = append(s.Expect, c.Expectation)
	}
	for i := range total {
		if o.Shard.Has(i) {
			s.Points = append(s.Points, Point{Index: i, Values: ValuesAt(o.Fields, i)})
		}
	}
	prep := build(o, s.Points)
	if err := checkBudget(o, prep); err != nil {
		return nil, err
	}
	par := o.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	per := o.PointsPerRun
	if per <= 0 {
		per = PointsPerRun
	}
	if o.Baseline != "" {
		per = 1
	}
	prog := &progress{report: o.Progress, total: len(s.Points)}
	window := per * par
	for start := 0; start < len(s.Points); start += window {
		pts := prep[start:min(start+window, len(prep))]
		var chunks [][]*prepared
		for _, g := range group(o, pts) {
			for len(g) > 0 {
				n := min(per, len(g))
				chunks = append(chunks, g[:n])
				g = g[n:]
			}
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, par)
		for _, c := range chunks {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				runChunk(o, c, prog)
			}()
		}
		wg.Wait()
		clear(pts) // the window's scenarios are done with
	}
	return s, nil
}

// build builds each point's scenario once, for checkBudget and the runs;
// a point whose edit or scenario is in error is done, without one.
func build(o Options, pts []Point) []prepared {
	prep := make([]prepared, len(pts))
	for i := range pts {
		p := &pts[i]
		prep[i].point = p
		f, err := o.Base.Point(o.Fields, p.Values)
		if err != nil {
			p.Error = err.Error()
			continue
		}
		sc, err := scenarios.Build(f)
		if err != nil {
			p.Error = reason(err)
			continue
		}
		prep[i].sc = sc
	}
	return prep
}

// checkBudget estimates every point before any runs: one over the
// budget, or all of them together over MaxTotalRequests, stops the sweep.
// A point whose scenario is in error is left to report it.
func checkBudget(o Options, pts []prepared) error {
	if o.Budget == (runner.Budget{}) && o.MaxTotalRequests <= 0 {
		return nil
	}
	sum := &runner.Estimate{}
	for _, p := range pts {
		if p.sc == nil {
			continue
		}
		e, err := runner.EstimateOf(p.sc)
		if err != nil {
			continue
		}
		if err := o.Budget.Check(e); err != nil {
			if be, ok := errors.AsType[*runner.BudgetError](err); ok {
				be.What = "point " + Describe(o.Fields, p.point.Values)
			}
			return err
		}
		sum.Add(e)
	}
	if o.MaxTotalRequests > 0 && sum.Work > o.MaxTotalRequests {
		return &runner.BudgetError{Estimate: sum, Budget: runner.Budget{MaxRequests: o.MaxTotalRequests},
			What: fmt.Sprintf("the sweep of %d points", len(pts)), Flag: "--max-total-requests"}
	}
	return nil
}

// group groups the built points that can share one sim.Run, in the order
// of their first point; points in error are done.
func group(o Options, pts []prepared) [][]*prepared {
	var groups [][]*prepared
	for i := range pts {
		pp := &pts[i]
		sc := pp.sc
		if sc == nil {
			continue
		}
		if err := scenarios.CheckFiles(sc); err != nil {
			pp.point.Error = reason(err)
			continue
		}
		expect.AddWindows(o.Claims, sc)
		placed := false
		for j, g := range groups {
			if runner.Together(g[0].sc, sc) {
				groups[j] = append(g, pp)
				placed = true
				break
			}
		}
		if !placed {
			groups = append(groups, []*prepared{pp})
		}
	}
	return groups
}

// reason is a scenario's error without the positions in the edited text:
// the field and what is wrong with it.
func reason(err error) string {
	var list scenarios.Errors
	if errors.As(err, &list) {
		msgs := make([]string, len(list))
		for i, e := range list {
			if e.Path != "" {
				msgs[i] = e.Path + ": " + e.Msg
			} else {
				msgs[i] = e.Msg
			}
		}
		return strings.Join(msgs, "; ")
	}
	return err.Error()
}

// runChunk runs the points of one group as one run of the runner
// (runner.RunTogether), and each point on its own when that fails (to
// tell which point failed).
func runChunk(o Options, c []*prepared, prog *progress) {
	scs := make([]*scenarios.Scenario, len(c))
	for i, p := range c {
		scs[i] = p.sc
	}
	id := prog.start(len(c))
	reps, err := runner.RunTogether(scs, runner.Options{
		TopKeys:  o.TopKeys,
		KeyGlobs: o.KeyGlobs,
		Baseline: o.Baseline,
		Progress: func(done, total time.Duration) { prog.update(id, done, total) },
	})
	prog.finish(id)
	if err != nil && len(c) > 1 {
		for _, p := range c {
			runChunk(o, []*prepared{p}, prog)
		}
		return
	}
	if err != nil {
		c[0].point.Error = err.Error()
		return
	}
	for i, p := range c {
		rs := reps[i].Results
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(output.JSONResults(rs)); err != nil {
			p.point.Error = err.Error()
			continue
		}
		p.point.Results = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if len(o.KeyGlobs) > 0 {
			for _, r := range rs {
				p.point.KeyGroups = append(p.point.KeyGroups, r.KeyGroups)
			}
		}
	}
}
