// Package expect is the language of claims about a run's figures: the
// expectations a scenario file lists under expect: (docs/expect.md), and
// the terms and constraints of a sweep's --goal (docs/sweep.md). It parses
// them, names every mistake by its column, and holds them against a run's
// report.
package expect

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/didyoumean"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
)

// Token is a word, an operator or a punctuation mark of an expression,
// with its column (1-based).
type Token struct {
	Text string
	Col  int
}

// ErrFunc makes the error of a mistake at a column.
type ErrFunc func(col int, format string, args ...any) error

// Parser reads the tokens of one expression.
type Parser struct {
	toks []Token
	i    int
	end  int
	errf ErrFunc
}

// NewParser splits s into words, operators (<=, <, >=, >, ==, !=, =) and
// punctuation ( ) , ; errf makes its errors.
func NewParser(s string, errf ErrFunc) (*Parser, error) {
	var out []Token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '(' || c == ')' || c == ',' || c == '=' && (i+1 >= len(s) || s[i+1] != '='):
			out = append(out, Token{string(c), i + 1})
			i++
		case strings.ContainsRune("<>=!", rune(c)):
			j := i + 1
			if j < len(s) && s[j] == '=' {
				j++
			}
			op := s[i:j]
			if op == "!" {
				return nil, errf(i+1, "%q, want an operator: <=, <, >=, >, == or !=", op)
			}
			out = append(out, Token{op, i + 1})
			i = j
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t(),<>=!", rune(s[j])) {
				j++
			}
			if j == i {
				return nil, errf(i+1, "unexpected %q", s[i:i+1])
			}
			out = append(out, Token{s[i:j], i + 1})
			i = j
		}
	}
	return &Parser{toks: out, end: len(s) + 1, errf: errf}, nil
}

// Done reports whether every token has been read.
func (p *Parser) Done() bool { return p.i >= len(p.toks) }

// Next reads a token; at the end, an empty one at the column after the
// text.
func (p *Parser) Next() Token {
	if p.Done() {
		return Token{"", p.end}
	}
	t := p.toks[p.i]
	p.i++
	return t
}

// Peek is the next token, not read.
func (p *Parser) Peek() Token {
	if p.Done() {
		return Token{"", p.end}
	}
	return p.toks[p.i]
}

// Found writes a token for a message: quoted, or "the end".
func Found(t Token) string {
	if t.Text == "" {
		return "the end"
	}
	return strconv.Quote(t.Text)
}

// IsWord reports whether t can be a name or a value (not an operator,
// not punctuation, not the end).
func IsWord(t Token) bool { return t.Text != "" && !strings.ContainsAny(t.Text, "(),=<>!") }

// Term is a figure of a row that an expression reads, with what its
// parentheses say.
type Term struct {
	// Text is the term as written, spaces left out: reject_pct(key=user-*).
	Text string
	fig  *figure
	// Glob restricts a keyed figure to the keys it matches (path.Match),
	// or a decision to them.
	Glob string
	// Window is a windowed figure's window; 0: the first report window.
	Window time.Duration
	// At, when AtSet, is a decision's instant; N picks the N-th decision
	// (1-based) at At, or of the row.
	At    time.Duration
	AtSet bool
	N     int
	// Gauge is the state's gauge a decision's state term reads.
	Gauge string
}

// Name is the figure's name.
func (t Term) Name() string { return t.fig.name }

// Kind is what the term's values are.
func (t Term) Kind() Kind { return t.fig.kind }

// Doc says what the figure is.
func (t Term) Doc() string { return t.fig.doc }

// Decision reports whether the term reads one decision.
func (t Term) Decision() bool { return t.fig.decision }

// Figure reads the figure named by name, a token just read, and what
// follows it in parentheses. ok is false when name is no figure in names
// (the caller says what it wants instead).
func (p *Parser) Figure(name Token, names []string) (t Term, ok bool, err error) {
	fig, found := figureByName(name.Text)
	if !found || !contains(names, name.Text) {
		return Term{}, false, nil
	}
	t = Term{Text: name.Text, fig: fig, N: 1}
	if p.Peek().Text != "(" {
		switch {
		case fig.name == "state":
			return Term{}, true, p.errf(p.Peek().Col, "state reads one decision, want state(at=TIME, gauge=NAME)")
		case fig.decision:
			return Term{}, true, p.errf(p.Peek().Col, "%s reads one decision, want %s(at=TIME) or %s(n=N)", fig.name, fig.name, fig.name)
		}
		return t, true, nil
	}
	open := p.Next()
	switch {
	case fig.keyed:
		err = p.keyFilter(&t)
	case fig.windowed:
		err = p.window(&t)
	case fig.decision:
		err = p.decision(&t)
	default:
		return Term{}, true, p.errf(open.Col, "%s takes no key filter, want one of %s for (key=GLOB)", fig.name, strings.Join(keyedNames(), ", "))
	}
	if err != nil {
		return Term{}, true, err
	}
	return t, true, nil
}

// keyFilter reads key=GLOB) after a keyed figure's parenthesis.
func (p *Parser) keyFilter(t *Term) error {
	if k := p.Next(); k.Text != "key" {
		return p.errf(k.Col, "%s, want key=GLOB in the parentheses", Found(k))
	}
	if e := p.Next(); e.Text != "=" {
		return p.errf(e.Col, "%s, want = after key", Found(e))
	}
	g, err := p.glob()
	if err != nil {
		return err
	}
	if c := p.Next(); c.Text != ")" {
		return p.errf(c.Col, "%s, want ) after the glob", Found(c))
	}
	t.Glob = g
	t.Text += "(key=" + g + ")"
	return nil
}

func (p *Parser) glob() (string, error) {
	g := p.Next()
	if !IsWord(g) {
		return "", p.errf(g.Col, "%s, want a key glob such as user-*", Found(g))
	}
	if _, err := path.Match(g.Text, ""); err != nil {
		return "", p.errf(g.Col, "%q: %v, want a glob such as user-* or client-[0-9]", g.Text, err)
	}
	return g.Text, nil
}

// window reads DURATION) or window=DURATION) after a windowed figure's
// parenthesis.
func (p *Parser) window(t *Term) error {
	w := p.Next()
	if w.Text == "window" && p.Peek().Text == "=" {
		p.Next()
		w = p.Next()
	} else if w.Text == "key" {
		return p.errf(w.Col, "%s takes no key filter, want a window: %s(1s)", t.fig.name, t.fig.name)
	}
	d, err := scenarios.ParseDuration(w.Text)
	if !IsWord(w) || err != nil || d <= 0 {
		return p.errf(w.Col, "%s, want a window such as %s(1s)", Found(w), t.fig.name)
	}
	if c := p.Next(); c.Text != ")" {
		return p.errf(c.Col, "%s, want ) after the window", Found(c))
	}
	t.Window = d
	t.Text += "(" + w.Text + ")"
	return nil
}

// decision reads at=TIME, n=N, key=GLOB (and state's gauge=NAME),
// separated by commas, up to the closing parenthesis.
func (p *Parser) decision(t *Term) error {
	var parts []string
	nSet := false
	want := "at=TIME, n=N or key=GLOB"
	if t.fig.name == "state" {
		want = "at=TIME, n=N, key=GLOB or gauge=NAME"
	}
	for {
		k := p.Next()
		if e := p.Peek(); !IsWord(k) || e.Text != "=" {
			return p.errf(k.Col, "%s, want %s", Found(k), want)
		}
		p.Next()
		switch k.Text {
		case "at":
			v := p.Next()
			d, err := scenarios.ParseDuration(v.Text)
			if !IsWord(v) || err != nil {
				return p.errf(v.Col, "%s, want an instant of the run such as at=1m15s", Found(v))
			}
			t.At, t.AtSet = d, true
			parts = append(parts, "at="+v.Text)
		case "n":
			v := p.Next()
			n, err := strconv.Atoi(v.Text)
			if err != nil || n < 1 {
				return p.errf(v.Col, "%s, want n=1 or more: the n-th decision", Found(v))
			}
			t.N, nSet = n, true
			parts = append(parts, "n="+v.Text)
		case "key":
			g, err := p.glob()
			if err != nil {
				return err
			}
			t.Glob = g
			parts = append(parts, "key="+g)
		case "gauge":
			v := p.Next()
			if !IsWord(v) || t.fig.name != "state" {
				if t.fig.name != "state" {
					return p.errf(k.Col, "%q, want %s (only state takes gauge=)", k.Text, want)
				}
				return p.errf(v.Col, "%s, want a gauge's name such as tokens", Found(v))
			}
			t.Gauge = v.Text
			parts = append(parts, "gauge="+v.Text)
		default:
			msg := fmt.Sprintf("%q, want %s", k.Text, want)
			if s := didyoumean.Closest(k.Text, []string{"at", "n", "key", "gauge"}); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			return p.errf(k.Col, "%s", msg)
		}
		c := p.Next()
		if c.Text == ")" {
			break
		}
		if c.Text != "," {
			return p.errf(c.Col, "%s, want , or )", Found(c))
		}
	}
	if !t.AtSet && !nSet {
		return p.errf(p.end, "%s needs at=TIME or n=N: which decision", t.fig.name)
	}
	if t.fig.name == "state" && t.Gauge == "" {
		return p.errf(p.end, "state needs gauge=NAME: which figure of the state")
	}
	t.Text += "(" + strings.Join(parts, ", ") + ")"
	return nil
}

// Value reads a row's figure (not a decision's): groups are the row's
// totals per key glob. false: the row has no such figure (a cluster figure
// on a row without a cluster, a glob no key matches, a window not reported).
func (t Term) Value(r *sim.Result, groups []sim.KeyGroup) (float64, bool) {
	switch {
	case t.fig.decision:
		return 0, false
	case t.fig.windowed:
		return t.fig.window(r, t.Window)
	case t.Glob == "":
		return t.fig.row(r)
	}
	var kg sim.KeyGroup
	found := false
	for _, g := range groups {
		if g.Glob == t.Glob {
			kg, found = g, true
		}
	}
	if !found || kg.Keys == 0 {
		return 0, false // no key matches: no figure, not 0%
	}
	switch t.fig.name {
	case "rejected":
		return float64(kg.Rejected), true
	case "offered":
		return float64(kg.Offered), true
	case "attempts":
		return float64(kg.Attempts), true
	case "last_admitted":
		return float64(kg.LastAdmitted), kg.Admitted
	}
	return Pct(kg.Rejected, kg.Offered)
}

// ParseNumber reads a bound: a number, or a duration in nanoseconds.
func ParseNumber(s string) (float64, bool) {
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

// Ops are the comparisons, as messages list them.
var Ops = []string{"<=", "<", ">=", ">", "==", "!="}

// Compare reports whether v op bound holds, give or take tol (>= 0): == holds
// within tol of bound, <= up to bound + tol, and so on.
func Compare(v float64, op string, bound, tol float64) bool {
	switch op {
	case "<=":
		return v <= bound+tol
	case "<":
		return v < bound+tol
	case ">=":
		return v >= bound-tol
	case ">":
		return v > bound-tol
	case "==":
		return math.Abs(v-bound) <= tol
	}
	return math.Abs(v-bound) > tol // !=
}

// verdicts are the words a verdict is compared with.
var verdicts = map[string]algorithms.Verdict{
	"accept": algorithms.Accept, "accepted": algorithms.Accept,
	"delay": algorithms.Delay, "delayed": algorithms.Delay,
	"reject": algorithms.Reject, "rejected": algorithms.Reject,
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
