package expect

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Counts are how many outcomes hold, fail and do not apply.
type Counts struct {
	Holds, Fails, NotApplicable int
}

// CountOf counts outcomes by status.
func CountOf(outs []Outcome) Counts {
	var c Counts
	for _, o := range outs {
		switch o.Status {
		case Holds:
			c.Holds++
		case Fails:
			c.Fails++
		default:
			c.NotApplicable++
		}
	}
	return c
}

func (c Counts) String() string {
	s := fmt.Sprintf("%d hold, %d fail", c.Holds, c.Fails)
	if c.NotApplicable > 0 {
		s += fmt.Sprintf(", %d n/a", c.NotApplicable)
	}
	return s
}

// Lines writes the outcomes as a table, expected beside measured, an
// outcome a line, each with where its claim is written.
func Lines(outs []Outcome) []string {
	rows := [][]string{{"", "row", "figure", "expected", "measured", "where"}}
	for _, o := range outs {
		status := "ok"
		switch o.Status {
		case Fails:
			status = "FAIL"
		case NotApplicable:
			status = "n/a"
		}
		measured := o.MeasuredText()
		if o.Note != "" {
			measured += " (" + o.Note + ")"
		}
		rows = append(rows, []string{status, o.Row, o.Claim.Term.Text, o.Claim.Expected(), measured, o.Claim.where()})
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	lines := make([]string, len(rows))
	for j, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))))
			}
		}
		lines[j] = strings.TrimRight(b.String(), " ")
	}
	return lines
}

// where is line:col of the claim in its file, or its path.
func (c Claim) where() string {
	if c.Line == 0 {
		return c.Path
	}
	return strconv.Itoa(c.Line) + ":" + strconv.Itoa(c.Col)
}

// FileResult is the outcomes of one scenario file's claims.
type FileResult struct {
	// File is the file as named on the command line; Scenario its name.
	File     string
	Scenario string
	Outcomes []Outcome
	// Err, when set, is why the file could not be checked (bad input).
	Err error
}

type jsonOutcome struct {
	Row       string   `json:"row"`
	Assertion string   `json:"assertion"`
	Figure    string   `json:"figure"`
	Expected  string   `json:"expected"`
	Measured  string   `json:"measured"`
	Value     *float64 `json:"value"`
	Status    string   `json:"status"`
	Note      string   `json:"note,omitempty"`
	Line      int      `json:"line,omitempty"`
	Col       int      `json:"col,omitempty"`
}

// jsonOutcomes are outcomes as JSON writes them: the counts, then each
// outcome.
type jsonOutcomes struct {
	Holds         int           `json:"holds"`
	Fails         int           `json:"fails"`
	NotApplicable int           `json:"not_applicable"`
	Outcomes      []jsonOutcome `json:"outcomes"`
}

type jsonFile struct {
	File     string `json:"file"`
	Scenario string `json:"scenario,omitempty"`
	Error    string `json:"error,omitempty"`
	jsonOutcomes
}

// outcomesJSON is the outcomes as JSON writes them.
func outcomesJSON(outs []Outcome) jsonOutcomes {
	c := CountOf(outs)
	j := jsonOutcomes{Holds: c.Holds, Fails: c.Fails, NotApplicable: c.NotApplicable, Outcomes: []jsonOutcome{}}
	for _, o := range outs {
		jo := jsonOutcome{Row: o.Row, Assertion: o.Claim.String(), Figure: o.Claim.Term.Text, Expected: o.Claim.Expected(),
			Measured: o.MeasuredText(), Status: o.Status.String(), Note: o.Note, Line: o.Claim.Line, Col: o.Claim.Col}
		if o.Has {
			v := o.Measured
			jo.Value = &v
		}
		j.Outcomes = append(j.Outcomes, jo)
	}
	return j
}

// JSONValue is the outcomes as compare's JSON writes them, its
// "expectations" object (output.JSONWith): the counts and each outcome, as
// ratesim check --format json writes a file's.
func JSONValue(outs []Outcome) any { return outcomesJSON(outs) }

// Markdown writes the outcomes as compare's Markdown ends: a line with the
// counts, then a table of each claim, expected beside measured, with
// where it is written.
func Markdown(w io.Writer, outs []Outcome) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\n**Expectations: %s**\n\n", CountOf(outs))
	b.WriteString("| | row | figure | expected | measured | where |\n|---|---|---|---|---|---|\n")
	code := func(s string) string { return "`" + s + "`" }
	for _, o := range outs {
		status := "ok"
		switch o.Status {
		case Fails:
			status = "**FAIL**"
		case NotApplicable:
			status = "n/a"
		}
		measured := code(o.MeasuredText())
		if o.Note != "" {
			measured += " (" + o.Note + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", status, o.Row, code(o.Claim.Term.Text), code(o.Claim.Expected()), measured, o.Claim.where())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JSON writes the results of the files checked: per file its counts and
// every outcome, the measured value as a number (ns for a duration, 0, 1,
// 2 for accept, delay, reject) and as text.
func JSON(w io.Writer, files []FileResult) error {
	out := struct {
		Files []jsonFile `json:"files"`
	}{Files: []jsonFile{}}
	for _, f := range files {
		jf := jsonFile{File: f.File, Scenario: f.Scenario, jsonOutcomes: outcomesJSON(f.Outcomes)}
		if f.Err != nil {
			jf.Error = f.Err.Error()
		}
		out.Files = append(out.Files, jf)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // <= as written
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// The JUnit XML report: the shape CI systems read (Jenkins' junit-10.xsd
// of the xunit plugin, which GitHub Actions' and GitLab's test report
// readers follow): testsuites, a testsuite per file, a testcase per
// outcome with a failure or a skipped element.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	File     string      `xml:"file,attr,omitempty"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure"`
	Error     *junitMessage `xml:"error"`
	Skipped   *junitMessage `xml:"skipped"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",innerxml"` // escaped by xmlText
}

// JUnit writes the results as JUnit XML: a testsuite per file, a testcase
// per outcome (named ROW: ASSERTION), a failure saying what was expected
// and measured, a skipped for an outcome that does not apply, an error
// for a file that could not be checked. Times are 0: the virtual time of
// a run is not the time it took.
func JUnit(w io.Writer, files []FileResult) error {
	all := junitSuites{Name: "ratesim check"}
	for _, f := range files {
		s := junitSuite{Name: f.File, Time: "0", File: f.File}
		if f.Err != nil {
			s.Tests, s.Errors = 1, 1
			s.Cases = append(s.Cases, junitCase{Name: "scenario", Classname: f.File, Time: "0",
				Error: &junitMessage{Message: firstLine(f.Err.Error()), Type: "input", Text: xmlText(f.Err.Error())}})
		}
		for _, o := range f.Outcomes {
			c := junitCase{Name: o.Row + ": " + o.Claim.String(), Classname: f.File, Time: "0"}
			msg := "expected " + o.Claim.Term.Text + " " + o.Claim.Expected() + ", measured " + o.MeasuredText()
			if o.Note != "" {
				msg += " (" + o.Note + ")"
			}
			switch o.Status {
			case Fails:
				s.Failures++
				c.Failure = &junitMessage{Message: msg, Type: "expectation",
					Text: xmlText(fmt.Sprintf("%s:%s: %s: %s\nexpected: %s\nmeasured: %s\n", f.File, o.Claim.where(), o.Row, o.Claim.String(), o.Claim.Expected(), o.MeasuredText()))}
			case NotApplicable:
				s.Skipped++
				c.Skipped = &junitMessage{Message: o.Note}
			}
			s.Tests++
			s.Cases = append(s.Cases, c)
		}
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Errors += s.Errors
		all.Suites = append(all.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// xmlText escapes text for an element's content, keeping its line
// breaks as they are (encoding/xml writes them as &#xA;).
func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
