package output

import (
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/sim"
)

// FormatDuration writes d as people read it: "0", "750ms", "1.09s",
// "333.333ms", "2m30s", "1h", "27d12h49m49.8s". Below a minute, the largest
// unit below d carries at most three decimals; from one minute up it is
// days, hours, minutes and seconds, the seconds to a tenth, without the
// trailing zero units ("2m", not "2m0s"). Digits past those are cut, never
// rounded up, so an instant is never shown later than it is (999.9999ms is
// "999.999ms", not "1s"), and the arithmetic is integer. This is for text
// people read (tables, findings, headings); JSON and CSV keep nanoseconds.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	var b []byte
	u := uint64(d)
	if d < 0 {
		b = append(b, '-')
		u = -u // two's complement: correct for math.MinInt64 too
	}
	switch {
	case u < uint64(time.Microsecond):
		b = strconv.AppendUint(b, u, 10)
		b = append(b, "ns"...)
	case u < uint64(time.Millisecond):
		b = appendFrac(b, u, uint64(time.Microsecond), 3)
		b = append(b, "µs"...)
	case u < uint64(time.Second):
		b = appendFrac(b, u, uint64(time.Millisecond), 3)
		b = append(b, "ms"...)
	case u < uint64(time.Minute):
		b = appendFrac(b, u, uint64(time.Second), 3)
		b = append(b, 's')
	default:
		const day = 24 * uint64(time.Hour)
		parts := [4]uint64{u / day, u / uint64(time.Hour) % 24, u / uint64(time.Minute) % 60,
			u % uint64(time.Minute) / uint64(100*time.Millisecond)} // seconds in tenths
		first, last := 0, 3
		for parts[first] == 0 {
			first++
		}
		for parts[last] == 0 {
			last--
		}
		for i := first; i <= last; i++ {
			if i == 3 {
				b = appendFrac(b, parts[3]*uint64(100*time.Millisecond), uint64(time.Second), 1)
			} else {
				b = strconv.AppendUint(b, parts[i], 10)
			}
			b = append(b, "dhms"[i])
		}
	}
	return string(b)
}

// appendFrac appends v/unit as a decimal (unit a power of ten) with at most
// digits decimals, the rest cut, without trailing zeros.
func appendFrac(b []byte, v, unit uint64, digits int) []byte {
	b = strconv.AppendUint(b, v/unit, 10)
	rem := v % unit
	all := len(strconv.FormatUint(unit, 10)) - 1
	for i := digits; i < all; i++ {
		rem /= 10
	}
	if rem == 0 {
		return b
	}
	frac := strconv.FormatUint(rem, 10)
	b = append(b, '.')
	for i := len(frac); i < min(digits, all); i++ {
		b = append(b, '0')
	}
	return append(b, strings.TrimRight(frac, "0")...)
}

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
// keeps its absolute times.
func formatInstant(ns int64) string {
	if ns >= epoch2000 {
		return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
	}
	return FormatDuration(time.Duration(ns))
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
func policyString(l sim.Limit) string {
	return strconv.FormatInt(l.Rate, 10) + "/" + FormatDuration(time.Duration(l.PerNs)) +
		" burst " + strconv.FormatInt(l.Burst, 10)
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

// join writes a list for a sentence: "a", "a and b", "a, b and c".
func join(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// plural writes "1 request", "20 requests".
func plural(n int64, noun string) string {
	s := strconv.FormatInt(n, 10) + " " + noun
	if n != 1 {
		s += "s"
	}
	return s
}
