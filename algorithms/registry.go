package algorithms

import (
	"fmt"
	"slices"
	"strings"
)

// Info describes one algorithm for listings and for the scenario loader.
type Info struct {
	Name    string
	Summary string // one line, for `ratesim algorithms`
	// Options are the algorithm's own option names as a scenario spells
	// them, besides the policy overrides rate, per and burst.
	Options []string
	// Exact is false only for x-time-rate, which decides in floating point.
	Exact bool
	New   func(p Params) (Limiter, error)
	// Backend: the algorithm is one of WithBackend's; Adaptive: it learns
	// from the backend's answers (a concurrency limit, or sre-throttle's
	// odds), and needs a backend with workers.
	Backend, Adaptive bool
	// Required are the options without which it cannot be built (no
	// default, as in its source): it joins no default set.
	Required []string
	// Partial: it may admit less than the cost asked (Decision.Granted).
	Partial bool
	// InFlight: it limits the requests in flight, which only the backend's
	// service time keeps there; with a service time of 0 it never refuses.
	InFlight bool
}

// registry lists the algorithms in the order ratesim reports them.
var registry = []Info{
	{Name: "fixed-window", Summary: "counter per aligned window [kW, (k+1)W); admits up to 2L across a boundary", Options: []string{"count-rejected"}, Exact: true, New: newFixedWindowLimiter},
	{Name: "sliding-log", Summary: "exact log of admitted requests in the last W; never more than L in any window", Options: []string{"count-rejected"}, Exact: true, New: newSlidingLogLimiter},
	{Name: "sliding-window", Summary: "Cloudflare's two-counter approximation of the sliding log", Options: []string{"count-rejected"}, Exact: true, New: newSlidingWindowLimiter},
	{Name: "token-bucket", Summary: "bucket of B tokens refilled at L/W; admits bursts of B", Options: []string{"max-delay", "fill-interval", "tokens-per-fill"}, Exact: true, New: newTokenBucketLimiter},
	{Name: "gcra", Summary: "generic cell rate algorithm (redis_rate): one theoretical arrival time per key", Options: []string{"max-delay"}, Exact: true, New: newGCRALimiter},
	{Name: "leaky-bucket", Summary: "queue of up to B requests released exactly W/L apart: smooths bursts", Options: nil, Exact: true, New: newLeakyBucketLimiter},
	{Name: "nginx", Summary: "nginx limit_req to the letter: millisecond clock, excess in milli-requests", Options: []string{"burst", "nodelay", "delay", "zone"}, Exact: true, New: newNginxLimiter},
	{Name: "concurrency", Summary: "at most max requests in flight per key for the backend's service time", Options: []string{"max"}, Exact: true, New: newConcurrencyLimiter, InFlight: true},
	{Name: "x-time-rate", Summary: "the real golang.org/x/time/rate Limiter (float64 tokens), as a production reference", Options: []string{"max-delay", "idle-reset"}, Exact: false, New: newXTimeRateLimiter},
}

// backendRegistry lists the algorithms that belong in front of a backend
// with workers (docs/backend.md), after the others: they join a scenario's
// default set only when its backend has workers.
var backendRegistry = []Info{
	{Name: "none", Summary: "no limiter: admits every request (the baseline in front of a backend with workers)", Options: nil, Exact: true, New: newNoneLimiter, Backend: true},
	{Name: "aimd", Summary: "Netflix's AIMDLimit: a concurrency limit up by one per sample with half of it in flight, x0.9 on a drop", Options: []string{"window", "min-samples", "initial-limit", "min-limit", "max-limit"}, Exact: false, New: newAIMDLimiter, Backend: true, Adaptive: true},
	{Name: "vegas", Summary: "Netflix's VegasLimit: a concurrency limit steered by the queue the rtt shows over the no-load rtt", Options: []string{"window", "min-samples", "initial-limit", "max-limit"}, Exact: false, New: newVegasLimiter, Backend: true, Adaptive: true},
	{Name: "gradient2", Summary: "Netflix's Gradient2Limit: a concurrency limit steered by the long-term rtt over the short-term rtt", Options: []string{"window", "min-samples", "initial-limit", "min-limit", "max-limit"}, Exact: false, New: newGradient2Limiter, Backend: true, Adaptive: true},
	{Name: "envoy-adaptive", Summary: "envoy's adaptive concurrency: a limit steered by a measured min rtt over the sampled rtt", Options: []string{"interval", "min-rtt-calc-interval"}, Required: []string{"interval"}, Exact: false, New: newEnvoyLimiter, Backend: true, Adaptive: true},
	{Name: "sre-throttle", Summary: "the SRE book's client-side throttling: a key drops with odds (requests - k*accepts)/(requests+1)", Options: []string{"k", "window"}, Exact: false, New: newSREThrottleLimiter, Backend: true, Adaptive: true},
}

// compositeRegistry lists the rows made of other algorithms: all-of, whose
// limits are its members. They join no default set and no listing of
// Names (a row needs its limits written out), but Lookup and New know them.
var compositeRegistry = []Info{
	{Name: "all-of", Summary: "several limits on one request (a gateway's limits together): commit all-or-nothing, every-hit or in-order", Options: []string{"commit", "limits"}, Exact: true, New: newAllOfLimiter, Required: []string{"limits"}},
}

// optInRegistry lists the rows that mirror one gateway's own counter
// (docs/gateways.md): they run only where a scenario names them (`ratesim
// import` writes them), never in a default set, and are not in Names.
var optInRegistry = []Info{
	{Name: "haproxy", Summary: "HAProxy's stick-table http_req_rate(per) with deny if gt rate: freq_ctr.c to the letter, every hit counted", Options: nil, Exact: true, New: newHAProxyLimiter},
	{Name: "guava-bursty", Summary: "Guava's SmoothBursty RateLimiter (doubles, as Guava): idle time stored up to max-burst, the next caller pays for this one's cost", Options: []string{"max-delay", "max-burst"}, Exact: false, New: newGuavaBurstyLimiter},
	{Name: "guava-warming-up", Summary: "Guava's SmoothWarmingUp RateLimiter (doubles, as Guava): starts cold, the rate ramps up over the warmup period", Options: []string{"max-delay", "warmup", "cold-factor"}, Exact: false, New: newGuavaWarmingUpLimiter, Required: []string{"warmup"}},
	{Name: "uber-ratelimit", Summary: "go.uber.org/ratelimit's Take: requests per/rate apart, starts empty, slack of unused time (default 10)", Options: []string{"slack"}, Exact: true, New: newUberLimiter},
	{Name: "resilience4j", Summary: "resilience4j's AtomicRateLimiter: rate permits per cycle of per, a request may borrow later cycles' within max-delay", Options: []string{"max-delay"}, Exact: true, New: newResilience4jLimiter},
	{Name: "redis-rate-at-most", Summary: "redis_rate's AllowAtMost: GCRA that grants what is left when less than asked (partial admission)", Options: nil, Exact: true, New: newRedisRateAtMostLimiter, Partial: true},
	{Name: "apigee-spike-arrest", Summary: "Apigee SpikeArrest: Nps or Npm smoothed to one request per per/rate (MessageWeight as cost); use-effective-count: a sliding window", Options: []string{"use-effective-count"}, Exact: true, New: newApigeeSpikeArrestLimiter},
	{Name: "apigee-quota", Summary: "Apigee Quota: Allow count per interval, quota-type calendar (aligned windows), flexi (from the first request) or rollingwindow", Options: []string{"quota-type"}, Exact: true, New: newApigeeQuotaLimiter},
	{Name: "azure-rate-limit", Summary: "Azure API Management rate-limit(-by-key): calls per renewal-period, a sliding window (classic) or token bucket (v2); increment-condition counts late", Options: []string{"tier", "increment-condition"}, Exact: true, New: newAzureRateLimitLimiter},
	{Name: "cloudflare-rate-limit", Summary: "Cloudflare rate limiting rule: requests per period in a sliding window; mitigation-timeout blocks the key that long once it exceeds", Options: []string{"mitigation-timeout"}, Exact: true, New: newCloudflareLimiter},
	{Name: "netflix-partitioned", Summary: "Netflix concurrency-limits' partitioned limiter: max in flight; a partition (by an attribute) keeps ceil(max*percent) once the total is full", Options: []string{"max", "by", "partitions"}, Exact: true, New: newNetflixPartitionedLimiter, Required: []string{"by", "partitions"}, InFlight: true},
	{Name: "stripe-fleet-shedder", Summary: "Stripe's fleet usage load shedder: max in flight, of which a reserve is kept for the critical values of an attribute", Options: []string{"max", "by", "critical", "reserve"}, Exact: true, New: newStripeFleetShedderLimiter, Required: []string{"by", "critical"}, InFlight: true},
	{Name: "aws-usage-plan", Summary: "Amazon API Gateway usage plan quota: rate per 24h (DAY), 168h (WEEK, from Monday) or 1mo (MONTH), UTC; quota-offset off the initial period", Options: []string{"quota-offset"}, Exact: true, New: newAWSUsagePlanLimiter},
}

// OptIn returns the rows that join no default set and are not in Names:
// each mirrors one gateway's own counter (haproxy). A scenario names them.
func OptIn() []Info {
	return append([]Info(nil), optInRegistry...)
}

// All returns the algorithms of docs/algorithms.md, which limit a rate (or a
// concurrency) on their own, in report order.
func All() []Info {
	return append([]Info(nil), registry...)
}

// WithBackend returns the algorithms that belong in front of a backend
// with workers: the baseline none, and the adaptive limits (floating point,
// as their sources, made the same on every platform: package adaptive).
func WithBackend() []Info {
	return append([]Info(nil), backendRegistry...)
}

// Names returns every algorithm name, All's then WithBackend's.
func Names() []string {
	var names []string
	for _, a := range append(All(), backendRegistry...) {
		names = append(names, a.Name)
	}
	return names
}

// Lookup returns the algorithm called name.
func Lookup(name string) (Info, bool) {
	for _, a := range slices.Concat(registry, backendRegistry, compositeRegistry, optInRegistry) {
		if a.Name == name {
			return a, true
		}
	}
	return Info{}, false
}

// New builds the algorithm called name with params p.
func New(name string, p Params) (Limiter, error) {
	a, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown algorithm %q (want one of %s)", name, strings.Join(Names(), ", "))
	}
	if p.Calendar != NotCalendar && name != "fixed-window" && name != "all-of" && name != "apigee-quota" && name != "aws-usage-plan" {
		return nil, errCalendar(name, p.Calendar)
	}
	return a.New(p)
}
