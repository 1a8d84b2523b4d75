package scenarios

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/didyoumean"
	"github.com/ratesim/ratesim/traffic"
)

// This file walks goccy/go-yaml's AST: typed getters that report every
// problem at the line and column of the node concerned.

type position struct{ line, col int }

// val is one value of the file: a field of a mapping or an item of a list.
type val struct {
	n    ast.Node // the value with anchors removed; nil when absent or unusable
	path string   // e.g. traffic[1].rate
	pos  position // of the value, or of the enclosing mapping when absent
	set  bool     // written in the file
	bad  bool     // written but unusable; the error is already reported
}

// ok reports whether v was written and is usable.
func (v val) ok() bool { return v.set && !v.bad }

// found writes the value of a scalar for a message: strings quoted,
// numbers as written.
func (v val) found() string {
	if s, ok := v.n.(*ast.StringNode); ok {
		return quote(s.Value)
	}
	return scalarText(v.n)
}

// mapping is a YAML mapping whose keys are field names.
type mapping struct {
	val
	keys   []string // in file order, each once
	items  map[string]val
	keyPos map[string]position
}

// get returns the field called key; when absent, a val with the field's
// path at the mapping's position.
func (m *mapping) get(key string) val {
	if v, ok := m.items[key]; ok {
		return v
	}
	return val{path: join(m.path, key), pos: m.pos}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

type decoder struct {
	file string
	errs Errors
	// broken holds the paths of mappings with keys that could not be read
	// (merge keys, non-string keys): a field missing from them may be
	// hidden there, so it is not reported missing.
	broken map[string]bool
	// workers says the backend section writes workers: retries may then
	// follow sheds, timeouts and errors.
	workers bool
	// member says an all-of row's limit is being read, which may say
	// what it counts by: memberBy is its by, when written.
	member   bool
	memberBy val
}

func (d *decoder) errAt(p position, path, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: p.line, Col: p.col, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// typeErr reports that v is not of the kind wanted.
func (d *decoder) typeErr(v val, want string) {
	d.errAt(v.pos, v.path, "found %s, want %s", describe(v.n), want)
}

// missing reports a required field that is absent.
func (d *decoder) missing(v val, want string) {
	parent := ""
	if i := strings.LastIndexByte(v.path, '.'); i >= 0 {
		parent = v.path[:i]
	}
	if d.broken[parent] {
		return
	}
	d.errAt(v.pos, v.path, "missing (want %s)", want)
}

func tokenPos(tk *token.Token) position {
	if tk == nil || tk.Position == nil || tk.Position.Line < 1 {
		return position{1, 1}
	}
	return position{tk.Position.Line, max(tk.Position.Column, 1)}
}

// posOf is where n starts: a block mapping at its first key, anything else
// at its first token.
func posOf(n ast.Node) position {
	switch v := n.(type) {
	case nil:
		return position{1, 1}
	case *ast.MappingNode:
		if v == nil {
			return position{1, 1}
		}
		if !v.IsFlowStyle && len(v.Values) > 0 && v.Values[0] != nil && v.Values[0].Key != nil {
			return posOf(v.Values[0].Key)
		}
		return tokenPos(v.Start)
	case *ast.MappingValueNode:
		if v == nil {
			return position{1, 1}
		}
		if v.Key != nil {
			return posOf(v.Key)
		}
		return tokenPos(v.Start)
	}
	return tokenPos(n.GetToken())
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
		return "string " + quote(v.Value)
	case *ast.LiteralNode:
		return "string " + quote(literalText(v))
	case *ast.IntegerNode:
		return "integer " + scalarText(n)
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "number " + scalarText(n)
	case *ast.BoolNode:
		return "boolean " + scalarText(n)
	}
	return "a " + n.Type().YAMLName()
}

func literalText(n *ast.LiteralNode) string {
	if n == nil || n.Value == nil {
		return ""
	}
	return n.Value.Value
}

// scalarText is the text of a scalar as written (without quotes).
func scalarText(n ast.Node) string {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value
	case *ast.LiteralNode:
		return literalText(v)
	}
	if n == nil {
		return ""
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return ""
}

// isPlain reports whether n is an unquoted string scalar.
func isPlain(n *ast.StringNode) bool {
	return n.Token != nil && n.Token.Type == token.StringType
}

// document parses data and returns the body of its single document, or nil
// after reporting why there is none.
func (d *decoder) document(data []byte) ast.Node {
	data = []byte(strings.TrimPrefix(string(data), "\ufeff"))
	f, err := parseYAML(data)
	if err != nil {
		var se interface {
			GetToken() *token.Token
			GetMessage() string
		}
		if errors.As(err, &se) {
			d.errAt(tokenPos(se.GetToken()), "", "YAML syntax error: %s", se.GetMessage())
		} else {
			d.errAt(position{1, 1}, "", "YAML syntax error: %v", err)
		}
		return nil
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			d.errAt(posOf(doc.Body), "", "found a second YAML document, want one scenario per file")
			return nil
		}
		body = doc.Body
	}
	if body == nil {
		d.errAt(position{1, 1}, "", "no scenario: the file is empty or only comments (want a mapping with name, limit and traffic)")
	}
	return body
}

// parseYAML runs goccy's parser, turning a panic on malformed input into a
// syntax error: no input may crash ratesim.
func parseYAML(data []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("malformed YAML (%v)", r)
		}
	}()
	// Duplicate keys are reported by the walker, with the rest.
	return parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
}

// node makes the val of a value node written at path, removing anchors and
// reporting the YAML features ratesim does not take (aliases, tags).
func (d *decoder) node(n ast.Node, path string, at position) val {
	v := val{path: path, set: true, pos: at}
	for {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
			continue
		case *ast.AliasNode:
			d.errAt(posOf(x), path, "YAML aliases (*name) are not supported: write the value out")
			v.bad = true
			return v
		case *ast.TagNode:
			d.errAt(posOf(x), path, "YAML tags (%s) are not supported: remove the tag", scalarText(x))
			v.bad = true
			return v
		}
		break
	}
	v.n = n
	if n != nil {
		v.pos = posOf(n)
	}
	return v
}

// mapping reads v as a mapping of field names, reporting keys that are not
// names and duplicate keys. want says what v should be.
func (d *decoder) mapping(v val, want string) (*mapping, bool) {
	if !v.ok() {
		return nil, false
	}
	var values []*ast.MappingValueNode
	switch n := v.n.(type) {
	case *ast.MappingNode:
		values = n.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{n}
	default:
		d.typeErr(v, want)
		return nil, false
	}
	m := &mapping{val: v, items: map[string]val{}, keyPos: map[string]position{}}
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
			if d.broken == nil {
				d.broken = map[string]bool{}
			}
			d.broken[v.path] = true
			switch mv.Key.(type) {
			case *ast.MergeKeyNode:
				d.errAt(kpos, v.path, "YAML merge keys (<<) are not supported: write the fields out")
			case *ast.MappingKeyNode:
				d.errAt(kpos, v.path, "found a complex key (?), want a field name")
			default:
				d.errAt(kpos, v.path, "found %s as a key, want a field name", describe(mv.Key))
			}
			continue
		}
		path := join(v.path, name.Value)
		if first, dup := m.keyPos[name.Value]; dup {
			d.errAt(kpos, path, "duplicate key (first at %d:%d)", first.line, first.col)
			continue
		}
		m.keys = append(m.keys, name.Value)
		m.keyPos[name.Value] = kpos
		m.items[name.Value] = d.node(mv.Value, path, kpos)
	}
	return m, true
}

// allow reports every field of m not in allowed, with the message unknown
// returns for it.
func (d *decoder) allow(m *mapping, allowed []string, unknown func(key string) string) {
	for _, k := range m.keys {
		if !slices.Contains(allowed, k) {
			msg := unknown(k)
			if s := suggest(k, allowed); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			d.errAt(m.keyPos[k], join(m.path, k), "%s", msg)
		}
	}
}

// unknownField is allow's message for a field that is not one of fields.
func unknownField(fields []string) func(string) string {
	return func(string) string { return "unknown field (want " + orList(fields) + ")" }
}

// suggest returns the name in names closest to s, if it is close enough to
// be a likely typo (didyoumean.Closest: case, '_' for '-' and transposed
// letters included).
func suggest(s string, names []string) string {
	return didyoumean.Closest(s, names)
}

// list reads v as a sequence and returns its items.
func (d *decoder) list(v val, want string) ([]val, bool) {
	if !v.ok() {
		return nil, false
	}
	seq, ok := v.n.(*ast.SequenceNode)
	if !ok {
		d.typeErr(v, want)
		return nil, false
	}
	items := make([]val, 0, len(seq.Values))
	for i, n := range seq.Values {
		items = append(items, d.node(n, index(v.path, i), v.pos))
	}
	return items, true
}

// str reads a string; nonEmpty rejects "".
func (d *decoder) str(v val, nonEmpty bool) (string, bool) {
	if !v.ok() {
		return "", false
	}
	var s string
	switch n := v.n.(type) {
	case *ast.StringNode:
		s = n.Value
	case *ast.LiteralNode:
		s = literalText(n)
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		d.errAt(v.pos, v.path, "found %s, want a string (quote it: %q)", describe(n), scalarText(n))
		return "", false
	default:
		d.typeErr(v, "a string")
		return "", false
	}
	if nonEmpty && s == "" {
		d.errAt(v.pos, v.path, `"": want a non-empty string`)
		return "", false
	}
	return s, true
}

// choice reads a non-empty string that must be one of list; what names it
// in the error ("unknown jitter (want none, full or equal)").
func (d *decoder) choice(v val, what string, list []string) (string, bool) {
	s, ok := d.str(v, true)
	if ok && !slices.Contains(list, s) {
		d.errAt(v.pos, v.path, "%s: unknown %s (want %s)", quote(s), what, orList(list))
		ok = false
	}
	return s, ok
}

// integer reads a decimal integer in [lo, hi]; want describes the range.
func (d *decoder) integer(v val, lo, hi int64, want string) (int64, bool) {
	if !v.ok() {
		return 0, false
	}
	text := ""
	switch n := v.n.(type) {
	case *ast.IntegerNode:
		text = scalarText(n)
	case *ast.StringNode:
		if !isPlain(n) || !isDecimal(n.Value) {
			d.typeErr(v, want)
			return 0, false
		}
		text = n.Value // an integer too large for goccy's integer node
	default:
		d.typeErr(v, want)
		return 0, false
	}
	x, err := strconv.ParseInt(text, 10, 64)
	switch {
	case err != nil && isDecimal(text):
		d.errAt(v.pos, v.path, "%s: out of range (want %s)", text, want)
		return 0, false
	case err != nil:
		d.errAt(v.pos, v.path, "%s: not a decimal integer (want %s)", text, want)
		return 0, false
	case x < lo || x > hi:
		d.errAt(v.pos, v.path, "%s: want %s", text, want)
		return 0, false
	}
	return x, true
}

// uinteger reads a decimal integer >= 0 up to the largest uint64.
func (d *decoder) uinteger(v val, want string) (uint64, bool) {
	if !v.ok() {
		return 0, false
	}
	text := ""
	switch n := v.n.(type) {
	case *ast.IntegerNode:
		text = scalarText(n)
	case *ast.StringNode:
		if !isPlain(n) || !isDecimal(n.Value) {
			d.typeErr(v, want)
			return 0, false
		}
		text = n.Value
	default:
		d.typeErr(v, want)
		return 0, false
	}
	x, err := strconv.ParseUint(strings.TrimPrefix(text, "+"), 10, 64)
	switch {
	case err != nil && isDecimal(text) && !strings.HasPrefix(text, "-"):
		d.errAt(v.pos, v.path, "%s: out of range (want %s)", text, want)
		return 0, false
	case err != nil && isDecimal(text):
		d.errAt(v.pos, v.path, "%s: want %s", text, want)
		return 0, false
	case err != nil:
		d.errAt(v.pos, v.path, "%s: not a decimal integer (want %s)", text, want)
		return 0, false
	}
	return x, true
}

// isDecimal reports whether s is an optionally signed run of digits.
func isDecimal(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return s != "" && strings.TrimLeft(s, "0123456789") == ""
}

func (d *decoder) boolean(v val) (bool, bool) {
	if !v.ok() {
		return false, false
	}
	b, ok := v.n.(*ast.BoolNode)
	if !ok {
		d.typeErr(v, "true or false")
		return false, false
	}
	return b.Value, true
}

// durationText returns the text of a value written as a duration: a string
// (900ms) or a number (0).
func (d *decoder) durationText(v val) (string, bool) {
	if !v.ok() {
		return "", false
	}
	switch v.n.(type) {
	case *ast.StringNode, *ast.IntegerNode, *ast.FloatNode:
		return scalarText(v.n), true
	}
	d.typeErr(v, "a duration like 900ms")
	return "", false
}

// duration reads a duration >= 0, or > 0 when positive.
func (d *decoder) duration(v val, positive bool) (time.Duration, bool) {
	text, ok := d.durationText(v)
	if !ok {
		return 0, false
	}
	dur, msg := parseDuration(text)
	if positive && (msg == "want a duration >= 0" || msg == "" && dur == 0) {
		msg = "want a duration > 0"
	}
	if msg != "" {
		d.errAt(v.pos, v.path, "%s: %s", v.found(), msg)
		return 0, false
	}
	return dur, true
}

// period reads a policy's per: a duration > 0, or 1mo or 1y, a calendar
// month or year in UTC (fixed-window only, which the algorithm checks),
// whose Per is then the calendar's nominal duration.
func (d *decoder) period(v val) (time.Duration, algorithms.Calendar, bool) {
	text, ok := d.durationText(v)
	if !ok {
		return 0, algorithms.NotCalendar, false
	}
	if c, ok := algorithms.ParseCalendar(text); ok {
		return c.Nominal(), c, true
	}
	dur, msg := parseDuration(text)
	if msg == "want a duration >= 0" || msg == "" && dur == 0 {
		msg = "want a duration > 0"
	}
	if strings.Contains(msg, "unknown unit") {
		msg += "; or 1mo or 1y, a calendar month or year in UTC (fixed-window only)"
	}
	if msg != "" {
		d.errAt(v.pos, v.path, "%s: %s", v.found(), msg)
		return 0, algorithms.NotCalendar, false
	}
	return dur, algorithms.NotCalendar, true
}

// signedDuration reads a duration that may be negative (-100ms).
func (d *decoder) signedDuration(v val) (time.Duration, bool) {
	text, ok := d.durationText(v)
	if !ok {
		return 0, false
	}
	dur, msg := parseSignedDuration(text)
	if msg != "" {
		d.errAt(v.pos, v.path, "%s: %s", v.found(), msg)
		return 0, false
	}
	return dur, true
}

// number reads a finite decimal number (an integer or a float as YAML
// writes them); want describes it.
func (d *decoder) number(v val, want string) (float64, bool) {
	if !v.ok() {
		return 0, false
	}
	switch v.n.(type) {
	case *ast.IntegerNode, *ast.FloatNode:
	default:
		d.typeErr(v, want)
		return 0, false
	}
	text := scalarText(v.n)
	x, err := strconv.ParseFloat(text, 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange):
		d.errAt(v.pos, v.path, "%s: out of range (want %s)", text, want)
		return 0, false
	case err != nil || math.IsNaN(x) || math.IsInf(x, 0):
		d.errAt(v.pos, v.path, "%s: not a decimal number (want %s)", text, want)
		return 0, false
	}
	return x, true
}

// rate reads a rate such as 10/s.
func (d *decoder) rate(v val) (traffic.Rate, bool) { return d.rateWith(v, 1, "") }

// rateWith reads a rate whose count is at least minCount (0 or 1); zeroMsg,
// when set, replaces the message for a count of 0.
func (d *decoder) rateWith(v val, minCount int64, zeroMsg string) (traffic.Rate, bool) {
	if !v.ok() {
		return traffic.Rate{}, false
	}
	switch v.n.(type) {
	case *ast.StringNode, *ast.IntegerNode, *ast.FloatNode:
	default:
		d.typeErr(v, "a rate like 10/s, 600/m or 5/100ms")
		return traffic.Rate{}, false
	}
	text := scalarText(v.n)
	r, msg := parseRateMin(text, minCount)
	if msg == zeroRate && zeroMsg != "" {
		msg = zeroMsg
	}
	if msg != "" {
		d.errAt(v.pos, v.path, "%s: %s", v.found(), msg)
		return traffic.Rate{}, false
	}
	return r, true
}

// ParseYAML parses data (a byte order mark first is dropped) as the
// scenario loader does: duplicate keys are left for the caller's walk to
// report, and a parser panic is an error. The gateway readers read their
// YAML and JSON configs with it.
func ParseYAML(data []byte) (*ast.File, error) {
	return parseYAML([]byte(strings.TrimPrefix(string(data), "\ufeff")))
}

// NodePos is where n starts, as the scenario loader reports it: a block
// mapping at its first key, anything else at its first token; line and
// column from 1.
func NodePos(n ast.Node) (line, col int) {
	p := posOf(n)
	return p.line, p.col
}

// TokenPos is where tk is, from line 1 and column 1 (where it is unknown).
func TokenPos(tk *token.Token) (line, col int) {
	p := tokenPos(tk)
	return p.line, p.col
}
