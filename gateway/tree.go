package gateway

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/ratesim/ratesim/internal/yamltree"
)

// A tree is a config file (YAML, JSON or TOML) read into maps, lists and
// scalars that each know where they are written, so that the gateway
// readers report every problem at its file:line:col. YAML and JSON (JSON
// is YAML) come from internal/yamltree's tree, as scenario files do, by
// the rules below (decK's aliases taken, a depth bound; or envoy's
// readers' rules); TOML from pelletier/go-toml/v2's parser (package
// unstable), whose nodes carry their offsets in the file.
type tree struct {
	kind   treeKind
	fields []treeField // a map's, in file order
	items  []*tree     // a list's
	text   string      // a scalar's text (a string without its quotes)
	// typ is a scalar's type: string, integer, number, boolean, null,
	// date; scalar for a YAML block scalar (| or >) read as read; for
	// treeOther, the YAML node's name (alias, tag, comment...).
	typ  string
	pos  Pos
	path string // e.g. services[0].plugins[1].config.minute
	// bad is why the value cannot be read, in a file read as read
	// (readYAMLAsRead): the reader reports it when it reads the map or
	// list that holds the value.
	bad error
}

type treeKind int

const (
	treeScalar treeKind = iota
	treeMap
	treeList
	treeOther // a YAML node that is none of those, in a file read as read
)

type treeField struct {
	key    string
	keyPos Pos
	val    *tree
	// bad is why the key is not a field name, or that it is written
	// twice, in a file read as read.
	bad error
}

// get returns the field key of a map, or nil.
func (t *tree) get(key string) *tree {
	if t == nil || t.kind != treeMap {
		return nil
	}
	for _, f := range t.fields {
		if f.key == key {
			return f.val
		}
	}
	return nil
}

// at returns the field key of a map or, when it has none, a null value
// at the map's place, so that a message about a missing field names the
// map's line and the field's path.
func (t *tree) at(key string) *tree {
	if v := t.get(key); v != nil {
		return v
	}
	return &tree{typ: "null", pos: t.pos, path: joinPath(t.path, key)}
}

// keyPos is where the key called key is written, or the map's place.
func (t *tree) keyPos(key string) Pos {
	for _, f := range t.fields {
		if f.key == key {
			return f.keyPos
		}
	}
	return t.pos
}

// isNull reports whether t is absent (nil) or null.
func (t *tree) isNull() bool {
	return t == nil || t.kind == treeScalar && t.typ == "null"
}

// describe says what t is, for "found ..." messages.
func (t *tree) describe() string {
	switch t.kind {
	case treeMap:
		return "a mapping"
	case treeList:
		return "a list"
	case treeOther:
		return "a " + t.typ
	}
	switch t.typ {
	case "string":
		return "string " + strconv.Quote(t.text)
	case "null":
		return "null"
	case "scalar":
		return "a scalar"
	}
	return t.typ + " " + t.text
}

// errAt is an Error at t's position, naming its path.
func (t *tree) errAt(format string, args ...any) error {
	return errorAt(t.pos, t.path, format, args...)
}

// errorAt is an Error at p, naming path.
func errorAt(p Pos, path, format string, args ...any) *Error {
	return &Error{File: p.File, Line: p.Line, Col: p.Col, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// str reads a string scalar.
func (t *tree) str() (string, error) {
	if t.kind != treeScalar || t.typ != "string" {
		return "", t.errAt("found %s, want a string", t.describe())
	}
	return t.text, nil
}

// boolean reads a boolean scalar.
func (t *tree) boolean() (bool, error) {
	if t.kind == treeScalar && t.typ == "boolean" {
		return t.text == "true" || t.text == "True" || t.text == "TRUE", nil
	}
	return false, t.errAt("found %s, want true or false", t.describe())
}

// integer reads an integer scalar.
func (t *tree) integer() (int64, error) {
	if t.kind == treeScalar && t.typ == "integer" {
		s := strings.ReplaceAll(t.text, "_", "")
		if n, err := strconv.ParseInt(s, 0, 64); err == nil {
			return n, nil
		}
	}
	return 0, t.errAt("found %s, want an integer", t.describe())
}

// number reads a number scalar (integer or not).
func (t *tree) number() (float64, error) {
	if t.kind == treeScalar && (t.typ == "integer" || t.typ == "number") {
		s := strings.ReplaceAll(t.text, "_", "")
		if n, err := strconv.ParseInt(s, 0, 64); err == nil {
			return float64(n), nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f, nil
		}
	}
	return 0, t.errAt("found %s, want a number", t.describe())
}

// scalarText reads a scalar as its text, as yaml.v2 reads a scalar into a
// Go string (10 is "10"); null is "".
func (t *tree) scalarText() (string, error) {
	switch {
	case t.isNull():
		return "", nil
	case t.kind == treeScalar:
		return t.text, nil
	}
	return "", t.errAt("found %s, want a string", t.describe())
}

// requiredText reads a scalar as its text (scalarText), refusing it
// empty, null or missing with the message empty.
func (t *tree) requiredText(empty string) (string, error) {
	s, err := t.scalarText()
	if err == nil && s == "" {
		err = t.errAt("%s", empty)
	}
	return s, err
}

// boolOr reads a boolean scalar; null is def.
func (t *tree) boolOr(def bool) (bool, error) {
	if t.isNull() {
		return def, nil
	}
	return t.boolean()
}

// mapping checks that t is a map, and that every key is one of known.
func (t *tree) mapping(want string, known ...string) error {
	return t.mappingOf(want, known, func(string) string {
		return "unknown field (want " + strings.Join(known, ", ") + ")"
	})
}

// mappingOf checks that t is a map whose keys are field names, each
// written once, and (when known is not nil) each one of known: unknown
// writes the message for one that is not. In a file read as read, it
// reports the problems of the map's keys and values here, in file order.
func (t *tree) mappingOf(want string, known []string, unknown func(key string) string) error {
	if t.kind != treeMap {
		return t.errAt("found %s, want %s", t.describe(), want)
	}
	for _, f := range t.fields {
		if f.bad != nil {
			return f.bad
		}
		if known != nil && !slices.Contains(known, f.key) {
			return errorAt(f.keyPos, joinPath(t.path, f.key), "%s", unknown(f.key))
		}
		if f.val.bad != nil {
			return f.val.bad
		}
	}
	return nil
}

// list checks that t is a list.
func (t *tree) list(want string) error {
	if t.kind != treeList {
		return t.errAt("found %s, want %s", t.describe(), want)
	}
	return nil
}

// listOf returns the items of the list t (none when t is null), and in a
// file read as read reports the first that cannot be read.
func (t *tree) listOf(want string) ([]*tree, error) {
	if t.isNull() {
		return nil, nil
	}
	if err := t.list(want); err != nil {
		return nil, err
	}
	for _, it := range t.items {
		if it.bad != nil {
			return nil, it.bad
		}
	}
	return slices.Clip(t.items), nil // the caller's to append to
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func indexPath(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// readYAML reads a YAML (or JSON) file of one document into a tree,
// refusing anything in it that is not plain data (tags, merge keys,
// duplicate keys) wherever it is.
func readYAML(file string, data []byte) (*tree, error) {
	return yamlReader{file: file, anchored: map[*yamltree.Node]*tree{}}.read(data)
}

// readYAMLAsRead reads a YAML (or JSON) file of one document into a tree
// by envoy's readers' rules: a bootstrap holds much they do not read, so
// a problem (a tag, an alias, a merge key, a key that is not a field
// name or is written twice) is kept in the tree and reported only where
// the reader reads it (mappingOf, listOf); aliases are refused, nulls
// stand at their key's, list's or the file's place, and the nesting is
// not bounded.
func readYAMLAsRead(file string, data []byte) (*tree, error) {
	t, err := yamlReader{file: file, asRead: true}.read(data)
	if err == nil && t.bad != nil {
		return nil, t.bad
	}
	return t, err
}

func (y yamlReader) read(data []byte) (*tree, error) {
	// top is where the file itself is, for errors of the whole file and a
	// null document: nowhere in particular, or 1:1 as read
	top := Pos{File: y.file}
	if y.asRead {
		top = Pos{y.file, 1, 1}
	}
	body, p := yamltree.Read(data)
	switch {
	case p == nil:
		return y.node(body, "", top, 0)
	case p.Kind == yamltree.Syntax && p.Pos != (yamltree.Pos{}):
		return nil, errorAt(y.pos(p.Pos), "", "YAML syntax error: %s", p.Msg)
	case p.Kind == yamltree.Syntax:
		return nil, errorAt(top, "", "YAML syntax error: %s", p.Msg)
	case p.Kind == yamltree.Second:
		return nil, errorAt(y.pos(p.Pos), "", "found a second YAML document, want one config per file")
	}
	return nil, errorAt(top, "", "the file is empty or only comments")
}

// pos is p in the file; 1:1 for a value left out.
func (y *yamlReader) pos(p yamltree.Pos) Pos {
	if p == (yamltree.Pos{}) {
		return Pos{y.file, 1, 1}
	}
	return Pos{y.file, p.Line, p.Col}
}

type yamlReader struct {
	file string
	// anchored are the trees read of anchored values, for the aliases
	// that name them
	anchored map[*yamltree.Node]*tree
	asRead   bool // readYAMLAsRead's rules
}

// maxDepth bounds the nesting a config may have: no gateway config nests
// deeper, and a fuzzer's input must not exhaust the stack.
const maxDepth = 64

// node reads n, written at path. at is where a null value stands (its
// key's place; as read, also a list item's list's, or the document's), or
// zero for its own place. Each anchor before n is a level of nesting.
func (y *yamlReader) node(n *yamltree.Node, path string, at Pos, depth int) (*tree, error) {
	for _, a := range n.Anchors {
		if depth > maxDepth && !y.asRead {
			return nil, errorAt(y.pos(a.Pos), path, "nested more than %d levels deep", maxDepth)
		}
		if !y.asRead {
			at = Pos{} // an anchored null is where it is written
		}
		depth++
	}
	t, err := y.value(n, path, at, depth)
	if err == nil && len(n.Anchors) > 0 && y.anchored != nil {
		y.anchored[n] = t
	}
	return t, err
}

// value reads n, its anchors read.
func (y *yamlReader) value(n *yamltree.Node, path string, at Pos, depth int) (*tree, error) {
	p := y.pos(n.Pos)
	if depth > maxDepth && !y.asRead {
		return nil, errorAt(p, path, "nested more than %d levels deep", maxDepth)
	}
	t := &tree{pos: p, path: path}
	// fail refuses n; as read, n is a value that says so when read
	fail := func(msg string) (*tree, error) {
		err := errorAt(p, path, "%s", msg)
		if !y.asRead {
			return nil, err
		}
		t.kind, t.typ, t.bad = treeOther, n.Type.YAMLName(), err
		return t, nil
	}
	switch n.Kind {
	case yamltree.Null:
		t.typ = "null"
		if at.Line > 0 {
			t.pos = at
		}
	case yamltree.Alias:
		if y.asRead {
			return fail("YAML aliases (*name) are not supported: write the value out")
		}
		a, ok := y.anchored[n.Target]
		if !ok {
			return nil, errorAt(p, path, "alias *%s names no anchor", n.Text)
		}
		return a, nil
	case yamltree.Tag:
		return fail("YAML tags are not supported: remove the tag")
	case yamltree.Mapping:
		t.kind = treeMap
		for _, f := range n.Fields {
			if err := y.field(t, f, depth); err != nil {
				return nil, err
			}
		}
	case yamltree.List:
		t.kind = treeList
		itemAt := Pos{}
		if y.asRead {
			itemAt = p
		}
		for i, item := range n.Items {
			it, err := y.node(item, indexPath(path, i), itemAt, depth+1)
			if err != nil {
				return nil, err
			}
			t.items = append(t.items, it)
		}
	case yamltree.Plain, yamltree.Quoted:
		t.typ, t.text = "string", n.Text
	case yamltree.Literal:
		t.typ, t.text = "string", n.Text
		if y.asRead {
			t.typ = "scalar" // not a string where envoy's reader wants a quoted one
		}
	case yamltree.Integer:
		t.typ, t.text = "integer", n.Text
	case yamltree.Float, yamltree.Infinity, yamltree.NaN:
		t.typ, t.text = "number", n.Text
	case yamltree.Boolean:
		t.typ, t.text = "boolean", n.Text
	default:
		if y.asRead {
			t.kind, t.typ = treeOther, n.Type.YAMLName()
			return t, nil
		}
		return nil, errorAt(p, path, "found a YAML %s, want a mapping, a list or a scalar", n.Type.YAMLName())
	}
	return t, nil
}

// field adds the key: value f to the map t. A key that is not a string
// reads as its text, as Go's YAML decoders into string-keyed maps do; as
// read, it is refused when the map is read.
func (y *yamlReader) field(t *tree, yf *yamltree.Field, depth int) error {
	if yf.KeyKind == yamltree.NotName && yf.Key.Pos == (yamltree.Pos{}) && !y.asRead {
		return nil // a key left out
	}
	f := treeField{keyPos: y.pos(yf.Pos)}
	refuse := func(path, msg string) error {
		err := errorAt(f.keyPos, path, "%s", msg)
		if !y.asRead {
			return err
		}
		f.bad = err
		return nil
	}
	switch {
	case yf.KeyKind == yamltree.Name:
		f.key = yf.Name
	case yf.KeyKind == yamltree.Merge:
		if err := refuse(t.path, "YAML merge keys (<<) are not supported: write the fields out"); err != nil {
			return err
		}
	case y.asRead:
		what := "a anchor" // an anchored key, in goccy's words
		switch yf.KeyKind {
		case yamltree.Complex:
			what = "a " + ast.MappingKeyType.YAMLName()
		case yamltree.NotName:
			k, _ := y.node(yf.Key, t.path, Pos{}, depth+1)
			what = k.describe()
		}
		f.bad = errorAt(f.keyPos, t.path, "found %s as a key, want a field name", what)
	default:
		f.key = yf.Text
	}
	for _, g := range t.fields {
		if f.bad == nil && g.key == f.key {
			word := "also"
			if y.asRead {
				word = "first"
			}
			if err := refuse(joinPath(t.path, f.key), fmt.Sprintf("duplicate key (%s at %d:%d)", word, g.keyPos.Line, g.keyPos.Col)); err != nil {
				return err
			}
		}
	}
	val, err := y.node(yf.Value, joinPath(t.path, f.key), f.keyPos, depth+1)
	if err != nil {
		return err
	}
	f.val = val
	t.fields = append(t.fields, f)
	return nil
}

// readTOML reads a TOML file into a tree: tables, arrays of tables, dotted
// keys and inline tables merged as TOML defines them (a key or table
// defined twice is an error).
func readTOML(file string, data []byte) (t *tree, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, &Error{File: file, Msg: fmt.Sprintf("TOML syntax error: malformed input (%v)", r)}
		}
	}()
	r := &tomlReader{file: file, root: &tree{kind: treeMap, pos: Pos{file, 1, 1}}}
	r.p.Reset(data)
	cur := r.root
	for r.p.NextExpression() {
		e := r.p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			cur, err = r.header(e)
		case unstable.KeyValue:
			err = r.keyValue(cur, e, 0)
		}
		if err != nil {
			return nil, err
		}
	}
	if perr := r.p.Error(); perr != nil {
		var pe *unstable.ParserError
		if errors.As(perr, &pe) {
			p := r.rangePos(pe.Highlight)
			return nil, &Error{File: file, Line: p.Line, Col: p.Col, Msg: "TOML syntax error: " + pe.Message}
		}
		return nil, &Error{File: file, Msg: "TOML syntax error: " + perr.Error()}
	}
	return r.root, nil
}

type tomlReader struct {
	file string
	p    unstable.Parser
	root *tree
	// defined marks the tables written as [headers] or as values, which
	// TOML forbids defining again
	defined map[*tree]bool
}

// pos is where node n is written.
func (r *tomlReader) pos(n *unstable.Node) Pos {
	if n == nil || n.Raw.Length == 0 && n.Raw.Offset == 0 {
		return Pos{r.file, 1, 1}
	}
	s := r.p.Shape(n.Raw)
	return Pos{r.file, s.Start.Line, s.Start.Column}
}

// rangePos is where the bytes b (a sub-slice of the input) are.
func (r *tomlReader) rangePos(b []byte) Pos {
	if len(b) == 0 {
		return Pos{r.file, 1, 1}
	}
	s := r.p.Shape(r.p.Range(b))
	return Pos{r.file, s.Start.Line, s.Start.Column}
}

// walk returns the table at the dotted key parts under t, creating the
// tables missing; array tables yield their last element.
func (r *tomlReader) walk(t *tree, keys []*unstable.Node) (*tree, error) {
	for _, k := range keys {
		name := string(k.Data)
		next := t.get(name)
		switch {
		case next == nil:
			next = &tree{kind: treeMap, pos: r.pos(k), path: joinPath(t.path, name)}
			t.fields = append(t.fields, treeField{key: name, keyPos: r.pos(k), val: next})
		case next.kind == treeList && next.typ == "array-table" && len(next.items) > 0:
			next = next.items[len(next.items)-1]
		case next.kind != treeMap:
			p := r.pos(k)
			return nil, errorAt(p, joinPath(t.path, name), "already defined as a value, not a table")
		}
		t = next
	}
	return t, nil
}

func keyParts(it unstable.Iterator) []*unstable.Node {
	var parts []*unstable.Node
	for it.Next() {
		parts = append(parts, it.Node())
	}
	return parts
}

// header reads [a.b] or [[a.b]] and returns the table that the key values
// after it go in.
func (r *tomlReader) header(e *unstable.Node) (*tree, error) {
	parts := keyParts(e.Key())
	if len(parts) == 0 {
		return r.root, nil
	}
	parent, err := r.walk(r.root, parts[:len(parts)-1])
	if err != nil {
		return nil, err
	}
	last := parts[len(parts)-1]
	name, p := string(last.Data), r.pos(last)
	existing := parent.get(name)
	if r.defined == nil {
		r.defined = map[*tree]bool{}
	}
	if e.Kind == unstable.ArrayTable {
		if existing == nil {
			existing = &tree{kind: treeList, typ: "array-table", pos: p, path: joinPath(parent.path, name)}
			parent.fields = append(parent.fields, treeField{key: name, keyPos: p, val: existing})
		} else if existing.kind != treeList || existing.typ != "array-table" {
			return nil, errorAt(p, joinPath(parent.path, name), "defined before as something other than an array of tables")
		}
		t := &tree{kind: treeMap, pos: p, path: indexPath(existing.path, len(existing.items))}
		existing.items = append(existing.items, t)
		return t, nil
	}
	switch {
	case existing == nil:
		existing = &tree{kind: treeMap, pos: p, path: joinPath(parent.path, name)}
		parent.fields = append(parent.fields, treeField{key: name, keyPos: p, val: existing})
	case existing.kind != treeMap || r.defined[existing]:
		return nil, errorAt(p, joinPath(parent.path, name), "table defined twice")
	}
	r.defined[existing] = true
	return existing, nil
}

// keyValue reads a = v into the table t.
func (r *tomlReader) keyValue(t *tree, e *unstable.Node, depth int) error {
	parts := keyParts(e.Key())
	if len(parts) == 0 {
		return nil
	}
	parent, err := r.walk(t, parts[:len(parts)-1])
	if err != nil {
		return err
	}
	last := parts[len(parts)-1]
	name, p := string(last.Data), r.pos(last)
	if prev := parent.get(name); prev != nil {
		return errorAt(p, joinPath(parent.path, name), "duplicate key (also at %d:%d)", prev.pos.Line, prev.pos.Col)
	}
	v, err := r.value(e.Value(), joinPath(parent.path, name), p, depth)
	if err != nil {
		return err
	}
	parent.fields = append(parent.fields, treeField{key: name, keyPos: p, val: v})
	if r.defined == nil {
		r.defined = map[*tree]bool{}
	}
	if v.kind == treeMap {
		r.defined[v] = true
	}
	return nil
}

// value reads a TOML value written at path; keyPos is its key's position,
// for containers without a range of their own.
func (r *tomlReader) value(n *unstable.Node, path string, keyPos Pos, depth int) (*tree, error) {
	if depth > maxDepth {
		return nil, errorAt(keyPos, path, "nested more than %d levels deep", maxDepth)
	}
	t := &tree{pos: keyPos, path: path}
	if n.Raw.Length > 0 {
		t.pos = r.pos(n)
	}
	switch n.Kind {
	case unstable.String:
		t.typ, t.text = "string", string(n.Data)
	case unstable.Integer:
		t.typ, t.text = "integer", string(n.Data)
	case unstable.Float:
		t.typ, t.text = "number", string(n.Data)
	case unstable.Bool:
		t.typ, t.text = "boolean", string(n.Data)
	case unstable.LocalDate, unstable.LocalTime, unstable.LocalDateTime, unstable.DateTime:
		t.typ, t.text = "date", string(n.Data)
	case unstable.Array:
		t.kind = treeList
		it := n.Children()
		for i := 0; it.Next(); i++ {
			c, err := r.value(it.Node(), indexPath(path, i), t.pos, depth+1)
			if err != nil {
				return nil, err
			}
			t.items = append(t.items, c)
		}
	case unstable.InlineTable:
		t.kind = treeMap
		it := n.Children()
		for it.Next() {
			if err := r.keyValue(t, it.Node(), depth+1); err != nil {
				return nil, err
			}
		}
	default:
		return nil, errorAt(t.pos, path, "unexpected TOML %s", n.Kind)
	}
	return t, nil
}

// uint32 reads a whole number in [0, 2^32-1], written as an integer or,
// when quoted (as protobuf's JSON mapping allows), as a string; what says
// what it is.
func (t *tree) uint32(quoted bool, what string) (int64, error) {
	if t.kind != treeScalar || t.typ != "integer" && !(quoted && t.typ == "string") {
		return 0, t.errAt("found %s, want %s", t.describe(), what)
	}
	x, err := strconv.ParseUint(strings.TrimPrefix(t.text, "+"), 10, 32)
	if err != nil {
		return 0, t.errAt("%s: want %s", t.text, what)
	}
	return int64(x), nil
}

// protoDuration reads a google.protobuf.Duration in protobuf's JSON
// mapping, as envoy's YAML writes it: a string of seconds with up to 9
// decimals and the suffix s ("1s", "0.25s", "60s").
func (t *tree) protoDuration() (time.Duration, error) {
	want := `want a duration in seconds such as "1s" or "0.5s" (protobuf's JSON form)`
	if t.kind != treeScalar || t.typ != "string" {
		return 0, t.errAt("found %s, %s", t.describe(), want)
	}
	s := t.text
	num, ok := strings.CutSuffix(s, "s")
	whole, frac, _ := strings.Cut(num, ".")
	if !ok || whole == "" || len(frac) > 9 || strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return 0, t.errAt("%q: %s", s, want)
	}
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || sec > int64(1<<62)/int64(time.Second) {
		return 0, t.errAt("%q: too long (want at most %ds)", s, int64(1<<62)/int64(time.Second))
	}
	ns := int64(0)
	if frac != "" {
		ns, _ = strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	}
	return time.Duration(sec)*time.Second + time.Duration(ns), nil
}
