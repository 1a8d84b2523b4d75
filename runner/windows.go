package runner

import (
	"math"
	"slices"
	"time"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

// policyWindow is the window of row i's policy: the period its limit is
// per (docs/charts.md, the window chart).
func policyWindow(cfg *sim.Config, i int) time.Duration {
	if per := cfg.Algorithms[i].Params.Policy.Per; per > 0 {
		return per
	}
	return cfg.Limit.Per
}

// namedWindows are the report windows sc's report.windows named, nil
// when it named none (sim.Report.NamedWindowsNs).
func namedWindows(sc *scenarios.Scenario) []int64 {
	if !sc.WindowsNamed {
		return nil
	}
	out := make([]int64, len(sc.Windows))
	for i, w := range sc.Windows {
		out[i] = int64(w)
	}
	return out
}

// allKeysCounters count, for each row, what every key together released
// in its policy window.
func allKeysCounters(cfg *sim.Config) []*sim.WindowCounter {
	cs := make([]*sim.WindowCounter, len(cfg.Algorithms))
	for i := range cs {
		cs[i] = sim.NewAllKeysCounter(policyWindow(cfg, i))
	}
	return cs
}

// countWindows gives each result what counters counted and, with several
// keys, runs the scenario again to count the key of each row's key peak in
// its policy window: a run is deterministic, so the second one decides as
// the first did, and it follows one key a row instead of every key. With
// one key, or no row with a key peak over its window, there is no second
// run; progress is told how far the second run has got.
func countWindows(sc *scenarios.Scenario, cfg sim.Config, rep *sim.Report, counters []*sim.WindowCounter, progress func(done, total time.Duration)) error {
	for i, c := range counters {
		rep.Results[i].Window = c.Series()
	}
	if rep.Keys <= 1 {
		return nil
	}
	keyed := make([]*sim.WindowCounter, len(counters))
	for i := range keyed {
		w := policyWindow(&cfg, i)
		for _, kp := range rep.Results[i].KeyPeaks {
			if kp.WindowNs == int64(w) && kp.Key != "" {
				keyed[i] = sim.NewWindowCounter(kp.Key, w)
			}
		}
	}
	if !slices.ContainsFunc(keyed, func(c *sim.WindowCounter) bool { return c != nil }) {
		return nil
	}
	cfg.Observe = func(i int) sim.Observer {
		if keyed[i] == nil {
			return nil
		}
		return keyed[i]
	}
	cfg.Progress, cfg.Inspect = progress, nil
	// the first run said its warnings
	for _, src := range sc.Traffic.Sources {
		if r, ok := src.(*traffic.Replay); ok {
			warn := r.Warn
			r.Warn = nil
			defer func() { r.Warn = warn }()
		}
	}
	if _, err := sim.Run(cfg); err != nil {
		return err
	}
	for i, c := range keyed {
		if c != nil {
			rep.Results[i].KeyWindow = c.Series()
		}
	}
	return nil
}

// clusterFaults gives each cluster row the cluster's faults on the run's
// clock: from 0 for synthetic traffic, from the first arrival for a
// recorded trace, as the cluster schedules them (docs/cluster.md).
func clusterFaults(cfg *sim.Config, rep *sim.Report) {
	if cfg.Cluster == nil || len(cfg.Cluster.Faults) == 0 {
		return
	}
	var origin int64
	if len(rep.Traces) > 0 {
		origin = rep.StartNs
	}
	var fs []sim.ClusterFault
	for _, f := range cfg.Cluster.Faults {
		start := origin + int64(f.At)
		end := int64(f.End())
		if end != math.MaxInt64 {
			end += origin
		}
		fs = append(fs, sim.ClusterFault{Type: string(f.Type), StartNs: start, EndNs: end})
	}
	for i := range rep.Results {
		if c := rep.Results[i].Cluster; c != nil {
			c.Faults = fs
		}
	}
}
