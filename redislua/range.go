package redislua

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/intmath"
)

// exactLimit is 2^53: a Lua double holds every integer below it exactly.
var exactLimit = new(big.Int).Lsh(big.NewInt(1), 53)

// redisClockHorizon is the latest instant the ClockRedis variant is
// checked for: 2100-01-01 in microseconds since the Unix epoch (Redis TIME
// itself stays below 2^53 us until the year 2255).
const redisClockHorizon = 4102444800 * 1_000_000

// vars are a policy's figures in ticks of the clock, as the scripts see
// them.
type vars struct {
	L, W, B, C int64 // rate, per, burst, the largest cost
	D, S       int64 // max-delay, service
	NB         int64 // nginx's burst
	N          int64 // the largest now
	ms         int64 // ticks per ms
}

// knob is a figure CheckRange may suggest lowering: its name as a policy
// spells it, how to read and set it in vars, and how to print a value.
type knob struct {
	name string
	min  int64 // the least valid value
	get  func(v *vars) *int64
	show func(ticks, tick int64) string
}

var (
	knobPer   = knob{"per", 1, func(v *vars) *int64 { return &v.W }, showDuration}
	knobRate  = knob{"rate", 1, func(v *vars) *int64 { return &v.L }, showCount}
	knobBurst = knob{"burst", 1, func(v *vars) *int64 { return &v.B }, showCount}
	knobDelay = knob{"max-delay", 0, func(v *vars) *int64 { return &v.D }, showDuration}
	knobSvc   = knob{"service", 0, func(v *vars) *int64 { return &v.S }, showDuration}
	knobNB    = knob{"nginx-burst", 0, func(v *vars) *int64 { return &v.NB }, showCount}
	knobSpan  = knob{"span", 0, func(v *vars) *int64 { return &v.N }, showDuration}
)

func showCount(n, _ int64) string { return fmt.Sprint(n) }

// showDuration prints ticks as a duration rounded down to a whole hour,
// minute, second, ms or us (the largest of which it holds ten), so that
// the figure suggested still fits.
func showDuration(n, tick int64) string {
	d := time.Duration(n) * time.Duration(tick)
	for _, u := range []time.Duration{time.Hour, time.Minute, time.Second, time.Millisecond, time.Microsecond} {
		if d >= 10*u {
			return d.Truncate(u).String()
		}
	}
	return d.String()
}

// bound is one intermediate of a script that must stay below 2^53.
type bound struct {
	what string
	// exact is its largest value for the policy; worst is an upper bound
	// that grows with each of knobs (gcd taken as 1), from which a
	// suggestion is searched.
	exact, worst func(v vars) *big.Int
	knobs        []knob
}

func bi(x int64) *big.Int { return big.NewInt(x) }

func mul(xs ...int64) *big.Int {
	p := bi(1)
	for _, x := range xs {
		p.Mul(p, bi(x))
	}
	return p
}

func add(xs ...*big.Int) *big.Int {
	s := bi(0)
	for _, x := range xs {
		s.Add(s, x)
	}
	return s
}

func ceilDiv(a, b *big.Int) *big.Int {
	q, m := new(big.Int).QuoRem(a, b, new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, bi(1))
	}
	return q
}

// bounds lists the intermediates of the script of name, as its arithmetic
// forms them (see the comments in its .lua file).
func bounds(name string) []bound {
	spanPer := bound{"now + per", func(v vars) *big.Int { return add(bi(v.N), bi(v.W)) }, nil, []knob{knobSpan, knobPer}}
	bucketTAT := func(withDelay bool) bound {
		f := func(v vars) *big.Int {
			d := int64(0)
			if withDelay {
				d = v.D
			}
			return add(bi(v.N), ceilDiv(mul(v.B, v.W), bi(v.L)), bi(d), bi(2))
		}
		what, knobs := "now + burst*per/rate + 2", []knob{knobSpan, knobPer, knobBurst}
		if withDelay {
			what, knobs = "now + burst*per/rate + max-delay + 2", append(knobs, knobDelay)
		}
		return bound{what, f, nil, knobs}
	}
	burstInterval := bound{"burst*per/gcd(rate, per)",
		func(v vars) *big.Int { return mul(v.B, v.W/intmath.GCD(v.L, v.W)) },
		func(v vars) *big.Int { return mul(v.B, v.W) },
		[]knob{knobPer, knobBurst}}
	switch name {
	case "fixed-window", "sliding-log":
		return []bound{spanPer}
	case "sliding-window":
		return []bound{
			{"rate*per", func(v vars) *big.Int { return mul(v.L, v.W) }, nil, []knob{knobPer, knobRate}},
			{"now + 2*per", func(v vars) *big.Int { return add(bi(v.N), mul(2, v.W)) }, nil, []knob{knobSpan, knobPer}},
		}
	case "token-bucket":
		return []bound{
			{"(burst*per + (max-delay+1)*rate)/gcd(rate, per)",
				func(v vars) *big.Int {
					g := intmath.GCD(v.L, v.W)
					return add(mul(v.B, v.W/g), mul(v.D+1, v.L/g))
				},
				func(v vars) *big.Int { return add(mul(v.B, v.W), mul(v.D+1, v.L)) },
				[]knob{knobPer, knobBurst, knobDelay, knobRate}},
			bucketTAT(true),
		}
	case "gcra":
		return []bound{burstInterval, bucketTAT(true)}
	case "leaky-bucket":
		return []bound{burstInterval, bucketTAT(false)}
	case "nginx":
		drain := func(v vars) *big.Int { // the ms a full burst takes to drain, in ticks
			r := mul(v.L, 1000)
			r.Quo(r, bi(v.W/(1000*v.ms))) // per is 1s or 1m: scale = W/1s
			return new(big.Int).Mul(ceilDiv(mul(v.NB+1, 1_000_000), r), bi(v.ms))
		}
		return []bound{
			{"rate*1000", func(v vars) *big.Int { return mul(v.L, 1000) }, nil, []knob{knobRate}},
			{"(nginx-burst+1)*10^6", func(v vars) *big.Int { return mul(v.NB+1, 1_000_000) }, nil, []knob{knobNB}},
			{"now + the drain time of the burst", func(v vars) *big.Int { return add(bi(v.N), drain(v)) }, nil, []knob{knobSpan, knobNB}},
		}
	case "guava-bursty", "guava-warming-up":
		// nextFree runs ahead of now by at most the waits of the stored
		// and fresh permits of one cost beyond the timeout: (cost +
		// burst) intervals of per/rate, in us, times the cold factor
		// (counted as burst here: the ramp's cold interval is at most
		// cold-factor stable intervals)
		return []bound{{"now/1000 + (cost + burst) * per/rate/1000 * 16 + max-delay/1000",
			func(v vars) *big.Int {
				us := max(v.ms/1000, 1) // ticks per us
				return add(bi(v.N/us), mul(v.C+v.B, ceilDiv(bi(v.W), bi(v.L)).Int64()/us+1, 16), bi(v.D/us))
			}, nil, []knob{knobSpan, knobPer, knobBurst, knobDelay}}}
	case "uber-ratelimit":
		return []bound{{"now + (cost + burst) * per/rate", func(v vars) *big.Int {
			return add(bi(v.N), mul(v.C+v.B+10, v.W/v.L+1))
		}, nil, []knob{knobSpan, knobPer, knobBurst}}}
	case "concurrency":
		return []bound{{"now + service", func(v vars) *big.Int { return add(bi(v.N), bi(v.S)) }, nil, []knob{knobSpan, knobSvc}}}
	}
	return nil
}

// CheckRange refuses a policy for which the script of name could form an
// intermediate of 2^53 or more, where Lua's doubles stop being exact
// integers. maxCost is the largest cost a request will have; span is the
// largest now that will be passed (ns since the caller's epoch; ClockRedis
// ignores it and checks up to the year 2100). The error names the product
// that overflows, the power of two it needs, and what would fit. With
// ClockRedis it also refuses a per, max-delay or service that is not a
// whole number of microseconds.
//
// For an all-of row it checks every limit against its own script's range.
func CheckRange(name string, clock Clock, p algorithms.Params, maxCost int64, span time.Duration) error {
	if name == AllOf {
		if _, err := algorithms.New(name, p); err != nil {
			return err
		}
		if err := Unsupported(p); err != nil {
			return err
		}
		for i, m := range p.Members {
			if err := CheckRange(m.Name, clock, m.Params, maxCost, span); err != nil {
				return &MemberError{Index: i, Member: m, Err: err}
			}
		}
		return nil
	}
	if _, err := lookup(name); err != nil {
		return err
	}
	if _, err := algorithms.New(name, p); err != nil {
		return err
	}
	if err := Unsupported(p); err != nil {
		return err
	}
	tick := clock.tick()
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"per", p.Per}, {"max-delay", p.MaxDelay}, {"service", p.Service}} {
		if int64(f.d)%tick != 0 {
			return fmt.Errorf("%s %v is not a whole number of microseconds, the resolution of --clock redis (use --clock arg, or round it)", f.name, f.d)
		}
	}
	if maxCost < 1 {
		maxCost = 1
	}
	v := vars{L: p.Rate, W: int64(p.Per) / tick, B: p.Burst, C: maxCost,
		D: int64(p.MaxDelay) / tick, S: int64(p.Service) / tick, N: int64(span) / tick, ms: int64(time.Millisecond) / tick}
	v.NB = p.Burst - 1
	if p.NginxBurstSet {
		v.NB = p.NginxBurst
	}
	if clock == ClockRedis {
		v.N = redisClockHorizon
	}
	if v.N < 0 {
		v.N = -v.N
	}
	if mul(v.C).Cmp(exactLimit) >= 0 {
		return fmt.Errorf("%s: a cost of %d is not below 2^53", name, maxCost)
	}
	for _, b := range bounds(name) {
		x := b.exact(v)
		if x.Cmp(exactLimit) < 0 {
			continue
		}
		msg := fmt.Sprintf("%s with per %v, rate %d and burst %d needs %s = %s, 2^%d, above 2^53, where Lua's numbers stop being exact integers",
			name, p.Per, p.Rate, p.Burst, b.what, x, x.BitLen())
		if name == "nginx" && p.NginxBurstSet {
			msg = fmt.Sprintf("%s with per %v, rate %d and nginx-burst %d needs %s = %s, 2^%d, above 2^53, where Lua's numbers stop being exact integers",
				name, p.Per, p.Rate, p.NginxBurst, b.what, x, x.BitLen())
		}
		if s := suggest(name, v, b, tick); s != "" {
			msg += "; use " + s
		}
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// suggest returns "per <= X or rate <= Y": for each of b's knobs, the
// largest value that makes every bound of name fit with the others as they
// are (gcds taken as 1, so the suggestion holds whatever they are).
func suggest(name string, v vars, failing bound, tick int64) string {
	// per and rate change gcd(rate, per): search them on the bounds with
	// the gcd taken as 1, which hold whatever it is
	fits := func(v vars, worst bool) bool {
		for _, b := range bounds(name) {
			f := b.exact
			if worst && b.worst != nil {
				f = b.worst
			}
			if f(v).Cmp(exactLimit) >= 0 {
				return false
			}
		}
		return true
	}
	var out []string
	for _, k := range failing.knobs {
		if name == "nginx" && k.name == "per" {
			continue // nginx takes 1s or 1m only
		}
		try := func(x int64) bool {
			w := v
			*k.get(&w) = x
			return fits(w, k.name == "per" || k.name == "rate")
		}
		// find the largest x in [min, cur) that fits; skip the knob when
		// even its least value does not
		lo, hi := k.min, *k.get(&v)
		if lo >= hi || !try(lo) {
			continue
		}
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if try(mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
		out = append(out, fmt.Sprintf("%s <= %s", k.name, k.show(lo, tick)))
	}
	return strings.Join(out, " or ")
}
