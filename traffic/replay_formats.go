package traffic

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// timeNames are the names of a default time field, in order of preference
// (matched exactly, then ignoring case).
var timeNames = []string{"time", "timestamp", "@timestamp", "ts", "datetime", "time_s", "time_ms", "time_us", "time_ns"}

// unitOfName is the unit a field's name ends with (_s, _ms, _us, _ns), or 0.
func unitOfName(name string) int64 {
	name = strings.ToLower(name)
	for _, u := range []string{"_ns", "_us", "_ms", "_s"} {
		if strings.HasSuffix(name, u) {
			return timeUnits[u[1:]]
		}
	}
	return 0
}

// orEnd is rest, the part of line still to read, or line's end when
// nothing is left (rest may then be nil).
func orEnd(line, rest []byte) []byte {
	if len(rest) == 0 {
		return line[len(line):]
	}
	return rest
}

func missingField(detail string) badLine { return badLine{reason: "missing field", detail: detail} }

// parseCost reads an integer >= 1.
func parseCost(b []byte) (int64, badLine) {
	b = bytes.TrimSpace(b)
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, badLine{reason: "bad cost", detail: fmt.Sprintf("%s is not an integer >= 1", quoteBytes(b))}
		}
		if v > (math.MaxInt64-int64(c-'0'))/10 {
			return 0, badLine{reason: "bad cost", detail: fmt.Sprintf("%s is out of range", quoteBytes(b))}
		}
		v = v*10 + int64(c-'0')
	}
	if len(b) == 0 || v < 1 {
		return 0, badLine{reason: "bad cost", detail: fmt.Sprintf("%s is not an integer >= 1", quoteBytes(b))}
	}
	return v, badLine{}
}

// ---- combined and common logs ----

// logFields are the fields of a common or combined log line:
// host ident user [time] "request" status size ["referer" "agent"].
type logFields struct {
	host, ident, user     []byte
	time                  []byte // inside the brackets
	timeBracketed         []byte // with them
	request, status, size []byte
	referer, agent        []byte
	hasRefAgent           bool
	// truncated says what is wrong with a referer or agent cut short
	truncated string
}

// splitLog cuts a log line into its fields, by hand: no regexp, no
// allocation. A quote inside the request, referer or agent is escaped with
// a backslash, as Apache and nginx write it. Anything after the agent (or
// after the size in a common log) is ignored. A line cut short in its
// referer or agent still has what a request needs: it is read, with
// f.truncated saying what is missing, which matters only when the key is
// the referer or the agent. Without refAgent, the referer and agent are
// not looked at (f has neither): whether a line can be read does not
// depend on them.
func splitLog(line []byte, f *logFields, refAgent bool) badLine {
	*f = logFields{}
	var rest []byte
	f.host, rest = logToken(line)
	switch {
	case len(f.host) == 0:
		return missingField("no client host at the start of the line").at(line, line)
	case len(rest) == 0:
		return missingField("the line ends after the host").at(line, line[len(line):])
	}
	f.ident, rest = logToken(rest)
	f.user, rest = logToken(rest)
	if len(rest) == 0 || rest[0] != '[' {
		return missingField("no [time] after host, ident and user").at(line, orEnd(line, rest))
	}
	j := bytes.IndexByte(rest, ']')
	if j < 0 {
		return missingField("truncated: no ] closing the [time]").at(line, orEnd(line, rest))
	}
	f.time, f.timeBracketed = rest[1:j], rest[:j+1]
	rest = skipSpaces(rest[j+1:])
	if len(rest) == 0 || rest[0] != '"' {
		return missingField(`no "request" after the [time]`).at(line, orEnd(line, rest))
	}
	q := closingQuote(rest[1:])
	if q < 0 {
		return missingField("truncated: no closing quote of the request").at(line, orEnd(line, rest))
	}
	f.request = rest[1 : 1+q]
	rest = skipSpaces(rest[2+q:])
	afterRequest := rest
	f.status, rest = logToken(rest)
	if len(f.status) == 0 {
		return missingField("no status after the request").at(line, orEnd(line, afterRequest))
	}
	afterStatus := rest
	f.size, rest = logToken(rest)
	if len(f.size) == 0 {
		return missingField("no size after the status").at(line, orEnd(line, afterStatus))
	}
	if refAgent && len(rest) > 0 && rest[0] == '"' {
		// referer and agent: a line cut short in them has every field a
		// request needs, so it is kept, unless the key is one of them
		q := closingQuote(rest[1:])
		if q < 0 {
			f.truncated = "truncated: no closing quote of the referer"
			return badLine{}
		}
		f.referer = rest[1 : 1+q]
		rest = skipSpaces(rest[2+q:])
		if len(rest) == 0 || rest[0] != '"' {
			f.truncated = `no "agent" after the referer`
			return badLine{}
		}
		q = closingQuote(rest[1:])
		if q < 0 {
			f.truncated = "truncated: no closing quote of the agent"
			return badLine{}
		}
		f.agent = rest[1 : 1+q]
		f.hasRefAgent = true
	}
	return badLine{}
}

// logToken returns b up to the first space, and what follows the spaces.
// Tokens (host, ident, user, status, size) are short: a loop costs less
// than calling bytes.IndexByte.
func logToken(b []byte) ([]byte, []byte) {
	for i, c := range b {
		if c == ' ' {
			j := i + 1
			for j < len(b) && b[j] == ' ' {
				j++
			}
			return b[:i], b[j:]
		}
	}
	return b, nil
}

func skipSpaces(b []byte) []byte {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	return b
}

// closingQuote returns the index of the first " in b not escaped by a
// backslash, or -1.
func closingQuote(b []byte) int {
	off := 0
	for {
		i := bytes.IndexByte(b[off:], '"')
		if i < 0 {
			return -1
		}
		i += off
		n := 0
		for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return i
		}
		off = i + 1
	}
}

const (
	logNone = iota
	logIP
	logIdent
	logUser
	logRequest
	logStatus
	logReferer
	logAgent
)

type logParser struct {
	tp        *timeParser
	key       int
	attrs     []int // the fields of Replay.AttrFields, as key
	refAgent  bool  // a field read is the referer or the agent
	keyName   string
	cost      bool
	check     bool // read the status into parsedLine.logged
	bracketed bool // the layout includes the brackets
	route     bool // read the request line for a router (readRequests)
	// timeKind is how the time inside the brackets is written, when no
	// time-layout is set: chosen on the first lines (chooseLogTime)
	timeKind int
}

// The ways a log's [time] may be written that a log without time-layout
// is read in, tried in this order on its first lines (chooseLogTime).
const (
	logTimeCLF  = iota // 02/Jan/2006:15:04:05 -0700
	logTimeISO         // 2006-01-02T15:04:05.999+07:00, a space for the T, ...
	logTimeUnix        // 1700000000, 1700000000123, 1700000000123456, with a fraction
)

// logTimeTried says what chooseLogTime tries, for the error when nothing fits.
const logTimeTried = "CLF (17/May/2015:10:05:03 +0000), ISO 8601 (2015-05-17T10:05:03, or a space for the T, " +
	"with or without a fraction of a second and a zone: Z, +02:00, +0200) " +
	"and Unix time (seconds, milliseconds or microseconds, told by the digits, with or without a fraction)"

// parseTime reads the time inside the brackets as kind.
func (p *logParser) parseTime(b []byte, kind int) (int64, bool, badLine) {
	switch {
	case p.tp.unit != 0:
		return parseUnix(b, p.tp.unit)
	case kind == logTimeISO:
		return p.tp.parseISO(b)
	case kind == logTimeUnix:
		if !isNumeric(b) {
			return 0, false, badTime("%s is not a Unix time, as the first lines have", quoteBytes(b))
		}
		return parseUnix(b, guessUnit(b))
	}
	return p.tp.clf.parse(b)
}

// chooseLogTime chooses how the log's times are read when no time-layout
// is set: the first of CLF, ISO 8601 and Unix time that reads the most of
// the sample lines' times. It returns an error listing what it tried when
// none reads any (lines that are not log lines at all do not count).
func (p *logParser) chooseLogTime(sample [][]byte) error {
	if p.tp.layout != "" || p.tp.unit != 0 {
		return nil
	}
	var read [3]int
	logLines := 0
	var first []byte
	for _, line := range sample {
		var f logFields
		if splitLog(line, &f, false).reason != "" {
			continue
		}
		if logLines == 0 {
			first = f.timeBracketed
		}
		logLines++
		for kind := range read {
			if _, _, bad := p.parseTime(f.time, kind); bad.reason == "" {
				read[kind]++
			}
		}
	}
	if logLines == 0 {
		return nil // every line is malformed anyway: they are counted so
	}
	best := 0
	for kind := range read {
		if read[kind] > read[best] {
			best = kind
		}
	}
	if read[best] == 0 {
		return fmt.Errorf("cannot read the time %s of the first lines: tried %s; set time-layout to a Go layout (e.g. \"[2006-01-02 15:04:05]\")",
			quoteBytes(first), logTimeTried)
	}
	p.timeKind = best
	return nil
}

func newLogParser(r *Replay, tp *timeParser) *logParser {
	p := &logParser{tp: tp, key: logIP, keyName: "ip", cost: r.CostField != "", check: r.CheckField != ""}
	if r.KeyField != "" {
		p.keyName = r.KeyField
		p.key = logNone
		if i := slices.Index(LogKeyFields, r.KeyField); i >= 0 {
			p.key = logIP + i
		}
	}
	for _, a := range r.AttrFields {
		p.attrs = append(p.attrs, logIP+slices.Index(LogKeyFields, a.Field))
	}
	p.refAgent = p.key == logReferer || p.key == logAgent || slices.ContainsFunc(p.attrs, func(k int) bool { return k == logReferer || k == logAgent })
	p.bracketed = strings.HasPrefix(tp.layout, "[")
	return p
}

// field is the value of field k (logIP...) of a split line, nil when the
// line does not have it.
func (f *logFields) field(k int) []byte {
	switch k {
	case logIP:
		return f.host
	case logIdent:
		return f.ident
	case logUser:
		return f.user
	case logRequest:
		return f.request
	case logStatus:
		return f.status
	case logReferer:
		return f.referer
	case logAgent:
		return f.agent
	}
	return nil
}

func (p *logParser) parse(line []byte, out *parsedLine) badLine {
	var f logFields
	if bad := splitLog(line, &f, p.refAgent); bad.reason != "" {
		return bad
	}
	var bad badLine
	switch {
	case p.tp.layout == "":
		out.t, out.whole, bad = p.parseTime(f.time, p.timeKind)
	case p.bracketed:
		out.t, out.whole, bad = p.tp.parseLayout(f.timeBracketed)
	default:
		out.t, out.whole, bad = p.tp.parseLayout(f.time)
	}
	if bad.reason != "" {
		return bad.at(line, f.time)
	}
	switch p.key {
	case logIP:
		out.key = f.host
	case logIdent:
		out.key = f.ident
	case logUser:
		out.key = f.user
	case logRequest:
		out.key = f.request
	case logStatus:
		out.key = f.status
	case logReferer, logAgent:
		if f.truncated != "" {
			return missingField(f.truncated + " (key-field " + p.keyName + ")")
		}
		if !f.hasRefAgent {
			return missingField("no referer and agent on this line (key-field " + p.keyName + ")")
		}
		out.key = f.referer
		if p.key == logAgent {
			out.key = f.agent
		}
	}
	if p.key != logNone && len(out.key) == 0 {
		return missingField("empty " + p.keyName + " (the key-field)")
	}
	if p.cost {
		if out.cost, bad = parseCost(f.size); bad.reason != "" {
			return bad.at(line, f.size)
		}
	}
	if p.route {
		readRequestLine(f.request, &out.req)
	}
	out.attrs = out.attrs[:0]
	for _, k := range p.attrs {
		v := f.field(k)
		if bytes.Equal(v, dash) {
			v = nil // no value
		}
		out.attrs = append(out.attrs, v)
	}
	if p.check {
		out.logged, bad = ParseLogged(f.status)
	}
	return bad.at(line, f.status)
}

// ---- CSV and TSV ----

// sepParser reads CSV (RFC 4180, by encoding/csv, a record on one line)
// and TSV (tab-separated, no quoting).
type sepParser struct {
	csv     *csv.Reader // nil for TSV
	feed    lineFeed    // csv's input: the line being split
	names   []string
	tp      *timeParser
	timeCol int
	unit    int64 // the unit the time column's name gives
	keyCol  int   // -1: the global key
	costCol int   // -1: the source's cost
	chkCol  int   // -1: no check field
	attrCol []int // the columns of Replay.AttrFields
	fields  [][]byte
	// read: the csv reader read the line last split (its FieldPos are the
	// fields')
	read bool
}

// lineFeed is an io.Reader of one line at a time: the line set, then
// io.EOF until the next is set. A csv.Reader over it reads one line per
// record, so that a quote left open ends the line's record, as the
// lines of a trace are counted and reported one by one.
type lineFeed struct{ b []byte }

func (f *lineFeed) Read(p []byte) (int, error) {
	if len(f.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.b)
	f.b = f.b[n:]
	return n, nil
}

func (s *replayStream) newSepParser(tp *timeParser) (lineParser, error) {
	r := s.r
	p := &sepParser{tp: tp, keyCol: -1, costCol: -1, chkCol: -1}
	if s.format != "tsv" {
		p.csv = csv.NewReader(&p.feed)
		p.csv.FieldsPerRecord = -1 // a short line is told by the column it lacks
		p.csv.ReuseRecord = true
	}
	fail := func(format string, args ...any) error {
		return &ReplayError{Path: r.Path, Msg: fmt.Sprintf(format, args...)}
	}
	names := r.Columns
	if len(names) == 0 {
		line, tooLong, err := s.in.lines.next()
		switch {
		case err != nil:
			return nil, fail("line 1: %v", err)
		case tooLong:
			return nil, fail("line 1: the header is longer than %d bytes", maxLine)
		case line == nil:
			return emptyParser{}, nil // an empty file
		case isBlank(line):
			return nil, fail("line 1: empty, want a header row (or set columns)")
		case !validUTF8(line):
			return nil, fail("line 1: the header is not UTF-8")
		}
		fields, bad := p.split(line)
		if bad.reason != "" {
			return nil, fail("line 1: header: %s", bad.message())
		}
		for _, f := range fields {
			names = append(names, string(bytes.TrimSpace(f)))
		}
	}
	p.names = names
	var err error
	if r.TimeField != "" {
		p.timeCol, err = p.column("time-field", r.TimeField, fail)
		if err != nil {
			return nil, err
		}
	} else {
		p.timeCol = defaultColumn(names)
		if p.timeCol < 0 {
			return nil, fail("no time column: set time-field (columns: %s)", listNames(names))
		}
	}
	p.unit = unitOfName(names[p.timeCol])
	if r.KeyField != "" && r.KeyField != KeyFieldNone {
		if p.keyCol, err = p.column(r.keyWhat(), r.KeyField, fail); err != nil {
			return nil, err
		}
	}
	if r.CostField != "" {
		if p.costCol, err = p.column("cost-field", r.CostField, fail); err != nil {
			return nil, err
		}
	}
	if r.CheckField != "" {
		if p.chkCol, err = p.column("check-field", r.CheckField, fail); err != nil {
			return nil, err
		}
	}
	for _, a := range r.AttrFields {
		c, err := p.column(a.what()+": field", a.Field, fail)
		if err != nil {
			return nil, err
		}
		p.attrCol = append(p.attrCol, c)
	}
	return p, nil
}

// defaultColumn is the first column named like a time, or -1.
func defaultColumn(names []string) int {
	for _, want := range timeNames {
		if i := slices.Index(names, want); i >= 0 {
			return i
		}
	}
	for _, want := range timeNames {
		for i, n := range names {
			if strings.EqualFold(n, want) {
				return i
			}
		}
	}
	return -1
}

// column finds a field: a column name (exactly, then ignoring case), else
// a 1-based column number.
func (p *sepParser) column(option, spec string, fail func(string, ...any) error) (int, error) {
	if i := slices.Index(p.names, spec); i >= 0 {
		return i, nil
	}
	for i, n := range p.names {
		if strings.EqualFold(n, spec) {
			return i, nil
		}
	}
	if n, ok := digits([]byte(spec)); ok && len(spec) <= 9 {
		if n >= 1 && n <= len(p.names) {
			return n - 1, nil
		}
		return 0, fail("%s %s: want a column from 1 to %d (columns: %s)", option, spec, len(p.names), listNames(p.names))
	}
	return 0, fail("%s %q: no such column (columns: %s)", option, spec, listNames(p.names))
}

// listNames lists column names for a message, the first 12 of them.
func listNames(names []string) string {
	if len(names) > 12 {
		return strings.Join(names[:12], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
	}
	return strings.Join(names, ", ")
}

// split cuts a line into fields, valid until the next call: CSV by
// encoding/csv (a quoted field's "" becomes "; a quote in a field that
// does not start with one is refused, as RFC 4180 says), TSV at each tab.
func (p *sepParser) split(line []byte) ([][]byte, badLine) {
	p.fields = p.fields[:0]
	if p.csv == nil {
		for {
			i := bytes.IndexByte(line, '\t')
			if i < 0 {
				return append(p.fields, line), badLine{}
			}
			p.fields = append(p.fields, line[:i])
			line = line[i+1:]
		}
	}
	p.feed.b = line
	rec, err := p.csv.Read()
	p.feed.b = nil
	p.read = err == nil
	switch {
	case err == io.EOF: // not reached: a blank line is not split
		return append(p.fields, nil), badLine{}
	case err != nil:
		return nil, quoteError(err, len(line))
	}
	for _, f := range rec {
		p.fields = append(p.fields, readOnlyBytes(f))
	}
	return p.fields, badLine{}
}

// quoteError says what is wrong with the quotes of a CSV line of n bytes,
// from the error encoding/csv returned: the only errors it returns for a
// line, whose records may have any number of fields.
func quoteError(err error, n int) badLine {
	var pe *csv.ParseError
	switch {
	case errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrBareQuote):
		return badLine{reason: "bad quote", detail: fmt.Sprintf("a quote at column %d, in a field that does not start with one (quote the field and double the quote)", pe.Column), col: pe.Column}
	case errors.As(err, &pe) && pe.Column > n:
		// the line ended inside the quotes
		return badLine{reason: "bad quote", detail: "a quoted field is not closed on its line"}
	}
	return badLine{reason: "bad quote", detail: "text after the closing quote of a field"}
}

// readOnlyBytes is s's bytes, not copied: never written to.
func readOnlyBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// colOf is the 1-based byte column where field i of the line last split
// starts (0 when not known).
func (p *sepParser) colOf(line []byte, i int) int {
	if p.csv == nil {
		if i >= len(p.fields) {
			return 0
		}
		return offset(line, p.fields[i]) + 1
	}
	if !p.read || i >= len(p.fields) {
		return 0
	}
	_, col := p.csv.FieldPos(i)
	return col
}

func (p *sepParser) missing(fields [][]byte, col int, option string) badLine {
	return missingField(fmt.Sprintf("the line has %d columns, the %s (%s) is column %d", len(fields), option, p.names[col], col+1))
}

func (p *sepParser) parse(line []byte, out *parsedLine) badLine {
	fields, bad := p.split(line)
	if bad.reason != "" {
		return bad
	}
	end := line[len(line):] // where a missing column would be
	if p.timeCol >= len(fields) {
		return p.missing(fields, p.timeCol, "time").at(line, end)
	}
	out.t, out.whole, bad = p.tp.parse(bytes.TrimSpace(fields[p.timeCol]), p.unit)
	if bad.reason != "" {
		return bad.atCol(p.colOf(line, p.timeCol))
	}
	if p.keyCol >= 0 {
		if p.keyCol >= len(fields) {
			return p.missing(fields, p.keyCol, "key").at(line, end)
		}
		out.key = fields[p.keyCol]
		if len(out.key) == 0 {
			return missingField(fmt.Sprintf("empty key (column %d, %s)", p.keyCol+1, p.names[p.keyCol])).atCol(p.colOf(line, p.keyCol))
		}
	}
	if p.costCol >= 0 {
		if p.costCol >= len(fields) {
			return p.missing(fields, p.costCol, "cost").at(line, end)
		}
		if out.cost, bad = parseCost(fields[p.costCol]); bad.reason != "" {
			return bad.atCol(p.colOf(line, p.costCol))
		}
	}
	if p.chkCol >= 0 {
		if p.chkCol >= len(fields) {
			return p.missing(fields, p.chkCol, "check field").at(line, end)
		}
		out.logged, bad = ParseLogged(bytes.TrimSpace(fields[p.chkCol]))
		bad = bad.atCol(p.colOf(line, p.chkCol))
	}
	out.attrs = out.attrs[:0]
	for _, c := range p.attrCol {
		var v []byte // a short line has no value
		if c < len(fields) {
			v = fields[c]
		}
		out.attrs = append(out.attrs, v)
	}
	return bad
}

// ---- JSON lines ----

type jsonParser struct {
	tp                                         *timeParser
	timeField, keyField, costField, checkField string
	unit                                       int64 // of the time field's name, when set
	m                                          map[string]json.RawMessage
	str                                        string
	cur                                        string // the field parse read last
	route                                      bool   // read the request's fields (readRequests)
	attrFields                                 []string
	attrDerive                                 []Deriver // each attribute's Derive, nil where none
	args                                       []string  // Derive's, reused
	keyFor                                     string    // what needs the key (Replay.KeyFor), for errors
}

func newJSONParser(r *Replay, tp *timeParser) *jsonParser {
	p := &jsonParser{tp: tp, timeField: r.TimeField, costField: r.CostField, checkField: r.CheckField, keyFor: r.KeyFor}
	if r.KeyField != KeyFieldNone {
		p.keyField = r.KeyField
	}
	for _, a := range r.AttrFields {
		p.attrFields = append(p.attrFields, a.Field)
		p.attrDerive = append(p.attrDerive, a.Derive)
	}
	p.unit = unitOfName(p.timeField)
	return p
}

// timeName finds the default time field of an object: the first of
// timeNames present, exactly, then ignoring case (the least such key).
func (p *jsonParser) timeName() string {
	for _, want := range timeNames {
		if _, ok := p.m[want]; ok {
			return want
		}
	}
	best := ""
	for _, want := range timeNames {
		for k := range p.m {
			if strings.EqualFold(k, want) && (best == "" || k < best) {
				best = k
			}
		}
		if best != "" {
			return best
		}
	}
	return ""
}

// value returns the text of a field: the string's contents or the raw
// number; scalar is false for an object, array or boolean; found is false
// when the field is absent or null.
func (p *jsonParser) value(name string) (text []byte, scalar, found bool, bad badLine) {
	raw, ok := p.m[name]
	if !ok || string(raw) == "null" {
		return nil, false, false, badLine{}
	}
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &p.str); err != nil {
			return nil, false, true, badLine{reason: "bad JSON", detail: err.Error()}
		}
		return []byte(p.str), true, true, badLine{}
	case '{', '[', 't', 'f':
		return raw, false, true, badLine{}
	}
	return raw, true, true, badLine{}
}

func (p *jsonParser) parse(line []byte, out *parsedLine) badLine {
	p.cur = ""
	bad := p.parseObject(line, out)
	if bad.reason != "" && bad.col == 0 && p.cur != "" {
		// the column of the field's name, where it is first written so
		if i := bytes.Index(line, []byte(strconv.Quote(p.cur))); i >= 0 {
			bad.col = i + 1
		}
	}
	return bad
}

// parseObject is parse; p.cur is the field it read last.
func (p *jsonParser) parseObject(line []byte, out *parsedLine) badLine {
	clear(p.m)
	if err := json.Unmarshal(line, &p.m); err != nil {
		bad := badLine{reason: "bad JSON", detail: err.Error()}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			bad.col = int(se.Offset) // the byte after which the error was found
		}
		return bad
	}
	if p.m == nil { // the line was null
		return badLine{reason: "bad JSON", detail: "null, want an object"}
	}
	name, unit := p.timeField, p.unit
	if name == "" {
		if name = p.timeName(); name == "" {
			return missingField("no time field (want one named " + orWords(timeNames) + ", or set time-field)")
		}
		unit = unitOfName(name)
	}
	p.cur = name
	text, scalar, found, bad := p.value(name)
	switch {
	case bad.reason != "":
		return bad
	case !found:
		return missingField(fmt.Sprintf("no field %q (the time)", name)).atCol(1)
	case !scalar:
		return badTime("field %q is not a string or a number", name)
	}
	out.t, out.whole, bad = p.tp.parse(text, unit)
	if bad.reason != "" {
		return bad
	}
	if p.keyField != "" {
		p.cur = p.keyField
		text, scalar, found, bad := p.value(p.keyField)
		switch {
		case bad.reason != "":
			return bad
		case !found:
			what := "the key"
			if p.keyFor != "" {
				what = "the key of " + p.keyFor
			}
			return missingField(fmt.Sprintf("no field %q (%s)", p.keyField, what)).atCol(1)
		case !scalar:
			return badLine{reason: "bad key", detail: fmt.Sprintf("field %q is not a string or a number", p.keyField)}
		case len(text) == 0:
			return missingField(fmt.Sprintf("empty key (field %q)", p.keyField))
		}
		out.key = text
	}
	if p.costField != "" {
		p.cur = p.costField
		text, scalar, found, bad := p.value(p.costField)
		switch {
		case bad.reason != "":
			return bad
		case !found:
			return missingField(fmt.Sprintf("no field %q (the cost)", p.costField)).atCol(1)
		case !scalar:
			return badLine{reason: "bad cost", detail: fmt.Sprintf("field %q is not a string or a number", p.costField)}
		}
		if out.cost, bad = parseCost(text); bad.reason != "" {
			return bad
		}
	}
	if p.route {
		p.request(&out.req)
	}
	out.attrs = out.attrs[:0]
	for i, name := range p.attrFields {
		if d := p.attrDerive[i]; d != nil {
			// computed from fields of the line, as the gateway computes
			// the key (an absent or non-scalar field is "")
			p.args = p.args[:0]
			for _, f := range d.Vars() {
				p.cur = f
				text, scalar, _, bad := p.value(f)
				if bad.reason != "" {
					return bad
				}
				if !scalar {
					text = nil
				}
				p.args = append(p.args, string(text))
			}
			var v []byte
			if s := d.Derive(p.args); s != "" {
				v = []byte(s)
			}
			out.attrs = append(out.attrs, v)
			continue
		}
		p.cur = name
		text, scalar, _, bad := p.value(name)
		switch {
		case bad.reason != "":
			return bad
		case text != nil && !scalar:
			return badLine{reason: "bad key", detail: fmt.Sprintf("field %q is not a string or a number", name)}
		}
		out.attrs = append(out.attrs, text) // absent: no value
	}
	if p.checkField != "" {
		p.cur = p.checkField
		text, scalar, found, bad := p.value(p.checkField)
		switch {
		case bad.reason != "":
			return bad
		case !found:
			return badLine{} // not logged: not compared
		case !scalar:
			return badLine{reason: "bad check", detail: fmt.Sprintf("field %q is not a string or a number", p.checkField)}
		}
		out.logged, bad = ParseLogged(text)
		return bad
	}
	return badLine{}
}
