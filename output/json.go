package output

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"

	"github.com/ratesim/ratesim/sim"
)

// JSON writes the report as the object of SPEC section 6: indented with two
// spaces, a trailing newline, map keys (params) sorted, no HTML escaping,
// and ratios always with a decimal point (2.0). Absent lists and params are
// written as [] and {}, never null. The same report gives the same bytes.
func JSON(w io.Writer, r *sim.Report) error {
	if r == nil {
		return errNilReport
	}
	rep := *r
	rep.Results = make([]sim.Result, len(r.Results))
	for i, res := range r.Results {
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
		rep.Results[i] = res
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&rep); err != nil {
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
