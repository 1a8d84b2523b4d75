package algorithms

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/internal/testenv"
)

// This file holds the invariants every algorithm of the registry must keep,
// checked on seeded random traces, and the helpers of the table tests of the
// per-algorithm test files (decideRow, checkRows, mustLimiter, requireLive).

// decideRow is one call of a table test and the decision wanted.
type decideRow struct {
	at    time.Duration
	key   Key
	cost  int64
	want  Verdict
	delay time.Duration // wanted Delay (Verdict Delay)
	retry time.Duration // wanted RetryAfter (Verdict Reject)
}

// checkRows runs the rows through l in order and requires each decision.
func checkRows(t *testing.T, l Limiter, rows []decideRow) {
	t.Helper()
	for i, r := range rows {
		d := l.Decide(r.at, r.key, r.cost)
		want := Decision{Verdict: r.want, Delay: r.delay, RetryAfter: r.retry}
		require.Equal(t, want, d, "row %d: t=%v key=%d cost=%d", i, r.at, r.key, r.cost)
	}
}

// mustLimiter builds the algorithm called name.
func mustLimiter(t *testing.T, name string, p Params) Limiter {
	t.Helper()
	l, err := New(name, p)
	require.NoError(t, err)
	return l
}

// requireLive requires liveAt(now) to report keys and bytes.
func requireLive(t *testing.T, h stateHolder, now time.Duration, keys, bytes int64) {
	t.Helper()
	k, b := h.liveAt(now)
	require.Equal(t, [2]int64{keys, bytes}, [2]int64{k, b}, "live keys and bytes at %v", now)
}

// invCall is one arrival of a random trace.
type invCall struct {
	at   time.Duration
	key  Key
	cost int64
}

// invPolicies are the policies of the invariant suite: a round one, two
// whose interval W/L is not a whole number of ns (333,333,333.3ns and
// 8,571,428,571.4ns), one with a burst above the rate and one below it, and
// a short window.
var invPolicies = []Policy{
	{Rate: 10, Per: time.Second, Burst: 10},
	{Rate: 3, Per: time.Second, Burst: 5},
	{Rate: 7, Per: time.Minute, Burst: 7},
	{Rate: 5, Per: 100 * time.Millisecond, Burst: 2},
}

const invArrivals = 2500 // per trace

// invVariant is one parameter set an algorithm runs the suite with.
type invVariant struct {
	name string
	p    Params
}

// invVariants returns the parameter sets the suite runs name with: each of
// its options on and off. An algorithm added to the registry later runs
// with the policy alone until it is listed here.
func invVariants(name string, pol Policy) []invVariant {
	base := Params{Policy: pol}
	with := func(f func(*Params)) Params { p := base; f(&p); return p }
	switch name {
	case "fixed-window":
		vs := []invVariant{{"", base}, {"count-rejected", with(func(p *Params) { p.CountRejected = true })}}
		// Calendar windows (their traces span years: invTrace takes the
		// variant's policy). Years only at the highest rate, whose trace
		// stays within the range of time.Duration.
		cals := []Calendar{CalendarMonth}
		if pol.Rate >= 10 {
			cals = append(cals, CalendarYear)
		}
		for _, c := range cals {
			cal := with(func(p *Params) { p.Per, p.Calendar = c.Nominal(), c })
			vs = append(vs, invVariant{"per-" + c.String(), cal},
				invVariant{"per-" + c.String() + "-count-rejected", func() Params { p := cal; p.CountRejected = true; return p }()})
		}
		return vs
	case "sliding-log", "sliding-window":
		return []invVariant{{"", base}, {"count-rejected", with(func(p *Params) { p.CountRejected = true })}}
	case "token-bucket":
		// Half a window plus a few ns: not a multiple of the interval.
		// Discrete refill: 2 tokens every 2W/L plus a few ns, with and
		// without max-delay.
		fill := func(p *Params) { p.FillInterval, p.TokensPerFill = 2*pol.Per/time.Duration(pol.Rate)+3, 2 }
		return []invVariant{{"", base}, {"max-delay", with(func(p *Params) { p.MaxDelay = pol.Per/2 + 7 })},
			{"fill-interval", with(fill)},
			{"fill-interval-max-delay", with(func(p *Params) { fill(p); p.MaxDelay = pol.Per/2 + 7 })}}
	case "gcra":
		// Half a window plus a few ns: not a multiple of the interval.
		return []invVariant{{"", base}, {"max-delay", with(func(p *Params) { p.MaxDelay = pol.Per/2 + 7 })}}
	case "x-time-rate":
		// Half a window plus a few ns: not a multiple of the interval; and
		// Traefik's idle-reset of 2s, with and without it.
		return []invVariant{{"", base}, {"max-delay", with(func(p *Params) { p.MaxDelay = pol.Per/2 + 7 })},
			{"idle-reset", with(func(p *Params) { p.IdleReset = 2 * time.Second })},
			{"idle-reset-max-delay", with(func(p *Params) { p.IdleReset = 2 * time.Second; p.MaxDelay = pol.Per/2 + 7 })}}
	case "nginx":
		return []invVariant{{"", base}, {"nodelay", with(func(p *Params) { p.Nodelay = true })}}
	case "guava-bursty":
		// tryAcquire(c) and tryAcquire(c, W/2 + a few ns, truncated to
		// whole µs), with Guava's 1s of stored permits and with 3.5s.
		return []invVariant{{"", base}, {"max-delay", with(func(p *Params) { p.MaxDelay = pol.Per/2 + 7 })},
			{"max-burst", with(func(p *Params) { p.MaxBurst = 3500 * time.Millisecond })}}
	case "guava-warming-up":
		return []invVariant{{"", with(func(p *Params) { p.Warmup = 2 * pol.Per })},
			{"max-delay", with(func(p *Params) { p.Warmup = 2 * pol.Per; p.MaxDelay = pol.Per/2 + 7 })},
			{"cold-factor-10", with(func(p *Params) { p.Warmup = pol.Per / 3; p.ColdFactor = 10 })}}
	case "uber-ratelimit":
		return []invVariant{{"", base}, {"without-slack", with(func(p *Params) { p.SlackSet = true })},
			{"slack-3", with(func(p *Params) { p.Slack, p.SlackSet = 3, true })}}
	case "resilience4j":
		// acquirePermission with no wait, with W/2 + a few ns, and with
		// 3W, which lets costs above L borrow the cycles to come
		return []invVariant{{"", base}, {"max-delay", with(func(p *Params) { p.MaxDelay = pol.Per/2 + 7 })},
			{"max-delay-3W", with(func(p *Params) { p.MaxDelay = 3 * pol.Per })}}
	case "apigee-spike-arrest":
		if pol.Per != time.Second && pol.Per != time.Minute {
			return nil // a <Rate> is per second or per minute
		}
		return []invVariant{{"", base}, {"use-effective-count", with(func(p *Params) { p.UseEffectiveCount = true })}}
	case "apigee-quota":
		vs := []invVariant{{"", base}, {"flexi", with(func(p *Params) { p.QuotaType = QuotaFlexi })},
			{"rollingwindow", with(func(p *Params) { p.QuotaType = QuotaRollingWindow })}}
		if pol.Rate >= 10 {
			vs = append(vs, invVariant{"per-1mo", with(func(p *Params) { p.Per, p.Calendar = CalendarMonth.Nominal(), CalendarMonth })})
		}
		return vs
	case "azure-rate-limit":
		if pol.Per%time.Second != 0 {
			return nil // renewal-period is whole seconds
		}
		return []invVariant{{"", base}, {"v2", with(func(p *Params) { p.Tier = AzureV2 })},
			{"increment-condition", with(func(p *Params) { p.IncrementLate = true })}}
	case "aws-usage-plan":
		// DAY, WEEK and MONTH, and DAY with half the limit off the
		// initial day
		day := func(p *Params) { p.Per = 24 * time.Hour }
		vs := []invVariant{{"day", with(day)}, {"week", with(func(p *Params) { p.Per = 168 * time.Hour })},
			{"day-offset", with(func(p *Params) { day(p); p.QuotaOffset = pol.Rate / 2 })}}
		if pol.Rate >= 10 {
			vs = append(vs, invVariant{"month", with(func(p *Params) { p.Per, p.Calendar = CalendarMonth.Nominal(), CalendarMonth })})
		}
		return vs
	case "cloudflare-rate-limit":
		// throttle (no block), a block shorter than a window (plus a
		// few ns) and one of 3W
		return []invVariant{{"", base}, {"mitigation-timeout", with(func(p *Params) { p.MitigationTimeout = pol.Per/2 + 7 })},
			{"mitigation-timeout-3W", with(func(p *Params) { p.MitigationTimeout = 3 * pol.Per })}}
	case "netflix-partitioned", "stripe-fleet-shedder":
		// partitions and critical values that no request of the suite
		// carries (Decide): the unknown partition, the non-critical
		shed := func(p *Params) {
			p.ClassBy = 1
			p.Partitions = []Class{{Name: "live", Value: 0, Share: 0.9}, {Name: "batch", Value: 1, Share: 0.1}}
			p.Critical = []Class{{Name: "charge", Value: 0}}
			if name == "netflix-partitioned" {
				p.Critical = nil
			} else {
				p.Partitions = nil
				p.Reserve = 200_000
			}
		}
		return []invVariant{
			{"service-0", with(shed)},
			{"service-W/3", with(func(p *Params) { shed(p); p.Service = pol.Per/3 + 7 })},
			{"max-4-service-W", with(func(p *Params) { shed(p); p.Max = 4; p.Service = pol.Per })},
		}
	case "concurrency":
		return []invVariant{
			{"service-0", base},
			{"service-W/3", with(func(p *Params) { p.Service = pol.Per/3 + 7 })},
			{"max-2-service-W", with(func(p *Params) { p.Max = 2; p.Service = pol.Per })},
		}
	}
	return []invVariant{{"", base}}
}

// invTrace returns n arrivals on 4 keys (key 0 busiest) for policy pol:
// bursts at one instant, gaps around the interval W/L, a few long silences
// that let keys go fresh, and a few arrivals exactly on a window boundary;
// costs mostly 1, some 2 or 3, and a few that exceed every limit.
func invTrace(seed uint64, pol Policy, n int) []invCall {
	r := rand.New(rand.NewPCG(seed, 0x7261746573696d))
	w := pol.Per
	gap := w / time.Duration(pol.Rate)
	t := 3*w + 12_345 + time.Duration(r.Int64N(int64(w))) // off every boundary
	calls := make([]invCall, 0, n)
	for range n {
		switch x := r.IntN(100); {
		case x < 30: // same instant as the previous arrival
		case x < 85:
			t += time.Duration(r.Int64N(int64(gap)))
		case x < 97:
			t += time.Duration(r.Int64N(2 * int64(gap)))
		case x < 98:
			t += w + time.Duration(r.Int64N(2*int64(w))) // silence
		default:
			t = (t/w + 1) * w // exactly on the next boundary
			if pol.Calendar != NotCalendar {
				_, _, t = calendarWindow(t, pol.Calendar)
			}
		}
		key := Key(0)
		switch x := r.IntN(10); {
		case x >= 9:
			key = 3
		case x >= 8:
			key = 2
		case x >= 5:
			key = 1
		}
		cost := int64(1)
		switch x := r.IntN(100); {
		case x >= 99:
			cost = pol.Rate + pol.Burst + 3 // fits no limit of any variant
		case x >= 85:
			cost = 2 + int64(r.IntN(2))
		}
		calls = append(calls, invCall{t, key, cost})
	}
	return calls
}

func decideAll(l Limiter, calls []invCall) []Decision {
	ds := make([]Decision, len(calls))
	for i, c := range calls {
		ds[i] = l.Decide(c.at, c.key, c.cost)
	}
	return ds
}

// isNotImplemented reports whether err is the placeholder constructor's.
func isNotImplemented(err error) bool {
	return err != nil && strings.Contains(err.Error(), "not implemented")
}

func invSubtestName(pol Policy, v invVariant) string {
	s := fmt.Sprintf("%dper%v_b%d", pol.Rate, pol.Per, pol.Burst) // the suite's policy, not the variant's
	if v.name != "" {
		s += "_" + v.name
	}
	return s
}

// maxFit returns the largest cost the algorithm can ever admit with p, and
// false when the suite does not know it.
func maxFit(name string, p Params) (int64, bool) {
	switch name {
	case "fixed-window", "sliding-log", "sliding-window":
		return p.Rate, true
	case "apigee-flexi", "cloudflare-rate-limit", "aws-usage-plan":
		return p.Rate, true
	case "haproxy":
		// c hits at once: the rate read after them is at least c, and a
		// restarted counter reads exactly c.
		return p.Rate, true
	case "token-bucket", "gcra", "leaky-bucket", "x-time-rate":
		return p.Burst, true
	case "resilience4j":
		// without a timeout a cost fits iff it is at most a cycle's
		// permissions; with one, a cost above L may borrow
		return p.Rate, p.MaxDelay == 0
	case "concurrency", "netflix-partitioned":
		if p.Max > 0 {
			return p.Max, true
		}
		return p.Burst, true
	case "stripe-fleet-shedder":
		// a request without the attribute is non-critical: A
		fleet := cmp.Or(p.Max, p.Burst)
		return fleet * (1_000_000 - p.Reserve) / 1_000_000, true
	case "nginx":
		// nginx.go counts cost c as c requests in one ms: it fits iff
		// c-1 <= nginx's burst, which is B-1 unless set.
		if p.NginxBurstSet {
			return p.NginxBurst + 1, true
		}
		return p.Burst, true
	}
	return 0, false // an algorithm added later: not checked until listed here
}

// mayDelay reports whether the algorithm with p may delay a request.
func mayDelay(name string, p Params) bool {
	switch name {
	case "token-bucket", "gcra", "x-time-rate", "guava-bursty", "guava-warming-up", "resilience4j":
		return p.MaxDelay > 0
	case "leaky-bucket", "uber-ratelimit":
		return true
	case "nginx":
		return !p.Nodelay
	}
	return false // the policers: fixed-window, sliding-log, sliding-window, concurrency
}

// TestInvariants runs every algorithm of the registry, and the opt-in rows
// (haproxy), over random traces and checks what each must keep; see the
// checks below for which.
func TestInvariants(t *testing.T) {
	for _, info := range append(All(), OptIn()...) {
		t.Run(info.Name, func(t *testing.T) {
			t.Parallel()
			if _, err := info.New(Params{Policy: invPolicies[0]}); isNotImplemented(err) {
				t.Skipf("%s: %v", info.Name, err)
			}
			for pi, pol := range invPolicies {
				for _, v := range invVariants(info.Name, pol) {
					t.Run(invSubtestName(pol, v), func(t *testing.T) {
						info := info
						// a vendor row that runs another row's rule is
						// held to that rule's bounds
						info.Name = invRule(info.Name, v.p)
						l, err := info.New(v.p)
						if err != nil && info.Name == "nginx" && pol.Per != time.Second && pol.Per != time.Minute {
							t.Skipf("nginx takes only per 1s or 1m: %v", err)
						}
						require.NoError(t, err)
						calls := invTrace(uint64(pi+1), v.p.Policy, invArrivals)
						ds := decideAll(l, calls)
						checkDecisions(t, info, v.p, calls, ds)
						checkWindows(t, info.Name, v.p, calls, ds)
						checkBlocks(t, info.Name, v.p, calls, ds)
						checkReleases(t, info.Name, v.p, calls, ds)
						if info.Exact || exactRetry(info.Name) {
							checkRetryExact(t, info, v.p, calls, ds)
						}
						checkRelease(t, l, v.p, calls, ds)
					})
				}
			}
		})
	}
}

// grantsPartly reports whether the row may admit less than the cost asked.
func grantsPartly(name string) bool {
	info, _ := Lookup(name)
	return info.Partial
}

// invRule returns the rule a row runs with p, for the bounds the suite
// holds it to: the vendor rows that run another row's rule are that row.
func invRule(name string, p Params) string {
	switch {
	case name == "apigee-spike-arrest" && p.UseEffectiveCount:
		return "sliding-window"
	case name == "apigee-quota" && p.QuotaType == QuotaRollingWindow:
		return "sliding-log"
	case name == "apigee-quota" && p.QuotaType == QuotaFlexi:
		return "apigee-flexi"
	case name == "apigee-quota":
		return "fixed-window"
	case name == "azure-rate-limit" && p.Tier == AzureV2:
		return "token-bucket"
	case name == "azure-rate-limit" && p.IncrementLate:
		return "azure-late"
	case name == "azure-rate-limit":
		return "sliding-log"
	case name == "cloudflare-rate-limit" && p.MitigationTimeout == 0:
		return "sliding-window"
	}
	return name
}

// exactRetry reports whether a row that decides in floating point still
// gives an exact retry_after: Guava's wait is a whole number of
// microseconds of its own clock, which only an admission moves.
func exactRetry(name string) bool {
	return name == "guava-bursty" || name == "guava-warming-up"
}

// checkDecisions checks each decision alone: the fields its verdict sets,
// delays only from shapers and within max-delay, and Never exactly for the
// costs that can never fit.
func checkDecisions(t *testing.T, info Info, p Params, calls []invCall, ds []Decision) {
	t.Helper()
	fit, knowFit := maxFit(info.Name, p)
	rejects := 0
	for i, d := range ds {
		c := calls[i]
		if d.Verdict == Reject {
			rejects++
		}
		if decisionHolds(info, p, c, d, fit, knowFit) {
			continue // the checks below, without formatting where
		}
		where := fmt.Sprintf("call %d: t=%v key=%d cost=%d: %+v", i, c.at, c.key, c.cost, d)
		// a partial admission grants 1 to cost-1 and admits; only the
		// rows that grant less than asked set it
		if d.Granted != 0 {
			require.True(t, grantsPartly(info.Name), "%s grants part of a cost: %s", info.Name, where)
			require.NotEqual(t, Reject, d.Verdict, where)
			require.True(t, d.Granted >= 1 && d.Granted < c.cost, where)
		}
		switch d.Verdict {
		case Accept:
			require.Zero(t, d.Delay, where)
			require.Zero(t, d.RetryAfter, where)
		case Delay:
			require.True(t, mayDelay(info.Name, p), "%s delays: %s", info.Name, where)
			require.Positive(t, d.Delay, where)
			require.Zero(t, d.RetryAfter, where)
			if p.MaxDelay > 0 {
				require.LessOrEqual(t, d.Delay, p.MaxDelay, where)
			}
		case Reject:
			require.Zero(t, d.Delay, where)
			require.True(t, d.RetryAfter == Never || d.RetryAfter > 0, where)
			if knowFit {
				require.Equal(t, c.cost > fit, d.RetryAfter == Never, "Never iff cost > %d: %s", fit, where)
			}
		default:
			t.Fatalf("bad verdict: %s", where)
		}
		if knowFit && c.cost > fit {
			require.Equal(t, Reject, d.Verdict, where)
		}
	}
	t.Logf("%d of %d rejected", rejects, len(ds))
}

// decisionHolds reports whether decision d of call c passes every check of
// checkDecisions, which formats its message only for one that does not.
func decisionHolds(info Info, p Params, c invCall, d Decision, fit int64, knowFit bool) bool {
	switch d.Verdict {
	case Accept:
		if d.Delay != 0 || d.RetryAfter != 0 {
			return false
		}
	case Delay:
		if !mayDelay(info.Name, p) || d.Delay <= 0 || d.RetryAfter != 0 || p.MaxDelay > 0 && d.Delay > p.MaxDelay {
			return false
		}
	case Reject:
		if d.Delay != 0 || !(d.RetryAfter == Never || d.RetryAfter > 0) {
			return false
		}
		if knowFit && (c.cost > fit) != (d.RetryAfter == Never) {
			return false
		}
	default:
		return false
	}
	return !(knowFit && c.cost > fit && d.Verdict != Reject)
}

// admittedByKey returns, per key, the indexes of the admitted calls in
// arrival order.
func admittedByKey(ds []Decision, calls []invCall) map[Key][]int {
	m := make(map[Key][]int)
	for i, d := range ds {
		if d.Verdict != Reject {
			m[calls[i].key] = append(m[calls[i].key], i)
		}
	}
	return m
}

// checkWindows checks the window limits of the policers: at most L per
// aligned window for fixed-window and sliding-window (whose weighted sum
// includes cur+c), at most L in any [a, a+W) for sliding-log, and at most
// max in flight at any instant for concurrency.
func checkWindows(t *testing.T, name string, p Params, calls []invCall, ds []Decision) {
	t.Helper()
	w := p.Per
	for key, idx := range admittedByKey(ds, calls) {
		switch name {
		case "fixed-window", "sliding-window", "cloudflare-rate-limit":
			per := make(map[int64]int64)
			for _, i := range idx {
				k, _ := windowAt(calls[i].at, w)
				if p.Calendar != NotCalendar {
					k, _, _ = calendarWindow(calls[i].at, p.Calendar)
				}
				per[k] += calls[i].cost
				if per[k] > p.Rate { // require only on failure: it is slow in a loop
					require.LessOrEqual(t, per[k], p.Rate, "key %d window %d", key, k)
				}
			}
		case "aws-usage-plan":
			// at most L a period (UTC days, weeks from Monday, months),
			// L - offset in the period of the trace's first request
			period := func(at time.Duration) int64 {
				if p.Calendar != NotCalendar {
					k, _, _ := calendarWindow(at, p.Calendar)
					return k
				}
				k, _ := windowAt(at-4*24*time.Hour%w, w)
				return k
			}
			first := period(calls[0].at)
			per := make(map[int64]int64)
			for _, i := range idx {
				k := period(calls[i].at)
				per[k] += calls[i].cost
				limit := p.Rate
				if k == first {
					limit -= p.QuotaOffset
				}
				require.LessOrEqual(t, per[k], limit, "key %d period %d", key, k)
			}
		case "sliding-log":
			// The busiest [a, a+W) starts at an admission.
			requireAtMost(t, calls, idx, w, p.Rate, "key %d: more than L in a window of W", key)
		case "azure-late":
			// a request is admitted with at most L before it in its
			// window: L plus the largest cost admitted
			var most int64
			for _, i := range idx {
				most = max(most, calls[i].cost)
			}
			requireAtMost(t, calls, idx, w, p.Rate+most, "key %d: more than L + c in a window of W", key)
		case "apigee-flexi":
			// windows of W start at requests and do not overlap: any
			// [a, a+W) meets at most two
			requireAtMost(t, calls, idx, w, 2*p.Rate, "key %d: more than 2L in a window of W", key)
		case "haproxy":
			// Every hit is counted in its period and the rate read is at
			// least the period's count, so a period admits at most L. A
			// period spans at least W-1ms (its tick loses its low bit at
			// rotations), so [a, a+W-2ms), which covers at most W/1ms - 1
			// ticks, meets at most two periods: at most 2L.
			requireAtMost(t, calls, idx, w-2*time.Millisecond, 2*p.Rate, "key %d: more than 2L in a window of W-2ms", key)
		case "concurrency", "netflix-partitioned", "stripe-fleet-shedder":
			if p.Service == 0 {
				continue
			}
			// the shedding rows' requests without an attribute are the
			// unknown partition's (the total alone) or non-critical
			maxIn, _ := maxFit(name, p)
			// The busiest instant is an admission: requests admitted in
			// (t-S, t] are in flight at t.
			for j, i := range idx {
				var sum int64
				for _, h := range idx[:j+1] {
					if calls[i].at-calls[h].at < p.Service {
						sum += calls[h].cost
					}
				}
				if sum > maxIn {
					require.LessOrEqual(t, sum, maxIn, "key %d: in flight at %v", key, calls[i].at)
				}
			}
		}
	}
}

// checkBlocks checks cloudflare-rate-limit's own bound beside its
// window's: a rejection outside a block (not Never) starts one of D,
// and nothing of the key is admitted before it ends.
func checkBlocks(t *testing.T, name string, p Params, calls []invCall, ds []Decision) {
	t.Helper()
	if name != "cloudflare-rate-limit" {
		return
	}
	end := map[Key]time.Duration{}
	for i, d := range ds {
		c := calls[i]
		switch {
		case d.Verdict != Reject:
			require.GreaterOrEqual(t, c.at, end[c.key], "call %d: key %d admitted at %v inside a block", i, c.key, c.at)
		case d.RetryAfter != Never && c.at >= end[c.key]:
			end[c.key] = c.at + p.MitigationTimeout
		}
	}
}

// requireAtMost requires that the admitted calls idx (in time order) of one
// key sum to at most limit in every [a, a+span) that starts at one of them.
func requireAtMost(t *testing.T, calls []invCall, idx []int, span time.Duration, limit int64, msg string, args ...any) {
	t.Helper()
	var sum int64
	lo := 0
	for _, i := range idx {
		sum += calls[i].cost
		for calls[i].at-calls[idx[lo]].at >= span {
			sum -= calls[idx[lo]].cost
			lo++
		}
		if sum > limit {
			require.LessOrEqual(t, sum, limit, append([]any{msg}, args...)...)
		}
	}
}

// checkReleases checks what reaches the backend from the bucket algorithms:
// at most B + L*V/W released (arrival + delay) in any [a, a+V), and the
// leaky bucket's releases at least c*W/L apart.
func checkReleases(t *testing.T, name string, p Params, calls []invCall, ds []Decision) {
	t.Helper()
	var slack int64
	switch name {
	case "token-bucket", "gcra", "leaky-bucket", "redis-rate-at-most":
	case "nginx":
		// nginx sees time in whole ms (it credits the ms started since its
		// last request, up to 1ms more than the true time) and computes
		// delays in whole ms, so a request may pass up to 1ms early: at
		// most L*1ms/W more, under one request for these policies.
		slack = 1
	case "x-time-rate":
		// float64 tokens: a request may conform a few ns early, which can
		// put one more in a window that ends just after it.
		slack = 1
	case "uber-ratelimit", "guava-bursty", "guava-warming-up", "resilience4j", "apigee-spike-arrest":
		// resilience4j: a cycle's L permissions at most, counted from
		// the cycle of the window's start (one cycle more than L*V/W,
		// in b below), and a borrowing cost released all at once.
		// uber: a cost of c is c Takes, released at the last one's
		// instant, all c at once; perRequest = W/L truncated runs up to
		// L-1 ns fast per W.
		// Guava: the next caller pays: any cost is admitted once nextFree has
		// come, so one admitted request's cost comes on top; and the
		// clock's microseconds and the (long) casts lose under 1µs a
		// request, under one request over the trace's windows.
		for i, d := range ds {
			if d.Verdict != Reject {
				slack = max(slack, calls[i].cost)
			}
		}
		slack++
	default:
		return
	}
	w, l, b := int64(p.Per), p.Rate, p.Burst
	switch name {
	case "guava-bursty":
		// maxPermits = maxBurstSeconds * L/W stored permits, no wait
		burst := time.Second
		if p.MaxBurst > 0 {
			burst = p.MaxBurst
		}
		b = int64(burst) * l / w
	case "guava-warming-up":
		// a stored permit costs at least the stable interval W/L: no
		// burst beyond the next caller's cost
		b = 0
	case "resilience4j":
		b = 2 * l
	case "apigee-spike-arrest":
		// admissions w*T apart: L*V/W and the last one's cost
		b = 0
	case "uber-ratelimit":
		// slack + 1 at once after idle: the first, then slack more
		b = UberSlack + 1
		if p.SlackSet {
			b = p.Slack + 1
		}
	}
	for key, idx := range admittedByKey(ds, calls) {
		type rel struct {
			at   time.Duration
			cost int64
		}
		rels := make([]rel, len(idx))
		for j, i := range idx {
			rels[j] = rel{calls[i].at + ds[i].Delay, GrantedOf(ds[i], calls[i].cost)}
		}
		if name == "leaky-bucket" {
			for j := 1; j < len(rels); j++ {
				gap := rels[j].at - rels[j-1].at
				if int64(gap) < rels[j-1].cost*w/l {
					require.GreaterOrEqual(t, int64(gap), rels[j-1].cost*w/l,
						"key %d: releases at %v and %v closer than c*W/L", key, rels[j-1].at, rels[j].at)
				}
			}
		}
		slices.SortStableFunc(rels, func(a, b rel) int { return int(min(max(a.at-b.at, -1), 1)) })
		for _, v := range []int64{w / 10, w/3 + 1, w, 3 * w} {
			var sum int64
			lo := 0
			for _, r := range rels {
				sum += r.cost
				for int64(r.at-rels[lo].at) >= v {
					sum -= rels[lo].cost
					lo++
				}
				if p.IdleReset > 0 {
					// A forgotten Limiter comes back full: B more per
					// reset, and resets are at least idle-1s apart.
					gap := int64(p.IdleReset - time.Second)
					if sum*w > (b+slack+b*(v/gap+1))*w+l*v {
						require.LessOrEqual(t, sum*w, (b+slack+b*(v/gap+1))*w+l*v,
							"key %d: %d released in [%v, %v + %v)", key, sum, rels[lo].at, rels[lo].at, time.Duration(v))
					}
					continue
				}
				if p.FillInterval > 0 {
					// Discrete refill: at most v/D + 1 ticks of N in [a, a+v).
					if sum > b+p.TokensPerFill*(v/int64(p.FillInterval)+1) {
						require.LessOrEqual(t, sum, b+p.TokensPerFill*(v/int64(p.FillInterval)+1),
							"key %d: %d released in [%v, %v + %v)", key, sum, rels[lo].at, rels[lo].at, time.Duration(v))
					}
					continue
				}
				if sum*w > (b+slack)*w+l*v {
					require.LessOrEqual(t, sum*w, (b+slack)*w+l*v,
						"key %d: %d released in [%v, %v + %v)", key, sum, rels[lo].at, rels[lo].at, time.Duration(v))
				}
			}
		}
	}
}

// checkRetryExact checks that retry_after is the shortest wait: for every
// 7th rejection i, a fresh limiter given calls[0..i] admits the same request
// at t+RetryAfter, and another rejects it at t+RetryAfter-1. The replayed
// decisions must be the same as the first run's (determinism).
func checkRetryExact(t *testing.T, info Info, p Params, calls []invCall, ds []Decision) {
	t.Helper()
	replay := func(i int, probe time.Duration) Decision {
		l, err := info.New(p)
		require.NoError(t, err)
		for j, c := range calls[:i+1] {
			d := l.Decide(c.at, c.key, c.cost)
			if d != ds[j] {
				require.Equal(t, ds[j], d, "replay differs at call %d", j)
			}
		}
		return l.Decide(probe, calls[i].key, calls[i].cost)
	}
	// every 7th rejection with RATESIM_LONG=1, every 20th in the quick
	// suite: each check replays the trace up to it, twice
	every := testenv.Runs(20, 7)
	n := 0
	for i, d := range ds {
		if d.Verdict != Reject || d.RetryAfter == Never {
			continue
		}
		if n++; n%every != 0 {
			continue
		}
		c := calls[i]
		where := fmt.Sprintf("call %d: t=%v key=%d cost=%d retry_after=%v", i, c.at, c.key, c.cost, d.RetryAfter)
		require.NotEqual(t, Reject, replay(i, c.at+d.RetryAfter).Verdict, "not admitted at t+retry_after: %s", where)
		if d.RetryAfter > 1 {
			require.Equal(t, Reject, replay(i, c.at+d.RetryAfter-1).Verdict, "admitted before t+retry_after: %s", where)
		}
	}
	t.Logf("%d retry_after checked", n/every)
}

// checkRelease checks that every key's state is released once the trace
// is over and every key is fresh again.
func checkRelease(t *testing.T, l Limiter, p Params, calls []invCall, ds []Decision) {
	t.Helper()
	m := l.Memory()
	require.LessOrEqual(t, m.KeysPeak, int64(4))
	require.LessOrEqual(t, m.BytesPerKeyMax, m.BytesPeak)
	h, ok := l.(stateHolder)
	if !ok {
		return // x-time-rate may keep the library's limiters
	}
	if keepsState(l) {
		return
	}
	far := calls[len(calls)-1].at + 100*p.Per + p.Service + p.MaxDelay
	for i, d := range ds {
		// a shaper without a bound on its delay (uber-ratelimit) holds
		// a key until its last release
		far = max(far, calls[i].at+d.Delay+100*p.Per)
	}
	requireLive(t, h, far, 0, 0)
}

// keepsState reports whether a row never releases a key once it has
// decided on it: Guava's SmoothBursty, whose new limiter stores no permits
// where an idle one stores maxPermits (the key still counts in the peaks,
// which checkRelease bounds).
func keepsState(l Limiter) bool {
	switch l := l.(type) {
	case *Guava:
		return !l.warm
	case *Uber:
		// with slack, an idle key lets slack+1 through at once, a new
		// key one
		return l.maxSlack > 0
	}
	return false
}

// TestInvariantSameAdmissions checks docs/algorithms.md: with one policy,
// token-bucket, gcra and leaky-bucket admit the same requests, and so does
// nginx with nodelay and its default burst B-1.
//
// The first three are exact forms of one rule, so they must agree on any
// trace, costs included. With tokens = B - max(TAT-t, 0)/T (T = W/L):
// tokens >= c iff max(TAT,t) + c*T - t <= B*T, and taking c tokens is
// TAT = max(TAT,t) + c*T.
//
// nginx agrees on traces where its millisecond clock loses nothing: per 1s
// (its rate is then L*1000 milli-requests/s, an integer, so the truncation
// rate*1000/scale loses nothing) and arrivals at whole ms (so now-last in ms
// is the exact elapsed time, and the credit rate*ms/1000 = L*ms
// milli-requests is the exact refill of L per 1000ms). Then with x =
// (TAT-t)/T requests queued in the meter, nginx's excess is 1000*(x-1) after
// an admission. A fresh key's request of cost c sets excess (c-1)*1000 (x =
// c); after that, in units of 1000, nginx computes excess' = max(0, excess -
// elapsed/T + 1) + c-1 = max(0, x - elapsed/T) + c - 1, and the meter x' =
// max(x - elapsed/T, 0) + c: excess' = x'-1. nginx rejects iff excess' >
// (B-1) iff x' > B, the meter's test. (That needs nginx.go's convention that
// cost c counts as c requests in one ms, added after nginx's clamp at 0.)
// This holds for any L with per 1s; the policies include one that does not
// divide 1000 (3/1s).
func TestInvariantSameAdmissions(t *testing.T) {
	type member struct {
		name string
		p    func(Policy) Params
	}
	meters := []member{
		{"token-bucket", func(p Policy) Params { return Params{Policy: p} }},
		{"gcra", func(p Policy) Params { return Params{Policy: p} }},
		{"leaky-bucket", func(p Policy) Params { return Params{Policy: p} }},
	}
	nginx := member{"nginx", func(p Policy) Params { return Params{Policy: p, Nodelay: true} }}

	run := func(t *testing.T, members []member, pol Policy, calls []invCall) {
		t.Helper()
		var ref []Verdict
		refName := ""
		for _, m := range members {
			l, err := New(m.name, m.p(pol))
			if isNotImplemented(err) {
				t.Logf("%s skipped: %v", m.name, err)
				continue
			}
			require.NoError(t, err, m.name)
			got := make([]Verdict, len(calls))
			for i, c := range calls {
				got[i] = l.Decide(c.at, c.key, c.cost).Verdict
				if got[i] == Delay {
					got[i] = Accept // admitted; only the release differs
				}
			}
			if ref == nil {
				ref, refName = got, m.name
				continue
			}
			for i := range calls {
				require.Equal(t, ref[i], got[i], "%s and %s differ at call %d (t=%v key=%d cost=%d)",
					refName, m.name, i, calls[i].at, calls[i].key, calls[i].cost)
			}
		}
		if refName == "" {
			t.Skip("none of the algorithms is implemented yet")
		}
	}

	t.Run("meters", func(t *testing.T) {
		for pi, pol := range invPolicies {
			run(t, meters, pol, invTrace(uint64(100+pi), pol, invArrivals))
		}
	})
	t.Run("meters-and-nginx", func(t *testing.T) {
		policies := []Policy{
			{Rate: 10, Per: time.Second, Burst: 10},
			{Rate: 4, Per: time.Second, Burst: 4},
			{Rate: 5, Per: time.Second, Burst: 2},
			{Rate: 8, Per: time.Second, Burst: 1},
			{Rate: 3, Per: time.Second, Burst: 5},
		}
		for pi, pol := range policies {
			calls := invTrace(uint64(200+pi), pol, invArrivals)
			for i := range calls {
				calls[i].at = calls[i].at.Truncate(time.Millisecond) // whole ms, still in order
			}
			run(t, append(slices.Clone(meters), nginx), pol, calls)
		}
	})
}
