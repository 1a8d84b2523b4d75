package output

import (
	"bytes"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/ratesim/ratesim/sim"
)

// Table writes the comparison for a terminal: a heading line (scenario,
// policy, duration, seed), a plain ASCII table with one row per result,
// the definitions its figures need (Definitions), and the Findings, one
// sentence a line, after a blank line.
//
// Each heading says on a second line what its column counts: requests,
// attempts (first tries and retries) or the traffic's cost unit
// (sim.Report.CostUnit). The columns (columns) are: algorithm (the
// label), accepted, delayed, rejected, accept % ((accepted+delayed)/
// attempts, one decimal), with a baseline row (docs/accuracy.md) "vs
// LABEL" (the first attempts decided differently from it, "451 (1.46%)"),
// "wrongly allowed" and "wrongly limited", then p99 delay, a "peak/V"
// column for each policy's own window V with cells like "20 (2.0x)" (count
// and ratio) and an "obs. peak/V" column, a count alone, for each other
// window report.windows named (shownWindows, docs/metrics.md),
// when clients retried the requests given up and "attempts/V", the busiest
// V of attempts reaching the limiter for the shortest report window V,
// where a retry herd shows, the cluster's and the backend's columns, and
// bytes/key (the most bytes of state one key held).
//
// With several keys the limit is per key, so the peak columns are the key
// peaks: "key peak/V", the most one key released in any V, with its ratio
// to the limit ("20 (2.0x)"). What every key together released is a load
// on the backend that no limit applies to: "all keys/V" gives it without a
// ratio, for the first policy window only (the policy's W); the
// attempts column, every key together too, is then a count without a
// ratio. "Who was limited" follows: per algorithm, how many keys it
// rejected at all and its top keys by rejections, the algorithms with the
// same list on one line (LimitedKeys).
//
// The table fits in TableWidth columns: it leaves out its least telling
// columns until it does, and says which (fitTable); TableOf chooses them.
// Markdown and HTML have every column but the hidden ones (a report window
// neither a policy's nor named, the default W/10); JSON and CSV every one.
func Table(w io.Writer, r *sim.Report) error { return TableOf(w, r, nil) }

// TableOf writes Table with the columns names asks for (ParseColumns), or,
// for nil names, those that fit in TableWidth, saying under the table
// which were left out.
func TableOf(w io.Writer, r *sim.Report, names []string) error {
	if r == nil {
		return errNilReport
	}
	var buf bytes.Buffer
	buf.WriteString(heading(r))
	buf.WriteByte('\n')
	if s := clusterLine(r); s != "" {
		buf.WriteString(s)
		buf.WriteByte('\n')
	}
	for _, s := range TraceLines(r) {
		buf.WriteString(s)
		buf.WriteByte('\n')
	}
	rend := func() tw.Renderer {
		return renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})
	}
	cols := pick(columns(r, false), names)
	var left []string
	if names == nil {
		var err error
		if left, err = fitTable(&buf, r, rend); err != nil {
			return err
		}
	} else if err := renderTable(&buf, r, cols, rend(), false); err != nil {
		return err
	}
	for _, s := range Definitions(r, shown(cols, left)) {
		buf.WriteString(s)
		buf.WriteByte('\n')
	}
	if s := leftOut(left); s != "" {
		buf.WriteString(s)
		buf.WriteByte('\n')
	}
	if f := Findings(r); len(f) > 0 {
		buf.WriteByte('\n')
		for _, s := range f {
			buf.WriteString(s)
			buf.WriteByte('\n')
		}
	}
	section(&buf, "Who was limited:", LimitedKeys(r), false)
	section(&buf, "Which limit fired:", FiredLines(r), false)
	section(&buf, "Busiest key of each limit:", LimitPeakLines(r), false)
	section(&buf, "nginx's zone:", ZoneLines(r), false)
	section(&buf, "Replayed on Redis:", RedisLines(r), false)
	_, err := w.Write(buf.Bytes())
	return err
}

// shown are the names of the columns of cols not left out.
func shown(cols []column, left []string) []string {
	var out []string
	for _, c := range cols {
		if !slices.Contains(left, c.name) {
			out = append(out, c.name)
		}
	}
	return out
}

// leftOut says which columns the default table left out to fit.
func leftOut(left []string) string {
	if len(left) == 0 {
		return ""
	}
	return "More columns with --columns all: " + strings.Join(left, ", ") + "."
}

// Definitions are the sentences under the table that say what its less
// obvious figures count, for the columns named (every column for nil):
// only those that the run's figures make matter (docs/metrics.md).
func Definitions(r *sim.Report, names []string) []string {
	has := func(name string) bool { return names == nil || slices.Contains(names, name) }
	var delayed bool
	for i := range r.Results {
		delayed = delayed || r.Results[i].Delayed > 0
	}
	var out []string
	if has("accept%") && delayed {
		out = append(out, "accept % counts the delayed requests as accepted: (accepted + delayed) / attempts.")
	}
	if has("rejected") && retried(r) {
		out = append(out, "rejected counts attempts: a request refused, retried and refused again counts twice.")
	}
	if has("p99-delay") && delayed {
		out = append(out, "p99 delay is over every admitted request, 0 for those not delayed; the findings give the longest.")
	}
	if r.CostUnit != "" {
		out = append(out, "Peaks and limits count "+r.CostUnit+" (each request's cost); accepted, delayed and rejected count requests.")
	}
	if s := observationDefinition(r, names); s != "" {
		out = append(out, s)
	}
	return out
}

// observationDefinition says what the observation windows of the columns
// named count (nil names: those a table shows by default), or "".
func observationDefinition(r *sim.Report, names []string) string {
	shownWs, _ := shownWindows(r)
	var ws []string
	for _, v := range windows(r) {
		if limitWindow(r, v) {
			continue
		}
		w := FormatDuration(time.Duration(v))
		if names == nil && slices.Contains(shownWs, v) || slices.Contains(names, "peak/"+w) {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return ""
	}
	who := "the most released"
	if r.Keys > 1 {
		who = "the most one key released"
	}
	return "obs. peak: an observation window, " + who + " in any " + Join(ws) + ", held to no limit."
}

// section writes a titled list of lines after the table, if there are
// any: indented for a terminal, a bullet list in Markdown (its runs of
// spaces, which align columns on a terminal, made one).
func section(buf *bytes.Buffer, title string, lines []string, markdown bool) {
	if len(lines) == 0 {
		return
	}
	buf.WriteString("\n" + title + "\n")
	if markdown {
		buf.WriteByte('\n')
	}
	for _, s := range lines {
		if markdown {
			buf.WriteString("- " + markdownText(strings.Join(strings.Fields(s), " ")))
		} else {
			buf.WriteString("  " + s)
		}
		buf.WriteByte('\n')
	}
}

// LimitedKeys returns, when the traffic has several keys, how many keys
// each result limited and its top keys by rejections: one line per list,
// the results whose lists are the same on one line, named together as the
// findings name them ("token-bucket, gcra and nginx  8 of 100 keys: ...").
func LimitedKeys(r *sim.Report) []string {
	if r.Keys <= 1 {
		return nil
	}
	limited := false
	for i := range r.Results {
		limited = limited || r.Results[i].Keys.Limited > 0
	}
	if !limited {
		return []string{"no algorithm rejected any of the " + strconv.FormatInt(r.Keys, 10) + " keys"}
	}
	// the results with the same list, in the order of their first
	type group struct {
		labels []string
		list   string
	}
	var groups []*group
	byList := map[string]*group{}
	for i := range r.Results {
		res := &r.Results[i]
		list := limitedList(res, r.Keys, retried(r))
		g, ok := byList[list]
		if !ok {
			g = &group{list: list}
			byList[list] = g
			groups = append(groups, g)
		}
		g.labels = append(g.labels, res.Label)
	}
	// the lists line up after the longest label of a result alone (every
	// group's, when none is alone); a longer group's names are followed by
	// two spaces
	width, alone := 0, false
	for _, g := range groups {
		if len(g.labels) == 1 {
			width, alone = max(width, len(g.labels[0])), true
		}
	}
	if !alone {
		for _, g := range groups {
			width = max(width, len(Join(g.labels)))
		}
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		name := Join(g.labels)
		out[i] = name + strings.Repeat(" ", max(0, width-len(name))) + "  " + g.list
	}
	return out
}

// limitedList writes how many of the report's keys res limited, and its top
// keys by rejections: "8 of 100 keys: user-0 (2341 requests, 2022
// rejected), ...", or "no key".
func limitedList(res *sim.Result, keys int64, retried bool) string {
	if res.Keys.Limited == 0 {
		return "no key"
	}
	rejected := " rejected"
	if retried {
		rejected = " attempts rejected" // retries refused again count again
	}
	var b strings.Builder
	b.WriteString(strconv.FormatInt(res.Keys.Limited, 10) + " of " + strconv.FormatInt(keys, 10) + " keys")
	for j, k := range res.Keys.Top {
		if j == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(oneLine(k.Key) + " (" + plural(k.Offered, "request") + ", " + strconv.FormatInt(k.Rejected, 10) + rejected + ")")
	}
	if int64(len(res.Keys.Top)) < res.Keys.Limited {
		b.WriteString(", ...")
	}
	return b.String()
}

// Markdown writes the comparison as GitHub-flavoured Markdown: the heading
// line, the table of Table as a Markdown table, and the Findings as a bullet
// list.
func Markdown(w io.Writer, r *sim.Report) error { return MarkdownOf(w, r, nil) }

// MarkdownOf writes Markdown with the columns names asks for
// (ParseColumns); nil: every column but the hidden ones (a page has no
// width to fit).
func MarkdownOf(w io.Writer, r *sim.Report, names []string) error {
	if r == nil {
		return errNilReport
	}
	var buf bytes.Buffer
	buf.WriteString(markdownText(heading(r)))
	buf.WriteString("\n\n")
	if s := clusterLine(r); s != "" {
		buf.WriteString(markdownText(s))
		buf.WriteString("\n\n")
	}
	if t := TraceLines(r); len(t) > 0 {
		for _, s := range t {
			buf.WriteString("- ")
			buf.WriteString(markdownText(strings.TrimSpace(s)))
			buf.WriteByte('\n')
		}
		buf.WriteByte('\n')
	}
	cols := pick(columns(r, true), names)
	if err := renderTable(&buf, r, cols, renderer.NewMarkdown(), true); err != nil {
		return err
	}
	if d := Definitions(r, shown(cols, nil)); len(d) > 0 {
		buf.WriteByte('\n')
		buf.WriteString(markdownText(strings.Join(d, " ")))
		buf.WriteByte('\n')
	}
	if f := Findings(r); len(f) > 0 {
		buf.WriteByte('\n')
		for _, s := range f {
			buf.WriteString("- ")
			buf.WriteString(markdownText(s))
			buf.WriteByte('\n')
		}
	}
	section(&buf, "Who was limited:", LimitedKeys(r), true)
	section(&buf, "Which limit fired:", FiredLines(r), true)
	section(&buf, "Busiest key of each limit:", LimitPeakLines(r), true)
	section(&buf, "nginx's zone:", ZoneLines(r), true)
	section(&buf, "Replayed on Redis:", RedisLines(r), true)
	_, err := w.Write(buf.Bytes())
	return err
}

// renderTable writes the results table of the columns cols with the given
// tablewriter renderer. Numbers are right-aligned; header cells are kept as
// written (tablewriter upper-cases them by default), with what a column
// counts on a second line (in Markdown, in parentheses). Widths ignore the
// locale's East Asian setting, which tablewriter otherwise detects from
// LANG and LC_ALL, so that a label with an ambiguous-width character gives
// the same bytes in every locale; that setting is a process-wide one of
// tablewriter's.
func renderTable(buf *bytes.Buffer, r *sim.Report, cols []column, rend tw.Renderer, markdown bool) error {
	header := make([]string, len(cols))
	align := make([]tw.Align, len(cols))
	for i, c := range cols {
		header[i] = c.head
		if c.unit != "" {
			if markdown {
				header[i] += " (" + c.unit + ")"
			} else {
				header[i] += "\n" + c.unit
			}
		}
		align[i] = tw.AlignRight
		if c.left {
			align[i] = tw.AlignLeft
		}
	}
	t := tablewriter.NewTable(buf,
		tablewriter.WithRenderer(rend),
		tablewriter.WithEastAsian(tw.Off),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
	t.Header(header)
	for i := range r.Results {
		row := make([]string, len(cols))
		for j, c := range cols {
			row[j] = c.cell(&r.Results[i])
		}
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}

// fitTable writes the table of r's columns that fits in TableWidth: it
// leaves out a column at a time until the table fits or only the columns
// never left out remain: first those whose every cell is 0 or "-", then
// those of the highest rank. It returns the names of the columns left
// out, in the table's order.
func fitTable(buf *bytes.Buffer, r *sim.Report, rend func() tw.Renderer) ([]string, error) {
	all := pick(columns(r, false), nil)
	cols := slices.Clone(all)
	rank := func(c column) int {
		if c.rank > 0 && empty(r, c) {
			return c.rank + 100
		}
		return c.rank
	}
	for {
		var b bytes.Buffer
		if err := renderTable(&b, r, cols, rend(), false); err != nil {
			return nil, err
		}
		drop := -1
		if widest(b.Bytes()) > TableWidth {
			for i, c := range cols {
				if c.rank > 0 && (drop < 0 || rank(c) >= rank(cols[drop])) {
					drop = i
				}
			}
		}
		if drop < 0 {
			buf.Write(b.Bytes())
			var left []string
			for _, c := range all {
				if !slices.ContainsFunc(cols, func(k column) bool { return k.name == c.name }) {
					left = append(left, c.name)
				}
			}
			return left, nil
		}
		cols = slices.Delete(cols, drop, drop+1)
	}
}

// empty reports whether every cell of the column is 0 or "-".
func empty(r *sim.Report, c column) bool {
	for i := range r.Results {
		if s := c.cell(&r.Results[i]); s != "0" && s != "-" {
			return false
		}
	}
	return true
}

// widest is the width of the widest line of text, in characters.
func widest(text []byte) int {
	w := 0
	for _, line := range strings.Split(string(text), "\n") {
		w = max(w, utf8.RuneCountInString(line))
	}
	return w
}

// countRatio writes a peak's cell: "20 (2.0x)".
func countRatio(count int64, ratio sim.Ratio) string {
	return strconv.FormatInt(count, 10) + " (" + FormatRatio(float64(ratio)) + ")"
}

// oneLine replaces the line breaks and tabs of a label with spaces, so that
// a row stays one line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\n', '\r', '\t':
			return ' '
		}
		return r
	}, s)
}

// markdownCell escapes a table cell: a pipe would end the cell.
func markdownCell(s string) string {
	return strings.ReplaceAll(markdownText(s), "|", `\|`)
}

// markdownText escapes the characters that would turn plain text into
// Markdown emphasis, code, links or HTML, and keeps it on one line.
var markdownEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", `\<`, ">", `\>`,
)

func markdownText(s string) string {
	return markdownEscaper.Replace(oneLine(s))
}
