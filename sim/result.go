package sim

import (
	"bytes"
	"strconv"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/backend"
)

// Report is the outcome of one scenario: one Result per algorithm, in the
// scenario's order. It is what `ratesim compare --format json` prints.
type Report struct {
	Scenario    string `json:"scenario"`
	Description string `json:"description,omitempty"`
	Seed        uint64 `json:"seed"`
	// StartNs and DurationNs are the span of the traffic: from 0 and the
	// scenario's duration for synthetic traffic, from the first arrival to
	// the last for recorded traces.
	StartNs    int64 `json:"start_ns"`
	DurationNs int64 `json:"duration_ns"`
	Limit      Limit `json:"limit"`
	// Keys is the number of distinct keys the traffic used. The limit is
	// per key while peaks count every key together, so with several keys
	// a peak ratio above 1.0 can be within the policy: key_peaks are the
	// figure to hold against it.
	Keys    int64    `json:"keys"`
	Results []Result `json:"results"`
	// Traces summarises the recorded traces replayed, if any (filled by
	// the caller from the replay sources after the run).
	Traces []TraceSummary `json:"traces,omitempty"`
	// CostUnit names what the peaks and limits count when a request may
	// cost more than 1 (traffic.CostUnit: "tokens", "cost units"); ""
	// when every request costs 1 and they count requests (filled by the
	// caller from the traffic).
	CostUnit string `json:"cost_unit,omitempty"`
	// NamedWindowsNs are the report windows the scenario named
	// (report.windows), nil when it named none and the windows are the
	// default W and W/10 (filled by the caller from the scenario). Tables
	// and charts show a policy's own window against its limit and a named
	// one as an observation window, held to no limit; a window neither
	// (the default W/10) is in the JSON only (docs/metrics.md).
	NamedWindowsNs []int64 `json:"-"`
}

// TraceSummary is what reading one recorded trace found: how many lines
// were read, used, malformed (by reason), later than the reorder window, and
// cut by the slice; its span, keys and busiest second.
type TraceSummary struct {
	Path          string           `json:"path"`
	Format        string           `json:"format"`
	Lines         int64            `json:"lines"`
	Used          int64            `json:"used"`
	Malformed     int64            `json:"malformed"`
	Late          int64            `json:"late"`
	Sliced        int64            `json:"sliced"`
	ByReason      map[string]int64 `json:"malformed_by_reason,omitempty"`
	FirstBad      []string         `json:"first_bad,omitempty"`
	FirstNs       int64            `json:"first_ns"`
	LastNs        int64            `json:"last_ns"`
	Keys          int64            `json:"keys"`
	PeakPerSecond int64            `json:"peak_per_second"`
	// NoValue counts, per attribute read from the trace's lines
	// (attribute-fields) that some line lacks, the lines used without a
	// value of it: a limit by that attribute did not look at them.
	NoValue map[string]int64 `json:"no_value,omitempty"`
	// Classed are the attributes of NoValue whose values a row names
	// (traffic.Plan.Named: a shedding row's partitions), sorted: that row
	// did look at the lines without a value, and put them in its default
	// class.
	Classed []string `json:"-"`
	// Routing is where a gateway's routes sent the trace's requests
	// (replay --gateway), nil when nothing routed it.
	Routing *TraceRouting `json:"routing,omitempty"`
}

// TraceRouting counts the requests of a trace by the route that took
// them (docs/gateways.md, Routing), and those no route took.
type TraceRouting struct {
	Routes   []RouteCount `json:"routes"`
	Unrouted int64        `json:"unrouted"`
}

// RouteCount is how many requests one route took; Limited says a row
// takes them (a limit applies there), else the gateway passes them, or
// charges with them the limit Shares names, whose state a row keeps
// (traffic.Route.Shares).
type RouteCount struct {
	Route    string `json:"route"`
	Limited  bool   `json:"limited"`
	Shares   string `json:"shares,omitempty"`
	Requests int64  `json:"requests"`
}

// Limit is the scenario's policy as the JSON writes it.
type Limit struct {
	Rate  int64 `json:"rate"`
	PerNs int64 `json:"per_ns"`
	Burst int64 `json:"burst"`
	// Calendar is "1mo" or "1y" for a calendar period (PerNs is then its
	// nominal 30 or 365 days), absent otherwise.
	Calendar string `json:"calendar,omitempty"`
}

// LimitOf converts a policy.
func LimitOf(p algorithms.Policy) Limit {
	return Limit{Rate: p.Rate, PerNs: int64(p.Per), Burst: p.Burst, Calendar: p.Calendar.String()}
}

// Policy converts back.
func (l Limit) Policy() algorithms.Policy {
	c, _ := algorithms.ParseCalendar(l.Calendar)
	return algorithms.Policy{Rate: l.Rate, Per: time.Duration(l.PerNs), Burst: l.Burst, Calendar: c}
}

// Result is what one algorithm did with the scenario's traffic.
type Result struct {
	Algorithm string         `json:"algorithm"`
	Label     string         `json:"label"`
	Params    map[string]any `json:"params"`
	// Limit is the policy this algorithm enforced (the scenario's, with
	// this entry's overrides).
	Limit Limit `json:"limit"`

	// Offered counts distinct requests (first attempts); Attempts every
	// arrival including retries. Accepted + Delayed + Rejected == Attempts.
	Offered  int64 `json:"offered"`
	Attempts int64 `json:"attempts"`
	Accepted int64 `json:"accepted"`
	Delayed  int64 `json:"delayed"`
	Rejected int64 `json:"rejected"`
	// GaveUp counts requests whose last attempt was rejected.
	GaveUp int64 `json:"gave_up"`
	// RetriesThrottled counts the requests of GaveUp whose retry their
	// client's retry budget, token bucket or circuit breaker refused
	// (traffic.RetryBudget, RetryTokens, RetryBreaker); absent without one.
	RetriesThrottled int64 `json:"retries_throttled,omitempty"`

	DelayNs Percentiles `json:"delay_ns"`
	// Peaks count every key together; KeyPeaks one key at a time, the
	// figure to hold against the limit, which is per key.
	Peaks    []Peak    `json:"peaks"`
	KeyPeaks []KeyPeak `json:"key_peaks"`
	// AttemptPeaks are the peaks of attempts reaching the limiter (first
	// tries and retries, by arrival time, in cost), for each report window:
	// a retry herd shows here.
	AttemptPeaks []Peak `json:"attempt_peaks"`
	Memory       Memory `json:"memory"`
	// ZoneEvictions and ZoneRefusals are, for an nginx row with a zone
	// (algorithms.NginxZone), the nodes freed by force when the zone was
	// full and the requests refused (503) because no node could be
	// allocated; nil for every other row.
	ZoneEvictions *int64    `json:"zone_evictions,omitempty"`
	ZoneRefusals  *int64    `json:"zone_refusals,omitempty"`
	Keys          KeyReport `json:"keys"`
	// KeyGroups totals the keys that match each of Config.KeyGlobs, in
	// that order; nil without them.
	KeyGroups []KeyGroup `json:"-"`
	// Cluster is what the cluster did, for a row run on one
	// (docs/cluster.md); nil otherwise.
	Cluster *ClusterResult `json:"cluster,omitempty"`
	// Redis is what replaying the row's decisions on a real redis-server
	// found (docs/redis.md, compare --redis); nil otherwise. The caller
	// fills it: the engine never talks to a store.
	Redis *RedisResult `json:"redis,omitempty"`
	// Backend is what the row's backend did (docs/backend.md), for a
	// scenario whose backend has workers; nil otherwise.
	Backend *backend.Result `json:"backend,omitempty"`
	// Baseline is how this row's decisions compare with the baseline
	// row's (docs/accuracy.md, --baseline); nil without one and for the
	// baseline row itself.
	Baseline *BaselineResult `json:"baseline,omitempty"`
	// Check is how this row's decisions compare with what the gateway
	// logged (docs/replay.md, replay --check-field); nil without one.
	Check *CheckResult `json:"check,omitempty"`
	// Fired says, for an all-of row, how many requests each of its limits
	// decided (algorithms.Firer: the first that rejected, else the one
	// whose delay the request waited), in the order of its limits; nil
	// for every other row and on a cluster.
	Fired []LimitFired `json:"fired,omitempty"`
	// LimitPeaks are, for an all-of row whose limits count by different
	// keys (by:), the busiest key of each limit, in the order of its
	// limits; nil for every other row.
	LimitPeaks []LimitKeyPeak `json:"limit_key_peaks,omitempty"`
	Series     Series         `json:"series"`

	// Delays is the distribution of the delays of admitted attempts, by
	// delay (0 for accepted ones), for charts: exact while the run has at
	// most DelayExactValues distinct delays, else by bucket (each delay
	// rounded down to 11 significant bits).
	Delays []DelayCount `json:"-"`
	// State is the watched key's state over time (Config.Inspect), for
	// charts; nil when nothing was watched or the algorithm cannot show
	// its state.
	State *StateSeries `json:"-"`
	// Window is the cost every key together released in the trailing
	// policy window at every instant, and KeyWindow the same for the key of
	// the policy window's key peak, for charts; nil unless the caller
	// counted them (NewWindowCounter), KeyWindow nil with one key.
	Window, KeyWindow *WindowSeries `json:"-"`
	// NodeStates is, for a row on a cluster, the watched key's state where
	// the row keeps it: on each node (local, split) or in the store
	// (central, racy, lease), each with its Where.
	NodeStates []StateSeries `json:"-"`
	// View is what a cluster row saw when it decided the attempt that
	// Config.Explain names; nil otherwise. Outputs do not show it.
	View *ClusterView `json:"-"`
}

// RedisResult is what a row's replay on Redis found: every decision of
// the row (or, for a central cluster row, every script the store ran) made
// again by the algorithm's Lua script and compared with the simulation's.
// OpsPerS and P99Ns are wall-clock figures, the only output that differs
// from run to run; the memory figures are the server's. A row that could
// not be replayed has Skipped, saying why, and nothing else.
type RedisResult struct {
	Skipped          string         `json:"skipped,omitempty"`
	Decisions        int64          `json:"decisions"`
	Mismatches       int64          `json:"mismatches"`
	FirstMismatch    *RedisMismatch `json:"first_mismatch"`
	MemoryUsageMax   int64          `json:"memory_usage_max"`
	UsedMemoryPerKey int64          `json:"used_memory_per_key"`
	Keys             int64          `json:"keys"`
	OpsPerS          int64          `json:"ops_per_s"`
	P99Ns            int64          `json:"p99_ns"`
}

// RedisMismatch is a decision that Redis made otherwise than the
// simulation: the attempt (its instant, key, cost and number) and both
// answers.
type RedisMismatch struct {
	TimeNs     int64         `json:"time_ns"`
	Key        string        `json:"key"`
	Cost       int64         `json:"cost"`
	Attempt    int           `json:"attempt"`
	Simulation RedisDecision `json:"simulation"`
	Redis      RedisDecision `json:"redis"`
}

// RedisDecision is one answer as the scripts return it: the verdict's
// name, the delay and the retry_after (-1 for never), and the limit of an
// all-of row that fired.
type RedisDecision struct {
	Verdict      string `json:"verdict"`
	DelayNs      int64  `json:"delay_ns"`
	RetryAfterNs int64  `json:"retry_after_ns"`
	// Limit is, for an all-of row, the limit that decided (LimitName);
	// "" when none did, and for every other row.
	Limit string `json:"limit,omitempty"`
}

// RedisDecisionOf writes a decision as the scripts return it.
func RedisDecisionOf(d algorithms.Decision) RedisDecision {
	// Never is -1, as the scripts return it
	return RedisDecision{Verdict: d.Verdict.String(), DelayNs: int64(d.Delay), RetryAfterNs: int64(d.RetryAfter)}
}

// DelayCount is how many admitted attempts waited DelayNs.
type DelayCount struct {
	DelayNs int64
	Count   int64
}

// StateSeries samples one key's state (algorithms.Gauge) over time: at
// TimesNs[i], gauge Names[j] was Values[i][j].
type StateSeries struct {
	Key     string
	Where   string // for a cluster row's: "node 0", "store"
	Names   []string
	TimesNs []int64
	Values  [][]float64
}

// DefaultTopKeys is how many keys a result lists by rejections unless the
// configuration says otherwise.
const DefaultTopKeys = 5

// KeyReport is who got limited: how many keys had at least one attempt
// rejected, and the top keys by rejections.
type KeyReport struct {
	Limited int64      `json:"limited"`
	Top     []KeyCount `json:"top"`
}

// KeyCount is one key's requests (first attempts) and rejected attempts.
type KeyCount struct {
	Key      string `json:"key"`
	Offered  int64  `json:"offered"`
	Rejected int64  `json:"rejected"`
}

// KeyGroup is what the keys whose names match Glob did together: how many
// keys, their requests (first attempts) and their rejected attempts.
type KeyGroup struct {
	Glob     string `json:"glob"`
	Keys     int64  `json:"keys"`
	Offered  int64  `json:"offered"`
	Rejected int64  `json:"rejected"`
	// Attempts counts first attempts and retries; LastAdmitted is the
	// latest admission's release instant from the run's start, when
	// Admitted (some request of the keys was admitted). Not written in a
	// sweep's JSON (its goals read offered and rejected only).
	Attempts     int64         `json:"-"`
	LastAdmitted time.Duration `json:"-"`
	Admitted     bool          `json:"-"`
}

// Percentiles of the delay of admitted attempts (0 for accepted ones), by
// nearest rank. Exact while a run has at most DelayExactValues distinct
// delays; beyond that each figure is within 1/1024 of the true one (Exact
// false), and Max is always exact.
type Percentiles struct {
	P50   int64 `json:"p50"`
	P90   int64 `json:"p90"`
	P99   int64 `json:"p99"`
	Max   int64 `json:"max"`
	Exact bool  `json:"-"`
}

// Peak is the largest total cost released to the backend, by every key
// together, in any half-open interval [StartNs, StartNs+WindowNs), with the
// earliest such start.
type Peak struct {
	WindowNs int64 `json:"window_ns"`
	Count    int64 `json:"count"`
	StartNs  int64 `json:"start_ns"`
	// Ratio is Count / (L*V/W): how many times the limit got through.
	Ratio Ratio `json:"ratio"`
}

// KeyPeak is, for one window length WindowNs, the largest total cost that
// one key released to the backend in any half-open interval [StartNs,
// StartNs+WindowNs): that Count, the Key, and the earliest such start (of
// equal starts, the key whose release came first in processing order; the
// releases of delayed requests due at one instant come in the release
// queue's order, which is the same from run to run). Count 0, Key "" and
// StartNs 0 when nothing was released. With one key it is the Peak of the
// same window.
type KeyPeak struct {
	WindowNs int64  `json:"window_ns"`
	Count    int64  `json:"count"`
	Key      string `json:"key"`
	StartNs  int64  `json:"start_ns"`
	// Ratio is Count / (L*V/W): how many times its limit one key got
	// through.
	Ratio Ratio `json:"ratio"`
}

// Ratio is a float that the JSON always writes with a decimal point (2.0,
// not 2), as docs/commands.md shows it.
type Ratio float64

// MarshalJSON writes r as Text does.
func (r Ratio) MarshalJSON() ([]byte, error) { return r.appendText(nil), nil }

// Text writes the shortest decimal that reads back as r, with ".0" added
// to whole numbers: the JSON's figure, which the CSV writes too.
func (r Ratio) Text() string { return string(r.appendText(nil)) }

func (r Ratio) appendText(b []byte) []byte {
	start := len(b)
	b = strconv.AppendFloat(b, float64(r), 'f', -1, 64)
	if bytes.IndexByte(b[start:], '.') < 0 {
		b = append(b, '.', '0')
	}
	return b
}

// Memory is the state an algorithm held, as algorithms.Memory reports it.
type Memory struct {
	BytesPerKeyMax int64 `json:"bytes_per_key_max"`
	KeysPeak       int64 `json:"keys_peak"`
	BytesPeak      int64 `json:"bytes_peak"`
}

// Series counts requests per bucket of BucketNs, bucket i covering
// [StartNs + i*BucketNs, StartNs + (i+1)*BucketNs). Offered, Attempts,
// Delayed and Rejected count by arrival time; Admitted counts accepted and
// delayed requests by the time they are released to the backend. Counts are
// requests, not cost. BucketNs is report.bucket, doubled as many times as
// needed to keep the series within MaxSeriesBuckets (a long trace); the
// counts are exact either way.
type Series struct {
	BucketNs int64   `json:"bucket_ns"`
	StartNs  int64   `json:"start_ns"`
	Offered  []int64 `json:"offered"`
	Attempts []int64 `json:"attempts"`
	Admitted []int64 `json:"admitted"`
	Delayed  []int64 `json:"delayed"`
	Rejected []int64 `json:"rejected"`
}

// ClusterResult is what one algorithm row did on a cluster
// (docs/cluster.md): its admissions beside those of the reference, the same algorithm run
// as one exact limiter on the same traffic; the store's load; the latency
// the store added; the store's failures and what the nodes made of them;
// and each node's share.
type ClusterResult struct {
	Nodes        int    `json:"nodes"`
	Coordination string `json:"coordination"`
	// The mode's knobs, where the mode has them.
	Clock    string `json:"clock,omitempty"`
	Write    string `json:"write,omitempty"`
	SyncNs   int64  `json:"sync_ns,omitempty"`
	Lease    int64  `json:"lease,omitempty"`
	Balancer string `json:"balancer"`
	// Admitted is accepted + delayed; ExtraAdmitted is Admitted minus the
	// reference's (negative when the mode refused what one exact limiter
	// admits), and ExtraRatio that over ReferenceAdmitted (0 when the
	// reference admitted nothing).
	Admitted          int64 `json:"admitted"`
	ReferenceAdmitted int64 `json:"reference_admitted"`
	ExtraAdmitted     int64 `json:"extra_admitted"`
	ExtraRatio        Ratio `json:"extra_ratio"`
	// StoreOps counts the operations sent to the store (scripts, GETs,
	// SETs, syncs, lease takes), failed ones included.
	StoreOps           int64 `json:"store_ops"`
	StoreOpsPerAttempt Ratio `json:"store_ops_per_attempt"`
	// StoreBusy is the share of the run the store spent serving
	// operations.
	StoreBusy Ratio `json:"store_busy"`
	// AddedLatencyNs is decided - arrival over the attempts, nearest rank.
	AddedLatencyNs LatencyPercentiles `json:"added_latency_ns"`
	// StoreErrors counts the operations that failed (the store down, or a
	// reply later than the timeout); FailOpen and FailClosed the attempts
	// that a failure admitted (on-store-error allow) or rejected (deny).
	StoreErrors int64       `json:"store_errors"`
	FailOpen    int64       `json:"fail_open"`
	FailClosed  int64       `json:"fail_closed"`
	PerNode     []NodeCount `json:"per_node"`
	// Faults are the cluster's faults on the run's clock (from the first
	// arrival for a recorded trace), for charts; the caller fills them.
	Faults []ClusterFault `json:"-"`
}

// ClusterFault is one cluster fault's window [StartNs, EndNs) and its type
// (node-down, store-down, store-slow, store-flush: an instant).
type ClusterFault struct {
	Type           string
	StartNs, EndNs int64
}

// LatencyPercentiles are the p50, p99 and max of a latency, by nearest rank.
type LatencyPercentiles struct {
	P50 int64 `json:"p50"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

// NodeCount is one node's attempts and verdicts.
type NodeCount struct {
	Node     int   `json:"node"`
	Attempts int64 `json:"attempts"`
	Admitted int64 `json:"admitted"`
	Rejected int64 `json:"rejected"`
}

// LimitFired is how many requests one limit of an all-of row rejected and
// delayed, being the limit that decided them (Result.Fired).
type LimitFired struct {
	Limit    string `json:"limit"`
	Rejected int64  `json:"rejected"`
	Delayed  int64  `json:"delayed"`
}

// LimitName is how outputs name member i of an all-of row: its label, or
// limits[i] (as the scenario file's path says it).
func LimitName(m algorithms.Member, i int) string {
	if m.Label != "" {
		return m.Label
	}
	return "limits[" + strconv.Itoa(i) + "]"
}
