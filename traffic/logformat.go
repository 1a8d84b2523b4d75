package traffic

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ---- nginx log_format templates ----

// LogTemplate is an nginx log_format, compiled: the literal texts and the
// variables between them, as ngx_http_log_compile_format
// (src/http/modules/ngx_http_log_module.c) splits its strings: a variable
// is $name or ${name}, name made of letters, digits and _; anything else
// is literal text. Lits has one more element than Vars: Lits[0] comes
// before Vars[0], Lits[i+1] after Vars[i] (either may be "").
type LogTemplate struct {
	Lits   []string
	Vars   []string // the names, without $ and braces
	Escape string   // default, json or none
}

// The escapes of log_format's escape= parameter.
var LogEscapes = []string{"default", "json", "none"}

// CombinedTemplate is nginx's predefined log format combined
// (ngx_http_log_module.c, ngx_http_combined_fmt).
const CombinedTemplate = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`

// ParseLogTemplate compiles the text of a log_format (its strings already
// concatenated, as nginx concatenates them) with its escape (""
// means default). Besides nginx's own errors (an empty variable name, a
// missing closing brace), it refuses two variables with no text between
// them: a line cannot be split there.
func ParseLogTemplate(text, escape string) (*LogTemplate, error) {
	if escape == "" {
		escape = "default"
	}
	if !slices.Contains(LogEscapes, escape) {
		return nil, fmt.Errorf("escape=%s: want %s", escape, orWords(LogEscapes))
	}
	t := &LogTemplate{Escape: escape}
	var lit strings.Builder
	for i := 0; i < len(text); {
		if text[i] != '$' {
			lit.WriteByte(text[i])
			i++
			continue
		}
		i++
		bracket := i < len(text) && text[i] == '{'
		if bracket {
			i++
		}
		start := i
		for i < len(text) && isVarChar(text[i]) {
			i++
		}
		name := text[start:i]
		if bracket {
			if i >= len(text) || text[i] != '}' {
				return nil, fmt.Errorf("the closing bracket in \"${%s\" is missing", name)
			}
			i++
		}
		if name == "" {
			return nil, fmt.Errorf("a $ with no variable name at byte %d of %q", start, text)
		}
		if len(t.Vars) > 0 && lit.Len() == 0 {
			return nil, fmt.Errorf("$%s follows $%s with no text between them: a log line cannot be split there", name, t.Vars[len(t.Vars)-1])
		}
		t.Lits = append(t.Lits, lit.String())
		lit.Reset()
		t.Vars = append(t.Vars, name)
	}
	t.Lits = append(t.Lits, lit.String())
	if len(t.Vars) == 0 {
		return nil, fmt.Errorf("%q has no variable", text)
	}
	return t, nil
}

func isVarChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// Index returns the position of variable name ($ optional) in t.Vars, or
// -1.
func (t *LogTemplate) Index(name string) int {
	return slices.Index(t.Vars, strings.TrimPrefix(name, "$"))
}

// String writes the template back, each variable as $name, or ${name}
// when the text after it starts with a character of a name.
func (t *LogTemplate) String() string {
	var b strings.Builder
	for i, v := range t.Vars {
		b.WriteString(t.Lits[i])
		if next := t.Lits[i+1]; next != "" && isVarChar(next[0]) {
			b.WriteString("${" + v + "}")
		} else {
			b.WriteString("$" + v)
		}
	}
	b.WriteString(t.Lits[len(t.Vars)])
	return b.String()
}

// varList lists the template's variables for a message.
func (t *LogTemplate) varList() string {
	out := make([]string, len(t.Vars))
	for i, v := range t.Vars {
		out[i] = "$" + v
	}
	return strings.Join(out, " ")
}

// quoted reports whether variable i sits between two double quotes of
// the literal text ("$request"): its value then ends at a quote.
func (t *LogTemplate) quoted(i int) bool {
	return strings.HasSuffix(t.Lits[i], `"`) && strings.HasPrefix(t.Lits[i+1], `"`)
}

// split cuts line into the values of the variables 0..upto, into vals:
// the line must start with the first literal text; each value runs to the
// first occurrence of the literal text that follows its variable (to the
// end of the line for a last variable with nothing after it). Where the
// variable is quoted, a quote escaped by a backslash (\") does not end it
// (escape=json writes a quote so; the default escape writes \x22, but
// Apache and old nginx wrote \"); with escape=none nothing is escaped and
// the first quote ends it. A value therefore
// holds a space only when the text after its variable does not start
// with one (a quoted value). Text after the last value needed is not
// looked at.
func (t *LogTemplate) split(line []byte, upto int, vals [][]byte) badLine {
	if !bytes.HasPrefix(line, []byte(t.Lits[0])) {
		return missingField(fmt.Sprintf("the line does not start with %q, as the log_format does", t.Lits[0]))
	}
	rest := line[len(t.Lits[0]):]
	for i := 0; i <= upto; i++ {
		next := t.Lits[i+1]
		if next == "" { // the last variable: the rest of the line
			vals[i], rest = rest, nil
			continue
		}
		j := t.find(rest, next, i)
		if j < 0 {
			// at the value of the variable that runs to the end
			return missingField(fmt.Sprintf("no %q after $%s (the line has fewer fields than the log_format)", next, t.Vars[i])).at(line, rest)
		}
		vals[i], rest = rest[:j], rest[j+len(next):]
	}
	return badLine{}
}

// find returns the index in b of the literal text lit that ends variable
// i's value, or -1.
func (t *LogTemplate) find(b []byte, lit string, i int) int {
	if len(lit) == 1 && lit[0] == ' ' {
		return bytes.IndexByte(b, ' ')
	}
	// escape=json writes a quote in a value as \"; the default escape
	// writes \x22 (and a backslash as \x5C), so a \" there comes from
	// another writer (Apache, nginx before 1.1.6) and is a quote too
	json := t.Escape != "none" && t.quoted(i)
	off := 0
	for {
		j := bytes.Index(b[off:], []byte(lit))
		if j < 0 {
			return -1
		}
		j += off
		if !json {
			return j
		}
		n := 0
		for k := j - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return j
		}
		off = j + 1
	}
}

// templateParser reads lines of an nginx log_format: the time from $msec
// (epoch seconds with milliseconds, exact), $time_iso8601 or $time_local
// (whole seconds), minus $request_time when the time is $msec and the
// template has it (nginx writes both when the request ends: their
// difference is when it began, to the ms); the key, cost and check from
// the variables named.
type templateParser struct {
	t        *LogTemplate
	tp       *timeParser
	timeVar  int
	timeKind int   // tmplMsec, tmplISO, tmplLocal, or tmplLayout/tmplUnit with a time-layout or time-unit
	reqTime  int   // $request_time, or -1
	key      int   // -1: the global key
	cost     int   // -1: the source's cost
	check    int   // -1: no check
	attrs    []int // the variables of Replay.AttrFields
	// derive are the Derive of Replay.AttrFields (nil where none) and
	// deriveAt the variables each reads; args is Derive's, reused
	derive   []Deriver
	deriveAt [][]int
	args     []string
	upto     int // the last variable read
	vals     [][]byte
	bad      []byte // the value read last (see read)
	// the variables a router reads (readRequests), -1 when none; route
	// says the router reads them
	method, path, host int
	frontend           int
	route              bool
}

const (
	tmplMsec = iota
	tmplISO
	tmplLocal
	tmplOther // a variable read by time-layout or time-unit
)

// templateTimes are the variables a time is read from without time-field,
// in order of preference, and how each is read.
var templateTimes = []struct {
	name string
	kind int
}{{"msec", tmplMsec}, {"time_iso8601", tmplISO}, {"time_local", tmplLocal}}

func newTemplateParser(r *Replay, tp *timeParser) (*templateParser, error) {
	t, err := ParseLogTemplate(r.LogFormat, r.LogEscape)
	if err != nil {
		return nil, fmt.Errorf("log-format: %v", err)
	}
	p := &templateParser{t: t, tp: tp, timeVar: -1, reqTime: -1, key: -1, cost: -1, check: -1, method: -1, path: -1, host: -1, frontend: -1}
	field := func(option, name string) (int, error) {
		i := t.Index(name)
		if i < 0 {
			return 0, fmt.Errorf("%s %q: the log_format has no such variable (its variables: %s)", option, name, t.varList())
		}
		return i, nil
	}
	if r.TimeField != "" {
		if p.timeVar, err = field("time-field", r.TimeField); err != nil {
			return nil, err
		}
		p.timeKind = tmplOther
		for _, c := range templateTimes {
			if c.name == t.Vars[p.timeVar] {
				p.timeKind = c.kind
			}
		}
		if p.timeKind == tmplOther && tp.layout == "" && tp.unit == 0 {
			p.timeKind = -1 // read as a CSV time: a number, RFC 3339 or CLF
		}
	} else {
		for _, c := range templateTimes {
			if i := t.Index(c.name); i >= 0 {
				p.timeVar, p.timeKind = i, c.kind
				break
			}
		}
		if p.timeVar < 0 {
			return nil, fmt.Errorf("the log_format has no time: want $msec (milliseconds), $time_iso8601 or $time_local in it, or set time-field (its variables: %s)", t.varList())
		}
	}
	if p.timeKind == tmplMsec && tp.layout == "" && tp.unit == 0 {
		p.reqTime = t.Index("request_time")
	}
	switch r.KeyField {
	case KeyFieldNone:
	case "":
		p.key = t.Index("remote_addr")
		if p.key < 0 {
			p.key = t.Index("binary_remote_addr")
		}
	default:
		if p.key, err = field(r.keyWhat(), r.KeyField); err != nil {
			return nil, err
		}
	}
	if r.CostField != "" {
		if p.cost, err = field("cost-field", r.CostField); err != nil {
			return nil, err
		}
	}
	if r.CheckField != "" {
		if p.check, err = field("check-field", r.CheckField); err != nil {
			return nil, err
		}
	}
	p.upto = max(p.timeVar, p.reqTime, p.key, p.cost, p.check)
	for _, a := range r.AttrFields {
		i, err := field(a.what()+": field", a.Field)
		if err != nil {
			return nil, err
		}
		p.attrs = append(p.attrs, i)
		p.upto = max(p.upto, i)
		var at []int
		if a.Derive != nil {
			for _, v := range a.Derive.Vars() {
				j, err := field(a.what()+": variable", v)
				if err != nil {
					return nil, err
				}
				at = append(at, j)
				p.upto = max(p.upto, j)
			}
		}
		p.derive, p.deriveAt = append(p.derive, a.Derive), append(p.deriveAt, at)
	}
	p.vals = make([][]byte, len(t.Vars))
	return p, nil
}

// dash is what nginx writes for a variable without a value.
var dash = []byte("-")

// parse reads a line; what is wrong with it is placed at the column of
// the variable's value that holds it.
func (p *templateParser) parse(line []byte, out *parsedLine) badLine {
	if bad := p.t.split(line, p.upto, p.vals); bad.reason != "" {
		return bad
	}
	return p.read(out).at(line, p.bad)
}

// read reads the values split from a line; what is wrong names the value
// that holds it in p.bad.
func (p *templateParser) read(out *parsedLine) badLine {
	v := p.vals[p.timeVar]
	p.bad = v
	var bad badLine
	switch {
	case p.tp.layout != "" || p.tp.unit != 0:
		out.t, out.whole, bad = p.tp.parse(v, 0)
	case p.timeKind == tmplMsec:
		out.t, out.whole, bad = parseUnix(v, int64(time.Second))
	case p.timeKind == tmplISO:
		out.t, out.whole, bad = p.tp.parseISO(v)
	case p.timeKind == tmplLocal:
		out.t, out.whole, bad = p.tp.clf.parse(v)
	default:
		out.t, out.whole, bad = p.tp.parse(v, 0)
	}
	if bad.reason != "" {
		return bad
	}
	if p.reqTime >= 0 {
		p.bad = p.vals[p.reqTime]
		rt, _, bad := parseUnix(p.vals[p.reqTime], int64(time.Second))
		if bad.reason != "" {
			return badTime("$request_time %s: %s", quoteBytes(p.vals[p.reqTime]), bad.detail)
		}
		if rt > out.t {
			return badTime("$request_time %s is longer than the time since the epoch", quoteBytes(p.vals[p.reqTime]))
		}
		out.t -= rt
	}
	if p.key >= 0 {
		out.key = p.vals[p.key]
		p.bad = out.key
		if len(out.key) == 0 || bytes.Equal(out.key, dash) {
			return missingField("no $" + p.t.Vars[p.key] + " (the key-field) on this line")
		}
	}
	if p.cost >= 0 {
		p.bad = p.vals[p.cost]
		if out.cost, bad = parseCost(p.vals[p.cost]); bad.reason != "" {
			return bad
		}
	}
	if p.check >= 0 {
		p.bad = p.vals[p.check]
		if out.logged, bad = ParseLogged(p.vals[p.check]); bad.reason != "" {
			return bad
		}
	}
	if p.method >= 0 || p.path >= 0 || p.host >= 0 || p.frontend >= 0 {
		p.request(&out.req)
	}
	out.attrs = out.attrs[:0]
	for k, i := range p.attrs {
		v := p.vals[i]
		if bytes.Equal(v, dash) {
			v = nil // no value: nginx writes - for an empty variable
		}
		if d := p.derive[k]; d != nil {
			p.args = p.args[:0]
			for _, j := range p.deriveAt[k] {
				a := p.vals[j]
				if bytes.Equal(a, dash) {
					a = nil
				}
				p.args = append(p.args, string(a))
			}
			v = nil
			if s := d.Derive(p.args); s != "" {
				v = []byte(s)
			}
		}
		out.attrs = append(out.attrs, v)
	}
	return badLine{}
}

// ---- what a gateway logged of its verdict ----

// Logged is what a gateway logged of a request's verdict, read from the
// check field (Replay.CheckField): one of nginx's $limit_req_status
// values, an HTTP status (its number, 100 to 999), or LoggedNone when the
// line says nothing ("-" or empty: nginx writes "-" for a request no
// limit_req looked at), which is not compared.
type Logged uint16

// The values of nginx's $limit_req_status (ngx_http_limit_req_module.c,
// ngx_http_limit_req_status), in its order; HTTP statuses are their own
// numbers.
const (
	LoggedNone Logged = iota
	LoggedPassed
	LoggedDelayed
	LoggedRejected
	LoggedDelayedDryRun
	LoggedRejectedDryRun
)

var loggedNames = [...]string{"", "PASSED", "DELAYED", "REJECTED", "DELAYED_DRY_RUN", "REJECTED_DRY_RUN"}

// String is the value as the gateway logged it: "REJECTED", "429".
func (l Logged) String() string {
	if int(l) < len(loggedNames) {
		return loggedNames[l]
	}
	return fmt.Sprint(uint16(l))
}

// IsStatus reports whether l is an HTTP status.
func (l Logged) IsStatus() bool { return l >= 100 }

// ParseLogged reads a check field's value.
func ParseLogged(b []byte) (Logged, badLine) {
	if len(b) == 0 || bytes.Equal(b, dash) {
		return LoggedNone, badLine{}
	}
	for i, n := range loggedNames[1:] {
		if string(b) == n {
			return Logged(i + 1), badLine{}
		}
	}
	if n, ok := digits(b); ok && len(b) == 3 && n >= 100 {
		return Logged(n), badLine{}
	}
	return 0, badLine{reason: "bad check", detail: fmt.Sprintf("%s is not a verdict (want PASSED, DELAYED, REJECTED, DELAYED_DRY_RUN, REJECTED_DRY_RUN, an HTTP status or -)", quoteBytes(b))}
}
