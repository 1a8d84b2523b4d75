package expect

import (
	"time"

	"github.com/ratesim/ratesim/sim"
)

// Kind is what a figure's values are: counts and ratios, durations (in
// ns), or a decision's verdict.
type Kind uint8

// The kinds of figures.
const (
	Number Kind = iota
	Duration
	Verdict
)

// figure is one figure of a row that an expectation or a sweep's goal can
// name (docs/expect.md lists them): its name, what it takes in
// parentheses and how to read it.
type figure struct {
	name string
	kind Kind
	// keyed: it can be restricted to keys by a glob (key=GLOB): the
	// per-key totals are requests, attempts, rejected attempts and the
	// last admission
	keyed bool
	// windowed: it is read in one of the report's windows, peak(1s); the
	// first window when none is given
	windowed bool
	// decision: it is read of one decision, at=T (and key=GLOB, n=N)
	decision bool
	// row reads a figure of the row; window, a windowed one in window w
	// (0: the first window)
	row    func(r *sim.Result) (float64, bool)
	window func(r *sim.Result, w time.Duration) (float64, bool)
	doc    string
}

func count(n int64) (float64, bool) { return float64(n), true }

// Pct is 100 × num / den, 0 when den is 0.
func Pct(num, den int64) (float64, bool) {
	if den == 0 {
		return 0, true
	}
	return 100 * float64(num) / float64(den), true
}

// cluster, backend and baseline read a figure that only some rows have.
func cluster(get func(c *sim.ClusterResult) float64) func(r *sim.Result) (float64, bool) {
	return func(r *sim.Result) (float64, bool) {
		if r.Cluster == nil {
			return 0, false
		}
		return get(r.Cluster), true
	}
}

func backendFig(get func(r *sim.Result) float64) func(r *sim.Result) (float64, bool) {
	return func(r *sim.Result) (float64, bool) {
		if r.Backend == nil {
			return 0, false
		}
		return get(r), true
	}
}

func baseline(get func(b *sim.BaselineResult) (float64, bool)) func(r *sim.Result) (float64, bool) {
	return func(r *sim.Result) (float64, bool) {
		if r.Baseline == nil {
			return 0, false
		}
		return get(r.Baseline)
	}
}

// peakIn finds the peak of window w (the first when w is 0).
func peakIn(ps []sim.Peak, w time.Duration) (sim.Peak, bool) {
	for i, p := range ps {
		if w == 0 && i == 0 || p.WindowNs == int64(w) {
			return p, true
		}
	}
	return sim.Peak{}, false
}

func keyPeakIn(ps []sim.KeyPeak, w time.Duration) (sim.KeyPeak, bool) {
	for i, p := range ps {
		if w == 0 && i == 0 || p.WindowNs == int64(w) {
			return p, true
		}
	}
	return sim.KeyPeak{}, false
}

// figures are the figures, in the order docs list them: first those a
// sweep's goal has named from the start.
var figures = []figure{
	{name: "accepted", row: func(r *sim.Result) (float64, bool) { return count(r.Accepted) }, doc: "attempts admitted at once"},
	{name: "delayed", row: func(r *sim.Result) (float64, bool) { return count(r.Delayed) }, doc: "attempts admitted with a delay"},
	{name: "admitted", row: func(r *sim.Result) (float64, bool) { return count(r.Accepted + r.Delayed) }, doc: "accepted + delayed"},
	{name: "rejected", keyed: true, row: func(r *sim.Result) (float64, bool) { return count(r.Rejected) }, doc: "attempts rejected"},
	{name: "offered", keyed: true, row: func(r *sim.Result) (float64, bool) { return count(r.Offered) }, doc: "requests (first attempts)"},
	{name: "attempts", keyed: true, row: func(r *sim.Result) (float64, bool) { return count(r.Attempts) }, doc: "arrivals, retries included"},
	{name: "gave_up", row: func(r *sim.Result) (float64, bool) { return count(r.GaveUp) }, doc: "requests whose last attempt was rejected"},
	{name: "reject_pct", keyed: true, row: func(r *sim.Result) (float64, bool) { return Pct(r.Rejected, r.Attempts) }, doc: "100 × rejected / attempts"},
	{name: "p50_delay", kind: Duration, row: func(r *sim.Result) (float64, bool) { return count(r.DelayNs.P50) }, doc: "median delay of admitted attempts"},
	{name: "p99_delay", kind: Duration, row: func(r *sim.Result) (float64, bool) { return count(r.DelayNs.P99) }, doc: "99th percentile delay"},
	{name: "max_delay", kind: Duration, row: func(r *sim.Result) (float64, bool) { return count(r.DelayNs.Max) }, doc: "longest delay"},
	{name: "key_peak_ratio", windowed: true, window: func(r *sim.Result, w time.Duration) (float64, bool) {
		p, ok := keyPeakIn(r.KeyPeaks, w)
		return float64(p.Ratio), ok
	}, doc: "the most one key released in any first report window (W), over its limit"},
	{name: "key_peak", windowed: true, window: func(r *sim.Result, w time.Duration) (float64, bool) {
		p, ok := keyPeakIn(r.KeyPeaks, w)
		return float64(p.Count), ok
	}, doc: "that count"},
	{name: "peak", windowed: true, window: func(r *sim.Result, w time.Duration) (float64, bool) {
		p, ok := peakIn(r.Peaks, w)
		return float64(p.Count), ok
	}, doc: "the most every key together released in any first report window"},
	{name: "bytes_per_key", row: func(r *sim.Result) (float64, bool) { return count(r.Memory.BytesPerKeyMax) }, doc: "the most state one key held"},
	{name: "rate", row: func(r *sim.Result) (float64, bool) { return count(r.Limit.Rate) }, doc: "the row's policy: rate"},
	{name: "burst", row: func(r *sim.Result) (float64, bool) { return count(r.Limit.Burst) }, doc: "the row's policy: burst"},
	{name: "per", kind: Duration, row: func(r *sim.Result) (float64, bool) { return count(r.Limit.PerNs) }, doc: "the row's policy: per"},
	{name: "extra", row: cluster(func(c *sim.ClusterResult) float64 { return float64(c.ExtraAdmitted) }), doc: "cluster rows: admitted minus the exact reference's"},
	{name: "extra_pct", row: cluster(func(c *sim.ClusterResult) float64 { return 100 * float64(c.ExtraRatio) }), doc: "cluster rows: 100 × extra / the reference's admitted"},
	{name: "store_ops_per_req", row: cluster(func(c *sim.ClusterResult) float64 { return float64(c.StoreOpsPerAttempt) }), doc: "cluster rows: store operations per attempt"},
	{name: "p99_added", kind: Duration, row: cluster(func(c *sim.ClusterResult) float64 { return float64(c.AddedLatencyNs.P99) }), doc: "cluster rows: 99th percentile latency the store added"},
	{name: "baseline_differs_pct", row: baseline(func(b *sim.BaselineResult) (float64, bool) { return Pct(b.Differs, b.Compared) }), doc: "with --baseline: 100 × requests decided unlike the baseline row / requests compared"},
	{name: "goodput", row: backendFig(func(r *sim.Result) float64 { return float64(r.Backend.Goodput) }), doc: "backend rows: requests served without error in time"},
	{name: "shed", row: backendFig(func(r *sim.Result) float64 { return float64(r.Backend.Shed) }), doc: "backend rows: requests a full queue turned away"},
	{name: "timed_out", row: backendFig(func(r *sim.Result) float64 { return float64(r.Backend.TimedOut) }), doc: "backend rows: clients that gave up waiting"},
	{name: "utilization", row: backendFig(func(r *sim.Result) float64 { return r.Backend.Utilization }), doc: "backend rows: busy worker time over capacity"},
	{name: "p99_response", kind: Duration, row: backendFig(func(r *sim.Result) float64 { return float64(r.Backend.ResponseNs.P99) }), doc: "backend rows: 99th percentile response time"},
	{name: "p99_queue_wait", kind: Duration, row: backendFig(func(r *sim.Result) float64 { return float64(r.Backend.QueueWaitNs.P99) }), doc: "backend rows: 99th percentile queue wait"},

	// the figures expectations added
	{name: "accept_pct", row: func(r *sim.Result) (float64, bool) { return Pct(r.Accepted+r.Delayed, r.Attempts) }, doc: "100 × (accepted + delayed) / attempts"},
	{name: "retries_throttled", row: func(r *sim.Result) (float64, bool) { return count(r.RetriesThrottled) }, doc: "retries a retry budget, token bucket or circuit breaker held back"},
	{name: "p90_delay", kind: Duration, row: func(r *sim.Result) (float64, bool) { return count(r.DelayNs.P90) }, doc: "90th percentile delay"},
	{name: "peak_ratio", windowed: true, window: func(r *sim.Result, w time.Duration) (float64, bool) {
		p, ok := peakIn(r.Peaks, w)
		return float64(p.Ratio), ok
	}, doc: "peak over the limit in that window"},
	{name: "attempt_peak", windowed: true, window: func(r *sim.Result, w time.Duration) (float64, bool) {
		p, ok := peakIn(r.AttemptPeaks, w)
		return float64(p.Count), ok
	}, doc: "the most attempts that arrived in any window"},
	{name: "keys_limited", row: func(r *sim.Result) (float64, bool) { return count(r.Keys.Limited) }, doc: "keys with a rejected attempt"},
	{name: "keys_peak", row: func(r *sim.Result) (float64, bool) { return count(r.Memory.KeysPeak) }, doc: "the most keys held at once"},
	{name: "bytes_peak", row: func(r *sim.Result) (float64, bool) { return count(r.Memory.BytesPeak) }, doc: "the most state held at once"},
	{name: "reference_admitted", row: cluster(func(c *sim.ClusterResult) float64 { return float64(c.ReferenceAdmitted) }), doc: "cluster rows: what one exact limiter admitted"},
	{name: "store_ops", row: cluster(func(c *sim.ClusterResult) float64 { return float64(c.StoreOps) }), doc: "cluster rows: store operations"},
	{name: "store_busy", row: cluster(func(c *sim.ClusterResult) float64 { return float64(c.StoreBusy) }), doc: "cluster rows: the store's busy time over the run"},
	{name: "store_errors", row: cluster(func(c *sim.ClusterResult) float64 { return float64(c.StoreErrors) }), doc: "cluster rows: store operations that failed"},
	{name: "fail_open", row: cluster(func(c *sim.ClusterResult) float64 { return float64(c.FailOpen) }), doc: "cluster rows: attempts admitted because the store failed"},
	{name: "fail_closed", row: cluster(func(c *sim.ClusterResult) float64 { return float64(c.FailClosed) }), doc: "cluster rows: attempts rejected because the store failed"},
	{name: "p50_added", kind: Duration, row: cluster(func(c *sim.ClusterResult) float64 { return float64(c.AddedLatencyNs.P50) }), doc: "cluster rows: median latency the store added"},
	{name: "max_added", kind: Duration, row: cluster(func(c *sim.ClusterResult) float64 { return float64(c.AddedLatencyNs.Max) }), doc: "cluster rows: longest latency the store added"},
	{name: "baseline_differs", row: baseline(func(b *sim.BaselineResult) (float64, bool) { return count(b.Differs) }), doc: "with --baseline: requests decided unlike the baseline row"},
	{name: "wrongly_allowed", row: baseline(func(b *sim.BaselineResult) (float64, bool) { return count(b.WronglyAllowed) }), doc: "with --baseline: requests the baseline rejected and the row admitted"},
	{name: "wrongly_limited", row: baseline(func(b *sim.BaselineResult) (float64, bool) { return count(b.WronglyLimited) }), doc: "with --baseline: requests the baseline admitted and the row rejected"},
	{name: "served", row: backendFig(func(r *sim.Result) float64 { return float64(r.Backend.Served) }), doc: "backend rows: requests whose service ended"},
	{name: "errors", row: backendFig(func(r *sim.Result) float64 { return float64(r.Backend.Errors) }), doc: "backend rows: served requests that failed"},
	{name: "p50_response", kind: Duration, row: backendFig(func(r *sim.Result) float64 { return float64(r.Backend.ResponseNs.P50) }), doc: "backend rows: median response time"},
	{name: "max_response", kind: Duration, row: backendFig(func(r *sim.Result) float64 { return float64(r.Backend.ResponseNs.Max) }), doc: "backend rows: longest response time"},
	{name: "last_admitted", kind: Duration, keyed: true, row: func(*sim.Result) (float64, bool) { return 0, false }, doc: "with key=GLOB only: when the last request of those keys was admitted (released), from the start: when contending clients are all through"},
	{name: "held_peak", row: backendFig(func(r *sim.Result) float64 { return float64(r.Backend.HeldPeak) }), doc: "backend rows: the most requests held at once, from verdict to end: the backlog of a rate-latency server (latency)"},
	{name: "p50_queue_wait", kind: Duration, row: backendFig(func(r *sim.Result) float64 { return float64(r.Backend.QueueWaitNs.P50) }), doc: "backend rows: median queue wait"},

	// one decision's
	{name: "verdict", kind: Verdict, decision: true, doc: "one decision: accept, delay or reject"},
	{name: "delay", kind: Duration, decision: true, doc: "one decision: its delay (0 unless delayed)"},
	{name: "retry_after", kind: Duration, decision: true, doc: "one decision: its retry-after (rejected ones; -1ns: never)"},
	{name: "granted", decision: true, doc: "one decision: the cost it was granted (its cost, less after a partial admission, 0 when rejected)"},
	{name: "estimate", decision: true, doc: "one decision: the algorithm's estimate the request met (the sliding window counter's weighted count)"},
	{name: "state", decision: true, doc: "one decision: a gauge of the algorithm's state the request met (gauge=NAME)"},
}

func figureByName(name string) (*figure, bool) {
	for i := range figures {
		if figures[i].name == name {
			return &figures[i], true
		}
	}
	return nil, false
}

// Names lists the figures an expectation can name, in docs' order.
func Names() []string {
	names := make([]string, len(figures))
	for i, f := range figures {
		names[i] = f.name
	}
	return names
}

// GoalNames lists the figures of a row a sweep's goal can name: all but
// those of one decision.
func GoalNames() []string {
	var names []string
	for _, f := range figures {
		if !f.decision {
			names = append(names, f.name)
		}
	}
	return names
}

func keyedNames() []string {
	var names []string
	for _, f := range figures {
		if f.keyed {
			names = append(names, f.name)
		}
	}
	return names
}

func windowedNames() []string {
	var names []string
	for _, f := range figures {
		if f.windowed {
			names = append(names, f.name)
		}
	}
	return names
}
