package sweep

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/scenarios"
)

// Base is the scenario a sweep starts from: its file (a path or
// builtin:NAME), the file as written, and the scenario it builds.
type Base struct {
	File string
	Sc   *scenarios.Scenario
	f    *scenarios.File
}

// NewBase reads the scenario text data of file (already parsed as sc).
func NewBase(file string, data []byte, sc *scenarios.Scenario) (*Base, error) {
	f, err := scenarios.Read(file, data)
	if err != nil {
		return nil, err
	}
	return &Base{File: file, Sc: sc, f: f}, nil
}

// BaseOf is the base of a sweep from the scenario file f, which may have
// been edited in code.
func BaseOf(f *scenarios.File) (*Base, error) {
	sc, err := scenarios.Build(f)
	if err != nil {
		return nil, err
	}
	return &Base{File: f.From, Sc: sc, f: f}, nil
}

// Point returns the scenario file of a grid point: the base's with each
// field set to its value, as a user would write it by hand.
func (b *Base) Point(fields []Field, values []Value) (*scenarios.File, error) {
	f := b.f.Clone()
	for i, fl := range fields {
		path, err := b.path(f, fl.segs)
		if err != nil {
			return nil, err
		}
		if err := f.Set(path, values[i].scenario()); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Edit returns the text of Point's file.
func (b *Base) Edit(fields []Field, values []Value) ([]byte, error) {
	f, err := b.Point(fields, values)
	if err != nil {
		return nil, err
	}
	return scenarios.Marshal(f)
}

// Check tells whether the field is one the scenario can take: the path
// leads through mappings and existing list entries (an algorithm by its
// label), and the scenario file format knows the field.
func (b *Base) Check(f Field) error {
	pf, err := b.Point([]Field{f}, f.Values[:1])
	if err != nil {
		return usagef("--vary", "%s: %v", f.Path, err)
	}
	var list scenarios.Errors
	if errors.As(scenarios.Validate(pf), &list) {
		last := f.segs[len(f.segs)-1].key
		for _, e := range list {
			unknown := strings.HasPrefix(e.Msg, "unknown field") || strings.Contains(e.Msg, "takes no option")
			if unknown && (e.Path == last || strings.HasSuffix(e.Path, "."+last)) {
				return usagef("--vary", "%s: %s", f.Path, e.Msg)
			}
		}
	}
	return nil
}

// scenario is the value as the scenario file would read it written
// there: a number, a boolean, or a string.
func (v Value) scenario() scenarios.Value {
	sv := scenarios.ValueOf(v.Text)
	if sv.Kind == scenarios.Null {
		return scenarios.StringOf(v.Text).Value
	}
	return sv
}

// path is the field path of segs in f, an algorithm's label turned into
// its index; for a scenario without an algorithms list, the default list
// is written out first.
func (b *Base) path(f *scenarios.File, segs []segment) (string, error) {
	var parts []string
	for i, s := range segs {
		p := s.key
		if s.hasSel {
			sel := s.sel
			if i == 0 && s.key == "algorithms" {
				j, err := b.selectAlgorithm(f, sel)
				if err != nil {
					return "", err
				}
				sel = strconv.Itoa(j)
			}
			p += "[" + sel + "]"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "."), nil
}

// selectAlgorithm finds the algorithm sel: by label (or name), or by index.
func (b *Base) selectAlgorithm(f *scenarios.File, sel string) (int, error) {
	if f.Algorithms == nil {
		for _, a := range b.Sc.Algorithms {
			f.Algorithms = append(f.Algorithms, scenarios.AlgEntry{Bare: scenarios.String{Value: scenarios.ValueOf(a.Name)}})
		}
	}
	var labels []string
	for j := range f.Algorithms {
		l := f.Algorithms[j].LabelText()
		if l == sel {
			return j, nil
		}
		labels = append(labels, l)
	}
	if n, err := strconv.Atoi(sel); err == nil && n >= 0 && n < len(f.Algorithms) {
		return n, nil
	}
	return 0, fmt.Errorf("no algorithm labelled %q (the scenario has %s)", sel, strings.Join(labels, ", "))
}
