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
// ((accepted+delayed)/attempts, one decimal), p99 delay, one "peak/V" column
// per report window with cells like "20 (2.0x)" (count and ratio), and
// bytes/key (the most bytes of state one key held).
func Table(w io.Writer, r *sim.Report) error {
	if r == nil {
		return errNilReport
	}
	var buf bytes.Buffer
	buf.WriteString(heading(r))
	buf.WriteByte('\n')
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
	_, err := w.Write(buf.Bytes())
	return err
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
	header := []string{"algorithm", "accepted", "delayed", "rejected", "accept %", "p99 delay"}
	for _, v := range ws {
		header = append(header, "peak/"+FormatDuration(time.Duration(v)))
	}
	header = append(header, "bytes/key")

	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignRight
	}
	align[0] = tw.AlignLeft

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
		row := []string{
			label,
			strconv.FormatInt(res.Accepted, 10),
			strconv.FormatInt(res.Delayed, 10),
			strconv.FormatInt(res.Rejected, 10),
			formatPercent(res.Accepted+res.Delayed, res.Attempts),
			FormatDuration(time.Duration(res.DelayNs.P99)),
		}
		for _, v := range ws {
			cell := "-"
			if p, ok := peakFor(res, v); ok {
				cell = strconv.FormatInt(p.Count, 10) + " (" + FormatRatio(float64(p.Ratio)) + ")"
			}
			row = append(row, cell)
		}
		row = append(row, strconv.FormatInt(res.Memory.BytesPerKeyMax, 10))
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
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
