package algorithms

import (
	"fmt"
	"math"
	"time"
)

// Policy is the limit every algorithm of a scenario enforces: Rate requests
// per Per, with bursts of up to Burst.
type Policy struct {
	Rate  int64         // L, requests (cost units) per period, >= 1
	Per   time.Duration // W, the period, > 0
	Burst int64         // B, >= 1
	// Calendar, when set, makes the period a calendar month or year in
	// UTC (per: 1mo, per: 1y), which only fixed-window takes; Per is then
	// Calendar.Nominal(), the duration that stands for it wherever one is
	// needed (rates shown, peak windows), and no decision reads it.
	Calendar Calendar
}

// String writes the policy as "10/1s burst 10" (or "10/1mo burst 10").
func (p Policy) String() string {
	if p.Calendar != NotCalendar {
		return fmt.Sprintf("%d/%v burst %d", p.Rate, p.Calendar, p.Burst)
	}
	return fmt.Sprintf("%d/%v burst %d", p.Rate, p.Per, p.Burst)
}

// PerString writes the period as a scenario spells it: 1mo or 1y for a
// calendar period, else the duration (1s, 1m0s).
func (p Policy) PerString() string {
	if p.Calendar != NotCalendar {
		return p.Calendar.String()
	}
	return p.Per.String()
}

// errCalendar is the error of an algorithm other than fixed-window given
// a calendar period.
func errCalendar(algorithm string, c Calendar) error {
	return &ParamError{Field: "per", Found: c.String(),
		Want: fmt.Sprintf("only fixed-window counts calendar windows (%s cannot take per %s: give it a duration, e.g. per: %v)", algorithm, c, c.Nominal())}
}

// Params is everything a limiter is built from: the policy (possibly
// overridden for this algorithm) and the algorithm's own options. Options an
// algorithm does not take are rejected by New when set.
type Params struct {
	Policy

	// CountRejected makes fixed-window, sliding-window and sliding-log count
	// rejected requests too (envoy ratelimit, Kong's sliding mode).
	CountRejected bool

	// MaxDelay > 0 turns token-bucket, gcra and x-time-rate from policing
	// into shaping: a request that would be rejected is admitted with the
	// delay until it conforms when that delay is <= MaxDelay.
	MaxDelay time.Duration

	// FillInterval and TokensPerFill (token-bucket only, both or neither)
	// make the bucket refill in steps, as envoy's local rate limiter
	// before 1.31: TokensPerFill tokens at every multiple of FillInterval
	// from time 0, up to Burst (see TokenBucket).
	FillInterval  time.Duration
	TokensPerFill int64

	// IdleReset > 0 (x-time-rate only, a whole number of seconds) makes a
	// key's Limiter forgotten, and come back full, once the key has been
	// idle that long, as Traefik's TTL map evicts a source's bucket (see
	// XTimeRate).
	IdleReset time.Duration

	// NginxBurst is nginx's own burst=N (admits N+1 at once on a fresh key);
	// used when NginxBurstSet, otherwise Burst-1.
	NginxBurst    int64
	NginxBurstSet bool
	// Nodelay is nginx's nodelay: admitted requests are never delayed.
	Nodelay bool
	// NginxDelay is nginx's delay=N (two-stage limiting), default 0.
	NginxDelay int64
	// NginxZone is the size in bytes of nginx's limit_req zone (the
	// scenario's zone: 10m), whose memory decides which keys keep their
	// nodes (NginxZone); 0 means unbounded: a key's state lives until it
	// is fresh.
	NginxZone int64
	// NginxRoutes, when set, makes one nginx row of a zone that several
	// routes name (a gateway's locations), each with its own burst, delay
	// and nodelay: the row keeps one state per key for all of them and
	// checks each request with its route's rule (RouteDecider). Only
	// replay --gateway sets it; the Params' own burst, delay and nodelay
	// are the rule of a request of no listed route.
	NginxRoutes []NginxRoute

	// Max is the concurrency limiter's most requests in flight per key; 0
	// means Burst.
	Max int64
	// Service is the backend service time: a request admitted by the
	// concurrency limiter is in flight during [release, release+Service).
	Service time.Duration
	// Window > 0 wraps an adaptive limit (aimd, vegas, gradient2) in
	// Netflix's WindowedLimit: its samples are gathered over Window, and
	// the limit updated once a window with at least MinSamples (0: the
	// source's 10) from the window's average rtt.
	// For sre-throttle, Window is the history each client keeps (0: the
	// book's 2m).
	Window     time.Duration
	MinSamples int64
	// Interval is envoy-adaptive's concurrency_update_interval (required)
	// and MinRTTInterval its min_rtt_calc_params.interval (0:
	// EnvoyMinRTTInterval).
	Interval       time.Duration
	MinRTTInterval time.Duration
	// K is sre-throttle's multiplier (0: the book's 2).
	K float64
	// InitialLimit, MinLimit and MaxLimit override the Netflix limits'
	// initialLimit, minLimit and maxLimit (AIMDLimit) or maxConcurrency
	// (VegasLimit, Gradient2Limit); 0 keeps the source's default.
	InitialLimit, MinLimit, MaxLimit int64
	// Seed is the scenario's seed, for the draws of the adaptive limiters
	// (vegas' probe jitter).
	Seed uint64

	// MaxBurst is guava-bursty's maxBurstSeconds (0: Guava's 1s); Warmup
	// guava-warming-up's warmupPeriod (required) and ColdFactor its
	// coldFactor (0: Guava's 3). See Guava.
	MaxBurst, Warmup time.Duration
	ColdFactor       float64
	// Slack is uber-ratelimit's WithSlack(n) when SlackSet (0 is
	// WithoutSlack); otherwise the library's default 10. See Uber.
	Slack    int64
	SlackSet bool

	// UseEffectiveCount is apigee-spike-arrest's <UseEffectiveCount>;
	// QuotaType apigee-quota's <Quota type> (calendar, flexi or
	// rollingwindow; "" is calendar). See ApigeeSpikeArrest,
	// ApigeeQuotaFlexi.
	UseEffectiveCount bool
	QuotaType         string
	// Tier is azure-rate-limit's tier (classic or v2; "" is classic) and
	// IncrementLate its increment-condition: the counter increased after
	// the response. See AzureRateLimit.
	Tier          string
	IncrementLate bool
	// MitigationTimeout is cloudflare-rate-limit's mitigation timeout
	// (the rule's Duration): a key that exceeds the rate is blocked that
	// long; 0 throttles without a block. See CloudflareRateLimit.
	MitigationTimeout time.Duration
	// QuotaOffset is aws-usage-plan's offset: the requests subtracted
	// from its limit in the initial period. See AWSUsagePlan.
	QuotaOffset int64

	// ClassBy, Partitions, Critical and Reserve are the priority-shedding
	// rows' (NetflixPartitioned, StripeFleetShedder): ClassBy is the
	// attribute whose value classes a request (j >= 1: attrs[j] of
	// DecideAttrs; 0: none, every request in no named class);
	// Partitions are netflix-partitioned's, in the order written;
	// Critical are stripe-fleet-shedder's critical values and Reserve its
	// fraction of max kept for them, in millionths.
	ClassBy    int
	Partitions []Class
	Critical   []Class
	Reserve    int64

	// Members are an all-of row's limits, in order (AllOf), and Commit how
	// it charges them (default AllOrNothing). Only all-of takes them.
	Members []Member
	Commit  Commit
}

// ParamError is an invalid parameter: Field names it as a scenario spells it
// (rate, per, burst, max-delay, ...), Found is what was given and Want what
// is expected. The scenario loader adds file:line:col and the field path.
type ParamError struct {
	Field string
	Found string
	Want  string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Field, e.Found, e.Want)
}

// maxExact bounds the products the exact algorithms form, Burst*Per and
// cost*Per in integer nanoseconds, with headroom for adding a time to them.
const maxExact = math.MaxInt64 / 4

// checkPolicy validates a policy for the exact algorithms: positive values
// and Burst*Per small enough that every product the algorithms form fits in
// an int64 without rounding.
//
// A calendar period (Calendar set) is refused here: only fixed-window,
// which checks it itself (checkCalendarPolicy), counts calendar windows.
func checkPolicy(p Policy) error {
	if p.Calendar != NotCalendar {
		return errCalendar("this algorithm", p.Calendar)
	}
	return checkExactPolicy(p)
}

// checkCalendarPolicy is checkPolicy for fixed-window, which takes a
// calendar period (Per must then be the calendar's nominal duration) and
// forms no product of the policy with Per: a count is compared with the
// rate, and a window's index is the time divided by Per, so a day of 10^9
// requests is as exact as one of 10, and the bound of checkPolicy on
// Rate*Per and Burst*Per does not apply.
func checkCalendarPolicy(p Policy) error {
	if p.Calendar > CalendarYear {
		return &ParamError{"per", fmt.Sprint(p.Calendar), "want 1mo, 1y or a duration"}
	}
	if p.Calendar != NotCalendar && p.Per != p.Calendar.Nominal() {
		return &ParamError{"per", p.Per.String(), fmt.Sprintf("want %v for per %s (its nominal duration)", p.Calendar.Nominal(), p.Calendar)}
	}
	return checkPositive(p)
}

// checkExactPolicy is checkPositive, and Burst*Per and Rate*Per within
// 2^61 ns, the products the exact algorithms form.
func checkExactPolicy(p Policy) error {
	if err := checkPositive(p); err != nil {
		return err
	}
	if p.Burst > maxExact/int64(p.Per) {
		return &ParamError{"burst", fmt.Sprintf("%d with per %v", p.Burst, p.Per),
			fmt.Sprintf("want at most %d with per %v (burst*per must stay within 2^61 ns for every decision to be exact)",
				maxExact/int64(p.Per), p.Per)}
	}
	if p.Rate > maxExact/int64(p.Per) {
		return &ParamError{"rate", fmt.Sprintf("%d with per %v", p.Rate, p.Per),
			fmt.Sprintf("want at most %d with per %v (rate*per must stay within 2^61 ns for every decision to be exact)",
				maxExact/int64(p.Per), p.Per)}
	}
	return nil
}

// checkPositive requires a rate, a period and a burst greater than 0.
func checkPositive(p Policy) error {
	if p.Rate < 1 {
		return &ParamError{"rate", fmt.Sprint(p.Rate), "want a rate of at least 1 request per period"}
	}
	if p.Per <= 0 {
		return &ParamError{"per", p.Per.String(), "want a period greater than 0"}
	}
	if p.Burst < 1 {
		return &ParamError{"burst", fmt.Sprint(p.Burst), "want a burst of at least 1"}
	}
	return nil
}

// Class is one value of a priority-shedding row's attribute (Params.ClassBy):
// a partition of netflix-partitioned, a critical value of
// stripe-fleet-shedder.
type Class struct {
	// Name is the value as the scenario writes it, Value its id among the
	// attribute's values (traffic.Plan.AttributeValues, which lists the
	// values a replay's lines may bring that the rows name; NoKey when no
	// source sends it).
	Name  string
	Value Key
	// Share is netflix-partitioned's percent of the limit, in [0, 1].
	Share float64
}

// NginxRoute is one route's limit_req on a zone shared by several routes
// (Params.NginxRoutes): its route (traffic.Arrival.Route) and its burst=,
// delay= and nodelay.
type NginxRoute struct {
	Route   uint16
	Burst   int64
	Delay   int64
	Nodelay bool
}
