package algorithms

import "time"

// Exact fractional time for the algorithms whose interval W/L is not a whole
// number of nanoseconds (3/s, 7/m). An instant or a duration is kept as whole
// nanoseconds plus a remainder over the rate, ns + rem/den, so nothing is
// ever rounded and nothing drifts. Absolute times are never multiplied by the
// rate: replayed traces carry times near 1.7e18 ns, and only the remainder
// (< den) and products bounded by checkPolicy (Burst*Per, Rate*Per) are ever
// formed.

// fracRate is the exact interval W/L between two conforming requests, as the
// fraction num/den ns reduced by gcd(L, W): num = W/g ns, den = L/g. The
// reduction keeps remainders and the token bucket's scaled counts small
// (10/s has den 1: whole nanoseconds).
type fracRate struct {
	num int64 // W/g, ns
	den int64 // L/g, > 0
}

// newFracRate returns the interval per/rate; rate >= 1 and per > 0 (the
// caller has run checkPolicy).
func newFracRate(rate int64, per time.Duration) fracRate {
	g := exactGCD(rate, int64(per))
	return fracRate{num: int64(per) / g, den: rate / g}
}

// fracTime is an exact instant or duration ns + rem/den nanoseconds, with
// 0 <= rem < den; den is the fracRate it was made with, kept by the limiter
// and not in the value. The zero value is time 0. Negative values keep rem
// non-negative: -1/3 ns is {-1, 2} with den 3.
type fracTime struct {
	ns  time.Duration
	rem int64
}

// fracAt returns the whole instant t as a fracTime.
func fracAt(t time.Duration) fracTime { return fracTime{ns: t} }

// times returns c intervals, c*W/L, exactly. c*num must fit an int64, which
// checkPolicy guarantees for 0 <= c <= Burst and c <= Rate.
func (r fracRate) times(c int64) fracTime {
	x := c * r.num
	if r.den == 1 { // W/L whole ns: no division
		return fracTime{ns: time.Duration(x)}
	}
	return fracTime{ns: time.Duration(x / r.den), rem: x % r.den}
}

// add returns a + b.
func (r fracRate) add(a, b fracTime) fracTime {
	s := fracTime{ns: a.ns + b.ns, rem: a.rem + b.rem}
	if s.rem >= r.den {
		s.ns, s.rem = s.ns+1, s.rem-r.den
	}
	return s
}

// sub returns a - b.
func (r fracRate) sub(a, b fracTime) fracTime {
	d := fracTime{ns: a.ns - b.ns, rem: a.rem - b.rem}
	if d.rem < 0 {
		d.ns, d.rem = d.ns-1, d.rem+r.den
	}
	return d
}

// after reports whether a > b.
func (a fracTime) after(b fracTime) bool {
	return a.ns > b.ns || (a.ns == b.ns && a.rem > b.rem)
}

// fracMax returns max(a, b).
func fracMax(a, b fracTime) fracTime {
	if a.after(b) {
		return a
	}
	return b
}

// ceil returns the smallest whole nanosecond >= a: a release or a wait that
// falls between two nanoseconds is rounded up, never early.
func (a fracTime) ceil() time.Duration {
	if a.rem > 0 {
		return a.ns + 1
	}
	return a.ns
}

// exactCeilDiv returns ceil(a/b) for a >= 0 and b > 0.
func exactCeilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// exactGCD returns the greatest common divisor of a, b > 0.
func exactGCD(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
