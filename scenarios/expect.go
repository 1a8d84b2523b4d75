package scenarios

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/goccy/go-yaml"

	"github.com/ratesim/ratesim/internal/yamltree"
)

// Expect is the expect section (docs/expect.md): assertions on the run's
// figures for each row, by its label, or for all rows, in the order
// written. What an assertion says is package expect's to read; Validate
// checks the section's shape and its rows' labels.
type Expect []ExpectRow

// ExpectRow is the assertions of one row, or of every row (Row "all").
type ExpectRow struct {
	Row  string
	That Assertions
}

// Assertions are one assertion (One) or a list of them (List).
type Assertions struct {
	One  String   `yaml:"-" form:"scalar"`
	List []String `yaml:"-" form:"list"`
}

// AllRows is the row name of assertions on every row.
const AllRows = "all"

// Expectation is one assertion of the expect section as written: the row
// it is about (a label, or AllRows), its text, and where the text starts
// in the file (Line 0 for a File built in code).
type Expectation struct {
	Row       string
	Text      string
	File      string
	Path      string // expect.LABEL[i], or expect.LABEL for a lone one
	Line, Col int
}

// Err is an error at column col (1-based) of the assertion's text, named
// as every error of the file is.
func (e Expectation) Err(col int, msg string) *Error {
	err := &Error{File: e.File, Path: e.Path, Msg: msg}
	if e.Line > 0 {
		err.Line, err.Col = e.Line, e.Col+col-1
	}
	return err
}

// MarshalYAML writes the rows as a mapping, in order.
func (e Expect) MarshalYAML() (any, error) {
	m := make(yaml.MapSlice, len(e))
	for i, row := range e {
		m[i] = yaml.MapItem{Key: row.Row, Value: row.That}
	}
	return m, nil
}

// MarshalYAML writes one assertion or the list.
func (a Assertions) MarshalYAML() (any, error) {
	if a.List != nil {
		return a.List, nil
	}
	return a.One.Value, nil
}

// IsZero reports whether no assertion was written.
func (a Assertions) IsZero() bool { return a.List == nil && !a.One.Set() }

// expect fills the expect section from mapping n: a row per key.
func (w *walker) expect(n *yamltree.Node, path string, dst reflect.Value) {
	if n.Kind != yamltree.Mapping {
		w.at.shape[path] = kindOf(n)
		return
	}
	rows := Expect{}
	w.pairs(n, path, func(key string, kpos position, v *yamltree.Node) {
		row := ExpectRow{Row: key}
		w.value(v, join(path, key), kpos, reflect.ValueOf(&row.That).Elem())
		rows = append(rows, row)
	})
	dst.Set(reflect.ValueOf(rows))
}

const wantExpect = "a mapping of row labels (or all) to assertions, such as gcra: p99_delay <= 300ms"

// expectOf is what the expect section holds (nil: absent).
func expectOf(e Expect) Value {
	if e == nil {
		return Value{}
	}
	return Value{Kind: Mapping}
}

// written is what a row's assertions hold: one, or a list.
func (a Assertions) written() Value {
	if a.List != nil {
		return Value{Kind: List}
	}
	return a.One.Value
}

// expectations checks the expect section and lists its assertions: each
// key a row's label or all, each value an assertion or a list of them.
func (d *decoder) expectations(v val, e Expect, sc *Scenario) []Expectation {
	if !v.ok() {
		return nil
	}
	if v.n.Kind != Mapping {
		d.typeErr(v, wantExpect)
		return nil
	}
	d.pending("k:" + v.path)
	rows := []string{AllRows}
	for _, a := range sc.Algorithms {
		rows = append(rows, a.Label)
	}
	for _, sk := range sc.Skipped {
		if !slices.Contains(rows, sk.Name) {
			rows = append(rows, sk.Name)
		}
	}
	var out []Expectation
	for _, row := range e {
		p := join(v.path, row.Row)
		d.pending("v:" + p)
		if !slices.Contains(rows, row.Row) {
			msg := fmt.Sprintf("%q is no row of the scenario (want all or a label: %s)", row.Row, joinList(rows[1:], "or"))
			if s := suggest(row.Row, rows); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			d.errAt(d.at.key[p], p, "%s", msg)
			continue
		}
		item := d.at.of(p, row.That.written(), d.at.key[p])
		if !item.ok() {
			if !item.bad {
				d.missing(item, "an assertion or a list of them")
			}
			continue
		}
		texts := []val{item}
		if item.n.Kind == List {
			texts, _ = d.list(item, "", len(row.That.List), func(i int) Value { return row.That.List[i].Value })
			if len(texts) == 0 {
				d.errAt(item.pos, item.path, "an empty list, want at least one assertion")
			}
		}
		for _, t := range texts {
			s, ok := d.assertionText(t)
			if !ok {
				continue
			}
			x := Expectation{Row: row.Row, Text: s, File: d.file, Path: t.path, Line: t.pos.line, Col: t.pos.col}
			if t.n.Kind == Quoted {
				x.Col++ // past the quote
			}
			out = append(out, x)
		}
	}
	return out
}

// assertionText reads one assertion's text.
func (d *decoder) assertionText(v val) (string, bool) {
	if !v.ok() {
		return "", false
	}
	switch v.n.Kind {
	case Plain, Quoted, Literal:
		if v.n.Text == "" {
			d.errAt(v.pos, v.path, "an empty string, want an assertion such as peak(1s) == 20")
			return "", false
		}
		return v.n.Text, true
	}
	d.typeErr(v, "an assertion such as peak(1s) == 20 (a string)")
	return "", false
}
