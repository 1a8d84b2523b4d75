package sweep

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/sim"
)

// metricDef is one metric of a result row that goals, tables and charts
// use: its name, whether it is a duration (ns) and how to read it.
type metricDef struct {
	name     string
	duration bool
	// keyed: it can be restricted to keys by a glob (the per-key counts
	// are requests and rejected attempts only)
	keyed bool
	get   func(r *sim.Result) (float64, bool)
	doc   string
}

func count(n int64) (float64, bool) { return float64(n), true }

func pct(num, den int64) (float64, bool) {
	if den == 0 {
		return 0, true
	}
	return 100 * float64(num) / float64(den), true
}

// metrics are the metrics a goal can name, in the order docs list them.
var metrics = []metricDef{
	{name: "accepted", get: func(r *sim.Result) (float64, bool) { return count(r.Accepted) }, doc: "attempts admitted at once"},
	{name: "delayed", get: func(r *sim.Result) (float64, bool) { return count(r.Delayed) }, doc: "attempts admitted with a delay"},
	{name: "admitted", get: func(r *sim.Result) (float64, bool) { return count(r.Accepted + r.Delayed) }, doc: "accepted + delayed"},
	{name: "rejected", keyed: true, get: func(r *sim.Result) (float64, bool) { return count(r.Rejected) }, doc: "attempts rejected"},
	{name: "offered", keyed: true, get: func(r *sim.Result) (float64, bool) { return count(r.Offered) }, doc: "requests (first attempts)"},
	{name: "attempts", get: func(r *sim.Result) (float64, bool) { return count(r.Attempts) }, doc: "arrivals, retries included"},
	{name: "gave_up", get: func(r *sim.Result) (float64, bool) { return count(r.GaveUp) }, doc: "requests whose last attempt was rejected"},
	{name: "reject_pct", keyed: true, get: func(r *sim.Result) (float64, bool) { return pct(r.Rejected, r.Attempts) }, doc: "100 × rejected / attempts"},
	{name: "p50_delay", duration: true, get: func(r *sim.Result) (float64, bool) { return count(r.DelayNs.P50) }, doc: "median delay of admitted attempts"},
	{name: "p99_delay", duration: true, get: func(r *sim.Result) (float64, bool) { return count(r.DelayNs.P99) }, doc: "99th percentile delay"},
	{name: "max_delay", duration: true, get: func(r *sim.Result) (float64, bool) { return count(r.DelayNs.Max) }, doc: "longest delay"},
	{name: "key_peak_ratio", get: func(r *sim.Result) (float64, bool) {
		if len(r.KeyPeaks) == 0 {
			return 0, false
		}
		return float64(r.KeyPeaks[0].Ratio), true
	}, doc: "the most one key released in any first report window (W), over its limit"},
	{name: "key_peak", get: func(r *sim.Result) (float64, bool) {
		if len(r.KeyPeaks) == 0 {
			return 0, false
		}
		return float64(r.KeyPeaks[0].Count), true
	}, doc: "that count"},
	{name: "peak", get: func(r *sim.Result) (float64, bool) {
		if len(r.Peaks) == 0 {
			return 0, false
		}
		return float64(r.Peaks[0].Count), true
	}, doc: "the most every key together released in any first report window"},
	{name: "bytes_per_key", get: func(r *sim.Result) (float64, bool) { return count(r.Memory.BytesPerKeyMax) }, doc: "the most state one key held"},
	{name: "rate", get: func(r *sim.Result) (float64, bool) { return count(r.Limit.Rate) }, doc: "the row's policy: rate"},
	{name: "burst", get: func(r *sim.Result) (float64, bool) { return count(r.Limit.Burst) }, doc: "the row's policy: burst"},
	{name: "per", duration: true, get: func(r *sim.Result) (float64, bool) { return count(r.Limit.PerNs) }, doc: "the row's policy: per"},
	{name: "extra", get: func(r *sim.Result) (float64, bool) {
		if r.Cluster == nil {
			return 0, false
		}
		return count(r.Cluster.ExtraAdmitted)
	}, doc: "cluster rows: admitted minus the exact reference's"},
	{name: "extra_pct", get: func(r *sim.Result) (float64, bool) {
		if r.Cluster == nil {
			return 0, false
		}
		return 100 * float64(r.Cluster.ExtraRatio), true
	}, doc: "cluster rows: 100 × extra / the reference's admitted"},
	{name: "store_ops_per_req", get: func(r *sim.Result) (float64, bool) {
		if r.Cluster == nil {
			return 0, false
		}
		return float64(r.Cluster.StoreOpsPerAttempt), true
	}, doc: "cluster rows: store operations per attempt"},
	{name: "p99_added", duration: true, get: func(r *sim.Result) (float64, bool) {
		if r.Cluster == nil {
			return 0, false
		}
		return count(r.Cluster.AddedLatencyNs.P99)
	}, doc: "cluster rows: 99th percentile latency the store added"},
	{name: "baseline_differs_pct", get: func(r *sim.Result) (float64, bool) {
		if r.Baseline == nil {
			return 0, false
		}
		return pct(r.Baseline.Differs, r.Baseline.Compared)
	}, doc: "with --baseline: 100 × requests decided unlike the baseline row / requests compared"},
	{name: "goodput", get: func(r *sim.Result) (float64, bool) {
		if r.Backend == nil {
			return 0, false
		}
		return count(r.Backend.Goodput)
	}, doc: "backend rows: requests served without error in time"},
	{name: "shed", get: func(r *sim.Result) (float64, bool) {
		if r.Backend == nil {
			return 0, false
		}
		return count(r.Backend.Shed)
	}, doc: "backend rows: requests a full queue turned away"},
	{name: "timed_out", get: func(r *sim.Result) (float64, bool) {
		if r.Backend == nil {
			return 0, false
		}
		return count(r.Backend.TimedOut)
	}, doc: "backend rows: clients that gave up waiting"},
	{name: "utilization", get: func(r *sim.Result) (float64, bool) {
		if r.Backend == nil {
			return 0, false
		}
		return r.Backend.Utilization, true
	}, doc: "backend rows: busy worker time over capacity"},
	{name: "p99_response", duration: true, get: func(r *sim.Result) (float64, bool) {
		if r.Backend == nil {
			return 0, false
		}
		return count(r.Backend.ResponseNs.P99)
	}, doc: "backend rows: 99th percentile response time"},
	{name: "p99_queue_wait", duration: true, get: func(r *sim.Result) (float64, bool) {
		if r.Backend == nil {
			return 0, false
		}
		return count(r.Backend.QueueWaitNs.P99)
	}, doc: "backend rows: 99th percentile queue wait"},
}

func metricByName(name string) (*metricDef, bool) {
	for i := range metrics {
		if metrics[i].name == name {
			return &metrics[i], true
		}
	}
	return nil, false
}

// MetricNames lists the metrics a goal can name.
func MetricNames() []string {
	names := make([]string, len(metrics))
	for i, m := range metrics {
		names[i] = m.name
	}
	return names
}

// rowsOf decodes a point's results.
func rowsOf(p *Point) ([]sim.Result, error) {
	if p.Error != "" || p.Results == nil {
		return nil, nil
	}
	var rs []sim.Result
	err := json.Unmarshal(p.Results, &rs)
	return rs, err
}

// labels lists the labels of the points' results in order of first
// appearance.
func labels(s *Sweep) ([]string, error) {
	var out []string
	for i := range s.Points {
		rs, err := rowsOf(&s.Points[i])
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			if !slices.Contains(out, r.Label) {
				out = append(out, r.Label)
			}
		}
	}
	return out, nil
}

// keyGroup finds a result's totals for glob.
func keyGroup(p *Point, row int, glob string) (sim.KeyGroup, bool) {
	if row >= len(p.KeyGroups) {
		return sim.KeyGroup{}, false
	}
	for _, g := range p.KeyGroups[row] {
		if g.Glob == glob {
			return g, true
		}
	}
	return sim.KeyGroup{}, false
}

// fieldIndex finds a varied field by its path.
func fieldIndex(fields []Field, path string) int {
	for i, f := range fields {
		if f.Path == path || strings.EqualFold(f.Path, path) {
			return i
		}
	}
	return -1
}
