package gateway

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	ytoken "github.com/goccy/go-yaml/token"
	"github.com/pelletier/go-toml/v2/unstable"
)

// A tree is a config file (YAML, JSON or TOML) read into maps, lists and
// scalars that each know where they are written, so that the Kong and
// Traefik readers report every problem at its file:line:col. YAML and
// JSON are read by goccy/go-yaml (JSON is YAML), as scenario files are;
// TOML by pelletier/go-toml/v2's parser (package unstable), whose nodes
// carry their offsets in the file.
type tree struct {
	kind   treeKind
	fields []treeField // a map's, in file order
	items  []*tree     // a list's
	text   string      // a scalar's text (a string without its quotes)
	typ    string      // a scalar's type: string, integer, number, boolean, null, date
	pos    Pos
	path   string // e.g. services[0].plugins[1].config.minute
}

type treeKind int

const (
	treeScalar treeKind = iota
	treeMap
	treeList
)

type treeField struct {
	key    string
	keyPos Pos
	val    *tree
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

// describe says what t is, for "found ..." messages.
func (t *tree) describe() string {
	switch t.kind {
	case treeMap:
		return "a mapping"
	case treeList:
		return "a list"
	}
	if t.typ == "string" {
		return "string " + strconv.Quote(t.text)
	}
	if t.typ == "null" {
		return "null"
	}
	return t.typ + " " + t.text
}

// errAt is an Error at t's position, naming its path.
func (t *tree) errAt(format string, args ...any) error {
	return &Error{File: t.pos.File, Line: t.pos.Line, Col: t.pos.Col, Path: t.path, Msg: fmt.Sprintf(format, args...)}
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

// mapping checks that t is a map, and that every key is one of known.
func (t *tree) mapping(want string, known ...string) error {
	if t.kind != treeMap {
		return t.errAt("found %s, want %s", t.describe(), want)
	}
	if known == nil {
		return nil
	}
	for _, f := range t.fields {
		ok := false
		for _, k := range known {
			ok = ok || k == f.key
		}
		if !ok {
			return &Error{File: f.keyPos.File, Line: f.keyPos.Line, Col: f.keyPos.Col, Path: joinPath(t.path, f.key),
				Msg: fmt.Sprintf("unknown field (want %s)", strings.Join(known, ", "))}
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

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func indexPath(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// readYAML reads a YAML (or JSON) file of one document into a tree.
func readYAML(file string, data []byte) (*tree, error) {
	f, err := parseYAML(data)
	if err != nil {
		var se interface {
			GetToken() *ytoken.Token
			GetMessage() string
		}
		if errors.As(err, &se) {
			p := tokenPos(file, se.GetToken())
			return nil, &Error{File: file, Line: p.Line, Col: p.Col, Msg: "YAML syntax error: " + se.GetMessage()}
		}
		return nil, &Error{File: file, Msg: fmt.Sprintf("YAML syntax error: %v", err)}
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			p := posOf(file, doc.Body)
			return nil, &Error{File: file, Line: p.Line, Col: p.Col, Msg: "found a second YAML document, want one config per file"}
		}
		body = doc.Body
	}
	if body == nil {
		return nil, &Error{File: file, Msg: "the file is empty or only comments"}
	}
	y := yamlReader{file: file, anchors: map[string]*tree{}}
	return y.node(body, "", 0)
}

// parseYAML runs goccy's parser, turning a panic on malformed input into a
// syntax error.
func parseYAML(data []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("malformed YAML (%v)", r)
		}
	}()
	return parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
}

func tokenPos(file string, tk *ytoken.Token) Pos {
	if tk == nil || tk.Position == nil || tk.Position.Line < 1 {
		return Pos{file, 1, 1}
	}
	return Pos{file, tk.Position.Line, max(tk.Position.Column, 1)}
}

// posOf is where n starts: a block mapping at its first key, anything else
// at its first token.
func posOf(file string, n ast.Node) Pos {
	switch v := n.(type) {
	case nil:
		return Pos{file, 1, 1}
	case *ast.MappingNode:
		if v != nil && !v.IsFlowStyle && len(v.Values) > 0 && v.Values[0] != nil && v.Values[0].Key != nil {
			return posOf(file, v.Values[0].Key)
		}
		if v == nil {
			return Pos{file, 1, 1}
		}
		return tokenPos(file, v.Start)
	case *ast.MappingValueNode:
		if v != nil && v.Key != nil {
			return posOf(file, v.Key)
		}
		if v == nil {
			return Pos{file, 1, 1}
		}
		return tokenPos(file, v.Start)
	}
	return tokenPos(file, n.GetToken())
}

type yamlReader struct {
	file    string
	anchors map[string]*tree
}

// maxDepth bounds the nesting a config may have: no gateway config nests
// deeper, and a fuzzer's input must not exhaust the stack.
const maxDepth = 64

func (y *yamlReader) node(n ast.Node, path string, depth int) (*tree, error) {
	p := posOf(y.file, n)
	if depth > maxDepth {
		return nil, &Error{File: y.file, Line: p.Line, Col: p.Col, Path: path, Msg: fmt.Sprintf("nested more than %d levels deep", maxDepth)}
	}
	t := &tree{pos: p, path: path}
	switch v := n.(type) {
	case nil, *ast.NullNode:
		t.typ = "null"
	case *ast.AnchorNode:
		inner, err := y.node(v.Value, path, depth+1)
		if err != nil {
			return nil, err
		}
		if v.Name != nil {
			y.anchors[scalar(v.Name)] = inner
		}
		return inner, nil
	case *ast.AliasNode:
		a, ok := y.anchors[scalar(v.Value)]
		if !ok {
			return nil, &Error{File: y.file, Line: p.Line, Col: p.Col, Path: path, Msg: fmt.Sprintf("alias *%s names no anchor", scalar(v.Value))}
		}
		return a, nil
	case *ast.TagNode:
		return nil, &Error{File: y.file, Line: p.Line, Col: p.Col, Path: path, Msg: "YAML tags are not supported: remove the tag"}
	case *ast.MappingNode:
		t.kind = treeMap
		for _, mv := range v.Values {
			if err := y.field(t, mv, depth); err != nil {
				return nil, err
			}
		}
	case *ast.MappingValueNode:
		t.kind = treeMap
		if err := y.field(t, v, depth); err != nil {
			return nil, err
		}
	case *ast.SequenceNode:
		t.kind = treeList
		for i, item := range v.Values {
			it, err := y.node(item, indexPath(path, i), depth+1)
			if err != nil {
				return nil, err
			}
			t.items = append(t.items, it)
		}
	case *ast.StringNode:
		t.typ, t.text = "string", v.Value
	case *ast.LiteralNode:
		t.typ = "string"
		if v.Value != nil {
			t.text = v.Value.Value
		}
	case *ast.IntegerNode:
		t.typ, t.text = "integer", scalar(v)
	case *ast.FloatNode:
		t.typ, t.text = "number", scalar(v)
	case *ast.InfinityNode, *ast.NanNode:
		t.typ, t.text = "number", scalar(v)
	case *ast.BoolNode:
		t.typ, t.text = "boolean", scalar(v)
	default:
		return nil, &Error{File: y.file, Line: p.Line, Col: p.Col, Path: path, Msg: fmt.Sprintf("found a YAML %s, want a mapping, a list or a scalar", n.Type().YAMLName())}
	}
	return t, nil
}

// field adds the key: value mv to the map t.
func (y *yamlReader) field(t *tree, mv *ast.MappingValueNode, depth int) error {
	if mv == nil || mv.Key == nil {
		return nil
	}
	kp := posOf(y.file, mv.Key)
	key, ok := mv.Key.(*ast.StringNode)
	var name string
	switch {
	case ok:
		name = key.Value
	case mv.Key.Type() == ast.MergeKeyType:
		return &Error{File: y.file, Line: kp.Line, Col: kp.Col, Path: t.path, Msg: "YAML merge keys (<<) are not supported: write the fields out"}
	default:
		// numbers and booleans as keys read as their text, as Go's YAML
		// decoders into string-keyed maps do
		name = scalar(mv.Key)
	}
	for _, f := range t.fields {
		if f.key == name {
			return &Error{File: y.file, Line: kp.Line, Col: kp.Col, Path: joinPath(t.path, name),
				Msg: fmt.Sprintf("duplicate key (also at %d:%d)", f.keyPos.Line, f.keyPos.Col)}
		}
	}
	val, err := y.node(mv.Value, joinPath(t.path, name), depth+1)
	if err != nil {
		return err
	}
	if mv.Value == nil || isNull(mv.Value) {
		val.pos = kp // an empty value is where its key is
	}
	t.fields = append(t.fields, treeField{key: name, keyPos: kp, val: val})
	return nil
}

func isNull(n ast.Node) bool {
	_, ok := n.(*ast.NullNode)
	return ok
}

// scalar is the text of a node as written.
func scalar(n ast.Node) string {
	if n == nil {
		return ""
	}
	if s, ok := n.(*ast.StringNode); ok {
		return s.Value
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return ""
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
			return nil, &Error{File: r.file, Line: p.Line, Col: p.Col, Path: joinPath(t.path, name), Msg: "already defined as a value, not a table"}
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
			return nil, &Error{File: r.file, Line: p.Line, Col: p.Col, Path: joinPath(parent.path, name), Msg: "defined before as something other than an array of tables"}
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
		return nil, &Error{File: r.file, Line: p.Line, Col: p.Col, Path: joinPath(parent.path, name), Msg: "table defined twice"}
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
		return &Error{File: r.file, Line: p.Line, Col: p.Col, Path: joinPath(parent.path, name),
			Msg: fmt.Sprintf("duplicate key (also at %d:%d)", prev.pos.Line, prev.pos.Col)}
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
		return nil, &Error{File: r.file, Line: keyPos.Line, Col: keyPos.Col, Path: path, Msg: fmt.Sprintf("nested more than %d levels deep", maxDepth)}
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
		return nil, &Error{File: r.file, Line: t.pos.Line, Col: t.pos.Col, Path: path, Msg: fmt.Sprintf("unexpected TOML %s", n.Kind)}
	}
	return t, nil
}
