package algorithms

import (
	"fmt"
	"math/bits"
	"time"
	"unsafe"
)

// Nginx is nginx's limit_req (src/http/modules/ngx_http_limit_req_module.c)
// to the letter, with its millisecond clock and integer arithmetic, for one
// limit_req_zone and one limit_req directive.
//
// Units, as nginx has them: rate is in milli-requests per second,
// L*1000/scale truncated, where per must be 1s (r/s, scale 1) or 1m (r/m,
// scale 60); excess, burst and delay are in milli-requests (burst=N is
// N*1000); time is whole milliseconds, now_ms = floor(t/1ms).
//
// Rule: a key's first request creates its node without the formula: it is
// admitted without delay and sets excess = 0, last = now_ms. After that a
// request computes ms = now_ms - last and
//
//	excess = max(0, stored_excess - rate*ms/1000 + 1000)
//
// (integer division, as C's for these non-negative values). It is rejected
// iff excess > burst*1000, leaving the state unchanged. Otherwise excess is
// stored and last = now_ms only when ms != 0 (nginx guards against a clock
// stepping back; a Limiter's time never goes back, so there ms = 0 means
// now_ms = last already; a store's can, see nginxRule). An admitted request is delayed by
// (excess - delay*1000)*1000/rate whole ms when excess > delay*1000, else not
// at all; with nodelay it is never delayed. burst defaults to B-1 so that a
// fresh key admits B at once, like the buckets.
//
// Cost (nginx has none): a request of cost c counts as c requests arriving
// in the same millisecond, admitted all or none. On a fresh key it stores
// excess (c-1)*1000; on a known key excess = max(0, stored_excess -
// rate*ms/1000 + 1000) + (c-1)*1000. Its delay is that of the last of the c.
// c > burst+1 can never be admitted: RetryAfter = Never.
//
// RetryAfter: the wait until the first whole millisecond m at which the same
// request would fit, stored_excess - rate*(m-last)/1000 + c*1000 <=
// burst*1000, i.e. m = last + ceil((stored_excess + c*1000 - burst*1000) *
// 1000/rate); the wait is m*1ms - t (>= 1 ns, as m > now_ms).
//
// State per key: excess and last, two int64, 16 bytes (nginx's node holds
// them beside its tree links and the key). A key is fresh once its next
// request would compute excess 0: then it stores excess (c-1)*1000 and
// last = now_ms exactly as a new node does, so a stored and a fresh key give
// the same verdicts from then on. That is the first ms with
// rate*(ms-last)/1000 >= stored_excess + 1000, at
// last + ceil((stored_excess+1000)*1000/rate) ms, where the state is
// released. This is nginx with a zone that never fills: with the option
// zone (Params.NginxZone), NginxZone keeps nodes in a zone of that size
// and frees them as nginx does (its expiry, LRU eviction and refusals).
//
// Redis: redislua/lua/nginx.lua is this rule as a Lua script, decision for
// decision (`ratesim lua nginx` prints it; redislua's tests hold it to
// this type on randomised traces).
//
// Shared zone (Params.NginxRoutes): one zone named by several locations,
// each with its own limit_req burst=, delay= and nodelay. nginx keeps the
// zone's node (excess, last) per key once, in the shared memory, and each
// location's request computes the same excess from it and compares it with
// its own location's burst (ngx_http_limit_req_lookup reads limit->burst,
// the location's, against the zone's node). So does this row: one state
// per key, the rule of the request's route (DecideRoute). A key is
// released by the same instant whatever the route, as that instant reads
// only the rate and the stored excess.
type Nginx struct {
	keyed[nginxState]
	nginxRule
	// routes holds, at index r, the rule of route r when the zone is
	// shared (nil: the row's own rule)
	routes []*nginxRule
}

// nginxRule is Nginx's rule over one key's node, which its Limiter and its
// Table (a cluster's store) both call.
//
// Time going back (a store passed the nodes' clocks), to the letter of
// nginx's guard against a clock that steps back: ms = now_ms - last below
// -60000 counts as 1, and between -60000 and 0 as 0, before the formula
// (so a step back of more than a minute moves last back with it). A
// retry_after is then counted as if time ran on from last. Instants before
// time 0 (a node's clock skewed back at the start) are whole ms rounded
// down.
type nginxRule struct {
	rate    int64 // milli-requests per second
	burst   int64 // the nginx burst, in milli-requests (burst=N is N*1000)
	delay   int64 // the delay threshold in milli-requests (delay=N is N*1000)
	nodelay bool
	plainState[nginxState]
}

// nginxState is one key's node: excess in milli-requests and last in ms.
type nginxState struct {
	excess int64
	last   int64
}

var (
	_ Limiter      = (*Nginx)(nil)
	_ Reserver     = (*Nginx)(nil)
	_ stateHolder  = (*Nginx)(nil)
	_ Inspector    = (*Nginx)(nil)
	_ RouteDecider = (*Nginx)(nil)
)

// nginxMaxBurst bounds nginx's burst and delay so that every product the
// limiter forms (burst*1000*1000 and a little more) fits an int64.
const nginxMaxBurst = maxExact / 10_000_000

func newNginxLimiter(p Params) (Limiter, error) {
	r, err := newNginxRuleChecked(p)
	if err != nil {
		return nil, err
	}
	if p.NginxZone != 0 {
		if len(p.NginxRoutes) > 0 {
			return nil, &ParamError{Field: "zone", Found: fmt.Sprint(p.NginxZone), Want: "no zone size for a zone shared by several routes (not modelled)"}
		}
		if err := checkZone(p.NginxZone); err != nil {
			return nil, err
		}
		return newNginxZone(r, p.NginxZone), nil
	}
	n := &Nginx{nginxRule: *r}
	for _, rt := range p.NginxRoutes {
		q := p
		q.NginxBurst, q.NginxBurstSet, q.NginxDelay, q.Nodelay = rt.Burst, true, rt.Delay, rt.Nodelay
		rr, err := newNginxRuleChecked(q)
		if err != nil {
			return nil, err
		}
		if int(rt.Route) >= len(n.routes) {
			n.routes = append(n.routes, make([]*nginxRule, int(rt.Route)+1-len(n.routes))...)
		}
		n.routes[rt.Route] = rr
	}
	n.keyed = newKeyed(int64(unsafe.Sizeof(nginxState{})), func(s *nginxState) time.Duration {
		return time.Duration(s.last+n.drainedAfter(s.excess)) * time.Millisecond
	})
	return n, nil
}

// newNginxRule returns the rule of valid params (NewTable builds the
// Limiter first, which checks them).
func newNginxRule(p Params) *nginxRule {
	r, err := newNginxRuleChecked(p)
	if err != nil {
		panic("algorithms: nginx rule of invalid params: " + err.Error())
	}
	return r
}

func newNginxRuleChecked(p Params) (*nginxRule, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("nginx", p, "burst", "nodelay", "delay", "zone"); err != nil {
		return nil, err
	}
	var scale int64
	switch p.Per {
	case time.Second:
		scale = 1
	case time.Minute:
		scale = 60
	default:
		return nil, &ParamError{Field: "per", Found: p.Per.String(),
			Want: "nginx takes a rate per 1s (r/s) or per 1m (r/m) only"}
	}
	burst := p.Burst - 1
	if p.NginxBurstSet {
		burst = p.NginxBurst
	}
	if burst < 0 || burst > nginxMaxBurst {
		return nil, &ParamError{Field: "burst", Found: fmt.Sprint(burst),
			Want: fmt.Sprintf("want an nginx burst from 0 to %d", int64(nginxMaxBurst))}
	}
	if p.NginxDelay < 0 || p.NginxDelay > nginxMaxBurst {
		return nil, &ParamError{Field: "delay", Found: fmt.Sprint(p.NginxDelay),
			Want: fmt.Sprintf("want an nginx delay from 0 to %d", int64(nginxMaxBurst))}
	}
	// checkPolicy bounds L by maxExact/1s, so L*1000 fits; it is >= 16
	// (1 r/m), never 0.
	return &nginxRule{rate: p.Rate * 1000 / scale, burst: burst * 1000, delay: p.NginxDelay * 1000, nodelay: p.Nodelay}, nil
}

// drainedAfter returns the fewest ms after which stored excess e computes
// excess 0 for the next request: the least ms with rate*ms/1000 >= e + 1000.
func (n *nginxRule) drainedAfter(e int64) int64 {
	return exactCeilDiv((e+1000)*1000, n.rate)
}

// draining reports whether ms < drainedAfter(e): whether rate*ms/1000 <
// e + 1000, i.e. rate*ms < (e+1000)*1000, formed in 128 bits (ms >= 0 may be
// any gap), which is exact and cheaper than drainedAfter's division.
func (n *nginxRule) draining(ms, e int64) bool {
	hi, lo := bits.Mul64(uint64(ms), uint64(n.rate))
	return hi == 0 && lo < uint64((e+1000)*1000)
}

// Decide runs nginx's lookup and accounting for one request of cost
// requests.
func (n *Nginx) Decide(now time.Duration, key Key, cost int64) Decision {
	s := n.get(now, key)
	d, stored := n.decide(s, n.isLive(key), now, cost)
	if stored {
		n.touch(key, 0)
	}
	return d
}

// DecideRoute is Decide with the rule of the request's route, when the
// zone is shared (Params.NginxRoutes), else the row's own.
func (n *Nginx) DecideRoute(now time.Duration, key Key, cost int64, route uint16) Decision {
	rule := &n.nginxRule
	if int(route) < len(n.routes) && n.routes[route] != nil {
		rule = n.routes[route]
	}
	s := n.get(now, key)
	d, stored := rule.decide(s, n.isLive(key), now, cost)
	if stored {
		n.touch(key, 0)
	}
	return d
}

// msAt returns now in whole milliseconds, rounded down (also before 0).
func msAt(now time.Duration) int64 {
	ms := int64(now / time.Millisecond)
	if now%time.Millisecond < 0 {
		ms--
	}
	return ms
}

func (n *nginxRule) decide(s *nginxState, known bool, now time.Duration, cost int64) (Decision, bool) {
	if cost-1 > n.burst/1000 {
		return Decision{Verdict: Reject, RetryAfter: Never}, false
	}
	nowMs := msAt(now)
	extra := (cost - 1) * 1000
	var excess, ms int64
	if known {
		ms = nowMs - s.last
		switch { // nginx's guard against a clock stepping back
		case ms < -60000:
			ms = 1
		case ms < 0:
			ms = 0
		}
		if n.draining(ms, s.excess) {
			// rate*ms < (e+1000)*1000 here: no overflow.
			excess = max(0, s.excess-n.rate*ms/1000+1000)
		}
		excess += extra
		if excess > n.burst {
			need := s.excess + cost*1000 - n.burst
			m := s.last + exactCeilDiv(need*1000, n.rate)
			return Decision{Verdict: Reject, RetryAfter: max(time.Duration(m)*time.Millisecond-now, 1)}, false
		}
	} else {
		excess = extra
	}
	s.excess = excess
	if !known || ms != 0 {
		s.last = nowMs
	}
	if n.nodelay || excess <= n.delay {
		return Decision{Verdict: Accept}, true
	}
	if d := (excess - n.delay) * 1000 / n.rate; d > 0 {
		return Decision{Verdict: Delay, Delay: time.Duration(d) * time.Millisecond}, true
	}
	return Decision{Verdict: Accept}, true
}

// Inspect returns key's gauges at now, in requests: "excess", what nginx's
// formula leaves of the stored excess for a request at now before adding
// the request's own, max(0, stored - rate*ms/1000)/1000 (0 for a fresh
// key), and "burst", nginx's burst. It releases what is fresh by now and
// changes no live key's state.
func (n *Nginx) Inspect(now time.Duration, key Key) []Gauge {
	n.expire(now)
	s, known := n.stateOf(key)
	return n.gauges(&s, known, now)
}

func (n *nginxRule) gauges(s *nginxState, known bool, now time.Duration) []Gauge {
	var excess int64
	if known {
		// As Decide: past drainedAfter the formula gives 0, and the
		// guard keeps rate*ms from overflowing; a step back drains
		// nothing.
		if ms := max(msAt(now)-s.last, 0); ms < n.drainedAfter(s.excess) {
			excess = max(0, s.excess-n.rate*ms/1000)
		}
	}
	return []Gauge{{"excess", float64(excess) / 1000}, {"burst", float64(n.burst) / 1000}}
}
