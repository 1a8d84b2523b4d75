package traffic

import (
	"container/heap"
	"fmt"
	"io/fs"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ratesim/ratesim/internal/human"
)

// Replay is a recorded trace as a source (type: replay): an access log, a
// CSV or TSV file or JSON lines, read as a stream (never loaded whole), gzip
// or not. Each line is one request; its arrival keeps the line's absolute
// timestamp, in ns since the Unix epoch (docs/metrics.md).
//
// The rules, in the order a line meets them:
//
//   - Lines: a line ends at \n (a \r before it is dropped); a last line
//     without \n counts. A line longer than 1 MiB is malformed ("line too
//     long") and skipped without being held whole; so is a line that is not
//     valid UTF-8 ("not UTF-8") and an empty line ("empty line"). A CSV or
//     TSV header is not a line of the trace (Lines does not count it, but
//     line numbers are the file's).
//   - Fields: see Format, TimeField, KeyField and CostField. A line that
//     cannot be read is malformed, counted by reason in ReplayStats.ByReason,
//     the first 5 reported in FirstBad with file:line and what was wrong, and
//     the stream goes on; with Strict it stops there and Err returns the
//     *LineError.
//   - Slicing: a line whose stamp (before spreading and speed) is outside
//     [first+SliceStart, first+SliceEnd), first being the stamp of the first
//     readable line in file order, is sliced (counted, not sent); 0 means no
//     cut on that side.
//   - Order: logs are written when a request ends but stamped when it began,
//     so lines come out of order. A line stamped up to Reorder before the
//     latest stamp read so far is put in its place (lines of equal stamps
//     keep file order). A line stamped more than Reorder before that latest
//     stamp is Late: it is not dropped but sent at the later of its stamp
//     and the last instant already sent (the earliest instant still
//     possible), counted in Late and reported in FirstBad (the first 5).
//     Memory holds only the lines within the window.
//   - Spread: a stamp without sub-second digits (CLF, a layout without
//     fractional seconds, integer Unix seconds) stands for a whole second.
//     With Spread "even" (the default) the k-th (from 0, in file order) of
//     the n lines stamped with second s goes to s + floor((2k+1)*1s/(2n));
//     "none" sends them all at s; "random" draws n instants uniformly in
//     [s, s+1s) from the source's seed and gives them, sorted, to the lines
//     in file order. Stamps with sub-second digits are used as they are.
//   - Speed: an instant t becomes first + (t - first) * Speed.Den / Speed.Num,
//     rounded down to a ns, where first is the stamp of the first line kept
//     (so 2/1 is the same traffic twice as fast).
//
// Every line read is used, malformed or sliced (Lines = Used + Malformed +
// Sliced); Late lines are used.
type Replay struct {
	// Common: Cost is each request's cost when CostField is "" (0 means 1);
	// Start and End are not used (see SliceStart, SliceEnd); Retry as any
	// source. Clients is not used: keys come from the trace.
	Common
	// Path is the trace file; gzip is recognised by its magic bytes and read
	// transparently, whatever the name.
	Path string
	// FS, when set, holds the file Path names (a browser's page has no
	// files of its own: the playground, docs/playground.md); nil reads
	// the operating system's.
	FS fs.FS
	// Format is auto ("" too), combined, common, csv, tsv or jsonl. Auto
	// looks at the first lines (up to 5, within the first 64 KiB): a line
	// of the common log shape (host ident user [time] "request" status
	// size) is a log, combined when one of them has "referer" "agent"
	// after the size; a line starting with { is JSON; otherwise tabs make
	// TSV and commas CSV. The lines vote; ReplayStats.Format says which won.
	Format string
	// TimeField names the time: a header name (matched exactly, then
	// ignoring case) or a 1-based column number for CSV/TSV, a top-level
	// field for JSON lines. Default: the first column (or, for JSON, field
	// present in the line) named time, timestamp, @timestamp, ts, datetime,
	// time_s, time_ms, time_us or time_ns, ignoring case. Logs take their
	// time from the [time] field and no TimeField.
	TimeField string
	// KeyField names the key of each request. Logs: ip (the client host,
	// the default), ident, user, request (the whole request line), status,
	// referer, agent (the last two in combined logs only). CSV/TSV/JSON: a
	// field as for TimeField; default none. "none" puts every request under
	// the single key "global". An empty key is malformed ("missing field").
	KeyField string
	// CostField names a numeric field giving each request's cost, an
	// integer >= 1 ("bad cost" otherwise); for logs only "size" (the
	// response size, where "-" is a bad cost). Empty: every request costs
	// Common.Cost.
	CostField string
	// Columns names the columns of a CSV/TSV file without a header row;
	// when empty the first line is the header.
	Columns []string
	// TimeLayout is a Go reference layout for the time (for logs, the text
	// inside the brackets, or with them when the layout starts with "[").
	// Sub-second digits are kept. A stamp counts as a whole second when the
	// layout has no fixed fractional digits (.000) and its sub-second part
	// is zero.
	TimeLayout string
	// TimeUnit reads numeric times as Unix s, ms, us or ns since the epoch,
	// integer or decimal, exactly: the digits are read into integer ns
	// ("1438936711.003372" s is 1438936711003372000 ns), digits below a ns
	// dropped. Only integer seconds are whole seconds. Without TimeUnit or
	// TimeLayout, a CSV/JSON time is read as: a number, in the unit its
	// field name ends with (_s, _ms, _us, _ns) or else guessed from its
	// integer digits (up to 10: s, 11-13: ms, 14-16: us, more: ns); RFC 3339
	// with or without fraction and zone (T or a space between date and
	// time: "2023-11-16 18:15:46.6805900" is read to the 100 ns); or a CLF
	// stamp (10/Oct/2000:13:55:36 -0700).
	TimeUnit string
	// Timezone is the zone of times written without one; nil means UTC.
	Timezone *time.Location
	// Reorder is the reorder window (0: none, any line stamped before the
	// latest stamp is Late). The scenario file's default is 5m.
	Reorder time.Duration
	// Spread is how lines stamped with the same whole second are spread:
	// "" or "even", "none" or "random".
	Spread string
	// Speed scales time exactly: 2/1 is twice as fast, 1/2 half as fast;
	// the zero value is 1.
	Speed Fraction
	// SliceStart and SliceEnd keep the lines stamped in
	// [first+SliceStart, first+SliceEnd), first being the trace's first
	// timestamp (the first readable line's); 0 is no cut.
	SliceStart, SliceEnd time.Duration
	// LogFormat, when set, is an nginx log_format the trace is written
	// with (its strings concatenated), and LogEscape its escape= (default,
	// json or none; "" is default): the format is then "nginx" (Format
	// must be "" or auto), and TimeField, KeyField, CostField and
	// CheckField name its variables ($msec or msec). See LogTemplate.split
	// for how a line is cut, and templateParser for the defaults: the time
	// from $msec, $time_iso8601 or $time_local, the key from $remote_addr.
	LogFormat, LogEscape string
	// FormatName, when set, names the trace's format in its summary
	// (ReplayStats.Format) in place of its parser's: the log-format of an
	// HAProxy config is read as an nginx log_format, and the trace is
	// HAProxy's. Set by the caller (replay --gateway); no scenario field
	// sets it.
	FormatName string
	// CheckField, when set, names the field holding what the gateway
	// decided of each request (nginx's $limit_req_status, or an HTTP
	// status), read into Arrival.Logged for replay --check-field: for logs
	// status, for CSV/TSV/JSON a field as KeyField, for a LogFormat a
	// variable. A value that is not a verdict (see ParseLogged) makes the
	// line malformed ("bad check").
	CheckField string
	// AttrFields are the attributes each request carries from a field of
	// its line besides its key (the key of a second limit: an nginx zone
	// on another variable, a Kong consumer), each field named as KeyField
	// names the key. A line whose field is empty (or nginx's "-") carries
	// no value of that attribute: nginx does not account a request whose
	// zone key is empty (ngx_http_limit_req_module.c), and a limit by it
	// does not look at it. See Plan.Attributes.
	AttrFields []AttrField
	// KeyFor, when set, says what needs KeyField, for errors ("the limits
	// of api.xml by the header x-client (api.xml:3:9)"), as AttrField.For.
	KeyFor string
	// Strict stops the stream at the first malformed line: Err returns its
	// *LineError.
	Strict bool
	// Router, when set, sends each request to a route of a gateway's
	// config (Arrival.Route), read from its method, host and path: a log's
	// request line, a LogFormat's $request, $request_method, $uri,
	// $request_uri, $host, $http_host or $server_name. A line without a
	// path is malformed ("missing field"). Set by the caller (replay
	// --gateway); no scenario field sets it.
	Router Router
	// Warn, when set, is called once per stream, from the goroutine that
	// reads the trace, when the reorder window first holds more than
	// WarnBuffered lines (0: DefaultWarnBuffered): a dense trace with a
	// wide window holds every line of the window in memory. Nothing below
	// cmd prints: the caller decides what to do with the message.
	Warn         func(msg string)
	WarnBuffered int

	// stats holds the *ReplayStats of the first stream read to its end (an
	// atomic.Value, which a Replay may be copied with, before use)
	stats atomic.Value
}

// AttrField is one attribute of a replay's requests: its name, and the
// field of each line that holds its value. For, when set, says what needs
// it, for errors ("the limits of nginx.conf by $uri (nginx.conf:5:5)").
type AttrField struct {
	Name, Field, For string
	// Derive, when set, computes the value from variables of the line
	// (a LogFormat's, or a JSON line's fields; other formats ignore it)
	// as the gateway does, in place of reading Field (an nginx map, whose
	// source Field is). Set by the caller (replay --gateway); no scenario
	// field sets it.
	Derive Deriver
	// Default, when set, is the value of a line whose field is empty or
	// absent (APIM's GetValueOrDefault of a header the request lacks).
	// Set by the caller (replay --gateway); no scenario field sets it.
	Default string
}

// A Deriver computes an attribute of a request from variables of its log
// line, as a gateway computes a limit's key from a request (an nginx map
// of a header). It must be safe for use by several streams at once.
type Deriver interface {
	// Vars are the variables of the LogFormat (or the fields of the JSON
	// line) it reads.
	Vars() []string
	// Derive returns the value from the values of Vars, in their order
	// ("" for a variable nginx logged as "-"); "" is no value.
	Derive(vals []string) string
}

// what names the attribute in an error: its name, and what needs it.
func (a AttrField) what() string {
	if a.For == "" {
		return "attribute " + a.Name
	}
	return "attribute " + a.Name + " (" + a.For + ")"
}

// keyWhat names KeyField in an error: the option, and what needs it.
func (r *Replay) keyWhat() string {
	if r.KeyFor == "" {
		return "key-field"
	}
	return "key (" + r.KeyFor + "): key-field"
}

// AttributeNames are the names of r's AttrFields (Plan.Attributes).
func (r *Replay) AttributeNames() []string {
	var names []string
	for _, a := range r.AttrFields {
		names = append(names, a.Name)
	}
	return names
}

// ReplayStats is what reading a trace found.
type ReplayStats struct {
	Path   string
	Format string // the format used: when Format was auto, the one chosen
	// Lines = Used + Malformed + Sliced; Late lines are among the Used.
	Lines, Used, Malformed, Late, Sliced int64
	// ByReason counts malformed lines by reason: "bad time", "bad month",
	// "missing field", "bad cost", "bad check", "bad quote", "bad JSON", "bad key",
	// "line too long", "not UTF-8", "empty line".
	ByReason map[string]int64
	// FirstBad holds the first 5 malformed lines and the first 5 late ones,
	// in file order.
	FirstBad []LineError
	// First and Last are the first and last instants sent (after spreading
	// and speed); both 0 when nothing was sent.
	First, Last time.Duration
	Keys        int64 // distinct keys sent
	// PeakPerSecond is the most arrivals in any [a, a+1s).
	PeakPerSecond int64
	// Routes counts the requests each route of Replay.Router took, in its
	// order, and Unrouted those no route took (sent with Arrival.Route 0,
	// which no routed row takes); both empty without a router.
	Routes   []RouteCount
	Unrouted int64
	// NoValue counts, per attribute of AttrFields that some used line
	// lacks, the used lines without a value of it (empty, - or absent):
	// requests a limit by that attribute does not look at.
	NoValue map[string]int64
}

// LineError is a bad or late line of a trace.
type LineError struct {
	File string
	Line int64
	// Col is the 1-based byte column of what is wrong (1: the line as a
	// whole)
	Col int
	Msg string
}

// Error is "file:line:col: msg".
func (e *LineError) Error() string {
	return e.File + ":" + strconv.FormatInt(e.Line, 10) + ":" + strconv.Itoa(max(e.Col, 1)) + ": " + e.Msg
}

// ReplayError is a trace that cannot be replayed at all (missing file,
// unknown format, no such column, an invalid option): Msg says what, and
// Error() prefixes it with the path. Err is the underlying error when there
// is one (a missing file's is fs.ErrNotExist for errors.Is).
type ReplayError struct {
	Path string
	Msg  string
	Err  error
}

func (e *ReplayError) Error() string { return e.Path + ": " + e.Msg }

func (e *ReplayError) Unwrap() error { return e.Err }

// The values Replay's options take, in the order messages list them.
var (
	ReplayFormats   = []string{"auto", "combined", "common", "csv", "tsv", "jsonl"}
	ReplaySpreads   = []string{"even", "none", "random"}
	ReplayTimeUnits = []string{"s", "ms", "us", "ns"}
	// LogKeyFields are the fields of a log line a key may come from;
	// referer and agent only in combined logs.
	LogKeyFields = []string{"ip", "ident", "user", "request", "status", "referer", "agent"}
	// LogCostFields are the fields of a log line a cost may come from.
	LogCostFields = []string{"size"}
)

const (
	// KeyFieldNone is the key-field that puts every request under GlobalKey.
	KeyFieldNone = "none"
	// GlobalKey is the key of every request of a trace without key field.
	GlobalKey = "global"
	// maxLine is the longest line read; longer ones are malformed.
	maxLine = 1 << 20
	// maxReported is how many malformed (and late) lines FirstBad keeps.
	maxReported = 5
)

var timeUnits = map[string]int64{"s": int64(time.Second), "ms": int64(time.Millisecond), "us": int64(time.Microsecond), "ns": 1}

// Declare does nothing: a replay's keys come from the trace as it is read.
func (r *Replay) Declare(*Keys) {}

// End is 0: a trace ends by itself.
func (r *Replay) End() time.Duration { return 0 }

// Stats returns the statistics of the first stream of this source read to
// its end (or stopped by Strict); nil before. Every stream of a source reads
// the same file, so every copy gives the same figures.
func (r *Replay) Stats() *ReplayStats {
	st, _ := r.stats.Load().(*ReplayStats)
	return st
}

func isLog(format string) bool { return format == "combined" || format == "common" }

// orWords writes a, b or c.
func orWords(list []string) string {
	if len(list) < 2 {
		return strings.Join(list, "")
	}
	return strings.Join(list[:len(list)-1], ", ") + " or " + list[len(list)-1]
}

// Validate checks the options without opening the file; Open checks them
// too. The error is a *ReplayError naming the option.
func (r *Replay) Validate() error {
	if msg := r.validate(); msg != "" {
		return &ReplayError{Path: r.Path, Msg: msg}
	}
	return nil
}

func (r *Replay) validate() string {
	if r.Path == "" {
		return "no path"
	}
	format := r.Format
	if format == "" {
		format = "auto"
	}
	if r.LogFormat != "" {
		if format != "auto" && format != "nginx" {
			return fmt.Sprintf("format %q and log-format: a log-format is the trace's format (leave format unset)", r.Format)
		}
		if _, err := ParseLogTemplate(r.LogFormat, r.LogEscape); err != nil {
			return "log-format: " + err.Error()
		}
		format = "nginx"
	} else if !slices.Contains(ReplayFormats, format) {
		return fmt.Sprintf("format %q: want %s", r.Format, orWords(ReplayFormats))
	}
	if r.TimeLayout != "" && r.TimeUnit != "" {
		return "time-layout and time-unit: want one, not both"
	}
	if r.TimeUnit != "" && timeUnits[r.TimeUnit] == 0 {
		return fmt.Sprintf("time-unit %q: want %s", r.TimeUnit, orWords(ReplayTimeUnits))
	}
	if r.TimeLayout != "" {
		if err := CheckTimeLayout(r.TimeLayout); err != nil {
			return "time-layout " + strconv.Quote(r.TimeLayout) + ": " + err.Error()
		}
	}
	if isLog(format) {
		if msg := checkLogFields(format, r.TimeField, r.KeyField, r.CostField, r.CheckField); msg != "" {
			return msg
		}
		if len(r.Columns) > 0 {
			return "columns: applies to csv and tsv only, not " + format
		}
	}
	if (format == "jsonl" || format == "nginx") && len(r.Columns) > 0 {
		return "columns: applies to csv and tsv only, not " + format
	}
	for i, c := range r.Columns {
		if c == "" {
			return fmt.Sprintf("columns[%d]: empty name", i)
		}
		if j := slices.Index(r.Columns, c); j < i {
			return fmt.Sprintf("columns[%d]: %q named twice (also columns[%d])", i, c, j)
		}
	}
	if msg := checkAttrFields(format, r.AttrFields); msg != "" {
		return msg
	}
	if r.Reorder < 0 {
		return fmt.Sprintf("reorder %v: want a duration >= 0", r.Reorder)
	}
	if r.Spread != "" && !slices.Contains(ReplaySpreads, r.Spread) {
		return fmt.Sprintf("spread %q: want %s", r.Spread, orWords(ReplaySpreads))
	}
	if r.Speed != (Fraction{}) && (r.Speed.Num <= 0 || r.Speed.Den <= 0) {
		return fmt.Sprintf("speed %d/%d: want a fraction > 0", r.Speed.Num, r.Speed.Den)
	}
	if r.SliceStart < 0 || r.SliceEnd < 0 {
		return "start and end: want durations >= 0 from the trace's first timestamp"
	}
	if r.SliceEnd > 0 && r.SliceEnd <= r.SliceStart {
		return fmt.Sprintf("end %v: want an end after start %v", r.SliceEnd, r.SliceStart)
	}
	if r.Cost < 0 {
		return fmt.Sprintf("cost %d: want an integer >= 1", r.Cost)
	}
	return ""
}

// checkLogFields checks the time, key and cost fields of a log format.
func checkLogFields(format, timeField, keyField, costField, checkField string) string {
	if timeField != "" && timeField != "time" {
		return fmt.Sprintf("time-field %q: a log's time is its [time] field (set time-layout for another stamp)", timeField)
	}
	keys := LogKeyFields
	if format == "common" {
		keys = keys[:5]
	}
	if keyField != "" && keyField != KeyFieldNone && !slices.Contains(keys, keyField) {
		return fmt.Sprintf("key-field %q: a %s log's fields are %s (or none)", keyField, format, orWords(keys))
	}
	if costField != "" && !slices.Contains(LogCostFields, costField) {
		return fmt.Sprintf("cost-field %q: a log's cost field is %s", costField, orWords(LogCostFields))
	}
	if checkField != "" && checkField != "status" {
		return fmt.Sprintf("check-field %q: a %s log's verdict is its status", checkField, format)
	}
	return ""
}

// checkAttrFields checks the attribute fields of a trace of format:
// names and fields given, each name once, a log's fields among its own.
func checkAttrFields(format string, attrs []AttrField) string {
	keys := LogKeyFields
	if format == "common" {
		keys = keys[:5]
	}
	for i, a := range attrs {
		switch {
		case a.Name == "" || a.Field == "":
			return fmt.Sprintf("attribute %q: want a name and a field", a.Name)
		case slices.IndexFunc(attrs[:i], func(b AttrField) bool { return b.Name == a.Name }) >= 0:
			return fmt.Sprintf("attribute %q: named twice", a.Name)
		case isLog(format) && !slices.Contains(keys, a.Field):
			return fmt.Sprintf("attribute %s: field %q: a %s log's fields are %s", a.Name, a.Field, format, orWords(keys))
		}
	}
	return ""
}

// CheckTimeLayout reports whether layout is a Go reference layout that
// gives a date and a time of day: 2006-01-02 15:04:05 formatted with it
// must parse back to that instant (to the second).
func CheckTimeLayout(layout string) error {
	ref := time.Date(2006, 1, 2, 15, 4, 5, 0, time.UTC)
	if time.Date(2001, 3, 4, 7, 8, 9, 0, time.UTC).Format(layout) == layout {
		return fmt.Errorf("no element of Go's reference time (want a layout like 2006-01-02 15:04:05.000)")
	}
	text := ref.Format(layout)
	back, err := time.Parse(layout, text)
	if err != nil {
		return fmt.Errorf("does not read back what it writes (%v)", err)
	}
	if !back.Truncate(time.Second).Equal(ref) {
		return fmt.Errorf("does not give the date and time to the second (2006-01-02 15:04:05 reads back as %s)", back.Format("2006-01-02 15:04:05"))
	}
	return nil
}

// Open opens the trace and starts a stream of its arrivals. A missing or
// unreadable file, an unrecognised format, a field that names no column and
// an invalid option are errors here, as a *ReplayError.
func (r *Replay) Open(k *Keys, index int, seed uint64) (Stream, error) {
	if msg := r.validate(); msg != "" {
		return nil, &ReplayError{Path: r.Path, Msg: msg}
	}
	in, err := openTrace(r)
	if err != nil {
		return nil, err
	}
	s, err := r.openInput(in, k, index, seed)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// openInput starts a stream over an open input.
func (r *Replay) openInput(in *traceInput, k *Keys, index int, seed uint64) (*replayStream, error) {
	s := &replayStream{r: r, keys: k, source: int32(index), in: in}
	if err := s.setup(seed); err != nil {
		in.close()
		return nil, err
	}
	return s, nil
}

// Check opens the trace as Open does and reads its first lines (up to 5):
// it fails when the file is empty, when none of those lines can be read,
// or, with Strict, when one cannot. The error is a *ReplayError.
func (r *Replay) Check() error {
	if msg := r.validate(); msg != "" {
		return &ReplayError{Path: r.Path, Msg: msg}
	}
	s := &replayStream{r: r, keys: NewKeys()}
	in, err := openTrace(r)
	if err != nil {
		return err
	}
	defer in.close()
	s.in = in
	if err := s.setup(0); err != nil {
		return err
	}
	var firstBad *LineError
	tried, good := 0, 0
	var rec parsedLine
	for tried < 5 && (firstBad == nil || !r.Strict) {
		line, bad, err := s.readLine()
		if err != nil {
			return &ReplayError{Path: r.Path, Msg: err.Error(), Err: err}
		}
		if line == nil && bad.reason == "" {
			break // end of file
		}
		tried++
		if bad.reason == "" {
			bad = s.parser.parse(line, &rec)
		}
		switch {
		case bad.reason == "" && !r.Strict:
			return nil
		case bad.reason == "":
			good++
		case firstBad == nil:
			firstBad = &LineError{File: r.Path, Line: s.in.lines.n, Col: max(bad.col, 1), Msg: bad.message()}
		}
	}
	switch {
	case firstBad != nil && r.Strict:
		return &ReplayError{Path: r.Path, Msg: fmt.Sprintf("line %d, column %d: %s (strict stops there)", firstBad.Line, firstBad.Col, firstBad.Msg)}
	case firstBad != nil && good == 0:
		return &ReplayError{Path: r.Path, Msg: fmt.Sprintf("none of the first %d lines can be read as %s: line %d, column %d: %s", tried, s.format, firstBad.Line, firstBad.Col, firstBad.Msg)}
	case tried == 0:
		return &ReplayError{Path: r.Path, Msg: "empty: no line to replay"}
	}
	return nil
}

// parsedLine is what a format's parser reads from a line.
type parsedLine struct {
	t     int64 // ns since the epoch
	whole bool  // the stamp is a whole second (no sub-second digits)
	key   []byte
	// attrs are the values of the AttrFields, in their order (nil: none)
	attrs [][]byte
	cost  int64 // 0: the source's cost
	// logged is the check field's value (Replay.CheckField)
	logged Logged
	// req is what the router reads (Replay.Router)
	req Request
}

// badLine says why a line cannot be used; the zero value means it can.
type badLine struct {
	reason string // the ByReason key
	detail string
	// col is the 1-based byte column of what is wrong, 0 when not known
	// (then the line as a whole: column 1)
	col int
}

// at sets b's column to where field, a subslice of line, starts, unless b
// has one already (the innermost reader knows best) or field is not in
// line.
func (b badLine) at(line, field []byte) badLine {
	if b.reason == "" || b.col != 0 {
		return b
	}
	if off := offset(line, field); off >= 0 {
		b.col = off + 1
	}
	return b
}

// atCol sets b's column to col (1-based) unless b has one already or col
// is not known (0).
func (b badLine) atCol(col int) badLine {
	if b.reason != "" && b.col == 0 && col > 0 {
		b.col = col
	}
	return b
}

// offset returns where field starts in line, of which it is a subslice
// (len(line) for an empty one at its end), or -1 when it is not one.
func offset(line, field []byte) int {
	if field == nil {
		return -1
	}
	off := cap(line) - cap(field)
	if off < 0 || off > len(line) {
		return -1
	}
	if cap(field) > 0 && &line[:cap(line)][off] != &field[:1][0] {
		return -1
	}
	return off
}

func (b badLine) message() string {
	if b.detail == "" {
		return b.reason
	}
	return b.reason + ": " + b.detail
}

// lineParser reads one line of a format.
type lineParser interface {
	parse(line []byte, out *parsedLine) badLine
}

// pending is a line waiting in the reorder buffer.
type pending struct {
	t    int64  // instant before speed; an unspread line's whole second
	seq  uint64 // file order
	cost int64
	key  uint32
	// attrs is the line's attributes' tuple (Keys.Attrs), 0 for none
	attrs uint32
	// logged is the check field's value (Replay.CheckField)
	logged Logged
	route  uint16 // Arrival.Route
	// unspread marks a whole-second line not yet spread within its second
	unspread bool
}

func (a *pending) less(b *pending) bool { return a.t < b.t || a.t == b.t && a.seq < b.seq }

const (
	spreadEven = iota
	spreadNone
	spreadRandom
)

type replayStream struct {
	warned bool // Replay.Warn was called
	r      *Replay
	in     *traceInput
	format string
	parser lineParser
	keys   *Keys
	ids    keyTable // the ids of the short keys read so far
	source int32
	// attrAt is where each of r.AttrFields is in the key space's
	// attributes; attrVals the values of a line's, for its tuple
	attrAt   []int
	attrVals [][]byte

	cost     int64
	spread   int
	rng      *rand.Rand
	reorder  int64
	num, den int64 // speed

	haveFirst  bool
	first      int64 // the first stamp read: slices count from it
	haveKept   bool
	kept       int64 // the first stamp kept: speed scales from it
	haveMax    bool
	maxSeen    int64 // the latest stamp read
	maxLine    int64 // its line
	sentAny    bool
	lastSent   int64 // the last instant sent, before speed
	haveGlobal bool
	global     uint32 // the id of GlobalKey
	seq        uint64

	// The reorder buffer: lines in order go to fifo (sorted by
	// construction), others to heap; ready holds one spread second.
	fifo      fifo[pending]
	heap      pendingHeap
	ready     []pending
	readyHead int
	draws     []int64

	seen     []uint64 // keys sent, a bit per id
	win      []int64  // instants sent within the last second (a ring of 2^k)
	winHead  int
	winLen   int
	stats    ReplayStats
	reported int // late lines in FirstBad
	bad      int // malformed lines in FirstBad
	rec      parsedLine
	routing  *routing // nil without Replay.Router
	eof      bool
	done     bool
	err      error
}

func (s *replayStream) setup(seed uint64) error {
	r := s.r
	s.cost = max(r.Cost, 1)
	switch r.Spread {
	case "none":
		s.spread = spreadNone
	case "random":
		s.spread = spreadRandom
		s.rng = newRand(seed, 0)
	}
	s.reorder = int64(r.Reorder)
	s.num, s.den = 1, 1
	if r.Speed != (Fraction{}) {
		s.num, s.den = r.Speed.Num, r.Speed.Den
	}
	if err := s.chooseParser(); err != nil {
		return err
	}
	if err := s.setupRouting(); err != nil {
		return err
	}
	if s.keys != nil && s.keys.attrs != nil {
		names := s.keys.attrs.names
		for _, a := range r.AttrFields {
			s.attrAt = append(s.attrAt, slices.Index(names, a.Name))
		}
	}
	s.stats = ReplayStats{Path: r.Path, Format: s.format, ByReason: map[string]int64{}}
	if r.FormatName != "" {
		s.stats.Format = r.FormatName
	}
	return nil
}

func (s *replayStream) Err() error { return s.err }

// Close closes the file; a stream read to its end closes it itself.
func (s *replayStream) Close() error {
	s.done = true
	s.in.close()
	return nil
}

func (s *replayStream) Next(a *Arrival) bool {
	if s.done {
		return false
	}
	for {
		if p, ok := s.peek(); ok && (s.eof || p.t < s.watermark()) {
			if p.unspread {
				s.spreadSecond(p.t)
				continue
			}
			s.emit(s.take(p), a)
			return true
		}
		if s.eof {
			s.finish()
			return false
		}
		if !s.readOne() {
			s.finish()
			return false
		}
	}
}

// watermark is the stamp below which no line can still come in order:
// the latest stamp read minus the reorder window.
func (s *replayStream) watermark() int64 {
	if !s.haveMax {
		return math.MinInt64
	}
	return s.maxSeen - s.reorder
}

// finish publishes the statistics and closes the file.
func (s *replayStream) finish() {
	s.done = true
	s.in.close()
	st := s.stats
	st.ByReason = make(map[string]int64, len(s.stats.ByReason))
	for k, v := range s.stats.ByReason {
		st.ByReason[k] = v
	}
	st.FirstBad = slices.Clone(s.stats.FirstBad)
	if g := s.routing; g != nil {
		st.Unrouted = g.none
		for i, rt := range g.r.Routes() {
			st.Routes = append(st.Routes, RouteCount{Route: rt, Requests: g.counts[i]})
		}
	}
	if s.stats.NoValue != nil {
		st.NoValue = make(map[string]int64, len(s.stats.NoValue))
		for k, v := range s.stats.NoValue {
			st.NoValue[k] = v
		}
	}
	s.r.stats.CompareAndSwap(nil, &st)
}

// readLine reads the next line: nil and no reason at the end of the file.
// A line too long or not UTF-8 comes back as a reason.
func (s *replayStream) readLine() ([]byte, badLine, error) {
	line, tooLong, err := s.in.lines.next()
	if err != nil {
		return nil, badLine{}, err
	}
	switch {
	case tooLong:
		return nil, badLine{reason: "line too long", detail: fmt.Sprintf("longer than %d bytes", maxLine)}, nil
	case line == nil:
		return nil, badLine{}, nil
	case len(line) == 0 || isBlank(line):
		return line, badLine{reason: "empty line", detail: ""}, nil
	case !validUTF8(line):
		return line, badLine{reason: "not UTF-8", detail: "binary or mis-encoded bytes"}, nil
	}
	return line, badLine{}, nil
}

// readOne reads and files one line; false when the stream must stop (an
// I/O error, or a malformed line under Strict), with s.err set, or at the
// end of the file, with s.eof set and true.
func (s *replayStream) readOne() bool {
	line, bad, err := s.readLine()
	if err != nil {
		s.err = &ReplayError{Path: s.r.Path, Msg: fmt.Sprintf("line %d: %v", s.in.lines.n+1, err), Err: err}
		return false
	}
	if line == nil && bad.reason == "" {
		s.eof = true
		return true
	}
	s.stats.Lines++
	if bad.reason == "" {
		s.rec = parsedLine{attrs: s.rec.attrs[:0]}
		bad = s.parser.parse(line, &s.rec)
		if bad.reason == "" && s.routing != nil {
			bad = s.routing.missing(&s.rec.req)
		}
	}
	if bad.reason != "" {
		s.stats.Malformed++
		s.stats.ByReason[bad.reason]++
		le := LineError{File: s.r.Path, Line: s.in.lines.n, Col: bad.col, Msg: bad.message()}
		if s.r.Strict {
			s.stats.FirstBad = append(s.stats.FirstBad, le)
			s.err = &le
			return false
		}
		if s.bad < maxReported {
			s.bad++
			s.stats.FirstBad = append(s.stats.FirstBad, le)
		}
		return true
	}
	s.file(&s.rec)
	return true
}

// file puts a readable line through slicing and into the reorder buffer.
func (s *replayStream) file(rec *parsedLine) {
	t := rec.t
	if !s.haveFirst {
		s.haveFirst, s.first = true, t
	}
	rel := t - s.first // both in [0, MaxInt64]: no overflow
	if s.r.SliceStart > 0 && rel < int64(s.r.SliceStart) || s.r.SliceEnd > 0 && rel >= int64(s.r.SliceEnd) {
		s.stats.Sliced++
		return
	}
	if !s.haveKept {
		s.haveKept, s.kept = true, t
	}
	var key uint32
	switch {
	case rec.key != nil:
		key = s.ids.intern(s.keys, rec.key)
	case s.haveGlobal:
		key = s.global
	default:
		key = s.keys.Intern(GlobalKey)
		s.haveGlobal, s.global = true, key
	}
	cost := rec.cost
	if cost == 0 {
		cost = s.cost
	}
	s.stats.Used++
	s.seq++
	p := pending{t: t, seq: s.seq, cost: cost, key: key, logged: rec.logged}
	if s.routing != nil {
		p.route = s.routing.route(&rec.req)
	}
	if len(s.attrAt) > 0 {
		for i, v := range rec.attrs {
			if len(v) == 0 && s.r.AttrFields[i].Default != "" {
				rec.attrs[i] = []byte(s.r.AttrFields[i].Default)
			}
		}
		p.attrs = s.keys.attrs.tupleOf(s.attrAt, rec.attrs)
		for i, v := range rec.attrs {
			if len(v) == 0 {
				if s.stats.NoValue == nil {
					s.stats.NoValue = map[string]int64{}
				}
				s.stats.NoValue[s.r.AttrFields[i].Name]++
			}
		}
	}
	if s.haveMax && t < s.watermark() {
		// Late: beyond the window, so its place is already gone.
		s.stats.Late++
		at := t
		if s.sentAny && s.lastSent > at {
			at = s.lastSent
		}
		if s.reported < maxReported {
			s.reported++
			s.stats.FirstBad = append(s.stats.FirstBad, LineError{File: s.r.Path, Line: s.in.lines.n,
				Msg: fmt.Sprintf("late: stamped %s before line %d (the latest stamp so far), beyond the reorder window %s: sent at %s",
					human.Duration(time.Duration(s.maxSeen-t)), s.maxLine, human.Duration(time.Duration(s.reorder)), formatInstant(s.scale(at)))})
		}
		p.t = at
	} else {
		if !s.haveMax || t > s.maxSeen {
			s.haveMax, s.maxSeen, s.maxLine = true, t, s.in.lines.n
		}
		p.unspread = rec.whole && s.spread != spreadNone
	}
	s.push(p)
}

// formatInstant writes ns since the epoch as an RFC 3339 UTC time.
func formatInstant(t int64) string {
	return time.Unix(0, t).UTC().Format(time.RFC3339Nano)
}

func (s *replayStream) push(p pending) {
	if s.fifo.len() == 0 || !p.less(s.fifo.back()) {
		s.fifo.push(p)
	} else {
		// appended and fixed rather than heap.Push, which would box p
		s.heap = append(s.heap, p)
		heap.Fix(&s.heap, len(s.heap)-1)
	}
	if s.r.Warn != nil && !s.warned {
		limit := s.r.WarnBuffered
		if limit <= 0 {
			limit = DefaultWarnBuffered
		}
		if held := s.fifo.len() + len(s.heap); held > limit {
			s.warned = true
			s.r.Warn(bufferWarning(s.r.Path, s.r.Reorder, held))
		}
	}
}

// DefaultWarnBuffered is how many lines the reorder window may hold before
// Replay.Warn is called: a million, 32 MB of waiting lines, the window of
// 5m at 3,333 lines a second.
const DefaultWarnBuffered = 1_000_000

// bufferWarning says that the reorder window holds held lines, what that
// costs, and which option bounds it.
func bufferWarning(path string, window time.Duration, held int) string {
	mib := int64(held) * int64(unsafe.Sizeof(pending{})) >> 20
	return fmt.Sprintf("%s: the reorder window of %v holds %d lines (%d MiB) and grows with the trace's rate: "+
		"on a log whose lines are at most a few seconds out of order, --reorder 10s (scenario: reorder) gives the same "+
		"requests in a fraction of the memory", path, human.Duration(window), held, mib)
}

// peek returns the earliest waiting line, in (t, seq) order.
func (s *replayStream) peek() (*pending, bool) {
	var best *pending
	if s.readyHead < len(s.ready) {
		best = &s.ready[s.readyHead]
	}
	if s.fifo.len() > 0 && (best == nil || s.fifo.front().less(best)) {
		best = s.fifo.front()
	}
	if len(s.heap) > 0 && (best == nil || s.heap[0].less(best)) {
		best = &s.heap[0]
	}
	return best, best != nil
}

// pop removes and returns the earliest waiting line.
func (s *replayStream) pop() pending {
	p, _ := s.peek()
	return s.take(p)
}

// take removes and returns p, the earliest waiting line as peek returned
// it.
func (s *replayStream) take(p *pending) pending {
	switch {
	case s.readyHead < len(s.ready) && p == &s.ready[s.readyHead]:
		s.readyHead++
		if s.readyHead == len(s.ready) {
			s.ready, s.readyHead = s.ready[:0], 0
		}
		return *p
	case s.fifo.len() > 0 && p == s.fifo.front():
		return s.fifo.pop()
	}
	// the last moved to the top and fixed rather than heap.Pop, which
	// would box the line
	v := s.heap[0]
	n := len(s.heap) - 1
	s.heap[0] = s.heap[n]
	s.heap = s.heap[:n]
	heap.Fix(&s.heap, 0)
	return v
}

// pendingHeap is a heap (container/heap) of waiting lines by (t, seq): no
// two are equal, so the order is the same whatever the heap does.
type pendingHeap []pending

func (h pendingHeap) Len() int           { return len(h) }
func (h pendingHeap) Less(i, j int) bool { return h[i].less(&h[j]) }
func (h pendingHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *pendingHeap) Push(x any)        { *h = append(*h, x.(pending)) }
func (h *pendingHeap) Pop() any {
	n := len(*h) - 1
	x := (*h)[n]
	*h = (*h)[:n]
	return x
}

// spreadSecond spreads the whole-second lines of second sec, now that no
// line of it can still come in order, and puts them, with the lines
// stamped exactly sec, in ready. Nothing waits in ready then: its lines
// all come before any line of a later second.
func (s *replayStream) spreadSecond(sec int64) {
	group := s.ready[:0]
	s.readyHead = 0
	s.ready = nil
	for {
		p, ok := s.peek()
		if !ok || p.t != sec {
			break
		}
		group = append(group, s.take(p))
	}
	n := int64(0)
	for i := range group {
		if group[i].unspread {
			n++
		}
	}
	if s.spread == spreadRandom {
		s.draws = s.draws[:0]
		for range n {
			s.draws = append(s.draws, s.rng.Int64N(int64(time.Second)))
		}
		slices.Sort(s.draws)
	}
	// The even offsets (2k+1)*1s/(2n), rounded down, step by 2*1s/(2n):
	// off is the quotient and rem the remainder of the k-th (both < 2n,
	// no overflow for n < 2^32).
	off, rem := int64(time.Second)/(2*n), int64(time.Second)%(2*n)
	stepOff, stepRem := 2*int64(time.Second)/(2*n), 2*int64(time.Second)%(2*n)
	k := int64(0)
	for i := range group {
		g := &group[i]
		if !g.unspread {
			continue
		}
		if s.spread == spreadRandom {
			g.t = satAdd(sec, s.draws[k])
		} else {
			g.t = satAdd(sec, off)
			off, rem = off+stepOff, rem+stepRem
			if rem >= 2*n {
				off, rem = off+1, rem-2*n
			}
		}
		k++
		g.unspread = false
	}
	if n == int64(len(group)) {
		// every line was spread: they came in file order (all stamped
		// sec) and their offsets never decrease, so they are in order
		s.ready = group
		return
	}
	slices.SortStableFunc(group, func(a, b pending) int {
		switch {
		case a.less(&b):
			return -1
		case b.less(&a):
			return 1
		}
		return 0
	})
	s.ready = group
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// scale applies the speed: kept + (t - kept) * den / num, rounded down,
// within [0, MaxInt64].
func (s *replayStream) scale(t int64) int64 {
	if s.num == s.den {
		return t
	}
	d := t - s.kept // both in [0, MaxInt64]: no overflow
	neg := d < 0
	u := uint64(d)
	if neg {
		u = uint64(-d)
	}
	hi, lo := bits.Mul64(u, uint64(s.den))
	if hi >= uint64(s.num) {
		if neg {
			return 0
		}
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, uint64(s.num))
	if neg && r != 0 {
		q++ // round down a negative quotient
	}
	if q > math.MaxInt64 {
		if neg {
			return 0
		}
		return math.MaxInt64
	}
	if neg {
		return max(s.kept-int64(q), 0)
	}
	return satAdd(s.kept, int64(q))
}

// emit sends p as a and counts it.
func (s *replayStream) emit(p pending, a *Arrival) {
	at := s.scale(p.t)
	*a = Arrival{At: time.Duration(at), Key: p.key, Cost: p.cost, Source: s.source, Logged: p.logged, Attrs: p.attrs, Route: p.route}
	st := &s.stats
	if !s.sentAny {
		st.First = time.Duration(at)
	}
	s.sentAny, s.lastSent = true, p.t
	st.Last = time.Duration(at)
	w, b := p.key/64, uint64(1)<<(p.key%64)
	if int(w) >= len(s.seen) {
		s.seen = append(s.seen, make([]uint64, int(w)+1-len(s.seen))...)
	}
	if s.seen[w]&b == 0 {
		s.seen[w] |= b
		st.Keys++
	}
	s.countPeak(at)
}

// countPeak adds an instant sent (in order) to the window of the last
// second and keeps the largest count of any [a, a+1s).
func (s *replayStream) countPeak(at int64) {
	// len(s.win) is a power of 2: mask is the modulo
	mask := len(s.win) - 1
	for s.winLen > 0 && s.win[s.winHead] <= at-int64(time.Second) {
		s.winHead = (s.winHead + 1) & mask
		s.winLen--
	}
	if s.winLen == len(s.win) {
		grown := make([]int64, max(16, 2*len(s.win)))
		for i := range s.winLen {
			grown[i] = s.win[(s.winHead+i)&mask]
		}
		s.win, s.winHead = grown, 0
		mask = len(s.win) - 1
	}
	s.win[(s.winHead+s.winLen)&mask] = at
	s.winLen++
	s.stats.PeakPerSecond = max(s.stats.PeakPerSecond, int64(s.winLen))
}
