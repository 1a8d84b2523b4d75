package algorithms

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unsafe"
)

// FixedWindow is the fixed-window counter, the limiter of envoy's ratelimit
// service and of the classic Redis recipe INCR key:floor(now/W) + EXPIRE W.
//
// Rule: time is cut into windows of length W aligned to multiples of W from
// time 0; window k is [k*W, (k+1)*W). A request of cost c at t falls in
// window k = floor(t/W) and is admitted iff count[k] + c <= L; it then adds c
// to count[k]. Counts of earlier windows are forgotten. Bursts are not
// smoothed: up to L at the end of one window and L at the start of the next
// reach the backend within a few milliseconds (the "double burst").
//
// RetryAfter: the start of the next window minus t, (k+1)*W - t, which is
// always in (0, W]; Never when c > L.
//
// Windows of any duration are aligned to the Unix epoch (time 0), so a
// window of 168h (envoy ratelimit's WEEK unit) starts on a Thursday at
// 00:00 UTC, as 1970-01-01 was a Thursday, and envoy's MONTH and YEAR units
// (30 and 365 days) are fixed durations that drift from the calendar.
//
// Calendar windows (per: 1mo, per: 1y; Kong's month and year limits): the
// window of t is the calendar month (year) that holds t in UTC, from
// 00:00:00 UTC on the 1st (on January 1st) to the same instant of the next
// month (year): 28 to 31 days (365 or 366). Its index k counts months
// (years) from January 1970. This is where Kong's rate-limiting plugin
// starts its month and year periods (kong/tools/timestamp.lua,
// get_timestamps: the request's UTC time table with day set to 1, and
// month set to 1 for the year). RetryAfter is again the start of the next
// window minus t. Per is then the calendar's nominal duration (30 or 365
// days, Calendar.Nominal), which no decision reads.
//
// count-rejected: a rejected request's cost is added to count[k] too, as
// envoy's ratelimit does (it increments before it compares), including a
// request whose cost can never fit. The retry_after is unchanged by it (the
// next window starts empty). Counts saturate at MaxInt64.
//
// State per key: the window index and its count, two int64, 16 bytes. A
// key's state is released at the end of the window it counts ((k+1)*W, or
// the next calendar month or year), when
// it is indistinguishable from a fresh key's (as EXPIRE releases the Redis
// key).
//
// Redis: redislua/lua/fixed_window.lua is this rule as a Lua script, decision for
// decision (`ratesim lua fixed-window` prints it; redislua's tests hold it to
// this type on randomised traces).
type FixedWindow struct {
	keyed[fixedWindowState]
	fixedWindowRule
	clock windowClock
	// cal is the last calendar window found, for calendar periods.
	cal calendarClock
}

// fixedWindowRule is FixedWindow's rule over one key's state, which its
// Limiter and its Table (a cluster's store) both call, and, on counts held
// elsewhere, sync's nodes.
//
// Time going back (a store passed the nodes' clocks): a request in a window
// earlier than the one the state counts finds no count for its window and
// counts from 0; when it is counted, the state becomes its window's, and the
// later window's count is lost. This is what a script that keeps one
// window index and one count per key does; the later window then admits
// anew.
type fixedWindowRule struct {
	limit         int64         // L
	window        time.Duration // W (the nominal duration for a calendar period)
	calendar      Calendar      // set for per: 1mo or 1y
	countRejected bool
	plainState[fixedWindowState]
}

// fixedWindowState is one key's counter: the cost counted in window win.
type fixedWindowState struct {
	win   int64 // k, the index of the window count belongs to
	count int64 // cost counted in window win
}

var (
	_ Limiter     = (*FixedWindow)(nil)
	_ Reserver    = (*FixedWindow)(nil)
	_ stateHolder = (*FixedWindow)(nil)
	_ Inspector   = (*FixedWindow)(nil)
	_ WindowRule  = (*fixedWindowRule)(nil)
)

func newFixedWindowLimiter(p Params) (Limiter, error) {
	if err := checkCalendarPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("fixed-window", p, "count-rejected"); err != nil {
		return nil, err
	}
	l := &FixedWindow{fixedWindowRule: *newFixedWindowRule(p)}
	l.keyed = newKeyed(int64(unsafe.Sizeof(fixedWindowState{})), func(s *fixedWindowState) time.Duration {
		return l.windowEnd(s.win)
	})
	return l, nil
}

func newFixedWindowRule(p Params) *fixedWindowRule {
	return &fixedWindowRule{limit: p.Rate, window: p.Per, calendar: p.Calendar, countRejected: p.CountRejected}
}

// Decide admits the request iff its window's count leaves room for cost.
func (l *FixedWindow) Decide(now time.Duration, key Key, cost int64) Decision {
	s := l.get(now, key)
	k, left := l.windowOf(now)
	d, counted := l.decideIn(s, k, left, cost)
	if counted {
		l.touch(key, 0)
	}
	return d
}

// windowOf is the rule's placeOf, remembering the last window found: the
// instants of one window, which come in order, are placed without a
// division or a calendar computation.
func (l *FixedWindow) windowOf(now time.Duration) (k int64, left time.Duration) {
	if l.calendar != NotCalendar {
		return l.cal.at(now, l.calendar)
	}
	k, e := l.clock.at(now, l.window)
	return k, l.window - e
}

// placeOf returns the index k of the window that holds now and the time
// left in it, from now to the window's end: (k+1)*W - now, or the end of
// the calendar month or year; always > 0.
func (r *fixedWindowRule) placeOf(now time.Duration) (k int64, left time.Duration) {
	if r.calendar != NotCalendar {
		k, _, end := calendarWindow(now, r.calendar)
		return k, end - now
	}
	k, e := windowAt(now, r.window)
	return k, r.window - e
}

// windowEnd returns the end of window k: (k+1)*W, or the start of the next
// calendar month or year (saturating at the end of time.Duration's range).
func (r *fixedWindowRule) windowEnd(k int64) time.Duration {
	if r.calendar != NotCalendar {
		return calendarWindowStart(k+1, r.calendar)
	}
	return time.Duration(k+1) * r.window
}

// WindowIndex implements WindowRule: the k of placeOf.
func (r *fixedWindowRule) WindowIndex(now time.Duration) int64 {
	k, _ := r.placeOf(now)
	return k
}

// decideIn decides a request of cost in window k, with left until the
// window ends, on s, and counts it there when it is admitted or counted
// rejected.
func (r *fixedWindowRule) decideIn(s *fixedWindowState, k int64, left time.Duration, cost int64) (Decision, bool) {
	var count int64
	if s.win == k {
		count = s.count
	}
	d, counted := r.decideCount(count, left, cost)
	if counted {
		s.win, s.count = k, addSat(count, cost)
	}
	return d, counted
}

// decideCount is the rule on the count of the request's window, with left
// until it ends: admit iff count + cost <= L.
func (r *fixedWindowRule) decideCount(count int64, left time.Duration, cost int64) (Decision, bool) {
	if cost <= r.limit && count <= r.limit-cost {
		return Decision{Verdict: Accept}, true
	}
	if cost > r.limit {
		return Decision{Verdict: Reject, RetryAfter: Never}, r.countRejected
	}
	return Decision{Verdict: Reject, RetryAfter: left}, r.countRejected
}

func (r *fixedWindowRule) decide(s *fixedWindowState, _ bool, now time.Duration, cost int64) (Decision, bool) {
	k, left := r.placeOf(now)
	return r.decideIn(s, k, left, cost)
}

// Window implements WindowRule.
func (r *fixedWindowRule) Window() time.Duration { return r.window }

// DecideCounts implements WindowRule: fixed-window reads cur only.
func (r *fixedWindowRule) DecideCounts(now time.Duration, _, cur, cost int64) (Decision, bool) {
	_, left := r.placeOf(now)
	return r.decideCount(cur, left, cost)
}

// incr adds cost to the count of at's window (Incrementer): a state of an
// older window starts that window's count; a later one is left alone.
func (r *fixedWindowRule) incr(s *fixedWindowState, known bool, at time.Duration, cost int64) bool {
	k, _ := r.placeOf(at)
	switch {
	case known && s.win == k:
		s.count = addSat(s.count, cost)
	case !known || s.win < k:
		s.win, s.count = k, cost
	default:
		return false
	}
	return true
}

// windowAt returns the index k of the window of length w that holds t,
// floor(t/w), and t's offset e = t - k*w in it, 0 <= e < w (also for t < 0).
func windowAt(t, w time.Duration) (k int64, e time.Duration) {
	k, e = int64(t/w), t%w
	if e < 0 {
		k, e = k-1, e+w
	}
	return k, e
}

// windowClock remembers the last window windowAt found, so that the
// instants of one window, which come in order, are placed with a
// subtraction and a comparison instead of a division. The zero value holds
// window 0, [0, w).
type windowClock struct {
	k     int64         // the window's index
	start time.Duration // k*w
}

// at returns windowAt(t, w); w must be the same at every call.
func (c *windowClock) at(t, w time.Duration) (k int64, e time.Duration) {
	// t - start wraps to a negative value, a huge unsigned one, when t is
	// before start or too far after it to subtract.
	if e := t - c.start; uint64(e) < uint64(w) {
		return c.k, e
	}
	k, e = windowAt(t, w)
	c.k, c.start = k, t-e
	return k, e
}

// calendarClock is windowClock for calendar windows: the last window found,
// [start, end), so that the instants of one month are placed with two
// comparisons. The zero value holds no window (start = end = 0).
type calendarClock struct {
	k          int64
	start, end time.Duration
}

// at returns the index of the calendar window of c that holds t and the
// time left in it; c must be the same at every call.
func (c *calendarClock) at(t time.Duration, cal Calendar) (k int64, left time.Duration) {
	if t < c.start || t >= c.end {
		c.k, c.start, c.end = calendarWindow(t, cal)
	}
	return c.k, c.end - t
}

// addSat returns a+b for b >= 0, saturating at MaxInt64: counters that
// count rejected requests grow without bound and are only ever compared.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// checkOptions returns a *ParamError for the first algorithm option set in p
// that the algorithm does not take. accepted lists the options it takes, by
// the names of Info.Options ("count-rejected", "max-delay", "burst",
// "nodelay", "delay", "max"); the policy (rate, per, burst) and the backend's
// Service are not options and are not checked here. Every constructor calls
// it after checkPolicy, e.g. checkOptions("gcra", p, "max-delay").
func checkOptions(algorithm string, p Params, accepted ...string) error {
	set := []struct {
		name  string // as Info.Options spells it
		what  string // as the error names it
		found string
		isSet bool
	}{
		{"count-rejected", "count-rejected", fmt.Sprint(p.CountRejected), p.CountRejected},
		{"max-delay", "max-delay", p.MaxDelay.String(), p.MaxDelay != 0},
		{"fill-interval", "fill-interval", p.FillInterval.String(), p.FillInterval != 0},
		{"tokens-per-fill", "tokens-per-fill", fmt.Sprint(p.TokensPerFill), p.TokensPerFill != 0},
		{"idle-reset", "idle-reset", p.IdleReset.String(), p.IdleReset != 0},
		{"burst", "nginx burst", fmt.Sprint(p.NginxBurst), p.NginxBurstSet},
		{"nodelay", "nodelay", fmt.Sprint(p.Nodelay), p.Nodelay},
		{"delay", "nginx delay", fmt.Sprint(p.NginxDelay), p.NginxDelay != 0},
		{"zone", "zone", fmt.Sprint(p.NginxZone), p.NginxZone != 0},
		{"max", "max", fmt.Sprint(p.Max), p.Max != 0},
		{"window", "window", p.Window.String(), p.Window != 0},
		{"min-samples", "min-samples", fmt.Sprint(p.MinSamples), p.MinSamples != 0},
		{"interval", "interval", p.Interval.String(), p.Interval != 0},
		{"min-rtt-calc-interval", "min-rtt-calc-interval", p.MinRTTInterval.String(), p.MinRTTInterval != 0},
		{"k", "k", fmt.Sprint(p.K), p.K != 0},
		{"initial-limit", "initial-limit", fmt.Sprint(p.InitialLimit), p.InitialLimit != 0},
		{"min-limit", "min-limit", fmt.Sprint(p.MinLimit), p.MinLimit != 0},
		{"max-limit", "max-limit", fmt.Sprint(p.MaxLimit), p.MaxLimit != 0},
		{"max-burst", "max-burst", p.MaxBurst.String(), p.MaxBurst != 0},
		{"warmup", "warmup", p.Warmup.String(), p.Warmup != 0},
		{"cold-factor", "cold-factor", fmt.Sprint(p.ColdFactor), p.ColdFactor != 0},
		{"slack", "slack", fmt.Sprint(p.Slack), p.SlackSet},
		{"use-effective-count", "use-effective-count", fmt.Sprint(p.UseEffectiveCount), p.UseEffectiveCount},
		{"quota-type", "quota-type", p.QuotaType, p.QuotaType != ""},
		{"tier", "tier", p.Tier, p.Tier != ""},
		{"increment-condition", "increment-condition", fmt.Sprint(p.IncrementLate), p.IncrementLate},
		{"mitigation-timeout", "mitigation-timeout", p.MitigationTimeout.String(), p.MitigationTimeout != 0},
		{"quota-offset", "quota-offset", fmt.Sprint(p.QuotaOffset), p.QuotaOffset != 0},
		{"by", "by", fmt.Sprint(p.ClassBy), p.ClassBy != 0},
		{"partitions", "partitions", fmt.Sprint(len(p.Partitions)), len(p.Partitions) > 0},
		{"critical", "critical", fmt.Sprint(len(p.Critical)), len(p.Critical) > 0},
		{"reserve", "reserve", fmt.Sprint(p.Reserve), p.Reserve != 0},
	}
	for _, o := range set {
		if o.isSet && !slices.Contains(accepted, o.name) {
			return &ParamError{Field: o.name, Found: o.found,
				Want: fmt.Sprintf("%s takes no %s (only %s)", algorithm, o.what, strings.Join(optionTakers[o.name], ", "))}
		}
	}
	return nil
}

// optionTakers maps each option name to the algorithms that take it, in
// report order. It is filled from registry by init: a reference to registry
// from checkOptions itself would be an initialization cycle, since registry
// holds the constructors that call checkOptions.
var optionTakers map[string][]string

func init() {
	optionTakers = make(map[string][]string)
	for _, a := range append(registry, backendRegistry...) {
		for _, o := range a.Options {
			optionTakers[o] = append(optionTakers[o], a.Name)
		}
	}
	// The opt-in rows name only the options that no row above takes
	// (warmup, slack), so that the others' messages stay as they are.
	known := make(map[string]bool, len(optionTakers))
	for o := range optionTakers {
		known[o] = true
	}
	for _, a := range slices.Concat(compositeRegistry, optInRegistry) {
		for _, o := range a.Options {
			if !known[o] {
				optionTakers[o] = append(optionTakers[o], a.Name)
			}
		}
	}
}

// Inspect returns key's gauges at now: "count", the cost counted in now's
// window (0 when the stored count is an earlier window's), and "limit", L.
// It releases what is fresh by now and changes no live key's state.
func (l *FixedWindow) Inspect(now time.Duration, key Key) []Gauge {
	l.expire(now)
	s, known := l.stateOf(key)
	return l.gauges(&s, known, now)
}

func (r *fixedWindowRule) gauges(s *fixedWindowState, _ bool, now time.Duration) []Gauge {
	var count int64
	if k, _ := r.placeOf(now); s.win == k {
		count = s.count
	}
	return []Gauge{{"count", float64(count)}, {"limit", float64(r.limit)}}
}
