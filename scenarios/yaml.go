package scenarios

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/didyoumean"
	"github.com/ratesim/ratesim/internal/yamltree"
	"github.com/ratesim/ratesim/traffic"
)

// This file holds the checks' getters: each reads a typed field's value
// and reports every problem at the line and column where it was written.

type position struct{ line, col int }

// val is one value of a File as the checks read it: the typed field's
// Value, where it was written and its field path.
type val struct {
	// n is the value as written: a section written as a mapping is
	// Kind Mapping, a list Kind List (or what was found in their place);
	// the zero Value when absent or unusable
	n    Value
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
	if v.n.Kind == Plain || v.n.Kind == Quoted {
		return quote(v.n.Text)
	}
	return v.n.Text
}

// of is the val of x, the typed field at path; pos is where an absent
// field is reported (its mapping's place).
func (at *positions) of(path string, x Value, pos position) val {
	if at.bad[path] {
		return val{path: path, pos: at.at[path], set: true, bad: true}
	}
	if s, ok := at.shape[path]; ok {
		x = s // a mapping or a list written as another kind
	}
	if !x.Set() {
		return val{path: path, pos: pos}
	}
	return val{n: x, path: path, pos: at.at[path], set: true}
}

// item is the val of x, item i of the list v.
func (at *positions) item(v val, i int, x Value) val {
	p := index(v.path, i)
	return at.of(p, x, at.at[p])
}

// mapping is a section of the File, written as a mapping: the keys
// written in it (its fields set and the keys that are no field), in the
// order written.
type mapping struct {
	val
	at     *positions
	keys   []string // in file order, each once; fields set in code last
	keyPos map[string]position
}

// get is the val of x, the typed field key of m; when absent, it stands
// at m's position with the field's path.
func (m *mapping) get(key string, x Value) val {
	return m.at.of(join(m.path, key), x, m.pos)
}

// has reports whether the field key of m was written.
func (m *mapping) has(key string) bool { return slices.Contains(m.keys, key) }

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
	// at is where the File checked was read (nil when built in code).
	at *positions
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

// describe says what v is, for "found ..." messages.
func describe(v Value) string {
	switch v.Kind {
	case Unset, Null:
		return "null"
	case Mapping:
		return "a mapping"
	case List:
		return "a list"
	case Plain, Quoted, Literal:
		return "string " + quote(v.Text)
	case Integer:
		return "integer " + v.Text
	case Float, Infinity, NaN:
		return "number " + v.Text
	case Boolean:
		return "boolean " + v.Text
	}
	return "a " + v.Text
}

// document reads data's single YAML document into its tree, or returns
// nil after reporting why there is none.
func (d *decoder) document(data []byte) *yamltree.Node {
	body, p := yamltree.Read(data)
	switch {
	case p == nil:
		return body
	case p.Kind == yamltree.Syntax && p.Pos == (yamltree.Pos{}):
		d.errAt(position{1, 1}, "", "YAML syntax error: %s", p.Msg)
	case p.Kind == yamltree.Syntax:
		d.errAt(posFrom(p.Pos), "", "YAML syntax error: %s", p.Msg)
	case p.Kind == yamltree.Second:
		d.errAt(posFrom(p.Pos), "", "found a second YAML document, want one scenario per file")
	default:
		d.errAt(position{1, 1}, "", "no scenario: the file is empty or only comments (want a mapping with name, limit and traffic)")
	}
	return nil
}

// mapping reads v as a mapping of field names; want says what v should
// be. sec is the section v holds: a pointer to its struct, or its
// Attributes.
func (d *decoder) mapping(v val, want string, sec any) (*mapping, bool) {
	if !v.ok() {
		return nil, false
	}
	if v.n.Kind != Mapping {
		d.typeErr(v, want)
		return nil, false
	}
	m := &mapping{val: v, at: d.at, keyPos: map[string]position{}}
	d.pending("k:" + v.path)
	m.keys = d.at.keysOf(v.path, sec)
	for _, k := range m.keys {
		p := join(v.path, k)
		d.pending("v:" + p)
		m.keyPos[k] = d.at.key[p]
	}
	return m, true
}

// keysOf lists the keys written in sec, the section at path: its fields
// set (and the keys that are no field of it), in the order written,
// fields set in code last; a source's attributes in their order.
func (at *positions) keysOf(path string, sec any) []string {
	var keys []string
	if attrs, ok := sec.(Attributes); ok {
		for _, a := range attrs {
			keys = append(keys, a.Name)
		}
		return keys
	}
	rv := reflect.ValueOf(sec).Elem()
	t := rv.Type()
	for i := range t.NumField() {
		name := tagName(t.Field(i))
		if name == "" {
			continue
		}
		p := join(path, name)
		if _, shaped := at.shape[p]; shaped || at.bad[p] || !rv.Field(i).IsZero() {
			keys = append(keys, name)
		}
	}
	keys = append(keys, at.unknown[path]...)
	slices.SortStableFunc(keys, func(a, b string) int {
		pa, pb := at.key[join(path, a)], at.key[join(path, b)]
		if ua, ub := pa.line == 0, pb.line == 0; ua != ub {
			if ua {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(pa.line, pb.line), cmp.Compare(pa.col, pb.col))
	})
	return keys
}

// sectionOf is what a section written as a mapping holds (nil: absent).
func sectionOf[T any](p *T) Value {
	if p == nil {
		return Value{}
	}
	return Value{Kind: Mapping}
}

// written is what the limit holds: its rate when written as one.
func (l *Limit) written() Value {
	if l != nil && l.Short.Set() {
		return l.Short.Value
	}
	return sectionOf(l)
}

// written is what the entry holds: its name when written bare.
func (a *AlgEntry) written() Value {
	if a.Bare.Set() {
		return a.Bare.Value
	}
	return Value{Kind: Mapping}
}

// written is what the service holds: its duration when written as one.
func (s *Service) written() Value {
	if s != nil && s.Short.Set() {
		return s.Short.Value
	}
	return sectionOf(s)
}

// written is what at holds: one instant, or a list.
func (in Instants) written() Value {
	if in.List != nil {
		return Value{Kind: List}
	}
	return in.One.Value
}

// written is what the skew holds: one value, or a list.
func (s *Skew) written() Value {
	switch {
	case s == nil:
		return Value{}
	case s.Each != nil:
		return Value{Kind: List}
	}
	return s.One.Value
}

// attributesOf is what a source's attributes hold (nil: absent).
func attributesOf(as Attributes) Value {
	if as == nil {
		return Value{}
	}
	return Value{Kind: Mapping}
}

// listOf is what a list holds (nil: absent).
func listOf[T any](xs []T) Value {
	if xs == nil {
		return Value{}
	}
	return Value{Kind: List}
}

// pending reports the walker's problems kept at key (see positions.errs).
func (d *decoder) pending(key string) {
	if d.at != nil {
		d.errs = append(d.errs, d.at.errs[key]...)
	}
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

// list reads v as a list of n items and returns their vals; x(i) is
// item i's Value.
func (d *decoder) list(v val, want string, n int, x func(i int) Value) ([]val, bool) {
	if !v.ok() {
		return nil, false
	}
	if v.n.Kind != List {
		d.typeErr(v, want)
		return nil, false
	}
	items := make([]val, n)
	for i := range n {
		items[i] = d.at.item(v, i, x(i))
		d.pending("v:" + items[i].path)
	}
	return items, true
}

// str reads a string; nonEmpty rejects "".
func (d *decoder) str(v val, nonEmpty bool) (string, bool) {
	if !v.ok() {
		return "", false
	}
	var s string
	switch v.n.Kind {
	case Plain, Quoted, Literal:
		s = v.n.Text
	case Integer, Float, Boolean, Infinity, NaN:
		d.errAt(v.pos, v.path, "found %s, want a string (quote it: %q)", describe(v.n), v.n.Text)
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
// in the error ("unknown jitter (want none, full, equal or decorrelated)").
func (d *decoder) choice(v val, what string, list []string) (string, bool) {
	s, ok := d.str(v, true)
	if ok && !slices.Contains(list, s) {
		msg := fmt.Sprintf("%s: unknown %s (want %s)", quote(s), what, orList(list))
		if near := suggest(s, list); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		}
		d.errAt(v.pos, v.path, "%s", msg)
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
	switch v.n.Kind {
	case Integer:
		text = v.n.Text
	case Plain, Quoted:
		if v.n.Kind != Plain || !isDecimal(v.n.Text) {
			d.typeErr(v, want)
			return 0, false
		}
		text = v.n.Text // an integer too large for goccy's integer node
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
	switch v.n.Kind {
	case Integer:
		text = v.n.Text
	case Plain, Quoted:
		if v.n.Kind != Plain || !isDecimal(v.n.Text) {
			d.typeErr(v, want)
			return 0, false
		}
		text = v.n.Text
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
	if v.n.Kind != Boolean {
		d.typeErr(v, "true or false")
		return false, false
	}
	return strings.EqualFold(v.n.Text, "true"), true
}

// durationText returns the text of a value written as a duration: a string
// (900ms) or a number (0).
func (d *decoder) durationText(v val) (string, bool) {
	if !v.ok() {
		return "", false
	}
	switch v.n.Kind {
	case Plain, Quoted, Integer, Float:
		return v.n.Text, true
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
	if !isNumber(v.n) {
		d.typeErr(v, want)
		return 0, false
	}
	text := v.n.Text
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
	if !isScalar(v.n) {
		d.typeErr(v, "a rate like 10/s, 600/m or 5/100ms")
		return traffic.Rate{}, false
	}
	text := v.n.Text
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

// isNumber reports whether n was written as an integer or a decimal.
func isNumber(n Value) bool { return n.Kind == Integer || n.Kind == Float }

// isScalar reports whether n was written as a string or a number.
func isScalar(n Value) bool {
	switch n.Kind {
	case Plain, Quoted, Integer, Float:
		return true
	}
	return false
}

// isString reports whether n was written as a string, quoted or not.
func isString(n Value) bool { return n.Kind == Plain || n.Kind == Quoted }

// isMap reports whether n was written as a mapping.
func isMap(n Value) bool { return n.Kind == Mapping }
