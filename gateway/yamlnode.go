package gateway

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	ytoken "github.com/goccy/go-yaml/token"
)

// This file reads the YAML configs of envoy (its bootstrap, a filter's
// typed_config, the ratelimit service's config) with the parser the
// scenario loader uses, goccy/go-yaml, walking its syntax tree so that
// every error names the line and column of the node concerned.

// ynode is one value of a YAML config: the node (anchors removed; nil when
// the value is null or absent), its path for messages (descriptors[1].key)
// and where it is.
type ynode struct {
	n         ast.Node
	path      string
	line, col int
}

// null reports whether the value is absent or written as null (~, or a
// key with nothing after it).
func (v ynode) null() bool {
	_, isNull := v.n.(*ast.NullNode)
	return v.n == nil || isNull
}

func (v ynode) pos(file string) Pos { return Pos{File: file, Line: v.line, Col: v.col} }

// yfield is one key: value of a mapping.
type yfield struct {
	key       string
	line, col int // of the key
	val       ynode
}

// ymap is a mapping's fields in file order, each key once.
type ymap struct {
	ynode
	fields []yfield
}

// get returns the field called key, or an absent value at the mapping.
func (m *ymap) get(key string) ynode {
	for _, f := range m.fields {
		if f.key == key {
			return f.val
		}
	}
	return ynode{path: yjoin(m.path, key), line: m.line, col: m.col}
}

// keyPos is where the key called key is written, or the mapping's place.
func (m *ymap) keyPos(file, key string) Pos {
	for _, f := range m.fields {
		if f.key == key {
			return Pos{File: file, Line: f.line, Col: f.col}
		}
	}
	return m.pos(file)
}

// has reports whether key is written (null or not).
func (m *ymap) has(key string) bool {
	return slices.ContainsFunc(m.fields, func(f yfield) bool { return f.key == key })
}

func yjoin(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yreader makes the errors of one file.
type yreader struct{ file string }

func (r *yreader) errAt(v ynode, format string, args ...any) error {
	return &Error{File: r.file, Line: v.line, Col: v.col, Path: v.path, Msg: fmt.Sprintf(format, args...)}
}

// document parses data and returns its one document's body.
func (r *yreader) document(data []byte) (ynode, error) {
	f, err := parseYAMLFile(data)
	if err != nil {
		var se interface {
			GetToken() *ytoken.Token
			GetMessage() string
		}
		if errors.As(err, &se) {
			p := tokenAt(se.GetToken())
			return ynode{}, &Error{File: r.file, Line: p.line, Col: p.col, Msg: "YAML syntax error: " + se.GetMessage()}
		}
		return ynode{}, &Error{File: r.file, Line: 1, Col: 1, Msg: fmt.Sprintf("YAML syntax error: %v", err)}
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			p := nodeAt(doc.Body)
			return ynode{}, &Error{File: r.file, Line: p.line, Col: p.col, Msg: "found a second YAML document, want one config per file"}
		}
		body = doc.Body
	}
	if body == nil {
		return ynode{}, &Error{File: r.file, Line: 1, Col: 1, Msg: "the file is empty or only comments"}
	}
	return r.node(body, "", position{1, 1})
}

// parseYAMLFile runs goccy's parser, turning a panic on malformed input
// into an error: no input may crash ratesim.
func parseYAMLFile(data []byte) (f *ast.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, fmt.Errorf("malformed YAML (%v)", p)
		}
	}()
	data = []byte(strings.TrimPrefix(string(data), "\ufeff"))
	// Duplicate keys are reported by mapping, at the second key.
	return parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
}

type position struct{ line, col int }

func tokenAt(tk *ytoken.Token) position {
	if tk == nil || tk.Position == nil || tk.Position.Line < 1 {
		return position{1, 1}
	}
	return position{tk.Position.Line, max(tk.Position.Column, 1)}
}

// nodeAt is where n starts: a block mapping at its first key.
func nodeAt(n ast.Node) position {
	switch v := n.(type) {
	case nil:
		return position{1, 1}
	case *ast.MappingNode:
		if v == nil {
			return position{1, 1}
		}
		if !v.IsFlowStyle && len(v.Values) > 0 && v.Values[0] != nil && v.Values[0].Key != nil {
			return nodeAt(v.Values[0].Key)
		}
		return tokenAt(v.Start)
	case *ast.MappingValueNode:
		if v == nil {
			return position{1, 1}
		}
		if v.Key != nil {
			return nodeAt(v.Key)
		}
		return tokenAt(v.Start)
	}
	return tokenAt(n.GetToken())
}

// node makes the value of n, written at path (at: where its key is, for a
// null value), removing anchors and refusing aliases and tags.
func (r *yreader) node(n ast.Node, path string, at position) (ynode, error) {
	v := ynode{path: path, line: at.line, col: at.col}
	for {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
			continue
		case *ast.AliasNode:
			p := nodeAt(x)
			return v, &Error{File: r.file, Line: p.line, Col: p.col, Path: path, Msg: "YAML aliases (*name) are not supported: write the value out"}
		case *ast.TagNode:
			p := nodeAt(x)
			return v, &Error{File: r.file, Line: p.line, Col: p.col, Path: path, Msg: "YAML tags are not supported: remove the tag"}
		}
		break
	}
	v.n = n
	if _, isNull := n.(*ast.NullNode); n != nil && !isNull {
		p := nodeAt(n)
		v.line, v.col = p.line, p.col
	}
	return v, nil
}

// describe says what n is, for "found ..." messages.
func describe(n ast.Node) string {
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return "null"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode:
		return "string " + strconv.Quote(v.Value)
	case *ast.IntegerNode:
		return "integer " + scalarOf(n)
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "number " + scalarOf(n)
	case *ast.BoolNode:
		return "boolean " + scalarOf(n)
	}
	return "a " + n.Type().YAMLName()
}

// scalarOf is a scalar's text as written (without quotes).
func scalarOf(n ast.Node) string {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value
	case *ast.LiteralNode:
		if v.Value != nil {
			return v.Value.Value
		}
		return ""
	case nil:
		return ""
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return ""
}

// mapping reads v as a mapping of field names, refusing duplicate keys,
// keys that are not names, and (when allowed is not nil) names not in
// allowed; unknown writes the message for such a name.
func (r *yreader) mapping(v ynode, what string, allowed []string, unknown func(key string) string) (*ymap, error) {
	var values []*ast.MappingValueNode
	switch n := v.n.(type) {
	case *ast.MappingNode:
		values = n.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{n}
	default:
		return nil, r.errAt(v, "found %s, want %s", describe(v.n), what)
	}
	m := &ymap{ynode: v}
	for _, mv := range values {
		if mv == nil {
			continue
		}
		kp := nodeAt(mv.Key)
		if mv.Key == nil {
			kp = tokenAt(mv.Start)
		}
		name, ok := mv.Key.(*ast.StringNode)
		if !ok {
			msg := fmt.Sprintf("found %s as a key, want a field name", describe(mv.Key))
			if _, merge := mv.Key.(*ast.MergeKeyNode); merge {
				msg = "YAML merge keys (<<) are not supported: write the fields out"
			}
			return nil, &Error{File: r.file, Line: kp.line, Col: kp.col, Path: v.path, Msg: msg}
		}
		path := yjoin(v.path, name.Value)
		for _, f := range m.fields {
			if f.key == name.Value {
				return nil, &Error{File: r.file, Line: kp.line, Col: kp.col, Path: path, Msg: fmt.Sprintf("duplicate key (first at %d:%d)", f.line, f.col)}
			}
		}
		if allowed != nil && !slices.Contains(allowed, name.Value) {
			return nil, &Error{File: r.file, Line: kp.line, Col: kp.col, Path: path, Msg: unknown(name.Value)}
		}
		val, err := r.node(mv.Value, path, kp)
		if err != nil {
			return nil, err
		}
		m.fields = append(m.fields, yfield{key: name.Value, line: kp.line, col: kp.col, val: val})
	}
	return m, nil
}

// unknownField is mapping's message for a field that is not one of fields.
func unknownField(fields []string) func(string) string {
	return func(string) string { return "unknown field (want one of " + strings.Join(fields, ", ") + ")" }
}

// list reads v as a sequence (null reads as an empty one).
func (r *yreader) list(v ynode, what string) ([]ynode, error) {
	if v.null() {
		return nil, nil
	}
	seq, ok := v.n.(*ast.SequenceNode)
	if !ok {
		return nil, r.errAt(v, "found %s, want %s", describe(v.n), what)
	}
	items := make([]ynode, 0, len(seq.Values))
	for i, n := range seq.Values {
		item, err := r.node(n, v.path+"["+strconv.Itoa(i)+"]", position{v.line, v.col})
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	return items, nil
}

// text reads a scalar as its text, as yaml.v2 reads a scalar into a Go
// string (10 is "10"); null is "".
func (r *yreader) text(v ynode) (string, error) {
	switch v.n.(type) {
	case nil, *ast.NullNode:
		return "", nil
	case *ast.StringNode, *ast.LiteralNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return scalarOf(v.n), nil
	}
	return "", r.errAt(v, "found %s, want a string", describe(v.n))
}

// boolean reads true or false; null is false.
func (r *yreader) boolean(v ynode) (bool, error) {
	switch b := v.n.(type) {
	case nil, *ast.NullNode:
		return false, nil
	case *ast.BoolNode:
		return b.Value, nil
	}
	return false, r.errAt(v, "found %s, want true or false", describe(v.n))
}

// uint32Of reads a whole number in [0, 2^32-1], written as a number or, as
// protobuf's JSON mapping allows, a quoted one; what says what it is.
func (r *yreader) uint32Of(v ynode, quoted bool, what string) (int64, error) {
	text := ""
	switch n := v.n.(type) {
	case *ast.IntegerNode:
		text = scalarOf(n)
	case *ast.StringNode:
		if !quoted {
			return 0, r.errAt(v, "found %s, want %s", describe(v.n), what)
		}
		text = n.Value
	default:
		return 0, r.errAt(v, "found %s, want %s", describe(v.n), what)
	}
	x, err := strconv.ParseUint(strings.TrimPrefix(text, "+"), 10, 32)
	if err != nil {
		return 0, r.errAt(v, "%s: want %s", text, what)
	}
	return int64(x), nil
}

// protoDuration reads a google.protobuf.Duration as envoy's YAML writes
// it (protobuf's JSON mapping): seconds with up to 9 decimals and the
// suffix s ("1s", "0.25s", "60s").
func (r *yreader) protoDuration(v ynode) (time.Duration, error) {
	want := `want a duration in seconds such as "1s" or "0.5s" (protobuf's JSON form)`
	var s string
	switch n := v.n.(type) {
	case *ast.StringNode:
		s = n.Value
	default:
		return 0, r.errAt(v, "found %s, %s", describe(v.n), want)
	}
	num, ok := strings.CutSuffix(s, "s")
	whole, frac, _ := strings.Cut(num, ".")
	if !ok || whole == "" || len(frac) > 9 || strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return 0, r.errAt(v, "%q: %s", s, want)
	}
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || sec > int64(1<<62)/int64(time.Second) {
		return 0, r.errAt(v, "%q: too long (want at most %ds)", s, int64(1<<62)/int64(time.Second))
	}
	ns := int64(0)
	if frac != "" {
		ns, _ = strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	}
	return time.Duration(sec)*time.Second + time.Duration(ns), nil
}

// durationText writes d as a scenario writes a duration: in its largest
// whole unit of h, m, s, ms, us or ns (24h, 1m, 500ms).
func durationText(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "us"}} {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}
