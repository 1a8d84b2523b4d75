package output

import (
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/human"
	"github.com/ratesim/ratesim/sim"
)

// FormatDuration writes d as people read it: "0", "750ms", "1.09s",
// "333.333ms", "2m30s", "1h", "27d12h49m49.8s" (human.Duration, which
// says how).
func FormatDuration(d time.Duration) string { return human.Duration(d) }

// FormatRatio writes a peak ratio as the table shows it: two decimals, with
// a trailing zero dropped down to one decimal, and an "x": 2.0x, 1.33x, 1.5x,
// 10.0x.
func FormatRatio(r float64) string {
	s := strconv.FormatFloat(r, 'f', 2, 64)
	if strings.HasSuffix(s, "0") && strings.Contains(s, ".") {
		s = s[:len(s)-1]
	}
	return s + "x"
}

// epoch2000 is 2000-01-01T00:00:00Z in nanoseconds since the Unix epoch:
// instants from then on are replayed timestamps, earlier ones offsets from
// the start of a synthetic run.
const epoch2000 = 946684800 * int64(time.Second)

// formatInstant writes a virtual instant: a duration from time 0 for
// synthetic traffic ("900ms"), a UTC timestamp for replayed traffic, which
// keeps its absolute times. It tells them apart by the year alone
// (instants from 2000 on are dates): where the report is at hand,
// reportInstant knows better.
func formatInstant(ns int64) string {
	return FormatInstant(ns, ns >= epoch2000)
}

// FormatInstant writes an instant of the virtual clock (ns since time 0 =
// the Unix epoch): when absolute (a replayed trace's), as a UTC date in
// RFC 3339 with as many decimals of the second as it needs
// ("1995-08-01T00:00:00.5Z"), whatever its year; else as a duration from
// time 0 ("900ms").
func FormatInstant(ns int64, absolute bool) string {
	if absolute {
		return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
	}
	return FormatDuration(time.Duration(ns))
}

// AbsoluteTimes reports whether r's instants are absolute: it replayed a
// recorded trace (docs/accuracy.md: dates whatever the trace's time format
// and year), or its traffic starts from 2000 on.
func AbsoluteTimes(r *sim.Report) bool {
	return len(r.Traces) > 0 || r.StartNs >= epoch2000
}

// reportInstant writes an instant of r as FormatInstant does.
func reportInstant(r *sim.Report, ns int64) string {
	return FormatInstant(ns, AbsoluteTimes(r))
}

// formatPercent writes num/den as a percentage with one decimal, rounded
// half away from zero, exactly; "-" when den is 0.
func formatPercent(num, den int64) string {
	if den == 0 {
		return "-"
	}
	n := new(big.Int).Mul(big.NewInt(num), big.NewInt(100))
	return new(big.Rat).SetFrac(n, big.NewInt(den)).FloatString(1)
}

// policyString writes a policy as the heading shows it: "10/1s burst 10".
// A calendar period shows as 1mo or 1y.
func policyString(l sim.Limit) string {
	per := FormatDuration(time.Duration(l.PerNs))
	if l.Calendar != "" {
		per = l.Calendar
	}
	return strconv.FormatInt(l.Rate, 10) + "/" + per + " burst " + strconv.FormatInt(l.Burst, 10)
}

// limitPer writes the limit over a window of v, L*v/W, as an exact decimal
// ("10", "1", "0.3"), rounded to two decimals (more when that would show 0).
func limitPer(l sim.Limit, v int64) string {
	if l.PerNs <= 0 {
		return "?"
	}
	num := new(big.Int).Mul(big.NewInt(l.Rate), big.NewInt(v))
	q := new(big.Rat).SetFrac(num, big.NewInt(l.PerNs))
	if q.IsInt() {
		return q.Num().String()
	}
	for _, prec := range []int{2, 6, 9} {
		s := strings.TrimRight(strings.TrimRight(q.FloatString(prec), "0"), ".")
		if s != "0" {
			return s
		}
	}
	return q.FloatString(9)
}

// Join writes a list for a sentence: "a", "a and b", "a, b and c".
func Join(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// costCount writes n of cost, a figure of the peaks: "20 requests" (of
// noun) when every request of r costs 1, else in r's cost unit: "179786
// tokens", "1200 tokens of attempts".
func costCount(r *sim.Report, n int64, noun string) string {
	if r.CostUnit == "" {
		return plural(n, noun)
	}
	s := strconv.FormatInt(n, 10) + " " + r.CostUnit
	if noun != "request" {
		s += " of " + noun + "s"
	}
	return s
}

// plural writes "1 request", "20 requests".
func plural(n int64, noun string) string {
	s := strconv.FormatInt(n, 10) + " " + noun
	if n != 1 {
		s += "s"
	}
	return s
}
