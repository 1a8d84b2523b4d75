package scenarios

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"time"
	// Time zones load the same on every machine, with or without a zone
	// database installed.
	_ "time/tzdata"

	"github.com/ratesim/ratesim/internal/intmath"
	"github.com/ratesim/ratesim/traffic"
)

const (
	// defaultReorder is a replay source's reorder window when it sets none.
	defaultReorder = 5 * time.Minute
	wantSpeed      = "a decimal > 0 like 2, 0.5 or 1.5"
)

// replayFields are the fields of a replay source besides type, cost,
// start, end and retry.
var replayFields = sourceFieldsBy("types", "replay")

// replayCommon are the common fields a replay source takes.
var replayCommon = sourceFieldsBy("common", "all")

// replayRef is where a replay source's path was written, for CheckFiles.
type replayRef struct {
	src     *traffic.Replay
	pos     position
	path    string // traffic[i].path
	written string
}

// replay reads the fields of a replay source into src; c holds the common
// fields already read (cost, start, end, retry). The start and end of a
// replay are offsets from the trace's first timestamp: they become
// SliceStart and SliceEnd.
func (d *decoder) replay(m *mapping, in *Source, c traffic.Common, good bool) (*traffic.Replay, *replayRef, bool) {
	src := &traffic.Replay{Common: c, Reorder: defaultReorder}
	var ref *replayRef
	src.SliceStart, src.SliceEnd = c.Start, c.End
	src.Common.Start, src.Common.End = 0, 0
	src.Clients = traffic.Clients{}

	ref, ok := d.replayPath(m.get("path", in.Path.Value), src)
	format, fok := d.replayFormat(m, in, src)
	good = good && ok && fok
	good = d.replayFields(m, in, src, format) && good
	good = d.replayReading(m, in, src, format) && good
	return src, ref, good
}

// replayPath reads a replay's path into src.
func (d *decoder) replayPath(v val, src *traffic.Replay) (*replayRef, bool) {
	var ref *replayRef
	good := true
	if v.set {
		p, ok := d.str(v, true)
		src.Path, good = d.resolve(p), good && ok
		if ok {
			ref = &replayRef{src: src, pos: v.pos, path: v.path, written: p}
		}
	} else {
		d.missing(v, "the trace file: an access log, CSV, TSV or JSON lines, maybe gzipped")
		good = false
	}
	return ref, good
}

// replayFormat reads a replay's format, or its log-format and log-escape,
// into src; it returns the format the trace is read as (auto, nginx for a
// log-format).
func (d *decoder) replayFormat(m *mapping, in *Source, src *traffic.Replay) (string, bool) {
	good := true
	format := "auto"
	if v := m.get("format", in.Format.Value); v.set {
		f, ok := d.choice(v, "format", traffic.ReplayFormats)
		if ok {
			format = f
		}
		src.Format, good = f, good && ok
	}
	if v := m.get("log-format", in.LogFormat.Value); v.set {
		text, ok := d.str(v, true)
		if ok && m.get("format", in.Format.Value).set && format != "auto" {
			d.errAt(m.keyPos["log-format"], v.path, "a log-format is the trace's format: leave format unset (found format %s)", format)
			ok = false
		}
		escape := ""
		if e := m.get("log-escape", in.LogEscape.Value); e.set {
			var eok bool
			escape, eok = d.choice(e, "escape", traffic.LogEscapes)
			ok = ok && eok
		}
		if ok {
			if _, err := traffic.ParseLogTemplate(text, escape); err != nil {
				d.errAt(v.pos, v.path, "%s: %v", quote(text), err)
				ok = false
			}
		}
		src.LogFormat, src.LogEscape, good = text, escape, good && ok
		format = "nginx"
	} else if e := m.get("log-escape", in.LogEscape.Value); e.set {
		d.errAt(m.keyPos["log-escape"], e.path, "applies to a log-format only")
		good = false
	}
	return format, good
}

// replayFields reads which fields of the trace hold each request's time,
// key and cost, and a header-less file's columns, into src.
func (d *decoder) replayFields(m *mapping, in *Source, src *traffic.Replay, format string) bool {
	good := true
	log := format == "combined" || format == "common"
	logKeys := traffic.LogKeyFields
	if format == "common" {
		logKeys = logKeys[:5]
	}

	if v := m.get("time-field", in.TimeField.Value); v.set {
		f, ok := d.fieldName(v, format)
		if ok && log && f != "time" {
			d.errAt(m.keyPos["time-field"], v.path, "does not apply to a %s log: its time is the [time] field (set time-layout for another stamp)", format)
			ok = false
		}
		src.TimeField, good = f, good && ok
	}
	if v := m.get("key-field", in.KeyField.Value); v.set {
		f, ok := d.fieldName(v, format)
		if ok && log && f != traffic.KeyFieldNone && !slices.Contains(logKeys, f) {
			d.errAt(v.pos, v.path, "%s: not a field of a %s log (want %s, or none)", v.found(), format, orList(logKeys))
			ok = false
		}
		src.KeyField, good = f, good && ok
	}
	if v := m.get("cost-field", in.CostField.Value); v.set {
		f, ok := d.fieldName(v, format)
		if ok && log && !slices.Contains(traffic.LogCostFields, f) {
			d.errAt(v.pos, v.path, "%s: not a numeric field of a %s log (want %s)", v.found(), format, orList(traffic.LogCostFields))
			ok = false
		}
		if ok && m.get("cost", in.Cost.Value).set {
			d.errAt(m.keyPos[later(m, "cost", "cost-field")], join(m.path, later(m, "cost", "cost-field")), "want cost or cost-field, not both")
			ok = false
		}
		src.CostField, good = f, good && ok
	}
	if v := m.get("attribute-fields", attributesOf(in.AttributeFields)); v.set {
		attrs, ok := d.attributeFields(v, in.AttributeFields, format)
		src.AttrFields, good = attrs, good && ok
	}
	if v := m.get("columns", listOf(in.Columns)); v.set {
		cols, ok := d.columns(v, in.Columns)
		if ok && format != "auto" && format != "csv" && format != "tsv" {
			d.errAt(m.keyPos["columns"], v.path, "applies to csv and tsv only (a header-less file), not %s", format)
			ok = false
		}
		src.Columns, good = cols, good && ok
	}
	return good
}

// replayReading reads how a replay reads its times (layout or unit, zone),
// orders and spreads them, its speed, strictness and check field, into
// src.
func (d *decoder) replayReading(m *mapping, in *Source, src *traffic.Replay, format string) bool {
	good := true
	layoutVal, unitVal := m.get("time-layout", in.TimeLayout.Value), m.get("time-unit", in.TimeUnit.Value)
	if layoutVal.set && unitVal.set {
		k := later(m, "time-layout", "time-unit")
		d.errAt(m.keyPos[k], join(m.path, k), "want time-layout or time-unit, not both")
		good = false
	}
	if v := layoutVal; v.set {
		l, ok := d.str(v, true)
		if ok {
			if err := traffic.CheckTimeLayout(l); err != nil {
				d.errAt(v.pos, v.path, "%s: %v", quote(l), err)
				ok = false
			}
		}
		src.TimeLayout, good = l, good && ok
	}
	if v := unitVal; v.set {
		u, ok := d.choice(v, "unit", traffic.ReplayTimeUnits)
		src.TimeUnit, good = u, good && ok
	}
	if v := m.get("timezone", in.Timezone.Value); v.set {
		loc, ok := d.timezone(v)
		src.Timezone, good = loc, good && ok
	}
	if v := m.get("reorder", in.Reorder.Value); v.set {
		r, ok := d.duration(v, false)
		src.Reorder, good = r, good && ok
	}
	if v := m.get("spread", in.Spread.Value); v.set {
		sp, ok := d.choice(v, "spread", traffic.ReplaySpreads)
		src.Spread, good = sp, good && ok
	}
	if v := m.get("speed", in.Speed.Value); v.set {
		f, ok := d.speed(v)
		src.Speed, good = f, good && ok
	}
	if v := m.get("strict", in.Strict.Value); v.set {
		b, ok := d.boolean(v)
		src.Strict, good = b, good && ok
	}
	if v := m.get("check-field", in.CheckField.Value); v.set {
		f, ok := d.fieldName(v, format)
		if ok && (format == "combined" || format == "common") && f != "status" {
			d.errAt(v.pos, v.path, "%s: a %s log's verdict is its status (want status)", v.found(), format)
			ok = false
		}
		src.CheckField, good = f, good && ok
	}
	return good
}

// later is whichever of fields a and b of m was written last.
func later(m *mapping, a, b string) string {
	if slices.Index(m.keys, a) < slices.Index(m.keys, b) {
		return b
	}
	return a
}

// resolve makes a trace path written in the scenario file relative to the
// file's folder (built-ins: the working directory).
func (d *decoder) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) || strings.HasPrefix(d.file, "builtin:") {
		return p
	}
	dir := filepath.Dir(d.file)
	if dir == "." {
		return p
	}
	return filepath.Join(dir, p)
}

// attributeFields reads a replay's attribute-fields: attribute names to
// the fields that hold their values, in the order written.
func (d *decoder) attributeFields(v val, as Attributes, format string) ([]traffic.AttrField, bool) {
	const want = "a mapping of attribute names to fields of the trace, e.g. {remote_addr: remote_addr, http_x_client: http_x_client}"
	m, ok := d.mapping(v, want, as)
	if !ok {
		return nil, false
	}
	if len(m.keys) == 0 {
		d.errAt(v.pos, v.path, "empty mapping (want %s)", want)
		return nil, false
	}
	logKeys := traffic.LogKeyFields
	if format == "common" {
		logKeys = logKeys[:5]
	}
	var out []traffic.AttrField
	good := true
	for _, a := range as {
		k := a.Name
		if k == byKey || k == byGlobal || k == "" {
			d.errAt(m.keyPos[k], join(m.path, k), "%s: reserved (a limit's by: key counts by the request's key, by: global every request together); name the attribute otherwise", quote(k))
			good = false
			continue
		}
		fv := m.get(k, a.Value.Value)
		f, ok := d.fieldName(fv, format)
		if ok && (format == "combined" || format == "common") && !slices.Contains(logKeys, f) {
			d.errAt(fv.pos, fv.path, "%s: not a field of a %s log (want %s)", fv.found(), format, orList(logKeys))
			ok = false
		}
		out, good = append(out, traffic.AttrField{Name: k, Field: f}), good && ok
	}
	return out, good
}

// fieldName reads a time-, key- or cost-field: a name, or for CSV and TSV
// a 1-based column number.
func (d *decoder) fieldName(v val, format string) (string, bool) {
	if !v.ok() {
		return "", false
	}
	if v.n.Kind == Integer {
		text := v.n.Text
		if format == "jsonl" || format == "combined" || format == "common" || format == "nginx" {
			d.errAt(v.pos, v.path, "found integer %s, want a field name (column numbers are for csv and tsv)", text)
			return "", false
		}
		if !isDecimal(text) || strings.HasPrefix(text, "-") || strings.HasPrefix(text, "+") || strings.TrimLeft(text, "0") == "" || len(text) > 9 {
			d.errAt(v.pos, v.path, "%s: want a column number from 1, or a name", text)
			return "", false
		}
		return text, true
	}
	return d.str(v, true)
}

// columns reads a list of distinct non-empty column names.
func (d *decoder) columns(v val, cols []String) ([]string, bool) {
	const want = "a list of column names like [time, ip, path]"
	items, ok := d.list(v, want, len(cols), func(i int) Value { return cols[i].Value })
	if !ok {
		return nil, false
	}
	if len(items) == 0 {
		d.errAt(v.pos, v.path, "empty list (want %s)", want)
		return nil, false
	}
	var out []string
	good := true
	for _, it := range items {
		s, ok := d.str(it, true)
		if !ok {
			good = false
			continue
		}
		if i := slices.Index(out, s); i >= 0 {
			d.errAt(it.pos, it.path, "%s: duplicate column (also %s)", quote(s), index(v.path, i))
			good = false
		}
		out = append(out, s)
	}
	return out, good
}

// timezone reads an IANA zone name (Europe/Paris) or UTC.
func (d *decoder) timezone(v val) (*time.Location, bool) {
	name, ok := d.str(v, true)
	if !ok {
		return nil, false
	}
	const want = "want an IANA name like Europe/Paris, or UTC"
	if name == "Local" {
		d.errAt(v.pos, v.path, `"Local": the machine's zone would make runs differ between machines (%s)`, want)
		return nil, false
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		d.errAt(v.pos, v.path, "%s: unknown time zone (%s)", quote(name), want)
		return nil, false
	}
	return loc, true
}

// speed reads a decimal > 0 exactly as a reduced fraction (1.5 is 3/2).
func (d *decoder) speed(v val) (traffic.Fraction, bool) {
	if !v.ok() {
		return traffic.Fraction{}, false
	}
	if !isNumber(v.n) {
		d.typeErr(v, wantSpeed)
		return traffic.Fraction{}, false
	}
	text := v.n.Text
	f, msg := parseSpeed(text)
	if msg != "" {
		d.errAt(v.pos, v.path, "%s: %s", text, msg)
		return traffic.Fraction{}, false
	}
	return f, true
}

// parseSpeed parses a decimal > 0 such as 2, 0.5 or 1.5 exactly into a
// reduced fraction, never through a float.
func parseSpeed(s string) (traffic.Fraction, string) {
	intPart, fracPart, _ := strings.Cut(strings.TrimPrefix(s, "+"), ".")
	if intPart == "" && fracPart == "" || strings.TrimLeft(intPart, "0123456789") != "" ||
		strings.TrimLeft(fracPart, "0123456789") != "" {
		return traffic.Fraction{}, "want " + wantSpeed
	}
	fracPart = strings.TrimRight(fracPart, "0")
	digits := strings.TrimLeft(intPart+fracPart, "0")
	if digits == "" {
		return traffic.Fraction{}, "want " + wantSpeed
	}
	if len(digits) > 18 || len(fracPart) > 18 {
		return traffic.Fraction{}, "too many digits (want " + wantSpeed + ")"
	}
	var num int64
	for _, c := range digits {
		num = num*10 + int64(c-'0')
	}
	den := int64(1)
	for range fracPart {
		den *= 10
	}
	g := intmath.GCD(num, den)
	return traffic.Fraction{Num: num / g, Den: den / g}, ""
}

// CheckFiles opens the trace of every replay source of sc and reads its
// first lines, as a run would (Parse does not open files): a missing file,
// a format that cannot be recognised, a field that names no column, or
// first lines that cannot be read are errors at the source's path field,
// as file:line:col: traffic[i].path: "the path as written": what is wrong.
// It returns nil or Errors.
func CheckFiles(sc *Scenario) error {
	var errs Errors
	for _, ref := range sc.replays {
		err := ref.src.Check()
		if err == nil {
			continue
		}
		msg := err.Error()
		var re *traffic.ReplayError
		if errors.As(err, &re) {
			msg = re.Msg
		}
		if ref.src.Path != ref.written {
			msg += " (read as " + ref.src.Path + ", relative to the scenario file)"
		}
		errs = append(errs, &Error{File: sc.File, Line: ref.pos.line, Col: ref.pos.col, Path: ref.path,
			Msg: quote(ref.written) + ": " + msg})
	}
	if len(errs) == 0 {
		return nil
	}
	return errs.sorted()
}
