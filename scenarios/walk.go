package scenarios

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// This file fills a File from goccy/go-yaml's AST by the fields' yaml
// tags, keeping where each field was written by its path (traffic[1].rate),
// and reports what YAML features ratesim does not take (aliases, merge
// keys, tags) and duplicate keys. What a field's value means is Validate's.

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
)

// strip removes anchors from n and reports aliases and tags; ok is false
// for a value that cannot be read.
func (w *walker) strip(n ast.Node, path string, at position) (ast.Node, bool) {
	w.at.at[path] = at
	for {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
			continue
		case *ast.AliasNode:
			w.errAt("v:"+path, posOf(x), path, "YAML aliases (*name) are not supported: write the value out")
			w.at.bad[path] = true
			return nil, false
		case *ast.TagNode:
			w.errAt("v:"+path, posOf(x), path, "YAML tags (%s) are not supported: remove the tag", scalarTextOf(x))
			w.at.bad[path] = true
			return nil, false
		}
		break
	}
	if n != nil {
		w.at.at[path] = posOf(n)
	}
	return n, true
}

// value fills dst, a field of the File at path, from n.
func (w *walker) value(n ast.Node, path string, at position, dst reflect.Value) {
	n, ok := w.strip(n, path, at)
	if !ok {
		return
	}
	w.fill(n, path, dst)
}

func (w *walker) fill(n ast.Node, path string, dst reflect.Value) {
	t := dst.Type()
	switch {
	case t == valueType:
		dst.Set(reflect.ValueOf(kindOf(n)))
	case isScalarType(t):
		dst.Field(0).Set(reflect.ValueOf(kindOf(n)))
	case t == attributesType:
		if !isMappingNode(n) {
			w.at.shape[path] = kindOf(n)
			return
		}
		attrs := Attributes{}
		w.pairs(n, path, func(key string, kpos position, v ast.Node) bool {
			a := Attribute{Name: key}
			p := join(path, key)
			if vn, ok := w.strip(v, p, kpos); ok {
				a.Value.Value = kindOf(vn)
			}
			attrs = append(attrs, a)
			return true
		})
		dst.Set(reflect.ValueOf(attrs))
	case t.Kind() == reflect.Pointer:
		if !isMappingNode(n) && formField(t.Elem(), "scalar") < 0 {
			w.at.shape[path] = kindOf(n)
			return
		}
		p := reflect.New(t.Elem())
		w.fill(n, path, p.Elem())
		dst.Set(p)
	case t.Kind() == reflect.Slice:
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			w.at.shape[path] = kindOf(n)
			return
		}
		s := reflect.MakeSlice(t, len(seq.Values), len(seq.Values))
		for i, item := range seq.Values {
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
func (w *walker) structure(n ast.Node, path string, dst reflect.Value) {
	t := dst.Type()
	if !isMappingNode(n) {
		_, isList := n.(*ast.SequenceNode)
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
	w.pairs(n, path, func(key string, kpos position, v ast.Node) bool {
		p := join(path, key)
		if i := fieldByTag(t, key); i >= 0 {
			w.value(v, p, kpos, dst.Field(i))
			return true
		}
		w.at.unknown[path] = append(w.at.unknown[path], key)
		w.strip(v, p, kpos)
		return true
	})
}

// pairs calls each for every readable key of mapping n, in order,
// reporting keys that are not names and duplicate keys.
func (w *walker) pairs(n ast.Node, path string, each func(key string, kpos position, v ast.Node) bool) {
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	}
	seen := map[string]position{}
	for _, mv := range values {
		if mv == nil {
			continue
		}
		kpos := posOf(mv.Key)
		if mv.Key == nil {
			kpos = tokenPos(mv.Start)
		}
		name, ok := mv.Key.(*ast.StringNode)
		if !ok {
			w.at.broken[path] = true
			switch mv.Key.(type) {
			case *ast.MergeKeyNode:
				w.errAt("k:"+path, kpos, path, "YAML merge keys (<<) are not supported: write the fields out")
			case *ast.MappingKeyNode:
				w.errAt("k:"+path, kpos, path, "found a complex key (?), want a field name")
			default:
				w.errAt("k:"+path, kpos, path, "found %s as a key, want a field name", describe(kindOf(mv.Key)))
			}
			continue
		}
		p := join(path, name.Value)
		if first, dup := seen[name.Value]; dup {
			w.errAt("k:"+path, kpos, p, "duplicate key (first at %d:%d)", first.line, first.col)
			continue
		}
		seen[name.Value] = kpos
		w.at.key[p] = kpos
		each(name.Value, kpos, mv.Value)
	}
}

// errAt keeps a problem for the checks to report with the value or
// mapping at.
func (w *walker) errAt(at string, p position, path, format string, args ...any) {
	w.at.errs[at] = append(w.at.errs[at], &Error{File: w.d.file, Line: p.line, Col: p.col, Path: path, Msg: fmt.Sprintf(format, args...)})
}

func isMappingNode(n ast.Node) bool {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return true
	}
	return false
}

// kindOf is the Value of a node: its text and kind.
func kindOf(n ast.Node) Value {
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return Value{Text: scalarTextOf(n), Kind: Null}
	case *ast.MappingNode, *ast.MappingValueNode:
		return Value{Kind: Mapping}
	case *ast.SequenceNode:
		return Value{Kind: List}
	case *ast.StringNode:
		if isPlainNode(v) {
			return Value{Text: v.Value, Kind: Plain}
		}
		return Value{Text: v.Value, Kind: Quoted}
	case *ast.LiteralNode:
		return Value{Text: literalText(v), Kind: Literal}
	case *ast.IntegerNode:
		return Value{Text: scalarTextOf(n), Kind: Integer}
	case *ast.FloatNode:
		return Value{Text: scalarTextOf(n), Kind: Float}
	case *ast.InfinityNode:
		return Value{Text: scalarTextOf(n), Kind: Infinity}
	case *ast.NanNode:
		return Value{Text: scalarTextOf(n), Kind: NaN}
	case *ast.BoolNode:
		return Value{Text: scalarTextOf(n), Kind: Boolean}
	}
	return Value{Text: n.Type().YAMLName(), Kind: Other}
}

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
