package output

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/ratesim/ratesim/internal/version"
	"github.com/ratesim/ratesim/sim"
)

// JSON writes the report as the object of docs/commands.md, after
// "ratesim_version" (the version that made it, docs/commands.md): indented
// with two spaces, a trailing newline, map keys (params) sorted, no HTML escaping,
// and ratios always with a decimal point (2.0). Absent lists and params are
// written as [] and {}, never null. The same report gives the same bytes.
func JSON(w io.Writer, r *sim.Report) error {
	return JSONWith(w, r, nil)
}

// JSONWith writes the report as JSON does, then, when expectations is not
// nil, an "expectations" object after the report's fields: the outcomes of
// the scenario's expect section (docs/expect.md), which package expect
// makes.
func JSONWith(w io.Writer, r *sim.Report, expectations any) error {
	if r == nil {
		return errNilReport
	}
	rep := *r
	rep.Results = JSONResults(r.Results)
	return EncodeJSON(w, struct {
		Version string `json:"ratesim_version"`
		*sim.Report
		Expectations any `json:"expectations,omitempty"`
	}{version.String(), &rep, expectations})
}

// JSONResults returns the results as JSON writes them: absent lists and
// params as [] and {}, never null (the results are copied, not changed).
func JSONResults(rs []sim.Result) []sim.Result {
	out := make([]sim.Result, len(rs))
	for i, res := range rs {
		if res.Params == nil {
			res.Params = map[string]any{}
		}
		res.Peaks = orEmpty(res.Peaks)
		res.KeyPeaks = orEmpty(res.KeyPeaks)
		res.AttemptPeaks = orEmpty(res.AttemptPeaks)
		res.Keys.Top = orEmpty(res.Keys.Top)
		res.Series.Offered = orEmpty(res.Series.Offered)
		res.Series.Attempts = orEmpty(res.Series.Attempts)
		res.Series.Admitted = orEmpty(res.Series.Admitted)
		res.Series.Delayed = orEmpty(res.Series.Delayed)
		res.Series.Rejected = orEmpty(res.Series.Rejected)
		out[i] = res
	}
	return out
}

// EncodeJSON writes v as JSON writes a report: indented with two spaces, a
// trailing newline, map keys sorted, no HTML escaping, arrays of numbers
// on one line.
func EncodeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(compactNumberArrays(buf.Bytes()))
	return err
}

// compactNumberArrays writes arrays of numbers (the time series) on one
// line, [0, 2, 10], instead of one number per line. An array is compacted
// when it opens with "[" and a newline, and holds numbers only, each
// written as encoding/json writes them (a digit or a minus sign first),
// separated by a comma, a newline and white space, with a newline and
// white space before its "]". JSON strings cannot hold a raw newline, so
// an array never starts inside a string. One pass over the bytes: the
// long time series of a trace of days made a regular expression's pass
// take seconds.
func compactNumberArrays(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		if b[i] == '[' {
			if end, ok := numberArrayEnd(b, i); ok {
				out = appendNumberArray(out, b[i:end])
				i = end
				continue
			}
		}
		out = append(out, b[i])
		i++
	}
	return out
}

// numberArrayEnd returns where the array of numbers that opens at b[i] ends
// (just past its "]"), and false when b[i:] does not open one.
func numberArrayEnd(b []byte, i int) (int, bool) {
	if i+1 >= len(b) || b[i+1] != '\n' {
		return 0, false
	}
	j := skipSpace(b, i+2)
	for {
		if j = skipNumber(b, j); j < 0 {
			return 0, false
		}
		switch {
		case j+1 < len(b) && b[j] == ',' && b[j+1] == '\n':
			j = skipSpace(b, j+2)
		case j < len(b) && b[j] == '\n':
			if j = skipSpace(b, j+1); j < len(b) && b[j] == ']' {
				return j + 1, true
			}
			return 0, false
		default:
			return 0, false
		}
	}
}

// appendNumberArray appends an array of numbers, as numberArrayEnd found
// it, on one line: "[", its numbers separated by ", ", and "]".
func appendNumberArray(out, a []byte) []byte {
	out = append(out, '[')
	j := skipSpace(a, 2)
	for {
		k := skipNumber(a, j)
		out = append(out, a[j:k]...)
		if a[k] != ',' {
			return append(out, ']')
		}
		out = append(out, ',', ' ')
		j = skipSpace(a, k+2)
	}
}

// skipSpace returns the index of the first byte from j on that is not
// white space (tab, newline, form feed, carriage return or space).
func skipSpace(b []byte, j int) int {
	for j < len(b) && (b[j] == ' ' || b[j] == '\n' || b[j] == '\t' || b[j] == '\r' || b[j] == '\f') {
		j++
	}
	return j
}

// skipNumber returns the index just past a number that starts at b[j]: an
// optional minus sign, a digit, then digits, dots, e, E, plus and minus
// signs; -1 when no number starts there.
func skipNumber(b []byte, j int) int {
	if j < len(b) && b[j] == '-' {
		j++
	}
	if j >= len(b) || b[j] < '0' || b[j] > '9' {
		return -1
	}
	for j++; j < len(b); j++ {
		if c := b[j]; !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			break
		}
	}
	return j
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
