package algorithms

import (
	"fmt"
	"math"
	"time"
	"unsafe"
)

// HAProxy is a stick table's http_req_rate(P) counter with the rule
//
//	http-request track-sc0 <key> table <t>
//	http-request deny if { sc_http_req_rate(0) gt L }
//
// to the letter of HAProxy 2.6: the counter is a struct freq_ctr updated by
// update_freq_ctr_period and read by read_freq_ctr_period
// (include/haproxy/freq_ctr.h, src/freq_ctr.c: freq_ctr_total), counted by
// the track-sc action (src/http_act.c: http_action_track_sc) and read by the
// sample fetch sc_http_req_rate (src/stick_table.c:
// smp_fetch_sc_http_req_rate).
//
// Clock: HAProxy's now_ms, the date in whole milliseconds as a 32-bit
// unsigned integer that wraps (src/clock.c: now_ms = tv_sec*1000 +
// tv_usec/1000). ratesim's instant t (ns since the Unix epoch) is the tick
// m = floor(t/1ms), and HAProxy's arithmetic on ticks is done modulo 2^32 as
// in C. The period P is in ticks: per must be a whole number of ms, from
// 1ms to 2^31-1 ms.
//
// State per key, as freq_ctr holds it: curr_tick (the start of the current
// period), curr_ctr and prev_ctr (the hits of the current and previous
// periods). A new stick-table entry is zeroed: curr_tick 0.
//
// Rule, for a hit at tick m:
//  1. Count (update_freq_ctr_period with inc 1), whatever the verdict:
//     track-sc runs before the deny rule, so every request is counted,
//     denied ones included. If m - curr_tick < P (mod 2^32), curr_ctr += 1.
//     Otherwise the period rotates: prev_ctr = curr_ctr, curr_ctr = 1,
//     curr_tick += P; and if then m - curr_tick >= P too (at least two
//     periods since the old tick), prev_ctr = 0 and curr_tick = m. The tick
//     is stored with its lowest bit cleared (HAProxy uses that bit as a
//     lock), so a window restarted at an odd ms starts one ms earlier.
//  2. Read (read_freq_ctr_period, which is freq_ctr_total with pend = -1):
//     remain = curr_tick + P - m (as a signed int); if remain < 0, remain
//     += P and the counts shift (past = curr if remain >= 0 now, else 0;
//     curr = 0); if curr is 0 and past <= 1, the rate is past ("flapping
//     correction"); else it is floor((past*remain + curr*P) / P), that is
//     curr + floor(past*remain/P): the previous period weighted by the
//     share of the current period still to come.
//  3. Deny iff that estimate, which includes this request, is > L.
//
// So a key's periods are anchored at its first hit, when the entry is new
// and now_ms is at least 2P past a multiple of 2^32 (the entry's tick 0
// is then more than two periods old): its first period starts at its
// first hit's even ms. A key first seen in the first P ms after now_ms
// wraps (every 2^32 ms, about 49.7 days; ratesim's synthetic traffic
// starts at time 0, where now_ms is 0) counts in a period anchored at the
// wrap, and one first seen between P and 2P after it in a period anchored
// at P. A fresh key admits L requests per period; the (L+1)th is denied.
//
// Cost (HAProxy has none): a request of cost c counts as c hits in the same
// ms, all counted, admitted all or none: denied iff the estimate after the
// c hits is > L. c > L is never admitted: RetryAfter = Never.
//
// RetryAfter: the wait until the first whole ms at which the same request
// (counted again) would be admitted if nothing else arrived: in the rest of
// the current period the estimate falls as remain falls; in the next one it
// is c + floor(curr*remain'/P); two periods after the tick it is c.
//
// Counts are 32-bit as HAProxy's (they wrap after 2^32 hits in one period,
// as HAProxy's do). The table's expire is not modelled: an entry is taken
// as gone at curr_tick + 2P, when it no longer counts (a hit then finds the
// same as on a new entry), which is what HAProxy does when the table's
// expire is at least 2P (`ratesim import` requires it), except in the 2P ms
// after now_ms wraps, where HAProxy's surviving entry restarts its period
// at the hit and a new entry anchors it at the wrap.
//
// State per key here: curr_tick (as a 64-bit tick that does not wrap) and
// the two 32-bit counts, 16 bytes (HAProxy's freq_ctr is 12, in a stick
// table entry with its key and other data).
type HAProxy struct {
	keyed[haproxyState]
	limit  int64 // L, the gt threshold
	period int64 // P, in ticks (ms)
}

// haproxyState is one key's freq_ctr: tick is curr_tick in ms since the
// epoch (HAProxy holds its low 32 bits), curr and prev its counts.
type haproxyState struct {
	tick int64
	curr uint32
	prev uint32
}

var (
	_ Limiter     = (*HAProxy)(nil)
	_ Reserver    = (*HAProxy)(nil)
	_ Prefetcher  = (*HAProxy)(nil)
	_ stateHolder = (*HAProxy)(nil)
	_ Inspector   = (*HAProxy)(nil)
)

// haproxyMaxPeriod is the longest period: 2^31-1 ms, so that two periods
// stay below the 2^32 ms after which now_ms wraps (HAProxy's timers are
// bounded by the same, about 24.8 days).
const haproxyMaxPeriod = math.MaxInt32

func newHAProxyLimiter(p Params) (Limiter, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("haproxy", p); err != nil {
		return nil, err
	}
	if p.Per%time.Millisecond != 0 || p.Per/time.Millisecond > haproxyMaxPeriod {
		return nil, &ParamError{Field: "per", Found: p.Per.String(),
			Want: fmt.Sprintf("haproxy's http_req_rate period is whole milliseconds, from 1ms to %v", haproxyMaxPeriod*time.Millisecond)}
	}
	if p.Rate > math.MaxUint32-1 {
		return nil, &ParamError{Field: "rate", Found: fmt.Sprint(p.Rate),
			Want: fmt.Sprintf("want at most %d (haproxy's rate is a 32-bit count, so gt %d would deny nothing)", uint32(math.MaxUint32-1), uint32(math.MaxUint32-1))}
	}
	h := &HAProxy{limit: p.Rate, period: int64(p.Per / time.Millisecond)}
	h.keyed = newKeyed(int64(unsafe.Sizeof(haproxyState{})), func(s *haproxyState) time.Duration {
		return time.Duration(s.tick+2*h.period) * time.Millisecond
	})
	return h, nil
}

// newEntry is a new stick-table entry as a hit at tick m finds it: zeroed,
// its curr_tick 0 on HAProxy's 32-bit clock, the last multiple of 2^32 ms
// at or before m.
func newEntry(m int64) haproxyState {
	return haproxyState{tick: m - int64(uint32(m))}
}

// update is update_freq_ctr_period(ctr, P, inc) at tick m.
func (h *HAProxy) update(s *haproxyState, m int64, inc uint32) {
	p := uint32(h.period)
	if uint32(m-s.tick) < p {
		s.curr += inc
		return
	}
	s.prev, s.curr = s.curr, inc
	tick := s.tick + h.period
	if uint32(m-tick) >= p { // at least two periods since the old tick
		s.prev = 0
		tick = m
	}
	s.tick = tick &^ 1
}

// read is read_freq_ctr_period(ctr, P) at tick m: freq_ctr_total(ctr, P,
// -1) / P, truncated to 32 bits as div64_32 returns it.
func (h *HAProxy) read(s *haproxyState, m int64) uint32 {
	p := uint32(h.period)
	past, curr := uint64(s.prev), uint64(s.curr)
	remain := int32(uint32(s.tick) + p - uint32(m))
	if remain < 0 {
		remain += int32(p)
		if remain >= 0 {
			past = curr
		} else {
			past = 0
		}
		curr = 0
	}
	if curr == 0 && past <= 1 { // flapping correction (pend < 0)
		return uint32(past)
	}
	// past*remain, with remain converted to unsigned as C does (a negative
	// remain only ever multiplies a past of 0).
	total := past*uint64(int64(remain)) + curr*uint64(p)
	return uint32(total / uint64(p))
}

// Decide counts the hit and denies it iff the rate read after it is > L.
func (h *HAProxy) Decide(now time.Duration, key Key, cost int64) Decision {
	s := h.get(now, key)
	m := msAt(now)
	if !h.isLive(key) {
		*s = newEntry(m)
	}
	h.update(s, m, uint32(cost))
	h.touch(key, 0)
	if int64(h.read(s, m)) <= h.limit {
		return Decision{Verdict: Accept}
	}
	if cost > h.limit {
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	return Decision{Verdict: Reject, RetryAfter: max(time.Duration(h.retryAt(s, m, cost))*time.Millisecond-now, 1)}
}

// retryAt returns the first tick after m at which a hit of cost on s (the
// state after the denied hit at m) would be admitted; cost <= L. The
// estimate never rises while no hit comes within each of the three spans
// below, so the first admitting tick of the first span that has one is the
// answer.
func (h *HAProxy) retryAt(s *haproxyState, m int64, cost int64) int64 {
	p, l := h.period, h.limit
	first := m + 1
	// firstFit returns the first tick t >= from with counted + cost +
	// floor(weighted*remain/P) <= L, where remain = end - t, if one is
	// before until: weighted*remain < (L-counted-cost+1)*P.
	firstFit := func(from, until, end, counted, weighted int64) (int64, bool) {
		k := l - counted - cost + 1
		if k < 1 {
			return 0, false
		}
		t := from
		if weighted > 0 {
			// the largest remain with weighted*remain <= k*P-1
			t = max(t, end-(k*p-1)/weighted)
		}
		return t, t < until
	}
	// The current period: m' - tick < P; curr grows by cost, prev weighs
	// remain = tick + P - m'.
	if t, ok := firstFit(first, s.tick+p, s.tick+p, int64(s.curr), int64(s.prev)); ok {
		return t
	}
	// The next one: P <= m' - tick < 2P rotates to prev = curr, curr =
	// cost, with the tick at (tick+P) with its low bit cleared.
	next := (s.tick + p) &^ 1
	if t, ok := firstFit(max(first, s.tick+p), s.tick+2*p, next+p, 0, int64(s.curr)); ok {
		return t
	}
	// Two periods on: the counter restarts with curr = cost <= L.
	return max(first, s.tick+2*p)
}

// Inspect returns key's gauges at now: "rate", what sc_http_req_rate
// would read at now before a new hit is counted (0 for a fresh key),
// "current" and "previous", the counts of the current and previous
// periods as that read sees them, and "limit", L. It releases what is
// fresh by now and changes no live key's state.
func (h *HAProxy) Inspect(now time.Duration, key Key) []Gauge {
	h.expire(now)
	s, known := h.stateOf(key)
	if !known {
		s = newEntry(msAt(now))
	}
	m := msAt(now)
	prev, curr := s.prev, s.curr
	if d := uint32(m - s.tick); d >= uint32(h.period) {
		prev, curr = 0, 0
		if d < 2*uint32(h.period) {
			prev = s.curr
		}
	}
	return []Gauge{
		{"rate", float64(h.read(&s, m))},
		{"current", float64(curr)},
		{"previous", float64(prev)},
		{"limit", float64(h.limit)},
	}
}
