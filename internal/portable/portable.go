// Package portable holds the floating-point functions that ratesim's draws
// use in place of the math package's, so that a draw is the same bits on
// every platform and at every GOAMD64 level.
//
// Every operation is a single IEEE 754 operation (+, -, *, /, sqrt), each
// correctly rounded, and every product is wrapped in an explicit float64()
// conversion, which the Go specification requires to round, so that the
// compiler cannot fuse it with an addition into an FMA (it may under
// GOAMD64=v3 otherwise, and always may on arm64). math.Log and math.Exp
// cannot serve: on amd64 math.Exp is assembly that takes an FMA path when
// the CPU has one (a choice made at run time), math.Log is assembly there
// and Go elsewhere, and the Go fallbacks may be fused. Log and Exp are
// fdlibm's algorithms (e_log.c, e_exp.c, as Go's math package writes them)
// with their products rounded.
package portable

import "math"

// fdlibm's constants, as Go's math package writes them.
const (
	ln2Hi = 6.93147180369123816490e-01 // 0x3fe62e42fee00000
	ln2Lo = 1.90821492927058770002e-10 // 0x3dea39ef35793c76
	log2e = 1.44269504088896338700e+00
)

// Log is ln(x) for a finite x > 0, to within one ulp, the same on
// every platform: fdlibm's e_log.c (Go's math.log) with every product
// rounded. x = 2^k * (1+f), sqrt(2)/2 < 1+f < sqrt(2); ln(1+f) = 2s +
// s*R(s^2) with s = f/(2+f), R a minimax polynomial.
func Log(x float64) float64 {
	const (
		l1 = 6.666666666666735130e-01
		l2 = 3.999999999940941908e-01
		l3 = 2.857142874366239149e-01
		l4 = 2.222219843214978396e-01
		l5 = 1.818357216161805012e-01
		l6 = 1.531383769920937332e-01
		l7 = 1.479819860511658591e-01
	)
	switch {
	case x <= 0 || math.IsNaN(x):
		return math.NaN()
	case math.IsInf(x, 1):
		return x
	}
	f1, ki := frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	s := f / (2 + f)
	s2 := float64(s * s)
	s4 := float64(s2 * s2)
	t1 := float64(s2 * (l1 + float64(s4*(l3+float64(s4*(l5+float64(s4*l7)))))))
	t2 := float64(s4 * (l2 + float64(s4*(l4+float64(s4*l6)))))
	r := t1 + t2
	hfsq := float64(float64(0.5*f) * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+r)) + float64(k*ln2Lo))) - f)
}

// frexp is math.Frexp for a finite x > 0, the exponent taken from the
// bits of a normal x (the draws' case) without a call; math.Frexp for a
// subnormal one.
func frexp(x float64) (float64, int) {
	const smallestNormal = 0x1p-1022
	if x < smallestNormal {
		return math.Frexp(x)
	}
	b := math.Float64bits(x)
	e := int(b>>52&0x7ff) - 1022
	return math.Float64frombits(b&^(0x7ff<<52) | 1022<<52), e
}

// Exp is e^x, to within one ulp, the same on every platform:
// fdlibm's e_exp.c (Go's math.exp) with every product rounded. x = k*ln2 +
// r, |r| <= ln2/2; e^r from a minimax polynomial; e^x = 2^k * e^r.
func Exp(x float64) float64 {
	const (
		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		nearZero  = 1.0 / (1 << 28)
		p1        = 1.66666666666666657415e-01
		p2        = -2.77777777770155933842e-03
		p3        = 6.61375632143793436117e-05
		p4        = -1.65339022054652515390e-06
		p5        = 4.13813679705723846039e-08
	)
	switch {
	case x != x: // NaN
		return x
	case x > overflow: // +Inf too
		return math.Inf(1)
	case x < underflow: // -Inf too
		return 0
	case -nearZero < x && x < nearZero:
		return 1 + x
	}
	var k int
	switch {
	case x < 0:
		k = int(float64(log2e*x) - 0.5)
	case x > 0:
		k = int(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(float64(k) * ln2Lo)
	r := hi - lo
	t := float64(r * r)
	c := r - float64(t*(p1+float64(t*(p2+float64(t*(p3+float64(t*(p4+float64(t*p5)))))))))
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	if -1022 < k && k < 1023 {
		// y is in [1/2, 2], so y*2^k is normal and the product exact:
		// math.Ldexp's value, without its cases
		return y * math.Float64frombits(uint64(k+1023)<<52)
	}
	return math.Ldexp(y, k)
}
