package output

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"

	"github.com/ratesim/ratesim/internal/version"
	"github.com/ratesim/ratesim/sim"
)

// JSON writes the report as the object of docs/commands.md, after
// "ratesim_version" (the version that made it, docs/commands.md): indented
// with two spaces, a trailing newline, map keys (params) sorted, no HTML escaping,
// and ratios always with a decimal point (2.0). Absent lists and params are
// written as [] and {}, never null. The same report gives the same bytes.
func JSON(w io.Writer, r *sim.Report) error {
	if r == nil {
		return errNilReport
	}
	rep := *r
	rep.Results = JSONResults(r.Results)
	return EncodeJSON(w, struct {
		Version string `json:"ratesim_version"`
		*sim.Report
	}{version.String(), &rep})
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

// numberArray matches an indented JSON array of numbers only. JSON strings
// cannot hold a raw newline, so the match never starts inside a string.
var numberArray = regexp.MustCompile(`\[\n\s*(-?[0-9][0-9.eE+-]*(?:,\n\s*-?[0-9][0-9.eE+-]*)*)\n\s*\]`)

var commaNewline = regexp.MustCompile(`,\n\s*`)

// compactNumberArrays writes arrays of numbers (the time series) on one
// line, [0, 2, 10], instead of one number per line.
func compactNumberArrays(b []byte) []byte {
	return numberArray.ReplaceAllFunc(b, func(m []byte) []byte {
		inner := numberArray.FindSubmatch(m)[1]
		out := append([]byte{'['}, commaNewline.ReplaceAll(inner, []byte(", "))...)
		return append(out, ']')
	})
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
