package output

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/ratesim/ratesim/sim"
)

// Page is one run written as a self-contained HTML page (--report,
// docs/charts.md#the-html-report): what was run and everything the run
// has to show, readable offline.
type Page struct {
	// Title is the page's title and first heading.
	Title string
	// Command is the command line that made the page.
	Command string
	// Scenario is the scenario's text, as YAML.
	Scenario string
	// Parts are the page's runs (a lesson may have two), in order.
	Parts []PagePart
}

// PagePart is one run on a page.
type PagePart struct {
	// Heading names the run; "" for the only run of a page.
	Heading string
	// Text is shown first, as preformatted text: a lesson's words, a
	// sweep's table.
	Text string
	// Report, when set, is shown as its heading lines, the table of every
	// column with what each counts, the definitions, the findings and the
	// lists that follow them on a terminal.
	Report *sim.Report
	// Charts are drawn inline, as SVG, in order.
	Charts []Chart
}

// HTML writes the page: one file with no script and no reference to
// anything outside it (its policy forbids any request; fonts are the
// reader's own Liberation Sans, or a sans-serif). Charts are drawn as
// inline SVG, every one that Charts returned, the first one first.
func HTML(w io.Writer, p Page) error {
	data := pageData{Title: p.Title, Command: p.Command, Scenario: p.Scenario}
	for i, part := range p.Parts {
		pd := partData{Heading: part.Heading, Text: part.Text}
		if r := part.Report; r != nil {
			pd.Lines = append([]string{heading(r)}, clusterLine(r))
			pd.Lines = append(pd.Lines, TraceLines(r)...)
			pd.Table = htmlTable(r)
			pd.Definitions = Definitions(r, nil)
			pd.Findings = Findings(r)
			for _, s := range []struct {
				title string
				lines []string
			}{
				{"Who was limited", LimitedKeys(r)},
				{"Which limit fired", FiredLines(r)},
				{"Busiest key of each limit", LimitPeakLines(r)},
				{"nginx's zone", ZoneLines(r)},
				{"Replayed on Redis", RedisLines(r)},
			} {
				if len(s.lines) > 0 {
					pd.Lists = append(pd.Lists, listData{Title: s.title, Lines: s.lines})
				}
			}
		}
		for _, c := range part.Charts {
			svg, err := inlineSVG(c)
			if err != nil {
				return err
			}
			pd.Charts = append(pd.Charts, chartData{
				ID:    fmt.Sprintf("chart-%d-%s", i+1, c.Name),
				Name:  c.Name,
				Title: c.Title,
				SVG:   svg,
			})
		}
		data.Parts = append(data.Parts, pd)
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, data); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// inlineSVG renders a chart as SVG for a page: the svg element alone,
// without the XML prolog a file has.
func inlineSVG(c Chart) (template.HTML, error) {
	var buf bytes.Buffer
	if err := c.Render(&buf, "svg"); err != nil {
		return "", err
	}
	s := buf.String()
	at := strings.Index(s, "<svg")
	if at < 0 {
		return "", fmt.Errorf("output: the %s chart drew no svg element", c.Name)
	}
	// the svg is gonum/plot's, every text in it escaped by its writer
	return template.HTML(s[at:]), nil //nolint:gosec
}

// htmlTable is the table of every column of r but the hidden ones (pick).
func htmlTable(r *sim.Report) tableData {
	cols := pick(columns(r, false), nil)
	var t tableData
	for _, c := range cols {
		t.Head = append(t.Head, headData{Head: c.head, Unit: c.unit, Left: c.left})
	}
	for i := range r.Results {
		row := make([]cellData, len(cols))
		for j, c := range cols {
			row[j] = cellData{Text: c.cell(&r.Results[i]), Left: c.left}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

type (
	pageData struct {
		Title, Command, Scenario string
		Parts                    []partData
	}
	partData struct {
		Heading, Text string
		Lines         []string
		Table         tableData
		Definitions   []string
		Findings      []string
		Lists         []listData
		Charts        []chartData
	}
	tableData struct {
		Head []headData
		Rows [][]cellData
	}
	headData struct {
		Head, Unit string
		Left       bool
	}
	cellData struct {
		Text string
		Left bool
	}
	listData struct {
		Title string
		Lines []string
	}
	chartData struct {
		ID, Name, Title string
		SVG             template.HTML
	}
)

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="ratesim">
<title>{{.Title}}</title>
<style>
body { font-family: "Liberation Sans", Arial, sans-serif; margin: 1.5em auto; max-width: 1100px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; margin-top: 1.6em; } h3 { font-size: 1.05em; }
pre, code { font-family: "Liberation Mono", monospace; font-size: 0.85em; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.6em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right; white-space: nowrap; }
th { background: #f0f0f0; vertical-align: bottom; }
th .unit { display: block; font-weight: normal; color: #666; }
.left { text-align: left; }
.scroll { overflow-x: auto; }
.definitions { color: #555; font-size: 0.9em; }
figure { margin: 1.2em 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { color: #666; font-size: 0.85em; margin-bottom: 0.3em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<h2>Command</h2>
<pre id="command">{{.Command}}</pre>
{{- if .Scenario}}
<h2>Scenario</h2>
<pre id="scenario">{{.Scenario}}</pre>
{{- end}}
{{- range $i, $p := .Parts}}
<section class="run">
{{- if $p.Heading}}
<h2>{{$p.Heading}}</h2>
{{- else}}
<h2>Results</h2>
{{- end}}
{{- if $p.Text}}
<pre class="text">{{$p.Text}}</pre>
{{- end}}
{{- range $p.Lines}}{{if .}}
<p class="line">{{.}}</p>{{end}}{{end}}
{{- if $p.Table.Rows}}
<div class="scroll">
<table class="results">
<thead><tr>{{range $p.Table.Head}}<th{{if .Left}} class="left"{{end}}>{{.Head}}{{if .Unit}}<span class="unit">{{.Unit}}</span>{{end}}</th>{{end}}</tr></thead>
<tbody>
{{- range $p.Table.Rows}}
<tr>{{range .}}<td{{if .Left}} class="left"{{end}}>{{.Text}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
</div>
{{- end}}
{{- if $p.Definitions}}
<div class="definitions">{{range $p.Definitions}}
<p>{{.}}</p>{{end}}
</div>
{{- end}}
{{- if $p.Findings}}
<h3>Findings</h3>
<ul class="findings">{{range $p.Findings}}
<li>{{.}}</li>{{end}}
</ul>
{{- end}}
{{- range $p.Lists}}
<h3>{{.Title}}</h3>
<ul>{{range .Lines}}
<li>{{.}}</li>{{end}}
</ul>
{{- end}}
{{- if $p.Charts}}
<h3>Charts</h3>
{{- range $p.Charts}}
<figure class="chart" id="{{.ID}}" data-chart="{{.Name}}">
<figcaption>{{.Name}}</figcaption>
{{.SVG}}
</figure>
{{- end}}
{{- end}}
</section>
{{- end}}
</body>
</html>
`))
