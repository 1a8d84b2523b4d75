package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/ratesim/ratesim/internal/version"

	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
)

// Formats are the output formats of a sweep.
var Formats = []string{"table", "json", "csv", "markdown"}

// jsonValue writes a value as JSON: a number for an integer or a decimal,
// a boolean, else a string (durations as written: "10ms").
func jsonValue(v Value) json.RawMessage {
	switch v.Kind {
	case "int", "decimal", "bool":
		if json.Valid([]byte(v.Text)) { // not 007 or +5, which stay strings
			return json.RawMessage(v.Text)
		}
	}
	b, _ := json.Marshal(v.Text)
	return b
}

// orderedValues writes a point's values as an object in the fields' order.
type orderedValues struct {
	fields []Field
	values []Value
}

func (o orderedValues) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o.fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Path)
		b.Write(k)
		b.WriteByte(':')
		b.Write(jsonValue(o.values[i]))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type jsonVary struct {
	Field  string            `json:"field"`
	Values []json.RawMessage `json:"values"`
}

type jsonShard struct {
	K int `json:"k"`
	N int `json:"n"`
}

type jsonKeyGroups struct {
	Label  string         `json:"label"`
	Groups []sim.KeyGroup `json:"groups"`
}

type jsonPoint struct {
	Index     int             `json:"index"`
	Values    orderedValues   `json:"values"`
	Results   json.RawMessage `json:"results,omitempty"`
	Error     string          `json:"error,omitempty"`
	KeyGroups []jsonKeyGroups `json:"key_groups,omitempty"`
}

type jsonChoice struct {
	Index     int           `json:"index"`
	Values    orderedValues `json:"values"`
	Objective float64       `json:"objective"`
}

type jsonNear struct {
	Constraint string        `json:"constraint"`
	Index      int           `json:"index"`
	Values     orderedValues `json:"values"`
	Value      float64       `json:"value"`
	By         float64       `json:"by"`
}

type jsonBest struct {
	Label     string         `json:"label"`
	Met       bool           `json:"met"`
	Index     *int           `json:"index,omitempty"`
	Values    *orderedValues `json:"values,omitempty"`
	Objective *float64       `json:"objective,omitempty"`
	RunnerUp  *jsonChoice    `json:"runner_up,omitempty"`
	Closest   *jsonNear      `json:"closest,omitempty"`
}

// jsonExpectation is one claim of the scenario's expect section as
// written, where it is written.
type jsonExpectation struct {
	Row       string `json:"row"`
	Assertion string `json:"assertion"`
	File      string `json:"file,omitempty"`
	Path      string `json:"path,omitempty"`
	Line      int    `json:"line,omitempty"`
	Col       int    `json:"col,omitempty"`
}

type jsonSweep struct {
	Version  string            `json:"ratesim_version"`
	Scenario string            `json:"scenario"`
	Shard    *jsonShard        `json:"shard,omitempty"`
	Vary     []jsonVary        `json:"vary"`
	KeyGlobs []string          `json:"key_globs,omitempty"`
	CostUnit string            `json:"cost_unit,omitempty"`
	Expect   []jsonExpectation `json:"expect,omitempty"`
	Points   []jsonPoint       `json:"points"`
	Goal     string            `json:"goal,omitempty"`
	Best     []jsonBest        `json:"best,omitempty"`
}

// JSON writes the sweep as docs/sweep.md shows it; with a goal, its
// answer as "best", one entry per label. A shard's output says which shard
// it is ("shard": {"k": K, "n": N}); ratesim sweep merge reads it back.
func JSON(w io.Writer, s *Sweep, g *Goal, bests []Best) error {
	out := jsonSweep{Version: version.String(), Scenario: s.Scenario, KeyGlobs: s.KeyGlobs, CostUnit: s.CostUnit, Points: []jsonPoint{}}
	if s.Shard.N > 0 {
		out.Shard = &jsonShard{K: s.Shard.K, N: s.Shard.N}
	}
	for _, e := range s.Expect {
		out.Expect = append(out.Expect, jsonExpectation{Row: e.Row, Assertion: e.Text, File: e.File, Path: e.Path, Line: e.Line, Col: e.Col})
	}
	for _, f := range s.Fields {
		jv := jsonVary{Field: f.Path}
		for _, v := range f.Values {
			jv.Values = append(jv.Values, jsonValue(v))
		}
		out.Vary = append(out.Vary, jv)
	}
	for i := range s.Points {
		p := &s.Points[i]
		jp := jsonPoint{Index: p.Index, Values: orderedValues{s.Fields, p.Values}, Results: p.Results, Error: p.Error}
		if len(p.KeyGroups) > 0 {
			rs, err := rowsOf(p)
			if err != nil {
				return err
			}
			for r, gs := range p.KeyGroups {
				jp.KeyGroups = append(jp.KeyGroups, jsonKeyGroups{Label: rs[r].Label, Groups: gs})
			}
		}
		out.Points = append(out.Points, jp)
	}
	if g != nil {
		out.Goal = g.Text
		for _, b := range bests {
			jb := jsonBest{Label: b.Label, Met: b.Best != nil}
			if c := b.Best; c != nil {
				idx, obj, vals := c.Index, c.Objective, orderedValues{s.Fields, c.Values}
				jb.Index, jb.Objective, jb.Values = &idx, &obj, &vals
			}
			if c := b.RunnerUp; c != nil {
				jb.RunnerUp = &jsonChoice{Index: c.Index, Values: orderedValues{s.Fields, c.Values}, Objective: c.Objective}
			}
			if n := b.Closest; n != nil {
				jb.Closest = &jsonNear{Constraint: n.Constraint.String(), Index: n.Index,
					Values: orderedValues{s.Fields, n.Values}, Value: n.Value, By: n.By}
			}
			out.Best = append(out.Best, jb)
		}
	}
	return output.EncodeJSON(w, &out)
}

// ReadJSON reads a sweep written by JSON (a shard, or a whole sweep).
func ReadJSON(r io.Reader) (*Sweep, error) {
	var in struct {
		Scenario string `json:"scenario"`
		Shard    *jsonShard
		Vary     []struct {
			Field  string            `json:"field"`
			Values []json.RawMessage `json:"values"`
		} `json:"vary"`
		KeyGlobs []string          `json:"key_globs"`
		CostUnit string            `json:"cost_unit"`
		Expect   []jsonExpectation `json:"expect"`
		Points   []struct {
			Index     int                        `json:"index"`
			Values    map[string]json.RawMessage `json:"values"`
			Results   json.RawMessage            `json:"results"`
			Error     string                     `json:"error"`
			KeyGroups []jsonKeyGroups            `json:"key_groups"`
		} `json:"points"`
	}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("not a sweep's JSON output: %v", err)
	}
	if in.Scenario == "" || len(in.Vary) == 0 {
		return nil, fmt.Errorf("not a sweep's JSON output: no scenario or no vary")
	}
	s := &Sweep{Scenario: in.Scenario, KeyGlobs: in.KeyGlobs, CostUnit: in.CostUnit}
	for _, e := range in.Expect {
		s.Expect = append(s.Expect, scenarios.Expectation{Row: e.Row, Text: e.Assertion, File: e.File, Path: e.Path, Line: e.Line, Col: e.Col})
	}
	if in.Shard != nil {
		s.Shard = Shard{K: in.Shard.K, N: in.Shard.N}
	}
	for _, v := range in.Vary {
		f := Field{Path: v.Field}
		for _, raw := range v.Values {
			val, err := valueFromJSON(raw)
			if err != nil {
				return nil, fmt.Errorf("vary %s: %v", v.Field, err)
			}
			f.Values = append(f.Values, val)
		}
		s.Fields = append(s.Fields, f)
	}
	s.Total = GridSize(s.Fields)
	for _, jp := range in.Points {
		if jp.Index < 0 || jp.Index >= s.Total {
			return nil, fmt.Errorf("point %d: outside the grid of %d points", jp.Index, s.Total)
		}
		p := Point{Index: jp.Index, Values: ValuesAt(s.Fields, jp.Index), Error: jp.Error}
		for i, f := range s.Fields {
			raw, ok := jp.Values[f.Path]
			if v, err := valueFromJSON(raw); !ok || err != nil || v.Text != p.Values[i].Text {
				return nil, fmt.Errorf("point %d: its values are not the grid's", jp.Index)
			}
		}
		if len(jp.Results) > 0 {
			var buf bytes.Buffer
			if err := json.Compact(&buf, jp.Results); err != nil {
				return nil, err
			}
			p.Results = buf.Bytes()
		}
		for _, kg := range jp.KeyGroups {
			p.KeyGroups = append(p.KeyGroups, kg.Groups)
		}
		s.Points = append(s.Points, p)
	}
	return s, nil
}

func valueFromJSON(raw json.RawMessage) (Value, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return Value{}, err
	}
	switch v := v.(type) {
	case json.Number:
		return valueOf(v.String()), nil
	case bool:
		return valueOf(strconv.FormatBool(v)), nil
	case string:
		return valueOf(v), nil
	}
	return Value{}, fmt.Errorf("%s: want a number, a boolean or a string", raw)
}

// Merge joins shards of one sweep into the sweep they are parts of: the
// same scenario and fields, every shard 0..N-1 of the same N once.
func Merge(shards []*Sweep) (*Sweep, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("no shards to merge")
	}
	first := shards[0]
	n := first.Shard.N
	if n == 0 {
		n = 1
	}
	seen := make([]bool, n)
	byIndex := make([]*Point, first.Total)
	for i, s := range shards {
		if s.Scenario != first.Scenario || !sameFields(s.Fields, first.Fields) {
			return nil, fmt.Errorf("shard %d is of another sweep (scenario %s, vary %s), not of %s, vary %s",
				i+1, s.Scenario, fieldList(s.Fields), first.Scenario, fieldList(first.Fields))
		}
		if strings.Join(s.KeyGlobs, ",") != strings.Join(first.KeyGlobs, ",") {
			return nil, fmt.Errorf("shard %d was run with other key globs in its goal (%v, not %v)", i+1, s.KeyGlobs, first.KeyGlobs)
		}
		if !slices.Equal(s.Expect, first.Expect) {
			return nil, fmt.Errorf("shard %d was run with another expect section than shard %d/%d", i+1, first.Shard.K, n)
		}
		sn := s.Shard.N
		if sn == 0 {
			sn = 1
		}
		if sn != n {
			return nil, fmt.Errorf("shard %d is one of %d, another one of %d", i+1, sn, n)
		}
		if seen[s.Shard.K] {
			return nil, fmt.Errorf("shard %d/%d is given twice", s.Shard.K, n)
		}
		seen[s.Shard.K] = true
		for j := range s.Points {
			p := &s.Points[j]
			if !s.Shard.Has(p.Index) || byIndex[p.Index] != nil {
				return nil, fmt.Errorf("shard %d/%d has point %d, which is not its", s.Shard.K, n, p.Index)
			}
			byIndex[p.Index] = p
		}
	}
	var missing []string
	for k, ok := range seen {
		if !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("shards %s are missing", strings.Join(missing, ", "))
	}
	out := &Sweep{Scenario: first.Scenario, Fields: first.Fields, Total: first.Total, KeyGlobs: first.KeyGlobs, CostUnit: first.CostUnit,
		Expect: first.Expect}
	for i, p := range byIndex {
		if p == nil {
			return nil, fmt.Errorf("point %d is in no shard", i)
		}
		out.Points = append(out.Points, *p)
	}
	return out, nil
}

func sameFields(a, b []Field) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Path != b[i].Path || len(a[i].Values) != len(b[i].Values) {
			return false
		}
		for j := range a[i].Values {
			if a[i].Values[j].Text != b[i].Values[j].Text {
				return false
			}
		}
	}
	return true
}

func fieldList(fs []Field) string {
	var ps []string
	for _, f := range fs {
		ps = append(ps, f.Path)
	}
	return strings.Join(ps, ", ")
}

// columns of the table and the CSV beyond the varied fields.
type column struct {
	head, csv string
	cell      func(r *sim.Result) string // the table's
	csvCell   func(r *sim.Result) string
}

func int64s(n int64) string { return strconv.FormatInt(n, 10) }

func baseColumns() []column {
	return []column{
		{"accepted", "accepted", func(r *sim.Result) string { return int64s(r.Accepted) }, nil},
		{"delayed", "delayed", func(r *sim.Result) string { return int64s(r.Delayed) }, nil},
		{"rejected", "rejected", func(r *sim.Result) string { return int64s(r.Rejected) }, nil},
		{"reject %", "reject_pct", func(r *sim.Result) string {
			v, _ := pct(r.Rejected, r.Attempts)
			return strconv.FormatFloat(v, 'f', 1, 64)
		},
			func(r *sim.Result) string {
				v, _ := pct(r.Rejected, r.Attempts)
				return strconv.FormatFloat(v, 'f', -1, 64)
			}},
		{"p99 delay", "p99_delay_ns", func(r *sim.Result) string { return output.FormatDuration(time.Duration(r.DelayNs.P99)) },
			func(r *sim.Result) string { return int64s(r.DelayNs.P99) }},
		{"key peak", "key_peak_ratio", func(r *sim.Result) string {
			if len(r.KeyPeaks) == 0 {
				return "-"
			}
			k := r.KeyPeaks[0]
			return int64s(k.Count) + " (" + output.FormatRatio(float64(k.Ratio)) + ")"
		}, func(r *sim.Result) string {
			if len(r.KeyPeaks) == 0 {
				return ""
			}
			return r.KeyPeaks[0].Ratio.Text()
		}},
	}
}

func clusterColumns() []column {
	return []column{
		{"extra", "extra_admitted", func(r *sim.Result) string {
			if r.Cluster == nil {
				return "-"
			}
			return fmt.Sprintf("%+d (%+.1f%%)", r.Cluster.ExtraAdmitted, 100*float64(r.Cluster.ExtraRatio))
		}, func(r *sim.Result) string {
			if r.Cluster == nil {
				return ""
			}
			return int64s(r.Cluster.ExtraAdmitted)
		}},
		{"store ops/req", "store_ops_per_attempt", func(r *sim.Result) string {
			if r.Cluster == nil {
				return "-"
			}
			return strconv.FormatFloat(float64(r.Cluster.StoreOpsPerAttempt), 'f', 2, 64)
		}, func(r *sim.Result) string {
			if r.Cluster == nil {
				return ""
			}
			return r.Cluster.StoreOpsPerAttempt.Text()
		}},
		{"p99 added", "p99_added_ns", func(r *sim.Result) string {
			if r.Cluster == nil {
				return "-"
			}
			return output.FormatDuration(time.Duration(r.Cluster.AddedLatencyNs.P99))
		}, func(r *sim.Result) string {
			if r.Cluster == nil {
				return ""
			}
			return int64s(r.Cluster.AddedLatencyNs.P99)
		}},
	}
}

func backendColumns() []column {
	return []column{
		{"goodput", "goodput", func(r *sim.Result) string {
			if r.Backend == nil {
				return "-"
			}
			return int64s(r.Backend.Goodput)
		}, nil},
		{"shed", "shed", func(r *sim.Result) string {
			if r.Backend == nil {
				return "-"
			}
			return int64s(r.Backend.Shed)
		}, nil},
		{"p99 response", "p99_response_ns", func(r *sim.Result) string {
			if r.Backend == nil {
				return "-"
			}
			return output.FormatDuration(time.Duration(r.Backend.ResponseNs.P99))
		}, func(r *sim.Result) string {
			if r.Backend == nil {
				return ""
			}
			return int64s(r.Backend.ResponseNs.P99)
		}},
	}
}

// rows is the sweep as table rows: per point, its results decoded.
type decoded struct {
	rows    [][]sim.Result
	columns []column
}

func decode(s *Sweep) (*decoded, error) {
	d := &decoded{rows: make([][]sim.Result, len(s.Points))}
	cl, be := false, false
	for i := range s.Points {
		rs, err := rowsOf(&s.Points[i])
		if err != nil {
			return nil, fmt.Errorf("point %d: %v", s.Points[i].Index, err)
		}
		d.rows[i] = rs
		for _, r := range rs {
			cl = cl || r.Cluster != nil
			be = be || r.Backend != nil
		}
	}
	d.columns = baseColumns()
	if cl {
		d.columns = append(d.columns, clusterColumns()...)
	}
	if be {
		d.columns = append(d.columns, backendColumns()...)
	}
	return d, nil
}

// unit is what column c counts, for the second line of its heading
// (docs/metrics.md): requests, attempts (rejections, when clients
// retried) or the cost unit of the peaks; "" for a duration, a share or
// a ratio.
func (d *decoded) unit(s *Sweep, c column) string {
	switch c.head {
	case "accepted", "delayed", "extra", "goodput", "shed":
		return "requests"
	case "rejected":
		for _, rs := range d.rows {
			for _, r := range rs {
				if r.Attempts > r.Offered {
					return "attempts"
				}
			}
		}
		return "requests"
	case "key peak":
		if s.CostUnit != "" {
			return s.CostUnit
		}
		return "requests"
	}
	return ""
}

// heading is the line above the table.
func heading(s *Sweep) string {
	var dims []string
	for _, f := range s.Fields {
		dims = append(dims, fmt.Sprintf("%s (%d)", f.Path, len(f.Values)))
	}
	h := fmt.Sprintf("%s: sweep of %s, %d points", s.Scenario, strings.Join(dims, " × "), s.Total)
	if s.Shard.N > 0 {
		h += fmt.Sprintf(", shard %s (%d points)", s.Shard, len(s.Points))
	}
	return h
}

// errorLines name each point in error and why.
func errorLines(s *Sweep) []string {
	var out []string
	for _, p := range s.Points {
		if p.Error != "" {
			out = append(out, fmt.Sprintf("point %d (%s): %s", p.Index, Describe(s.Fields, p.Values), p.Error))
		}
	}
	return out
}

// Table writes the sweep for a terminal: a heading, one row per point and
// label (the varied values, then what compare's table shows: accepted,
// delayed, rejected, reject %, p99 delay, the key peak in the first report
// window with its ratio, and the cluster and backend columns when rows
// have them), the points in error, and the goal's answer.
func Table(w io.Writer, s *Sweep, g *Goal, bests []Best) error {
	return table(w, s, g, bests, false)
}

// Markdown writes the same as Table, as Markdown.
func Markdown(w io.Writer, s *Sweep, g *Goal, bests []Best) error {
	return table(w, s, g, bests, true)
}

func table(w io.Writer, s *Sweep, g *Goal, bests []Best, markdown bool) error {
	d, err := decode(s)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.WriteString(heading(s))
	buf.WriteString("\n")
	if markdown {
		buf.WriteString("\n")
		if err := d.render(&buf, s, g, d.columns, true); err != nil {
			return err
		}
	} else if err := d.fit(&buf, s, g); err != nil {
		return err
	}
	if errs := errorLines(s); len(errs) > 0 {
		buf.WriteString("\nPoints in error:\n")
		for _, e := range errs {
			if markdown {
				buf.WriteString("- " + e + "\n")
			} else {
				buf.WriteString("  " + e + "\n")
			}
		}
	}
	if g != nil {
		lines := g.Lines(s.Fields, bests)
		buf.WriteString("\n" + lines[0] + "\n")
		for _, l := range lines[1:] {
			if markdown {
				buf.WriteString("- " + strings.Join(strings.Fields(l), " ") + "\n")
			} else {
				buf.WriteString(l + "\n")
			}
		}
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// render writes the table of the columns cols (and the goal's).
func (d *decoded) render(buf *bytes.Buffer, s *Sweep, g *Goal, cols []column, markdown bool) error {
	var header []string
	for _, f := range s.Fields {
		header = append(header, f.Path)
	}
	header = append(header, "algorithm")
	for _, c := range cols {
		h := c.head
		if u := d.unit(s, c); u != "" {
			if markdown {
				h += " (" + u + ")"
			} else {
				h += "\n" + u
			}
		}
		header = append(header, h)
	}
	extra := goalColumns(g)
	for _, t := range extra {
		header = append(header, t.Text)
	}
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignRight
	}
	align[len(s.Fields)] = tw.AlignLeft
	var rend tw.Renderer = renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})
	if markdown {
		rend = renderer.NewMarkdown()
	}
	t := tablewriter.NewTable(buf,
		tablewriter.WithRenderer(rend),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
	t.Header(toAny(header)...)
	for i := range s.Points {
		p := &s.Points[i]
		var vals []string
		for _, v := range p.Values {
			vals = append(vals, v.Text)
		}
		if p.Error != "" {
			row := append(append([]string{}, vals...), "error (below)")
			for range len(cols) + len(extra) {
				row = append(row, "-")
			}
			if err := t.Append(toAny(row)...); err != nil {
				return err
			}
			continue
		}
		for ri, r := range d.rows[i] {
			row := append(append([]string{}, vals...), r.Label)
			for _, c := range cols {
				row = append(row, c.cell(&r))
			}
			for _, t := range extra {
				if v, ok := t.value(p, ri, &r); ok {
					row = append(row, formatFigure(v, t.isDuration(s.Fields)))
				} else {
					row = append(row, "-")
				}
			}
			if err := t.Append(toAny(row)...); err != nil {
				return err
			}
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	return nil
}

// fit writes the table that fits in output.TableWidth, as compare's
// does: it leaves out a column at a time, first those whose every cell is
// 0 or "-", then the store's figures, shed, delayed and the p99 delay,
// and says under the table which it left out (the CSV and JSON have
// them). The varied fields, the algorithm, accepted, rejected, the key
// peak, the goal's columns and the backend's goodput and p99 response
// stay.
func (d *decoded) fit(buf *bytes.Buffer, s *Sweep, g *Goal) error {
	rank := map[string]int{"store ops/req": 6, "p99 added": 6, "delayed": 5, "shed": 4, "p99 delay": 3, "reject %": 2, "extra": 1}
	score := func(c column) int {
		r := rank[c.head]
		if r > 0 && d.empty(c) {
			r += 100
		}
		return r
	}
	cols := slices.Clone(d.columns)
	var left []string
	for {
		var b bytes.Buffer
		if err := d.render(&b, s, g, cols, false); err != nil {
			return err
		}
		drop := -1
		if widest(b.String()) > output.TableWidth {
			for i, c := range cols {
				if score(c) > 0 && (drop < 0 || score(c) >= score(cols[drop])) {
					drop = i
				}
			}
		}
		if drop < 0 {
			buf.Write(b.Bytes())
			break
		}
		cols = slices.Delete(cols, drop, drop+1)
	}
	for _, c := range d.columns {
		if !slices.ContainsFunc(cols, func(k column) bool { return k.head == c.head }) {
			left = append(left, c.head)
		}
	}
	if len(left) > 0 {
		buf.WriteString("Left out to fit " + strconv.Itoa(output.TableWidth) + " columns (in --format csv and json): " + strings.Join(left, ", ") + ".\n")
	}
	return nil
}

// empty reports whether every cell of column c is 0 or "-".
func (d *decoded) empty(c column) bool {
	for _, rs := range d.rows {
		for i := range rs {
			if v := c.cell(&rs[i]); v != "0" && v != "-" {
				return false
			}
		}
	}
	return true
}

// widest is the width of the widest line of text, in characters.
func widest(text string) int {
	w := 0
	for _, line := range strings.Split(text, "\n") {
		w = max(w, utf8.RuneCountInString(line))
	}
	return w
}

// goalColumns are the goal's metrics that the table does not show
// otherwise (a key filter, a backend figure), each a column after the
// others.
func goalColumns(g *Goal) []Term {
	if g == nil {
		return nil
	}
	shown := map[string]bool{"accepted": true, "delayed": true, "rejected": true, "reject_pct": true, "p99_delay": true}
	var out []Term
	for _, t := range append([]Term{g.Objective}, termsOf(g.Constraints)...) {
		if t.field >= 0 || shown[t.Text] {
			continue
		}
		shown[t.Text] = true
		out = append(out, t)
	}
	return out
}

func termsOf(cs []Constraint) []Term {
	out := make([]Term, len(cs))
	for i, c := range cs {
		out[i] = c.Term
	}
	return out
}

func toAny(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// CSV writes one record per point and label: index, the varied values,
// label, algorithm, offered, attempts and the table's figures in plain
// units (ns, ratios as in the JSON), then the goal's own metrics as the
// table adds them (goalColumns; none without a goal, g nil), then error,
// set for a point in error (whose other figures are empty).
func CSV(w io.Writer, s *Sweep, g *Goal) error {
	d, err := decode(s)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	header := []string{"index"}
	for _, f := range s.Fields {
		header = append(header, f.Path)
	}
	header = append(header, "label", "algorithm", "offered", "attempts")
	for _, c := range d.columns {
		header = append(header, c.csv)
	}
	extra := goalColumns(g)
	for _, t := range extra {
		header = append(header, t.Text)
	}
	header = append(header, "error")
	if err := cw.Write(header); err != nil {
		return err
	}
	for i := range s.Points {
		p := &s.Points[i]
		lead := []string{strconv.Itoa(p.Index)}
		for _, v := range p.Values {
			lead = append(lead, v.Text)
		}
		if p.Error != "" {
			rec := append(lead, make([]string, 4+len(d.columns)+len(extra))...)
			if err := cw.Write(append(rec, p.Error)); err != nil {
				return err
			}
			continue
		}
		for ri, r := range d.rows[i] {
			rec := append(append([]string{}, lead...), r.Label, r.Algorithm, int64s(r.Offered), int64s(r.Attempts))
			for _, c := range d.columns {
				f := c.csvCell
				if f == nil {
					f = c.cell
				}
				v := f(&r)
				if v == "-" {
					v = ""
				}
				rec = append(rec, v)
			}
			for _, t := range extra {
				v := "" // no figure (no key matches the term's filter)
				if f, ok := t.value(p, ri, &r); ok {
					v = strconv.FormatFloat(f, 'f', -1, 64)
				}
				rec = append(rec, v)
			}
			if err := cw.Write(append(rec, "")); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
