package algorithms

import (
	"math/bits"
	"time"
	"unsafe"
)

// SlidingWindow is the sliding-window counter that Cloudflare describes in
// "How we built rate limiting capable of scaling to millions of domains": two
// fixed-window counts stand in for the sliding log, assuming the previous
// window's requests were spread evenly over it.
//
// Rule: with windows aligned as for FixedWindow, a request of cost c at t in
// window k = floor(t/W), at offset e = t - k*W, sees prev = count[k-1] and
// cur = count[k] (prev is 0 when the key's last count is older than k-1), and
// is admitted iff
//
//	prev*(W-e) + (cur+c)*W <= L*W
//
// that is, prev weighted by the share of the sliding window [t-W, t) that
// overlaps window k-1, in exact integers (compared by division, so no product
// overflows); it then adds c to count[k]. It admits at most L per aligned
// window, and can exceed L in a sliding window when the previous window's
// requests were not spread evenly.
//
// RetryAfter: the shortest exact wait, which may fall later in window k
// (prev's weight shrinks as e grows), in window k+1 (where prev' = cur and
// cur' = 0) or at the start of window k+2 (both counts forgotten): the
// smallest integer e' with prev*(W-e') <= (L-cur-c)*W is W - floor((L-cur-c)*W
// / prev). Never when c > L.
//
// count-rejected: a rejected request's cost is added to count[k] too (Kong's
// sliding mode), including a request whose cost can never fit, and
// retry_after is computed on the counts with it. Counts saturate at MaxInt64.
//
// State per key: the index of the current window and two counts, three
// int64, 24 bytes. A key's state is released at (k+2)*W, when the window it
// counted is no longer the previous one.
//
// Redis: redislua/lua/sliding_window.lua is this rule as a Lua script, decision for
// decision (`ratesim lua sliding-window` prints it; redislua's tests hold it to
// this type on randomised traces).
type SlidingWindow struct {
	keyed[slidingWindowState]
	slidingWindowRule
	clock windowClock
}

// slidingWindowRule is SlidingWindow's rule over one key's state, which its
// Limiter and its Table (a cluster's store) both call, and, on counts held
// elsewhere, sync's nodes.
//
// Time going back (a store passed the nodes' clocks): a request in a window
// earlier than the one the state counts finds no counts for its windows and
// counts from 0; when it is counted, the state becomes its window's, and the
// later counts are lost, as with a script that keeps one window index and
// two counts per key.
type slidingWindowRule struct {
	limit         int64         // L
	window        time.Duration // W
	countRejected bool
	plainState[slidingWindowState]
}

// slidingWindowState is one key's two counts.
type slidingWindowState struct {
	win  int64 // k, the index of the window cur belongs to
	prev int64 // cost counted in window win-1
	cur  int64 // cost counted in window win
}

var (
	_ Limiter     = (*SlidingWindow)(nil)
	_ Reserver    = (*SlidingWindow)(nil)
	_ stateHolder = (*SlidingWindow)(nil)
	_ Inspector   = (*SlidingWindow)(nil)
	_ WindowRule  = (*slidingWindowRule)(nil)
)

func newSlidingWindowLimiter(p Params) (Limiter, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("sliding-window", p, "count-rejected"); err != nil {
		return nil, err
	}
	l := &SlidingWindow{slidingWindowRule: *newSlidingWindowRule(p)}
	l.keyed = newKeyed(int64(unsafe.Sizeof(slidingWindowState{})), func(s *slidingWindowState) time.Duration {
		return time.Duration(s.win+2) * l.window
	})
	return l, nil
}

func newSlidingWindowRule(p Params) *slidingWindowRule {
	return &slidingWindowRule{limit: p.Rate, window: p.Per, countRejected: p.CountRejected}
}

// countsIn returns the counts of windows k-1 and k as a request in window
// k sees them: the stored ones when k is the stored window, shifted by one
// when k is the next, and nothing otherwise (older windows, or, with time
// going back, a window before the stored one).
func (s *slidingWindowState) countsIn(k int64) (prev, cur int64) {
	switch s.win {
	case k:
		return s.prev, s.cur
	case k - 1:
		return s.cur, 0
	}
	return 0, 0
}

// Decide admits the request iff the weighted counts leave room for cost.
func (l *SlidingWindow) Decide(now time.Duration, key Key, cost int64) Decision {
	s := l.get(now, key)
	k, e := l.clock.at(now, l.window)
	d, counted := l.decideIn(s, k, e, cost)
	if counted {
		l.touch(key, 0)
	}
	return d
}

// decideIn decides a request of cost in window k, at offset e in it, on
// s, and counts it there when it is admitted or counted rejected.
func (r *slidingWindowRule) decideIn(s *slidingWindowState, k int64, e time.Duration, cost int64) (Decision, bool) {
	prev, cur := s.countsIn(k)
	if r.admits(e, prev, cur, cost) {
		s.win, s.prev, s.cur = k, prev, cur+cost
		return Decision{Verdict: Accept}, true
	}
	if r.countRejected {
		s.win, s.prev, s.cur = k, prev, addSat(cur, cost)
	}
	return r.reject(e, prev, cur, cost), r.countRejected
}

// admits is the rule's test: prev*(W-e) + (cur+cost)*W <= L*W.
func (r *slidingWindowRule) admits(e time.Duration, prev, cur, cost int64) bool {
	return cost <= r.limit && cur <= r.limit-cost && r.fits(prev, r.window-e, cur, cost)
}

// reject is the decision on a request that the counts do not admit.
func (r *slidingWindowRule) reject(e time.Duration, prev, cur, cost int64) Decision {
	if r.countRejected {
		// retry_after counts the rejected attempt against its own retry
		cur = addSat(cur, cost)
	}
	if cost > r.limit {
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	return Decision{Verdict: Reject, RetryAfter: r.retryAfter(e, prev, cur, cost)}
}

// decideCounts is the rule on the counts of the request's window and the
// one before, at offset e: admit iff prev*(W-e) + (cur+cost)*W <= L*W.
func (r *slidingWindowRule) decideCounts(e time.Duration, prev, cur, cost int64) (Decision, bool) {
	if r.admits(e, prev, cur, cost) {
		return Decision{Verdict: Accept}, true
	}
	return r.reject(e, prev, cur, cost), r.countRejected
}

func (r *slidingWindowRule) decide(s *slidingWindowState, _ bool, now time.Duration, cost int64) (Decision, bool) {
	k, e := windowAt(now, r.window)
	return r.decideIn(s, k, e, cost)
}

// Window implements WindowRule.
func (r *slidingWindowRule) Window() time.Duration { return r.window }

// WindowIndex implements WindowRule: floor(now/W).
func (r *slidingWindowRule) WindowIndex(now time.Duration) int64 {
	k, _ := windowAt(now, r.window)
	return k
}

// DecideCounts implements WindowRule.
func (r *slidingWindowRule) DecideCounts(now time.Duration, prev, cur, cost int64) (Decision, bool) {
	_, e := windowAt(now, r.window)
	return r.decideCounts(e, prev, cur, cost)
}

// incr adds cost to the count of at's window (Incrementer): the current
// count, or the previous one when the state has moved one window on; a
// state of an older window shifts to at's; one more than a window ahead
// is left alone.
func (r *slidingWindowRule) incr(s *slidingWindowState, known bool, at time.Duration, cost int64) bool {
	k, _ := windowAt(at, r.window)
	switch {
	case !known || s.win < k:
		prev, _ := s.countsIn(k)
		if !known {
			prev = 0
		}
		s.win, s.prev, s.cur = k, prev, cost
	case s.win == k:
		s.cur = addSat(s.cur, cost)
	case s.win == k+1:
		s.prev = addSat(s.prev, cost)
	default:
		return false
	}
	return true
}

// fits reports whether prev*span + (cur+cost)*W <= L*W, given cur+cost <= L
// and span >= 1: prev*span <= room, where room = (L-cur-cost)*W <= L*W fits
// an int64 (checkPolicy). prev (>= 0) may be any count, so the product is
// formed in 128 bits, which is exact and cheaper than dividing.
func (l *slidingWindowRule) fits(prev int64, span time.Duration, cur, cost int64) bool {
	room := (l.limit - cur - cost) * int64(l.window)
	hi, lo := bits.Mul64(uint64(prev), uint64(span))
	return hi == 0 && lo <= uint64(room)
}

// retryAfter returns the shortest wait after which a request of cost
// (<= L) rejected at offset e of its window, with counts prev and cur, fits.
// The weighted sum never increases with time (it is continuous across a
// window start, where prev*(W-W) + cur*W becomes cur*(W-0) + 0), so the
// instants at which it fits form one interval to infinity, and the first
// candidate found in time order is the answer.
func (l *slidingWindowRule) retryAfter(e time.Duration, prev, cur, cost int64) time.Duration {
	w := int64(l.window)
	if cur <= l.limit-cost {
		// Later in this window: prev*(W-e') <= room iff W-e' <= room/prev.
		// prev > 0 here, else the request would have fitted.
		if q := (l.limit - cur - cost) * w / prev; q >= 1 {
			return max(time.Duration(w-q)-e, 1)
		}
	}
	toNext := l.window - e
	if cur <= l.limit-cost {
		return toNext // fits as window k+1 starts: cur*W + c*W <= L*W
	}
	// In window k+1: cur*(W-e') <= (L-c)*W iff W-e' <= (L-c)*W/cur.
	if q := (l.limit - cost) * w / cur; q >= 1 {
		return toNext + time.Duration(w-q)
	}
	return toNext + l.window // window k+2: both counts forgotten
}

// Inspect returns key's gauges at now: the "previous" and "current" window
// counts as a request at now sees them (shifted when now is in a later
// window than the stored one), the weighted "estimate" prev*(W-e)/W + cur
// that the rule compares with L (before the request's own cost), and
// "limit", L. It releases what is fresh by now and changes no live key's
// state.
func (l *SlidingWindow) Inspect(now time.Duration, key Key) []Gauge {
	l.expire(now)
	s, known := l.stateOf(key)
	return l.gauges(&s, known, now)
}

func (r *slidingWindowRule) gauges(s *slidingWindowState, _ bool, now time.Duration) []Gauge {
	k, e := windowAt(now, r.window)
	prev, cur := s.countsIn(k)
	est := float64(prev)*float64(r.window-e)/float64(r.window) + float64(cur)
	return []Gauge{
		{"previous", float64(prev)},
		{"current", float64(cur)},
		{"estimate", est},
		{"limit", float64(r.limit)},
	}
}
