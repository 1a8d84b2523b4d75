package sweep

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/expect"
	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/sim"
)

// Goal is a parsed --goal: an objective to minimize or maximize over the
// points, per algorithm, among the points that meet every constraint.
//
//	goal       = ("minimize" | "maximize") term [ "subject to" constraint { "and" constraint } ]
//	constraint = term ("<=" | "<" | ">=" | ">" | "==" | "!=") number
//	term       = metric [ "(" "key" "=" glob ")" | "(" window ")" ] | field
//	number     = 12 | 1.5 | 100ms
//
// A metric is a figure of a row in the expectation language (package
// expect, docs/expect.md: expect.GoalNames); a field is a varied field's
// path (limit.burst), standing for its value at the point. A key glob
// (path.Match: user-*, client-[0-9]) restricts rejected, offered and
// reject_pct to the keys whose names match; reject_pct is then 100 ×
// rejected attempts / requests of those keys.
type Goal struct {
	Text        string
	Maximize    bool
	Objective   Term
	Constraints []Constraint
}

// Term is what a goal reads of a row: a figure of the expectation
// language (maybe over some keys or in a window) or a varied field's
// value.
type Term struct {
	Text  string
	fig   *expect.Term // nil for a varied field
	field int          // -1: a figure
}

// figureTerm is the term of a figure named by itself (no parentheses).
func figureTerm(name string) Term {
	p, _ := expect.NewParser(name, goalError)
	t, _, _ := p.Figure(p.Next(), expect.GoalNames())
	return Term{Text: name, fig: &t, field: -1}
}

// Constraint is term op bound.
type Constraint struct {
	Term
	Op    string
	Bound float64
	// BoundText is the bound as written.
	BoundText string
}

func (c Constraint) String() string { return c.Text + " " + c.Op + " " + c.BoundText }

// goalError is a mistake in the goal at a column (1-based).
func goalError(col int, format string, args ...any) error {
	return usagef("--goal", "column %d: %s", col, fmt.Sprintf(format, args...))
}

// ParseGoal parses a goal over the metrics and the varied fields. Its
// errors are *Usage errors that give the column of the mistake.
func ParseGoal(s string, fields []Field) (*Goal, error) {
	p, err := expect.NewParser(s, goalError)
	if err != nil {
		return nil, err
	}
	gp := &goalParser{Parser: p, fields: fields}
	g := &Goal{Text: strings.Join(strings.Fields(s), " ")}
	t := p.Next()
	switch strings.ToLower(t.Text) {
	case "minimize":
	case "maximize":
		g.Maximize = true
	default:
		return nil, goalError(t.Col, "%s, want minimize or maximize", expect.Found(t))
	}
	if g.Objective, err = gp.term(); err != nil {
		return nil, err
	}
	if p.Done() {
		return g, nil
	}
	t = p.Next()
	if strings.ToLower(t.Text) != "subject" {
		return nil, goalError(t.Col, "%s, want \"subject to\" and the constraints, or the end", expect.Found(t))
	}
	if t = p.Next(); strings.ToLower(t.Text) != "to" {
		return nil, goalError(t.Col, "%s, want \"to\" after subject", expect.Found(t))
	}
	for {
		c, err := gp.constraint()
		if err != nil {
			return nil, err
		}
		g.Constraints = append(g.Constraints, c)
		if p.Done() {
			return g, nil
		}
		if t = p.Next(); strings.ToLower(t.Text) != "and" {
			return nil, goalError(t.Col, "%s, want \"and\" and another constraint, or the end", expect.Found(t))
		}
	}
}

type goalParser struct {
	*expect.Parser
	fields []Field
}

func (p *goalParser) term() (Term, error) {
	t := p.Next()
	if !expect.IsWord(t) {
		return Term{}, goalError(t.Col, "%s, want a metric (%s) or a varied field", expect.Found(t), strings.Join(expect.GoalNames(), ", "))
	}
	if i := fieldIndex(p.fields, t.Text); i >= 0 {
		for _, v := range p.fields[i].Values {
			if v.Kind != "int" && v.Kind != "decimal" && v.Kind != "duration" {
				return Term{}, goalError(t.Col, "%s: its value %q is not a number or a duration, want a field with numbers", t.Text, v.Text)
			}
		}
		return Term{Text: t.Text, field: i}, nil
	}
	ft, ok, err := p.Figure(t, expect.GoalNames())
	if err != nil {
		return Term{}, err
	}
	if !ok {
		want := "want a metric (" + strings.Join(expect.GoalNames(), ", ") + ")"
		if len(p.fields) > 0 {
			var paths []string
			for _, f := range p.fields {
				paths = append(paths, f.Path)
			}
			want += " or a varied field (" + strings.Join(paths, ", ") + ")"
		}
		return Term{}, goalError(t.Col, "%q is not a metric, %s", t.Text, want)
	}
	return Term{Text: ft.Text, fig: &ft, field: -1}, nil
}

func (p *goalParser) constraint() (Constraint, error) {
	term, err := p.term()
	if err != nil {
		return Constraint{}, err
	}
	op := p.Next()
	if !slices.Contains(expect.Ops, op.Text) {
		return Constraint{}, goalError(op.Col, "%s, want an operator: <=, <, >=, >, == or !=", expect.Found(op))
	}
	b := p.Next()
	v, ok := expect.ParseNumber(b.Text)
	if !ok {
		return Constraint{}, goalError(b.Col, "%s, want a number (1, 0.5) or a duration (100ms)", expect.Found(b))
	}
	return Constraint{Term: term, Op: op.Text, Bound: v, BoundText: b.Text}, nil
}

// Unmatched lists the goal's key globs that match no key at any point.
func (g *Goal) Unmatched(s *Sweep) []string {
	var out []string
	for _, glob := range g.Globs() {
		found := false
		for i := range s.Points {
			for _, groups := range s.Points[i].KeyGroups {
				for _, kg := range groups {
					found = found || kg.Glob == glob && kg.Keys > 0
				}
			}
		}
		if !found {
			out = append(out, glob)
		}
	}
	return out
}

// Globs are the key globs the goal names, in order, each once.
func (g *Goal) Globs() []string {
	var out []string
	add := func(t Term) {
		if g := t.glob(); g != "" && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	add(g.Objective)
	for _, c := range g.Constraints {
		add(c.Term)
	}
	return out
}

// value reads a term of row r (of result index row) at point p.
func (t Term) value(p *Point, row int, r *sim.Result) (float64, bool) {
	if t.field >= 0 {
		return p.Values[t.field].Num, true
	}
	var groups []sim.KeyGroup
	if row < len(p.KeyGroups) {
		groups = p.KeyGroups[row]
	}
	return t.fig.Value(r, groups)
}

// glob is the term's key glob, "" for none.
func (t Term) glob() string {
	if t.fig == nil {
		return ""
	}
	return t.fig.Glob
}

// isDuration says whether the term's values are durations.
func (t Term) isDuration(fields []Field) bool {
	if t.field >= 0 {
		return fields[t.field].Values[0].Kind == "duration"
	}
	return t.fig.Kind() == expect.Duration
}

// shortfall is how far v is from meeting c (0 when it does).
func (c Constraint) shortfall(v float64) float64 {
	switch c.Op {
	case "<=":
		return max(0, v-c.Bound)
	case "<":
		if v < c.Bound {
			return 0
		}
		return v - c.Bound
	case ">=":
		return max(0, c.Bound-v)
	case ">":
		if v > c.Bound {
			return 0
		}
		return c.Bound - v
	case "==":
		return math.Abs(v - c.Bound)
	}
	if v != c.Bound { // !=
		return 0
	}
	return 1
}

func (c Constraint) met(v float64) bool { return expect.Compare(v, c.Op, c.Bound, 0) }

// Choice is a point chosen for a label, with the objective there.
type Choice struct {
	Index     int
	Values    []Value
	Objective float64
	// Terms are the constraints' values at the point, in order.
	Terms []float64
}

// Near is, when no point meets every constraint, the constraint that came
// closest to being met: at which point, its value there and by how much it
// missed.
type Near struct {
	Constraint Constraint
	Index      int
	Values     []Value
	Value      float64
	By         float64
}

// Best is the goal's answer for one label.
type Best struct {
	Label    string
	Best     *Choice
	RunnerUp *Choice
	Closest  *Near
}

// Rank finds, for each label, the best point and the runner-up among the
// points that meet the constraints (ties go to the earlier point), or the
// constraint that came closest.
func (g *Goal) Rank(s *Sweep) ([]Best, error) {
	// each point's results, decoded once for every label
	rows := make([][]sim.Result, len(s.Points))
	for pi := range s.Points {
		rs, err := rowsOf(&s.Points[pi])
		if err != nil {
			return nil, err
		}
		rows[pi] = rs
	}
	ls := labelsOf(rows)
	out := make([]Best, len(ls))
	for li, label := range ls {
		b := Best{Label: label}
		var near *Near
		nearFails := 0
		for pi := range s.Points {
			p := &s.Points[pi]
			rs := rows[pi]
			row := -1
			for i := range rs {
				if rs[i].Label == label {
					row = i
				}
			}
			if row < 0 {
				continue
			}
			obj, ok := g.Objective.value(p, row, &rs[row])
			if !ok {
				continue
			}
			c := &Choice{Index: p.Index, Values: p.Values, Objective: obj}
			fails := 0
			var worst *Near
			for _, k := range g.Constraints {
				v, ok := k.value(p, row, &rs[row])
				c.Terms = append(c.Terms, v)
				if !ok {
					fails++
					continue
				}
				if !k.met(v) {
					fails++
					n := &Near{Constraint: k, Index: p.Index, Values: p.Values, Value: v, By: k.shortfall(v)}
					if worst == nil || relative(n) < relative(worst) {
						worst = n
					}
				}
			}
			if fails == 0 {
				switch {
				case b.Best == nil || g.better(obj, b.Best.Objective):
					b.Best, b.RunnerUp = c, b.Best
				case b.RunnerUp == nil || g.better(obj, b.RunnerUp.Objective):
					b.RunnerUp = c
				}
				continue
			}
			if worst != nil && (near == nil || fails < nearFails || fails == nearFails && relative(worst) < relative(near)) {
				near, nearFails = worst, fails
			}
		}
		if b.Best == nil {
			b.Closest = near
		}
		out[li] = b
	}
	return out, nil
}

func (g *Goal) better(a, b float64) bool {
	if g.Maximize {
		return a > b
	}
	return a < b
}

// relative is a miss as a share of its bound (the miss itself for a bound
// of 0).
func relative(n *Near) float64 {
	if n.Constraint.Bound == 0 {
		return n.By
	}
	return n.By / math.Abs(n.Constraint.Bound)
}

// formatFigure writes a goal's figure: a duration as one, a whole number
// as an integer, else with up to three decimals.
func formatFigure(v float64, duration bool) string {
	if duration {
		return output.FormatDuration(time.Duration(v))
	}
	return expect.FormatNumber(v)
}

// Lines writes the goal's answer, a line per choice.
func (g *Goal) Lines(fields []Field, bests []Best) []string {
	lines := []string{"Goal: " + g.Text}
	width := 0
	for _, b := range bests {
		width = max(width, len(b.Label))
	}
	describe := func(c *Choice) string {
		parts := []string{g.Objective.Text + " " + formatFigure(c.Objective, g.Objective.isDuration(fields))}
		for i, k := range g.Constraints {
			if k.Text == g.Objective.Text {
				continue
			}
			parts = append(parts, k.Text+" "+formatFigure(c.Terms[i], k.isDuration(fields)))
		}
		return "point " + strconv.Itoa(c.Index) + " (" + Describe(fields, c.Values) + "): " + strings.Join(parts, ", ")
	}
	for _, b := range bests {
		pad := strings.Repeat(" ", width-len(b.Label))
		switch {
		case b.Best != nil:
			lines = append(lines, "  "+b.Label+pad+"  best      "+describe(b.Best))
			if b.RunnerUp != nil {
				lines = append(lines, "  "+strings.Repeat(" ", width)+"  runner-up "+describe(b.RunnerUp))
			}
		case b.Closest != nil:
			n := b.Closest
			d := n.Constraint.isDuration(fields)
			lines = append(lines, fmt.Sprintf("  %s%s  no point meets the constraints; closest: %s, missed by %s at point %d (%s), where it is %s",
				b.Label, pad, n.Constraint, formatFigure(n.By, d), n.Index, Describe(fields, n.Values), formatFigure(n.Value, d)))
		default:
			lines = append(lines, "  "+b.Label+pad+"  no point has the figures the goal needs (a cluster or backend metric on other rows, baseline_differs_pct on the baseline row itself, or keys that no glob matches)")
		}
	}
	return lines
}

// Figure is the value of term (a metric, with its key filter, or a varied
// field, as a goal writes it) for label at the i-th point of s; false when
// the point has no such figure. An error is a term a goal would refuse.
func Figure(s *Sweep, term string, i int, label string) (float64, bool, error) {
	g, err := ParseGoal("minimize "+term, s.Fields)
	if err != nil {
		return 0, false, err
	}
	p := &s.Points[i]
	rs, err := rowsOf(p)
	if err != nil {
		return 0, false, err
	}
	for row := range rs {
		if rs[row].Label == label {
			v, ok := g.Objective.value(p, row, &rs[row])
			return v, ok, nil
		}
	}
	return 0, false, nil
}
