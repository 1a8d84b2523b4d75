// Package human writes values as people read them, for every package that
// shows text to people (output's tables and findings, traffic's messages
// about a trace).
package human

import (
	"strconv"
	"strings"
	"time"
)

// Duration writes d as people read it: "0", "750ms", "1.09s",
// "333.333ms", "2m30s", "1h", "27d12h49m49.8s". Below a minute, the largest
// unit below d carries at most three decimals; from one minute up it is
// days, hours, minutes and seconds, the seconds to a tenth, without the
// trailing zero units ("2m", not "2m0s"). Digits past those are cut, never
// rounded up, so an instant is never shown later than it is (999.9999ms is
// "999.999ms", not "1s"), and the arithmetic is integer. This is for text
// people read (tables, findings, headings, messages); JSON and CSV keep
// nanoseconds.
func Duration(d time.Duration) string {
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
