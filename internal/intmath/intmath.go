// Package intmath holds the integer arithmetic that several packages need:
// greatest common divisors and floored division.
package intmath

// GCD returns the greatest common divisor of a and b (GCD(a, 0) = a), for
// a, b >= 0.
func GCD(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// FloorDiv returns floor(a/b), b != 0: Go's division truncates toward
// zero, this rounds toward minus infinity.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
