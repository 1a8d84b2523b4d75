package expect

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/human"
	"github.com/ratesim/ratesim/runner"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
)

// Claim is one assertion of a scenario's expect section, read.
type Claim struct {
	scenarios.Expectation
	*Assertion
}

// Compile reads the assertions of the scenario's expect section. The
// error is a scenarios.Errors naming each mistake at file:line:col.
func Compile(sc *scenarios.Scenario) ([]Claim, error) {
	return CompileAll(sc.Expect)
}

// CompileAll reads assertions as written in an expect section (a sweep's
// JSON keeps them for ratesim sweep merge).
func CompileAll(es []scenarios.Expectation) ([]Claim, error) {
	var claims []Claim
	var errs scenarios.Errors
	for _, e := range es {
		a, err := Parse(e.Text)
		if err != nil {
			se := &SyntaxError{Col: 1, Msg: err.Error()}
			errors.As(err, &se)
			errs = append(errs, e.Err(se.Col, se.Msg))
			continue
		}
		claims = append(claims, Claim{Expectation: e, Assertion: a})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return claims, nil
}

// Status is what became of a claim on one row.
type Status uint8

// The statuses of an outcome.
const (
	// Holds: the figure meets the assertion.
	Holds Status = iota
	// Fails: it does not, or the row named has no such figure.
	Fails
	// NotApplicable: a claim on all rows, on a row without the figure,
	// or a claim on a row this run left out (--algorithms).
	NotApplicable
)

func (s Status) String() string {
	switch s {
	case Holds:
		return "holds"
	case Fails:
		return "fails"
	}
	return "n/a"
}

// Outcome is a claim held against one row of a run.
type Outcome struct {
	Claim  Claim
	Row    string
	Status Status
	// Measured is the row's figure when Has.
	Measured float64
	Has      bool
	// Note says why there is no figure.
	Note string
}

// MeasuredText writes the figure measured, or "none".
func (o Outcome) MeasuredText() string {
	if !o.Has {
		return "none"
	}
	return o.Claim.Format(o.Measured)
}

// Plan is what a run needs for its claims to be held: the report windows
// and key globs they read, the decisions they watch.
type Plan struct {
	claims []Claim
	// found[row][claim] is the decision a claim reads on a row
	found [][]*sim.Decision
}

// Prepare adds to the scenario and the options of its run what the
// claims read: windows the report does not have yet (after its own, so
// that the tables' first window stays the policy's), key globs, and an
// observer of the decisions that claims on one decision read. Call it
// before runner.Run, and Evaluate after.
func Prepare(claims []Claim, sc *scenarios.Scenario, o *runner.Options) *Plan {
	p := &Plan{claims: claims}
	AddWindows(claims, sc)
	for _, g := range Globs(claims) {
		if !slices.Contains(o.KeyGlobs, g) {
			o.KeyGlobs = append(o.KeyGlobs, g)
		}
	}
	for _, c := range claims {
		if c.fig.decision {
			// the runner keeps the rows named by Options.Algorithms:
			// their labels are known once it has run, so the watch is by
			// index
			o.Watch = p.watch
			break
		}
	}
	return p
}

// watch is the observer of row i's decisions.
func (p *Plan) watch(i int) sim.Observer {
	for len(p.found) <= i {
		p.found = append(p.found, nil)
	}
	p.found[i] = make([]*sim.Decision, len(p.claims))
	return &watcher{claims: p.claims, found: p.found[i], seen: make([]int, len(p.claims))}
}

// watcher finds, among one row's decisions, those the claims on one
// decision read (for every claim, whichever row it names: the row is
// chosen when the outcomes are made).
type watcher struct {
	claims []Claim
	found  []*sim.Decision
	seen   []int
	left   int
	init   bool
}

func (w *watcher) Observe(d *sim.Decision) error {
	if !w.init {
		w.init = true
		for _, c := range w.claims {
			if c.fig.decision {
				w.left++
			}
		}
	}
	for i, c := range w.claims {
		if !c.fig.decision || w.found[i] != nil {
			continue
		}
		if c.AtSet && d.Time != c.At {
			continue
		}
		if c.Glob != "" {
			if ok, _ := path.Match(c.Glob, d.Key); !ok {
				continue
			}
		}
		w.seen[i]++
		if w.seen[i] == c.N {
			dc := *d
			w.found[i] = &dc
			w.left--
		}
	}
	if w.left == 0 {
		return sim.ErrStopObserving
	}
	return nil
}

// Evaluate holds every claim against the rows of the run (rep, made with
// the options Prepare set): a claim on all rows gives an outcome per row,
// in the rows' order. A claim on an algorithm's state at one decision
// runs that row again to read its state there.
func (p *Plan) Evaluate(rep *runner.Report) ([]Outcome, error) {
	groups := make([][]sim.KeyGroup, len(rep.Results))
	for i := range rep.Results {
		groups[i] = rep.Results[i].KeyGroups
	}
	return hold(p.claims, rep.Results, groups, func(ci, row int, o *Outcome) (bool, error) {
		return true, p.decision(rep, ci, row, o)
	})
}

// Rows holds the claims against rows known by their figures alone (a
// sweep's points): groups[i] are row i's totals per key glob. A claim on
// one decision does not apply there.
func Rows(claims []Claim, results []sim.Result, groups [][]sim.KeyGroup) []Outcome {
	outs, _ := hold(claims, results, groups, func(_, _ int, o *Outcome) (bool, error) {
		o.Note = "read of a single run only (ratesim check, compare)"
		return false, nil
	})
	return outs
}

// hold makes the outcomes; decision reads a claim on one decision, or
// says it does not apply.
func hold(claims []Claim, results []sim.Result, groups [][]sim.KeyGroup, decision func(ci, row int, o *Outcome) (bool, error)) ([]Outcome, error) {
	var out []Outcome
	for ci, c := range claims {
		rows := []int{}
		for i, r := range results {
			if c.Row == scenarios.AllRows || r.Label == c.Row {
				rows = append(rows, i)
			}
		}
		if len(rows) == 0 {
			out = append(out, Outcome{Claim: c, Row: c.Row, Status: NotApplicable, Note: "the row was not run"})
			continue
		}
		for _, i := range rows {
			r := &results[i]
			o := Outcome{Claim: c, Row: r.Label}
			applies := true
			if c.fig.decision {
				var err error
				if applies, err = decision(ci, i, &o); err != nil {
					return nil, err
				}
			} else {
				var g []sim.KeyGroup
				if i < len(groups) {
					g = groups[i]
				}
				if o.Measured, o.Has = c.Value(r, g); !o.Has {
					o.Note = "the row has no " + c.Term.Text
				}
			}
			switch {
			case o.Has && c.Holds(o.Measured):
				o.Status = Holds
			case !applies || !o.Has && c.Row == scenarios.AllRows:
				o.Status = NotApplicable
			default:
				o.Status = Fails
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// decision reads claim ci's decision on row.
func (p *Plan) decision(rep *runner.Report, ci, row int, o *Outcome) error {
	c := p.claims[ci]
	var d *sim.Decision
	if row < len(p.found) && p.found[row] != nil {
		d = p.found[row][ci]
	}
	if d == nil {
		o.Note = "no such decision"
		if c.AtSet {
			o.Note = "no decision at " + formatInstant(c.At)
		}
		return nil
	}
	switch c.fig.name {
	case "verdict":
		o.Measured, o.Has = float64(d.Verdict), true
	case "delay":
		o.Measured, o.Has = float64(d.Delay), true
	case "retry_after":
		o.Measured, o.Has = float64(d.RetryAfter), true
	case "granted":
		o.Measured, o.Has = float64(algorithms.GrantedOf(d.Decision, d.Cost)), true
	default:
		v, note, err := stateAt(rep, row, d, c.gauge())
		if err != nil {
			return err
		}
		o.Measured, o.Has, o.Note = v, note == "", note
	}
	return nil
}

// AddWindows adds to the scenario's report windows those the claims read
// that it lacks, after its own (as Prepare does).
func AddWindows(claims []Claim, sc *scenarios.Scenario) {
	for _, c := range claims {
		if c.fig.windowed && c.Window > 0 && !slices.Contains(sc.Windows, c.Window) {
			sc.Windows = append(sc.Windows, c.Window)
		}
	}
}

// Globs are the key globs the claims' figures filter by, each once.
func Globs(claims []Claim) []string {
	var out []string
	for _, c := range claims {
		if c.fig.keyed && c.Glob != "" && !slices.Contains(out, c.Glob) {
			out = append(out, c.Glob)
		}
	}
	return out
}

// gauge is the name of the gauge a state term reads.
func (t Term) gauge() string {
	if t.fig.name == "estimate" {
		return "estimate"
	}
	return t.Gauge
}

// stateAt runs row again, alone, sampling the state of d's key at d's
// instant (before any decision at that instant), and reads gauge there.
// note says why there is no figure.
func stateAt(rep *runner.Report, row int, d *sim.Decision, gauge string) (float64, string, error) {
	cfg := rep.Config
	cfg.Algorithms = []sim.Algorithm{cfg.Algorithms[row]}
	cfg.Observe, cfg.Progress, cfg.Check, cfg.Baseline = nil, nil, nil, ""
	cfg.TopKeys, cfg.KeyGlobs = 0, nil
	// samples at the series' start and every Every from it: with buckets
	// of d.Time, the series starts at 0 or at d.Time, and a sample falls
	// on d.Time
	if d.Time > 0 {
		cfg.Bucket = d.Time
	}
	cfg.Inspect = &sim.Inspect{Key: d.Key, Every: cfg.Bucket}
	res, err := sim.Run(cfg)
	if err != nil {
		return 0, "", err
	}
	st := res.Results[0].State
	if st == nil {
		return 0, "the algorithm shows no state", nil
	}
	// a gauge's name is written with _ for its spaces (in_window)
	names := make([]string, len(st.Names))
	for i, n := range st.Names {
		names[i] = strings.ReplaceAll(n, " ", "_")
	}
	g := slices.Index(names, gauge)
	if g < 0 {
		return 0, fmt.Sprintf("the algorithm's state has no %s (it has %s)", gauge, joinOr(names)), nil
	}
	for i, t := range st.TimesNs {
		if t == int64(d.Time) {
			return st.Values[i][g], "", nil
		}
	}
	return 0, "the state was not sampled at " + formatInstant(d.Time) + " (the run is too long for it)", nil
}

func joinOr(names []string) string {
	switch len(names) {
	case 0:
		return "nothing"
	case 1:
		return names[0]
	}
	s := ""
	for i, n := range names {
		switch {
		case i == len(names)-1:
			s += " or " + n
		case i > 0:
			s += ", " + n
		default:
			s += n
		}
	}
	return s
}

// formatInstant writes an instant of the run as a duration from its
// start (1m15s).
func formatInstant(t time.Duration) string { return human.Duration(t) }

// Failed counts the outcomes that fail.
func Failed(outs []Outcome) int {
	n := 0
	for _, o := range outs {
		if o.Status == Fails {
			n++
		}
	}
	return n
}
