package scenarios

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/intmath"
	"github.com/ratesim/ratesim/traffic"
)

// durationUnits are the units a duration may be written in, as Go's
// time.ParseDuration takes them (µs as U+00B5 or U+03BC).
var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond,
	"us": time.Microsecond,
	"µs": time.Microsecond, // U+00B5, as time.Duration.String writes it
	"μs": time.Microsecond, // U+03BC
	"ms": time.Millisecond,
	"s":  time.Second,
	"m":  time.Minute,
	"h":  time.Hour,
}

const (
	wantDuration = "want a duration like 900ms, 1.5s or 1m30s"
	unitList     = "ns, us, ms, s, m or h"
	wantRate     = "want 10/s, 600/m, 5/100ms"
)

// ParseDuration parses a duration as Go writes it: one or more parts, each a
// decimal number and a unit (ns, us or µs, ms, s, m, h), as in 900ms, 1.5s
// or 1m30s. Unlike time.ParseDuration it is exact: a fraction is allowed
// only when the value is a whole number of nanoseconds (1.5s, 0.25us, but
// not 0.5ns), and no value is rounded. A bare 0 is the one number that needs
// no unit. Negative durations and values beyond the range of time.Duration
// are errors. Every value it accepts is written back by
// time.Duration.String in a form it accepts.
func ParseDuration(s string) (time.Duration, error) {
	d, msg := parseDuration(s)
	if msg != "" {
		return 0, fmt.Errorf("%s: %s", quote(s), msg)
	}
	return d, nil
}

// ParseSignedDuration is ParseDuration with an optional sign: -100ms is a
// duration too, down to -2562047h47m16.854775807s. Only a field that says
// so takes one (an aligned source's offset).
func ParseSignedDuration(s string) (time.Duration, error) {
	d, msg := parseSignedDuration(s)
	if msg != "" {
		return 0, fmt.Errorf("%s: %s", quote(s), msg)
	}
	return d, nil
}

// parseDuration returns the duration >= 0 or a message saying what is
// wrong with s (without s itself).
func parseDuration(s string) (time.Duration, string) {
	d, msg := parseSignedDuration(s)
	if msg == "" && d < 0 {
		return 0, "want a duration >= 0"
	}
	return d, msg
}

// parseSignedDuration returns the duration, negative when s starts with a
// minus sign, or a message saying what is wrong with s.
func parseSignedDuration(s string) (time.Duration, string) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "0" {
		return 0, ""
	}
	if s == "" {
		return 0, wantDuration
	}
	var total uint64 // in ns; may exceed MaxInt64 only transiently
	for s != "" {
		// number: digits, optionally a '.' and more digits
		i := 0
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		intPart := s[:i]
		fracPart := ""
		if i < len(s) && s[i] == '.' {
			j := i + 1
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			fracPart = s[i+1 : j]
			i = j
		}
		if intPart == "" && fracPart == "" {
			return 0, wantDuration
		}
		// unit: everything up to the next digit or '.'
		j := i
		for j < len(s) && !isDigit(s[j]) && s[j] != '.' {
			j++
		}
		unitName := s[i:j]
		s = s[j:]
		if unitName == "" {
			if total == 0 && s == "" && strings.Trim(intPart+fracPart, "0") == "" {
				// "0", "00", "0.0": zero needs no unit
				return 0, ""
			}
			return 0, "no unit (add one: " + unitList + ", e.g. " + intPart + dotFrac(fracPart) + "s)"
		}
		unit, ok := durationUnits[unitName]
		if !ok {
			return 0, fmt.Sprintf("unknown unit %s (want %s)", quote(unitName), unitList)
		}
		v, ok := partValue(intPart, fracPart, uint64(unit))
		if !ok {
			if v == 0 {
				return 0, "not a whole number of nanoseconds"
			}
			return 0, "out of range (at most " + time.Duration(math.MaxInt64).String() + ")"
		}
		total += v
		if total > math.MaxInt64 {
			return 0, "out of range (at most " + time.Duration(math.MaxInt64).String() + ")"
		}
	}
	if neg {
		return -time.Duration(total), ""
	}
	return time.Duration(total), ""
}

func dotFrac(f string) string {
	if f == "" {
		return ""
	}
	return "." + f
}

// partValue returns int.frac * unit exactly. On failure it returns (0,
// false) when the value is not a whole number of ns and (1, false) when it
// is out of range.
func partValue(intPart, fracPart string, unit uint64) (uint64, bool) {
	var v uint64
	for _, c := range []byte(intPart) {
		hi, lo := bits.Mul64(v, 10)
		if hi != 0 {
			return 1, false
		}
		v, hi = bits.Add64(lo, uint64(c-'0'), 0)
		if hi != 0 || v > math.MaxInt64 {
			return 1, false
		}
	}
	hi, v := bits.Mul64(v, unit)
	if hi != 0 || v > math.MaxInt64 {
		return 1, false
	}
	fracPart = strings.TrimRight(fracPart, "0")
	if fracPart == "" {
		return v, true
	}
	// f/10^k of a unit is a whole number of ns only if 10^k divides f*unit.
	// With f not a multiple of 10, f lacks the factor 2 or 5, so 2^k or 5^k
	// must divide unit (at most 3.6e12 ns = 2^13 * 3^2 * 5^11): k <= 13.
	if len(fracPart) > 13 {
		return 0, false
	}
	f, _ := strconv.ParseUint(fracPart, 10, 64) // at most 13 digits
	pow := uint64(1)
	for range fracPart {
		pow *= 10
	}
	fh, fl := bits.Mul64(f, unit)
	q, r := bits.Div64(fh, fl, pow) // fh < pow since f < pow
	if r != 0 {
		return 0, false
	}
	v += q
	if v > math.MaxInt64 {
		return 1, false
	}
	return v, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// ParseRate parses a rate: N requests per unit or per duration, with N an
// integer >= 1, as in 10/s, 600/m, 5/100ms, 3600/h or 10/2s.
func ParseRate(s string) (traffic.Rate, error) {
	r, msg := parseRate(s)
	if msg != "" {
		return traffic.Rate{}, fmt.Errorf("%s: %s", quote(s), msg)
	}
	return r, nil
}

// zeroRate is parseRate's message for a count of 0.
const zeroRate = "the count must be at least 1 (" + wantRate + ")"

func parseRate(s string) (traffic.Rate, string) { return parseRateMin(s, 1) }

// parseRateMin parses a rate whose count is at least minCount (0 or 1): a
// ramp may start from 0/s.
func parseRateMin(s string, minCount int64) (traffic.Rate, string) {
	n, per, ok := strings.Cut(s, "/")
	if !ok {
		return traffic.Rate{}, "not a rate (" + wantRate + ")"
	}
	if strings.HasPrefix(n, "-") && n != "-" && strings.TrimLeft(n[1:], "0123456789") == "" {
		return traffic.Rate{}, "a negative rate (" + wantRate + ")"
	}
	if n == "" || strings.TrimLeft(n, "0123456789") != "" {
		return traffic.Rate{}, fmt.Sprintf("request count %s is not a whole number (%s)", quote(n), wantRate)
	}
	count, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return traffic.Rate{}, fmt.Sprintf("request count %s is out of range (%s)", n, wantRate)
	}
	if count < minCount {
		return traffic.Rate{}, zeroRate
	}
	if per == "" {
		return traffic.Rate{}, "missing period after / (" + wantRate + ")"
	}
	if unit, ok := durationUnits[per]; ok {
		return traffic.Rate{Count: count, Per: unit}, ""
	}
	if !isDigit(per[0]) && per[0] != '.' {
		return traffic.Rate{}, fmt.Sprintf("unknown unit %s (%s)", quote(per), wantRate)
	}
	d, msg := parseDuration(per)
	if msg != "" {
		return traffic.Rate{}, fmt.Sprintf("period %s: %s", quote(per), msg)
	}
	if d <= 0 {
		return traffic.Rate{}, fmt.Sprintf("period %s: want a period > 0", quote(per))
	}
	return traffic.Rate{Count: count, Per: d}, ""
}

// parseFactor parses a decimal >= 1 such as 2 or 1.5 exactly into a reduced
// fraction (3/2), never through a float.
func parseFactor(s string) (traffic.Fraction, string) {
	const want = "want a decimal >= 1 like 2 or 1.5"
	intPart, fracPart, _ := strings.Cut(s, ".")
	if intPart == "" && fracPart == "" || strings.TrimLeft(intPart, "0123456789") != "" ||
		strings.TrimLeft(fracPart, "0123456789") != "" {
		return traffic.Fraction{}, want
	}
	fracPart = strings.TrimRight(fracPart, "0")
	digits := strings.TrimLeft(intPart+fracPart, "0")
	num := int64(0)
	if digits != "" {
		var err error
		num, err = strconv.ParseInt(digits, 10, 64)
		if err != nil || len(fracPart) > 18 {
			return traffic.Fraction{}, "too many digits (" + want + ")"
		}
	}
	den := int64(1)
	for range fracPart {
		den *= 10
	}
	if num < den {
		return traffic.Fraction{}, want
	}
	g := intmath.GCD(num, den)
	return traffic.Fraction{Num: num / g, Den: den / g}, ""
}

// parseMilli reads a decimal >= 0 with at most three decimal places
// exactly, in thousandths: "0.1" is 100.
func parseMilli(s string) (int64, string) {
	const want = "want a decimal > 0 with at most 3 decimal places, like 0.1"
	intPart, fracPart, _ := strings.Cut(s, ".")
	if intPart == "" && fracPart == "" || strings.TrimLeft(intPart, "0123456789") != "" ||
		strings.TrimLeft(fracPart, "0123456789") != "" {
		return 0, want
	}
	fracPart = strings.TrimRight(fracPart, "0")
	if len(fracPart) > 3 {
		return 0, "more than 3 decimal places (" + want + ", as gRPC reads it)"
	}
	fracPart += strings.Repeat("0", 3-len(fracPart))
	digits := strings.TrimLeft(intPart+fracPart, "0")
	if digits == "" {
		return 0, ""
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > 1_000_000_000 {
		return 0, "too large (" + want + ")"
	}
	return n, ""
}

// quote quotes s for a message, shortened if long.
func quote(s string) string {
	const max = 40
	if len(s) > max {
		r := []rune(s)
		if len(r) > max {
			s = string(r[:max]) + "..."
		}
	}
	return strconv.Quote(s)
}
