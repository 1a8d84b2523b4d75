package backend

import (
	"math"
	"time"

	"github.com/ratesim/ratesim/internal/portable"
)

// Draws. Every random figure of a request (its service time, whether it
// fails) is a function of the seed and the request's identity (ID,
// Attempt), never of a stream read in order: so a request is served in the
// same time in every algorithm row, whichever requests that row admitted
// before it.
//
// The float arithmetic is portable: every operation is a single IEEE 754
// operation (+, -, *, /, sqrt), each correctly rounded, and every product
// is wrapped in an explicit float64() conversion, which the Go
// specification requires to round, so the compiler cannot fuse it with an
// addition into an FMA (it may under GOAMD64=v3 otherwise). math.Log and
// math.Exp are not used for draws: internal/portable's Log and Exp are
// (see there why).

// Stream numbers separate the draws of one request.
const (
	streamService = 1
	streamError   = 2
)

// mix is SplitMix64's finalizer: a bijection of 64 bits that spreads every
// input bit over the output.
func mix(x uint64) uint64 {
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// hash is draw number stream of request (id, attempt) under seed: rounds
// of SplitMix64's finalizer over the seed, the id, then the attempt and
// stream.
func hash(seed, id uint64, attempt int32, stream uint64) uint64 {
	return hashOf(rootOf(mix(seed+gamma), id), attempt, stream)
}

const gamma = 0x9e3779b97f4a7c15

// rootOf is the part of hash that depends on the seed (hs = mix(seed +
// gamma)) and the id only: a request's draws share it.
func rootOf(hs, id uint64) uint64 { return mix(hs ^ mix(id+gamma)) }

// hashOf is hash from rootOf's value.
func hashOf(root uint64, attempt int32, stream uint64) uint64 {
	return mix(root ^ (uint64(uint32(attempt))<<8 | stream))
}

// unit53 maps h to a uniform in (0, 1]: (k+1)/2^53 for its top 53 bits k.
func unit53(h uint64) float64 {
	return float64(h>>11+1) / (1 << 53)
}

// normQuantile is the standard normal's quantile at p in (0, 1): Wichura's
// algorithm AS 241 (PPND16, Applied Statistics 37(3), 1988), accurate to
// about 1e-16, a ratio of two degree-7 polynomials in each of three
// ranges, every product rounded.
func normQuantile(p float64) float64 {
	q := p - 0.5
	if math.Abs(q) <= 0.425 {
		r := 0.180625 - float64(q*q)
		num := horner(r, 3.3871328727963666080e0, 1.3314166789178437745e+2, 1.9715909503065514427e+3,
			1.3731693765509461125e+4, 4.5921953931549871457e+4, 6.7265770927008700853e+4,
			3.3430575583588128105e+4, 2.5090809287301226727e+3)
		den := horner(r, 1, 4.2313330701600911252e+1, 6.8718700749205790830e+2, 5.3941960214247511077e+3,
			2.1213794301586595867e+4, 3.9307895800092710610e+4, 2.8729085735721942674e+4,
			5.2264952788528545610e+3)
		return float64(q*num) / den
	}
	r := p
	if q > 0 {
		r = 1 - p
	}
	r = math.Sqrt(-portable.Log(r))
	var v float64
	if r <= 5 {
		r -= 1.6
		v = horner(r, 1.42343711074968357734e0, 4.63033784615654529590e0, 5.76949722146069140550e0,
			3.64784832476320460504e0, 1.27045825245236838258e0, 2.41780725177450611770e-1,
			2.27238449892691845833e-2, 7.74545014278341407640e-4) /
			horner(r, 1, 2.05319162663775882187e0, 1.67638483018380384940e0, 6.89767334985100004550e-1,
				1.48103976427480074590e-1, 1.51986665636164571966e-2, 5.47593808499534494600e-4,
				1.05075007164441684324e-9)
	} else {
		r -= 5
		v = horner(r, 6.65790464350110377720e0, 5.46378491116411436990e0, 1.78482653991729133580e0,
			2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3,
			2.71155556874348757815e-5, 2.01033439929228813265e-7) /
			horner(r, 1, 5.99832206555887937690e-1, 1.36929880922735805310e-1, 1.48753612908506148525e-2,
				7.86869131145613259100e-4, 1.84631831751005468180e-5, 1.42151175831644588870e-7,
				2.04426310338993978564e-15)
	}
	if q < 0 {
		return -v
	}
	return v
}

// horner is c[0] + c[1]*x + ... + c[7]*x^7, every product rounded.
func horner(x float64, c0, c1, c2, c3, c4, c5, c6, c7 float64) float64 {
	v := c7
	v = float64(v*x) + c6
	v = float64(v*x) + c5
	v = float64(v*x) + c4
	v = float64(v*x) + c3
	v = float64(v*x) + c2
	v = float64(v*x) + c1
	return float64(v*x) + c0
}

// maxService is the longest service time drawn: 2^62 ns (146 years), so
// that an instant plus a service never overflows in practice.
const maxService = time.Duration(1) << 62

// toDuration rounds x >= 0 nanoseconds to the nearest, saturating at
// maxService.
func toDuration(x float64) time.Duration {
	if !(x < float64(maxService)) {
		return maxService
	}
	return time.Duration(math.Round(x))
}

// sampler draws service times and errors.
type sampler struct {
	seed      uint64
	seedHash  uint64 // mix(seed + gamma)
	dist      Dist
	mean      float64 // ns
	constant  time.Duration
	mu, sigma float64
	errCut    uint64 // a request fails iff its 53-bit draw < errCut
	errAll    bool   // Errors == 1
	errs      bool   // errCut > 0 || errAll: some request may fail
}

func newSampler(c *Config) sampler {
	s := sampler{seed: c.Seed, seedHash: mix(c.Seed + gamma), dist: c.Service.Dist, mean: float64(c.Service.Mean), constant: c.Service.Mean}
	if s.dist == "" {
		s.dist = Constant
	}
	if s.dist == Lognormal {
		s.mu, s.sigma, _ = lognormalParams(c.Service.Mean, c.Service.P99)
	}
	// Errors * 2^53 is exact (a power of two), its floor exact too.
	s.errCut = uint64(c.Errors * (1 << 53))
	s.errAll = c.Errors >= 1
	s.errs = s.errCut > 0 || s.errAll
	return s
}

// root is the root of the draws of request id (rootOf).
func (s *sampler) root(id uint64) uint64 { return rootOf(s.seedHash, id) }

// service is the service time of request (id, attempt), before faults,
// given the root of id's draws.
func (s *sampler) service(root uint64, attempt int32) time.Duration {
	switch s.dist {
	case Exponential:
		u := unit53(hashOf(root, attempt, streamService))
		return toDuration(float64(-portable.Log(u) * s.mean))
	case Lognormal:
		// u in (0, 1): (k+1/2)/2^52 for the top 52 bits k (exact: k+1/2
		// needs 53 bits)
		u := (float64(hashOf(root, attempt, streamService)>>12) + 0.5) / (1 << 52)
		z := normQuantile(u)
		return toDuration(portable.Exp(s.mu + float64(s.sigma*z)))
	}
	return s.constant
}

// fails reports whether request (id, attempt) fails when served, given
// the root of id's draws.
func (s *sampler) fails(root uint64, attempt int32) bool {
	if s.errAll {
		return true
	}
	if s.errCut == 0 {
		return false
	}
	return hashOf(root, attempt, streamError)>>11 < s.errCut
}

// scale multiplies d by a slow fault's factor, rounded to the nearest ns.
func scale(d time.Duration, factor float64) time.Duration {
	return toDuration(float64(float64(d) * factor))
}
