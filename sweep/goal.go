package sweep

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
)

// Goal is a parsed --goal: an objective to minimize or maximize over the
// points, per algorithm, among the points that meet every constraint.
//
//	goal       = ("minimize" | "maximize") term [ "subject to" constraint { "and" constraint } ]
//	constraint = term ("<=" | "<" | ">=" | ">" | "==" | "!=") number
//	term       = metric [ "(" "key" "=" glob ")" ] | field
//	number     = 12 | 1.5 | 100ms
//
// A metric is one of MetricNames; a field is a varied field's path
// (limit.burst), standing for its value at the point. A key glob
// (path.Match: user-*, client-[0-9]) restricts rejected, offered and
// reject_pct to the keys whose names match; reject_pct is then 100 ×
// rejected attempts / requests of those keys.
type Goal struct {
	Text        string
	Maximize    bool
	Objective   Term
	Constraints []Constraint
}

// Term is what a goal reads of a row: a metric (maybe over some keys) or a
// varied field's value.
type Term struct {
	Text   string
	metric *metricDef
	glob   string
	field  int // -1: a metric
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

type token struct {
	text string
	col  int
}

// lex splits a goal into words, operators and punctuation.
func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '(' || c == ')' || c == '=' && (i+1 >= len(s) || s[i+1] != '='):
			out = append(out, token{string(c), i + 1})
			i++
		case strings.ContainsRune("<>=!", rune(c)):
			j := i + 1
			if j < len(s) && s[j] == '=' {
				j++
			}
			op := s[i:j]
			if op == "!" {
				return nil, goalError(i+1, "%q, want an operator: <=, <, >=, >, == or !=", op)
			}
			out = append(out, token{op, i + 1})
			i = j
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t()<>=!", rune(s[j])) {
				j++
			}
			if j == i {
				return nil, goalError(i+1, "unexpected %q", s[i:i+1])
			}
			out = append(out, token{s[i:j], i + 1})
			i = j
		}
	}
	return out, nil
}

// ParseGoal parses a goal over the metrics and the varied fields. Its
// errors are *Usage errors that give the column of the mistake.
func ParseGoal(s string, fields []Field) (*Goal, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &goalParser{toks: toks, fields: fields, end: len(s) + 1}
	g := &Goal{Text: strings.Join(strings.Fields(s), " ")}
	t := p.next()
	switch strings.ToLower(t.text) {
	case "minimize":
	case "maximize":
		g.Maximize = true
	default:
		return nil, goalError(t.col, "%s, want minimize or maximize", p.found(t))
	}
	if g.Objective, err = p.term(); err != nil {
		return nil, err
	}
	if p.done() {
		return g, nil
	}
	t = p.next()
	if strings.ToLower(t.text) != "subject" {
		return nil, goalError(t.col, "%s, want \"subject to\" and the constraints, or the end", p.found(t))
	}
	if t = p.next(); strings.ToLower(t.text) != "to" {
		return nil, goalError(t.col, "%s, want \"to\" after subject", p.found(t))
	}
	for {
		c, err := p.constraint()
		if err != nil {
			return nil, err
		}
		g.Constraints = append(g.Constraints, c)
		if p.done() {
			return g, nil
		}
		if t = p.next(); strings.ToLower(t.text) != "and" {
			return nil, goalError(t.col, "%s, want \"and\" and another constraint, or the end", p.found(t))
		}
	}
}

type goalParser struct {
	toks   []token
	i      int
	fields []Field
	end    int
}

func (p *goalParser) done() bool { return p.i >= len(p.toks) }

func (p *goalParser) next() token {
	if p.done() {
		return token{"", p.end}
	}
	t := p.toks[p.i]
	p.i++
	return t
}

func (p *goalParser) peek() token {
	if p.done() {
		return token{"", p.end}
	}
	return p.toks[p.i]
}

func (p *goalParser) found(t token) string {
	if t.text == "" {
		return "the end"
	}
	return strconv.Quote(t.text)
}

func (p *goalParser) term() (Term, error) {
	t := p.next()
	if t.text == "" || strings.ContainsAny(t.text, "()=<>!") {
		return Term{}, goalError(t.col, "%s, want a metric (%s) or a varied field", p.found(t), strings.Join(MetricNames(), ", "))
	}
	if i := fieldIndex(p.fields, t.text); i >= 0 {
		for _, v := range p.fields[i].Values {
			if v.Kind != "int" && v.Kind != "decimal" && v.Kind != "duration" {
				return Term{}, goalError(t.col, "%s: its value %q is not a number or a duration, want a field with numbers", t.text, v.Text)
			}
		}
		return Term{Text: t.text, field: i}, nil
	}
	m, ok := metricByName(t.text)
	if !ok {
		want := "want a metric (" + strings.Join(MetricNames(), ", ") + ")"
		if len(p.fields) > 0 {
			var paths []string
			for _, f := range p.fields {
				paths = append(paths, f.Path)
			}
			want += " or a varied field (" + strings.Join(paths, ", ") + ")"
		}
		return Term{}, goalError(t.col, "%q is not a metric, %s", t.text, want)
	}
	term := Term{Text: t.text, metric: m, field: -1}
	if p.peek().text != "(" {
		return term, nil
	}
	open := p.next()
	if !m.keyed {
		return Term{}, goalError(open.col, "%s takes no key filter, want one of rejected, offered, reject_pct for (key=GLOB)", t.text)
	}
	if k := p.next(); k.text != "key" {
		return Term{}, goalError(k.col, "%s, want key=GLOB in the parentheses", p.found(k))
	}
	if e := p.next(); e.text != "=" {
		return Term{}, goalError(e.col, "%s, want = after key", p.found(e))
	}
	g := p.next()
	if g.text == "" || strings.ContainsAny(g.text, "()=<>!") {
		return Term{}, goalError(g.col, "%s, want a key glob such as user-*", p.found(g))
	}
	if _, err := path.Match(g.text, ""); err != nil {
		return Term{}, goalError(g.col, "%q: %v, want a glob such as user-* or client-[0-9]", g.text, err)
	}
	if c := p.next(); c.text != ")" {
		return Term{}, goalError(c.col, "%s, want ) after the glob", p.found(c))
	}
	term.glob = g.text
	term.Text = t.text + "(key=" + g.text + ")"
	return term, nil
}

var ops = []string{"<=", "<", ">=", ">", "==", "!="}

func (p *goalParser) constraint() (Constraint, error) {
	term, err := p.term()
	if err != nil {
		return Constraint{}, err
	}
	op := p.next()
	valid := false
	for _, o := range ops {
		valid = valid || op.text == o
	}
	if !valid {
		return Constraint{}, goalError(op.col, "%s, want an operator: <=, <, >=, >, == or !=", p.found(op))
	}
	b := p.next()
	v, ok := number(b.text)
	if !ok {
		return Constraint{}, goalError(b.col, "%s, want a number (1, 0.5) or a duration (100ms)", p.found(b))
	}
	return Constraint{Term: term, Op: op.text, Bound: v, BoundText: b.text}, nil
}

// number reads a bound: a number, or a duration in nanoseconds.
func number(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) && strings.IndexAny(s, "xXpPnN_") < 0 {
		return v, true
	}
	if d, err := scenarios.ParseSignedDuration(s); err == nil {
		return float64(d), true
	}
	return 0, false
}

// Unmatched lists the goal's key globs that match no key at any point.
func (g *Goal) Unmatched(s *Sweep) []string {
	var out []string
	for _, glob := range g.Globs() {
		found := false
		for i := range s.Points {
			for row := range s.Points[i].KeyGroups {
				if kg, ok := keyGroup(&s.Points[i], row, glob); ok && kg.Keys > 0 {
					found = true
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
		if t.glob != "" && !contains(out, t.glob) {
			out = append(out, t.glob)
		}
	}
	add(g.Objective)
	for _, c := range g.Constraints {
		add(c.Term)
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// value reads a term of row r (of result index row) at point p.
func (t Term) value(p *Point, row int, r *sim.Result) (float64, bool) {
	if t.field >= 0 {
		return p.Values[t.field].Num, true
	}
	if t.glob == "" {
		return t.metric.get(r)
	}
	kg, ok := keyGroup(p, row, t.glob)
	if !ok || kg.Keys == 0 {
		return 0, false // no key matches: no figure, not 0%
	}
	switch t.metric.name {
	case "rejected":
		return float64(kg.Rejected), true
	case "offered":
		return float64(kg.Offered), true
	}
	return pct(kg.Rejected, kg.Offered)
}

// isDuration says whether the term's values are durations.
func (t Term) isDuration(fields []Field) bool {
	if t.field >= 0 {
		return fields[t.field].Values[0].Kind == "duration"
	}
	return t.metric.duration
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

func (c Constraint) met(v float64) bool {
	switch c.Op {
	case "<=":
		return v <= c.Bound
	case "<":
		return v < c.Bound
	case ">=":
		return v >= c.Bound
	case ">":
		return v > c.Bound
	case "==":
		return v == c.Bound
	}
	return v != c.Bound
}

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
	ls, err := labels(s)
	if err != nil {
		return nil, err
	}
	out := make([]Best, len(ls))
	for li, label := range ls {
		b := Best{Label: label}
		var near *Near
		nearFails := 0
		for pi := range s.Points {
			p := &s.Points[pi]
			rs, _ := rowsOf(p)
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
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
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
