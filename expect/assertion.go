package expect

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/didyoumean"
	"github.com/ratesim/ratesim/internal/human"
)

// Assertion is one expectation: a term, a comparison and a bound, maybe
// give or take a tolerance.
//
//	assertion = term ("<=" | "<" | ">=" | ">" | "==" | "!=") value [ "within" tolerance ]
//	term      = figure [ "(" args ")" ]
//	value     = 12 | 1.5 | 300ms | accept | delay | reject
//	tolerance = 5% | 2 | 10ms
type Assertion struct {
	Term
	Op    string
	Bound float64
	// BoundText is the bound as written.
	BoundText string
	// Tol is the tolerance: Pct of the bound when TolPct, else itself.
	Tol    float64
	TolPct bool
	// TolText is the tolerance as written ("" for none).
	TolText string
}

// SyntaxError is a mistake in an expression, at a column (1-based).
type SyntaxError struct {
	Col int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

func syntaxErr(col int, format string, args ...any) error {
	return &SyntaxError{Col: col, Msg: fmt.Sprintf(format, args...)}
}

// Parse reads an assertion. Its errors are *SyntaxError.
func Parse(s string) (*Assertion, error) {
	p, err := NewParser(s, syntaxErr)
	if err != nil {
		return nil, err
	}
	name := p.Next()
	if !IsWord(name) {
		return nil, syntaxErr(name.Col, "%s, want a figure such as peak, reject_pct or p99_delay", Found(name))
	}
	t, ok, err := p.Figure(name, Names())
	if err != nil {
		return nil, err
	}
	if !ok {
		msg := fmt.Sprintf("%q is not a figure", name.Text)
		if s := didyoumean.Closest(name.Text, Names()); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		} else {
			msg += " (want " + strings.Join(Names(), ", ") + ")"
		}
		return nil, syntaxErr(name.Col, "%s", msg)
	}
	a := &Assertion{Term: t}
	op := p.Next()
	if !contains(Ops, op.Text) {
		return nil, syntaxErr(op.Col, "%s, want an operator: <=, <, >=, >, == or !=", Found(op))
	}
	a.Op = op.Text
	b := p.Next()
	if a.Bound, err = bound(t, b); err != nil {
		return nil, err
	}
	if t.Kind() == Verdict && a.Op != "==" && a.Op != "!=" {
		return nil, syntaxErr(op.Col, "%q: a verdict is equal to another or not, want == or !=", a.Op)
	}
	a.BoundText = b.Text
	if p.Done() {
		return a, nil
	}
	w := p.Next()
	if w.Text != "within" {
		return nil, syntaxErr(w.Col, "%s, want \"within\" and a tolerance (within 5%%), or the end", Found(w))
	}
	if t.Kind() == Verdict {
		return nil, syntaxErr(w.Col, "a verdict takes no tolerance")
	}
	tol := p.Next()
	if err := a.tolerance(tol); err != nil {
		return nil, err
	}
	if !p.Done() {
		return nil, syntaxErr(p.Peek().Col, "%s, want the end", Found(p.Peek()))
	}
	return a, nil
}

// bound reads the value a term is compared with: a number for a count or
// a ratio, a duration for a duration, a verdict's word for a verdict.
func bound(t Term, b Token) (float64, error) {
	switch t.Kind() {
	case Verdict:
		v, ok := verdicts[b.Text]
		if !ok {
			return 0, syntaxErr(b.Col, "%s, want accept, delay or reject", Found(b))
		}
		return float64(v), nil
	case Duration:
		v, ok := ParseNumber(b.Text)
		if !ok || v != 0 && !strings.ContainsAny(b.Text, "nsuµμmh") {
			return 0, syntaxErr(b.Col, "%s, want a duration such as 300ms: %s is one", Found(b), t.Text)
		}
		return v, nil
	}
	v, err := strconv.ParseFloat(b.Text, 64)
	if !IsWord(b) || err != nil || math.IsInf(v, 0) || math.IsNaN(v) || strings.IndexAny(b.Text, "xXpPnN_") >= 0 {
		return 0, syntaxErr(b.Col, "%s, want a number (1, 0.5)", Found(b))
	}
	return v, nil
}

// tolerance reads what follows within: a share of the bound (5%) or an
// amount in the term's unit (2, 10ms).
func (a *Assertion) tolerance(tol Token) error {
	text := tol.Text
	if pct, ok := strings.CutSuffix(text, "%"); ok && IsWord(tol) {
		v, err := strconv.ParseFloat(pct, 64)
		if err == nil && v >= 0 && !math.IsInf(v, 0) && strings.IndexAny(pct, "xXpPnN_") < 0 {
			a.Tol, a.TolPct, a.TolText = v, true, text
			return nil
		}
	} else if IsWord(tol) {
		if v, err := bound(a.Term, tol); err == nil && v >= 0 {
			a.Tol, a.TolText = v, text
			return nil
		}
	}
	unit := "an amount (2)"
	if a.Kind() == Duration {
		unit = "a duration (10ms)"
	}
	return syntaxErr(tol.Col, "%s, want a tolerance >= 0: a share of the bound (5%%) or %s", Found(tol), unit)
}

// tolerance is the assertion's tolerance in the term's unit.
func (a *Assertion) tol() float64 {
	if a.TolPct {
		return math.Abs(a.Bound) * a.Tol / 100
	}
	return a.Tol
}

// Holds reports whether the measured value v meets the assertion.
func (a *Assertion) Holds(v float64) bool { return Compare(v, a.Op, a.Bound, a.tol()) }

// String writes the assertion in a normal form: one space between its
// parts, none in the term.
func (a *Assertion) String() string {
	s := a.Text + " " + a.Op + " " + a.BoundText
	if a.TolText != "" {
		s += " within " + a.TolText
	}
	return s
}

// Expected writes what the assertion wants, without its term: "== 20",
// "<= 300ms within 5%".
func (a *Assertion) Expected() string {
	s := a.Op + " " + a.BoundText
	if a.TolText != "" {
		s += " within " + a.TolText
	}
	return s
}

// Format writes a value of the term: a verdict by its word, a duration as
// one, a whole number as an integer, else with up to three decimals.
func (t Term) Format(v float64) string {
	switch t.Kind() {
	case Verdict:
		return algorithms.Verdict(v).String()
	case Duration:
		return human.Duration(time.Duration(v))
	}
	return FormatNumber(v)
}

// FormatNumber writes a whole number as an integer, else with up to
// three decimals.
func FormatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}
