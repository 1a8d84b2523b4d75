package scenarios

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/ratesim/ratesim/internal/yamltree"
)

// This file fills a File from the YAML document's tree (package
// internal/yamltree, which knows where each node is written) by the
// fields' yaml tags, keeping where each field was written by its path
// (traffic[1].rate), and reports what YAML features ratesim does not take
// (aliases, merge keys, tags) and duplicate keys. What a field's value
// means is Validate's.

// positions is where Decode found each part of a File, by field path.
type positions struct {
	at  map[string]position // each value
	key map[string]position // each mapping key
	// shape holds a mapping or a list written as another kind (what was
	// found, for Validate's message); its field stays zero.
	shape map[string]Value
	// bad holds values written but unusable (an alias, a tag): the walker
	// reported them.
	bad map[string]bool
	// broken holds mappings with keys that could not be read (merge keys,
	// non-string keys): a field missing from them may be hidden there.
	broken map[string]bool
	// unknown holds, by mapping, the keys that are no field of the File,
	// in the order written: Validate says why each is refused there.
	unknown map[string][]string
	// errs are the walker's problems: with a value (an alias, a tag) by
	// "v:" and its path, with the keys of a mapping (merge keys, duplicate
	// keys) by "k:" and the mapping's path. The checks report them as they
	// read that value or mapping, as a reader of the YAML would: nothing
	// is said of what a field refused for another reason holds.
	errs map[string]Errors
}

func newPositions() *positions {
	return &positions{at: map[string]position{}, key: map[string]position{}, shape: map[string]Value{},
		bad: map[string]bool{}, broken: map[string]bool{}, unknown: map[string][]string{}, errs: map[string]Errors{}}
}

// Decode reads the scenario in data into a File, checks it as Validate
// does, and returns it with every problem found (an Errors, up to 20, each
// file:line:col: path: message). from names the file in errors. The File
// is nil when data holds no YAML document to read.
func Decode(from string, data []byte) (*File, error) {
	d := &decoder{file: from}
	f := d.decodeFile(data)
	if f != nil {
		d.scenario(f)
	}
	if len(d.errs) > 0 {
		return f, d.errs.sorted()
	}
	return f, nil
}

// Read reads the scenario in data into a File without checking what its
// values mean: the error (an Errors) lists what YAML itself cannot give,
// a syntax error, an alias, a merge key, a tag, a duplicate key. A key
// that is no field of the scenario format is kept for Validate to refuse,
// with the fields it takes where it stands. The File is nil when data
// holds no YAML document to read.
func Read(from string, data []byte) (*File, error) {
	d := &decoder{file: from}
	f := d.decodeFile(data)
	if f != nil {
		for _, errs := range f.at.errs {
			d.errs = append(d.errs, errs...)
		}
	}
	if len(d.errs) > 0 {
		return f, d.errs.sorted()
	}
	return f, nil
}

// decodeFile walks the document in data into a File, reporting into d.
func (d *decoder) decodeFile(data []byte) *File {
	body := d.document(data)
	if body == nil {
		return nil
	}
	f := &File{From: d.file, at: newPositions()}
	w := walker{d: d, at: f.at}
	w.value(body, "", position{1, 1}, reflect.ValueOf(f).Elem())
	return f
}

type walker struct {
	d  *decoder
	at *positions
}

var (
	valueType      = reflect.TypeFor[Value]()
	attributesType = reflect.TypeFor[Attributes]()
	expectType     = reflect.TypeFor[Expect]()
)

// strip notes where n, the value at path, is written (at when it is
// left out) and reports aliases and tags; ok is false for a value that
// cannot be read. Anchors are taken and ignored.
func (w *walker) strip(n *yamltree.Node, path string, at position) (*yamltree.Node, bool) {
	w.at.at[path] = at
	switch n.Kind {
	case yamltree.Alias:
		w.errAt("v:"+path, posFrom(n.Pos), path, "YAML aliases (*name) are not supported: write the value out")
		w.at.bad[path] = true
		return nil, false
	case yamltree.Tag:
		w.errAt("v:"+path, posFrom(n.Pos), path, "YAML tags (%s) are not supported: remove the tag", n.Text)
		w.at.bad[path] = true
		return nil, false
	}
	if n.Pos != (yamltree.Pos{}) {
		w.at.at[path] = posFrom(n.Pos)
	}
	return n, true
}

// value fills dst, a field of the File at path, from n.
func (w *walker) value(n *yamltree.Node, path string, at position, dst reflect.Value) {
	n, ok := w.strip(n, path, at)
	if !ok {
		return
	}
	w.fill(n, path, dst)
}

func (w *walker) fill(n *yamltree.Node, path string, dst reflect.Value) {
	t := dst.Type()
	switch {
	case t == valueType:
		dst.Set(reflect.ValueOf(kindOf(n)))
	case isScalarType(t):
		dst.Field(0).Set(reflect.ValueOf(kindOf(n)))
	case t == attributesType:
		if n.Kind != yamltree.Mapping {
			w.at.shape[path] = kindOf(n)
			return
		}
		attrs := Attributes{}
		w.pairs(n, path, func(key string, kpos position, v *yamltree.Node) {
			a := Attribute{Name: key}
			p := join(path, key)
			if vn, ok := w.strip(v, p, kpos); ok {
				a.Value.Value = kindOf(vn)
			}
			attrs = append(attrs, a)
		})
		dst.Set(reflect.ValueOf(attrs))
	case t == expectType:
		w.expect(n, path, dst)
	case t.Kind() == reflect.Pointer:
		if n.Kind != yamltree.Mapping && formField(t.Elem(), "scalar") < 0 {
			w.at.shape[path] = kindOf(n)
			return
		}
		p := reflect.New(t.Elem())
		w.fill(n, path, p.Elem())
		dst.Set(p)
	case t.Kind() == reflect.Slice:
		if n.Kind != yamltree.List {
			w.at.shape[path] = kindOf(n)
			return
		}
		s := reflect.MakeSlice(t, len(n.Items), len(n.Items))
		for i, item := range n.Items {
			w.value(item, index(path, i), w.at.at[path], s.Index(i))
		}
		dst.Set(s)
	case t.Kind() == reflect.Struct:
		w.structure(n, path, dst)
	}
}

// structure fills a struct: from a mapping by the fields' tags, or, for a
// struct with a form:"scalar" or form:"list" field, from a value of that
// form.
func (w *walker) structure(n *yamltree.Node, path string, dst reflect.Value) {
	t := dst.Type()
	if n.Kind != yamltree.Mapping {
		isList := n.Kind == yamltree.List
		if i := formField(t, "list"); i >= 0 && isList {
			w.fill(n, path, dst.Field(i))
			return
		}
		if i := formField(t, "scalar"); i >= 0 && !isList {
			w.fill(n, path, dst.Field(i))
			return
		}
		w.at.shape[path] = kindOf(n)
		return
	}
	if formField(t, "list") >= 0 && formField(t, "scalar") >= 0 && !hasTags(t) {
		w.at.shape[path] = kindOf(n)
		return
	}
	w.pairs(n, path, func(key string, kpos position, v *yamltree.Node) {
		p := join(path, key)
		if i := fieldByTag(t, key); i >= 0 {
			w.value(v, p, kpos, dst.Field(i))
			return
		}
		w.at.unknown[path] = append(w.at.unknown[path], key)
		w.strip(v, p, kpos)
	})
}

// pairs calls each for every readable key of mapping n, in order,
// reporting keys that are not names and duplicate keys.
func (w *walker) pairs(n *yamltree.Node, path string, each func(key string, kpos position, v *yamltree.Node)) {
	seen := map[string]position{}
	for _, f := range n.Fields {
		kpos := posFrom(f.Pos)
		switch f.KeyKind {
		case yamltree.Name:
		case yamltree.Merge:
			w.at.broken[path] = true
			w.errAt("k:"+path, kpos, path, "YAML merge keys (<<) are not supported: write the fields out")
			continue
		case yamltree.Complex:
			w.at.broken[path] = true
			w.errAt("k:"+path, kpos, path, "found a complex key (?), want a field name")
			continue
		case yamltree.Anchored:
			w.at.broken[path] = true
			w.errAt("k:"+path, kpos, path, "found a anchor as a key, want a field name") // in goccy's words
			continue
		default:
			w.at.broken[path] = true
			w.errAt("k:"+path, kpos, path, "found %s as a key, want a field name", describe(kindOf(f.Key)))
			continue
		}
		p := join(path, f.Name)
		if first, dup := seen[f.Name]; dup {
			w.errAt("k:"+path, kpos, p, "duplicate key (first at %d:%d)", first.line, first.col)
			continue
		}
		seen[f.Name] = kpos
		w.at.key[p] = kpos
		each(f.Name, kpos, f.Value)
	}
}

// errAt keeps a problem for the checks to report with the value or
// mapping at.
func (w *walker) errAt(at string, p position, path, format string, args ...any) {
	w.at.errs[at] = append(w.at.errs[at], &Error{File: w.d.file, Line: p.line, Col: p.col, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// kindOf is the Value of a node: its text and kind.
func kindOf(n *yamltree.Node) Value {
	switch n.Kind {
	case yamltree.Null:
		return Value{Text: n.Text, Kind: Null}
	case yamltree.Mapping:
		return Value{Kind: Mapping}
	case yamltree.List:
		return Value{Kind: List}
	case yamltree.Plain:
		return Value{Text: n.Text, Kind: Plain}
	case yamltree.Quoted:
		return Value{Text: n.Text, Kind: Quoted}
	case yamltree.Literal:
		return Value{Text: n.Text, Kind: Literal}
	case yamltree.Integer:
		return Value{Text: n.Text, Kind: Integer}
	case yamltree.Float:
		return Value{Text: n.Text, Kind: Float}
	case yamltree.Infinity:
		return Value{Text: n.Text, Kind: Infinity}
	case yamltree.NaN:
		return Value{Text: n.Text, Kind: NaN}
	case yamltree.Boolean:
		return Value{Text: n.Text, Kind: Boolean}
	}
	return Value{Text: n.Type.YAMLName(), Kind: Other}
}

// posFrom is p as a position.
func posFrom(p yamltree.Pos) position { return position{p.Line, p.Col} }

// formField is the index of t's field with the form tag, or -1.
func formField(t reflect.Type, form string) int {
	if t.Kind() != reflect.Struct {
		return -1
	}
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("form") == form {
			return i
		}
	}
	return -1
}

// hasTags reports whether t has fields written as mapping keys.
func hasTags(t reflect.Type) bool {
	for i := range t.NumField() {
		if tagName(t.Field(i)) != "" {
			return true
		}
	}
	return false
}

// tagName is the mapping key of a field, "" for none.
func tagName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

func fieldByTag(t reflect.Type, key string) int {
	for i := range t.NumField() {
		if tagName(t.Field(i)) == key {
			return i
		}
	}
	return -1
}

// isScalarType reports whether t is one of the field types that hold a
// Value (Duration, Rate, ...).
func isScalarType(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.NumField() == 1 && t.Field(0).Type == valueType && t.Field(0).Anonymous
}
