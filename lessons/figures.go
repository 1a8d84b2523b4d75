package lessons

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/sim"
)

// The helpers the lessons' figures share.

// result finds the result labelled label, and its decisions (nil when the
// run was too large to keep them).
func result(o *Run, label string) (*sim.Result, []sim.Decision, error) {
	for i := range o.Report.Results {
		if o.Report.Results[i].Label == label {
			var ds []sim.Decision
			if o.Decisions != nil {
				ds = o.Decisions[i]
			}
			return &o.Report.Results[i], ds, nil
		}
	}
	return nil, nil, fmt.Errorf("scenario %s has no algorithm labelled %s", o.Report.Scenario, label)
}

// peakOver is res's peak of releases over windows of v (attempts when
// attempts is set).
func peakOver(res *sim.Result, v time.Duration, attempts bool) (sim.Peak, error) {
	ps := res.Peaks
	if attempts {
		ps = res.AttemptPeaks
	}
	for _, p := range ps {
		if p.WindowNs == int64(v) {
			return p, nil
		}
	}
	return sim.Peak{}, fmt.Errorf("%s: no peak over %s (report windows must include it)", res.Label, output.FormatDuration(v))
}

// shortWindow is the shortest report window of a run.
func shortWindow(o *Run) time.Duration {
	var v int64
	for _, p := range o.Report.Results[0].Peaks {
		if v == 0 || p.WindowNs < v {
			v = p.WindowNs
		}
	}
	return time.Duration(v)
}

// policyFigures are the placeholders every lesson may use: limit, per,
// per_word, burst, spacing (W/L), short (the shortest report window),
// limit_short (the limit over it).
func policyFigures(o *Run) map[string]string {
	l := o.Report.Limit
	w := time.Duration(l.PerNs)
	short := shortWindow(o)
	return map[string]string{
		"limit":       strconv.FormatInt(l.Rate, 10),
		"per":         perWord(w),
		"per_word":    perWord(w),
		"burst":       strconv.FormatInt(l.Burst, 10),
		"spacing":     exactDuration(big.NewRat(l.PerNs, l.Rate)),
		"short":       output.FormatDuration(short),
		"limit_short": ratString(new(big.Rat).SetFrac(big.NewInt(l.Rate*int64(short)), big.NewInt(l.PerNs))),
	}
}

// perWord names a window for a sentence: "second", "minute", "hour", else
// the duration ("100ms").
func perWord(w time.Duration) string {
	switch w {
	case time.Second:
		return "second"
	case time.Minute:
		return "minute"
	case time.Hour:
		return "hour"
	}
	return output.FormatDuration(w)
}

// exactDuration writes a rational number of nanoseconds, rounded up to a
// whole one.
func exactDuration(ns *big.Rat) string {
	q := new(big.Int).Quo(ns.Num(), ns.Denom())
	if new(big.Rat).SetInt(q).Cmp(ns) < 0 {
		q.Add(q, big.NewInt(1))
	}
	return output.FormatDuration(time.Duration(q.Int64()))
}

// ratString writes q exactly when it is whole, else with up to two
// decimals.
func ratString(q *big.Rat) string {
	if q.IsInt() {
		return q.Num().String()
	}
	return strings.TrimRight(strings.TrimRight(q.FloatString(2), "0"), ".")
}

// seconds writes an instant as seconds: with two decimals when it is a
// whole number of 10ms ("0.90 s", "1.09 s"), else rounded to the
// millisecond ("17.954 s").
func seconds(t time.Duration) string {
	sign := ""
	if t < 0 {
		sign, t = "-", -t
	}
	if t%(10*time.Millisecond) == 0 {
		return fmt.Sprintf("%s%d.%02d s", sign, t/time.Second, t%time.Second/(10*time.Millisecond))
	}
	ms := (t + time.Millisecond/2) / time.Millisecond
	return fmt.Sprintf("%s%d.%03d s", sign, ms/1000, ms%1000)
}

func ratio(p sim.Peak) string { return output.FormatRatio(float64(p.Ratio)) }

func admitted(res *sim.Result) int64 { return res.Accepted + res.Delayed }

// sameAdmissions says whether the results admitted the same requests:
// "Both admitted 16 of the 19 attempts and rejected 3: the same requests."
// (the last words only when their decisions show it attempt by attempt),
// or each one's figures.
func sameAdmissions(o *Run, rs []*sim.Result) string {
	same := true
	for _, r := range rs[1:] {
		same = same && admitted(r) == admitted(rs[0]) && r.Rejected == rs[0].Rejected && r.Attempts == rs[0].Attempts
	}
	if !same {
		var parts []string
		for _, r := range rs {
			parts = append(parts, fmt.Sprintf("%s admitted %d of %d attempts and rejected %d", r.Label, admitted(r), r.Attempts, r.Rejected))
		}
		return strings.Join(parts, "; ") + "."
	}
	all := "All " + countWord(len(rs))
	if len(rs) == 2 {
		all = "Both"
	}
	s := fmt.Sprintf("%s admitted %d of the %d attempts and rejected %d", all, admitted(rs[0]), rs[0].Attempts, rs[0].Rejected)
	if sameRequests(o, rs) {
		s += ": the same requests"
	}
	return s + "."
}

// sameRequests says whether the decisions of rs admit and reject the same
// attempts, one by one (false when the decisions were not kept).
func sameRequests(o *Run, rs []*sim.Result) bool {
	var first []sim.Decision
	for i, r := range rs {
		_, ds, err := result(o, r.Label)
		if err != nil || ds == nil {
			return false
		}
		if i == 0 {
			first = ds
			continue
		}
		if len(ds) != len(first) {
			return false
		}
		for j := range ds {
			a, b := ds[j], first[j]
			if a.Time != b.Time || a.Key != b.Key || (a.Verdict == algorithms.Reject) != (b.Verdict == algorithms.Reject) {
				return false
			}
		}
	}
	return true
}

// countWord writes small counts in words.
func countWord(n int) string {
	if n >= 2 && n <= 9 {
		return []string{"two", "three", "four", "five", "six", "seven", "eight", "nine"}[n-2]
	}
	return strconv.Itoa(n)
}

// columns lays out a table: the first column left-aligned, the others
// right-aligned, three spaces apart, each line after indent.
func columns(rows [][]string, indent string) []string {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	out := make([]string, len(rows))
	for j, r := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			gap := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i == 0 {
				b.WriteString(c + gap)
				continue
			}
			b.WriteString("   " + gap + c)
		}
		out[j] = b.String()
	}
	return out
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// plural writes "1 request", "2 requests".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}

// paramString writes an algorithm option as the scenario set it.
func paramString(p any) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprint(p)
}
