package output

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/ratesim/ratesim/sim"
)

// Table writes the comparison for a terminal: a heading line (scenario,
// policy, duration, seed), a plain ASCII table with one row per result, and
// the Findings, one sentence a line, after a blank line.
//
// Columns: algorithm (the label), accepted, delayed, rejected, accept %
// ((accepted+delayed)/attempts, one decimal), with a baseline row
// (docs/accuracy.md) "vs LABEL" (the first attempts decided differently from it,
// "451 (1.46%)"), "wrongly allowed" and "wrongly limited", then p99 delay,
// one "peak/V" column
// per report window with cells like "20 (2.0x)" (count and ratio), when
// clients retried the requests given up and "attempts/V", the busiest V of
// attempts (first tries and retries) reaching the limiter for the shortest
// report window V, where a retry herd shows, and bytes/key (the most bytes
// of state one key held).
//
// With several keys the limit is per key, so the peak columns are the key
// peaks: "key peak/V", the most one key released in any V, with its ratio
// to the limit ("20 (2.0x)"). What every key together released is a load
// on the backend that no limit applies to: "all keys/V" gives it as
// requests, without a ratio, for the first report window only (the
// policy's W by default), so that the table keeps one column per window
// and one more; every window's figure is in the JSON and CSV. The attempts
// column, every key together too, is then a count without a ratio.
// "Who was limited" follows: per algorithm, how many keys it rejected at
// all and its top keys by rejections, the algorithms with the same list on
// one line (LimitedKeys).
func Table(w io.Writer, r *sim.Report) error {
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
	if err := renderTable(&buf, r, renderer.NewBlueprint(tw.Rendition{
		Symbols: tw.NewSymbols(tw.StyleASCII),
	}), false); err != nil {
		return err
	}
	if f := Findings(r); len(f) > 0 {
		buf.WriteByte('\n')
		for _, s := range f {
			buf.WriteString(s)
			buf.WriteByte('\n')
		}
	}
	section(&buf, "Who was limited:", LimitedKeys(r), false)
	section(&buf, "nginx's zone:", ZoneLines(r), false)
	section(&buf, "Replayed on Redis:", RedisLines(r), false)
	_, err := w.Write(buf.Bytes())
	return err
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
		list := limitedList(res, r.Keys)
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
func limitedList(res *sim.Result, keys int64) string {
	if res.Keys.Limited == 0 {
		return "no key"
	}
	var b strings.Builder
	b.WriteString(strconv.FormatInt(res.Keys.Limited, 10) + " of " + strconv.FormatInt(keys, 10) + " keys")
	for j, k := range res.Keys.Top {
		if j == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(oneLine(k.Key) + " (" + plural(k.Offered, "request") + ", " + strconv.FormatInt(k.Rejected, 10) + " rejected)")
	}
	if int64(len(res.Keys.Top)) < res.Keys.Limited {
		b.WriteString(", ...")
	}
	return b.String()
}

// Markdown writes the comparison as GitHub-flavoured Markdown: the heading
// line, the table of Table as a Markdown table, and the Findings as a bullet
// list.
func Markdown(w io.Writer, r *sim.Report) error {
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
	if err := renderTable(&buf, r, renderer.NewMarkdown(), true); err != nil {
		return err
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
	section(&buf, "nginx's zone:", ZoneLines(r), true)
	section(&buf, "Replayed on Redis:", RedisLines(r), true)
	_, err := w.Write(buf.Bytes())
	return err
}

// renderTable writes the results table with the given tablewriter renderer.
// Numbers are right-aligned; header cells are kept as written (tablewriter
// upper-cases them by default). Widths ignore the locale's East Asian
// setting, which tablewriter otherwise detects from LANG and LC_ALL, so that
// a label with an ambiguous-width character gives the same bytes in every
// locale; that setting is a process-wide one of tablewriter's.
func renderTable(buf *bytes.Buffer, r *sim.Report, rend tw.Renderer, markdown bool) error {
	ws := windows(r)
	perKey := r.Keys > 1
	header := []string{"algorithm"}
	cl := clustered(r)
	if cl {
		header = append(header, clusterHeader...)
	}
	header = append(header, "accepted", "delayed", "rejected", "accept %")
	vs := baselineLabel(r)
	if vs != "" {
		header = append(header, baselineHeader(vs)...)
	}
	chk := checkField(r)
	if chk != "" {
		header = append(header, checkHeader(chk))
	}
	header = append(header, "p99 delay")
	for _, v := range ws {
		if perKey {
			header = append(header, "key peak/"+FormatDuration(time.Duration(v)))
		} else {
			header = append(header, "peak/"+FormatDuration(time.Duration(v)))
		}
	}
	if perKey && len(ws) > 0 {
		header = append(header, "all keys/"+FormatDuration(time.Duration(ws[0])))
	}
	herd := retried(r)
	if herd {
		// the busiest shortest window of attempts, first tries and retries
		header = append(header, "gave up", "attempts/"+FormatDuration(time.Duration(ws[len(ws)-1])))
	}
	if cl {
		header = append(header, clusterTailHeader...)
	}
	be := withBackend(r)
	if be {
		header = append(header, backendHeader...)
	}
	header = append(header, "bytes/key")

	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignRight
	}
	align[0] = tw.AlignLeft
	if cl {
		align[1] = tw.AlignLeft // the mode
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
		res := &r.Results[i]
		label := res.Label
		if markdown {
			label = markdownCell(label)
		} else {
			label = oneLine(label)
		}
		row := []string{label}
		if cl {
			row = append(row, modeCell(res.Cluster))
		}
		row = append(row,
			strconv.FormatInt(res.Accepted, 10),
			strconv.FormatInt(res.Delayed, 10),
			strconv.FormatInt(res.Rejected, 10),
			formatPercent(res.Accepted+res.Delayed, res.Attempts),
		)
		if vs != "" {
			row = append(row, baselineCells(res, vs)...)
		}
		if chk != "" {
			row = append(row, checkCell(res.Check))
		}
		row = append(row, FormatDuration(time.Duration(res.DelayNs.P99)))
		for _, v := range ws {
			cell := "-"
			if perKey {
				if p, ok := findKeyPeak(res.KeyPeaks, v); ok {
					cell = countRatio(p.Count, p.Ratio)
				}
			} else if p, ok := peakFor(res, v); ok {
				cell = countRatio(p.Count, p.Ratio)
			}
			row = append(row, cell)
		}
		if perKey && len(ws) > 0 {
			cell := "-"
			if p, ok := peakFor(res, ws[0]); ok {
				cell = strconv.FormatInt(p.Count, 10)
			}
			row = append(row, cell)
		}
		if herd {
			cell := "-"
			if p, ok := findPeak(res.AttemptPeaks, ws[len(ws)-1]); ok {
				cell = countRatio(p.Count, p.Ratio)
				if perKey {
					cell = strconv.FormatInt(p.Count, 10)
				}
			}
			row = append(row, strconv.FormatInt(res.GaveUp, 10), cell)
		}
		if cl {
			row = append(row, clusterCells(res.Cluster)...)
		}
		if be {
			row = append(row, backendCells(res.Backend)...)
		}
		row = append(row, strconv.FormatInt(res.Memory.BytesPerKeyMax, 10))
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
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
