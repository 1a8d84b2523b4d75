package runner

import (
	"reflect"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

// Together reports whether two scenarios differ in their algorithm rows
// and limit only (and in the policy the report names), so that
// RunTogether can run them as the rows of one engine run, on one
// generation of their traffic.
func Together(a, b *scenarios.Scenario) bool {
	x, y := ConfigOf(a), ConfigOf(b)
	for _, c := range []*sim.Config{&x, &y} {
		c.Algorithms = nil
		c.Limit.Rate, c.Limit.Burst = 0, 0
	}
	return reflect.DeepEqual(x, y)
}

// RunTogether runs scenarios that go together (Together) as the rows of
// one engine run, which generates their traffic once, and returns each
// one's report: the rows of each are decided exactly as Run decides them
// for that scenario alone. Of the options it takes TopKeys, KeyGlobs,
// Baseline (a label every scenario has) and Progress; the others are
// Run's.
func RunTogether(scs []*scenarios.Scenario, o Options) ([]*Report, error) {
	cfgs := make([]sim.Config, len(scs))
	cfg := ConfigOf(scs[0])
	cfg.Algorithms = nil
	for i, sc := range scs {
		cfgs[i] = ConfigOf(sc)
		cfg.Algorithms = append(cfg.Algorithms, cfgs[i].Algorithms...)
	}
	cfg.TopKeys = o.TopKeys
	cfg.KeyGlobs = o.KeyGlobs
	cfg.Baseline = o.Baseline
	cfg.Progress = o.Progress
	rep, err := sim.Run(cfg)
	if err != nil {
		return nil, err
	}
	traces := sim.TraceSummaries(scs[0].Traffic) // the traffic run
	out := make([]*Report, len(scs))
	at := 0
	for i, sc := range scs {
		n := len(cfgs[i].Algorithms)
		one := *rep
		one.Limit = sim.LimitOf(sc.Limit)
		one.Results = rep.Results[at : at+n : at+n]
		one.Traces = traces
		one.CostUnit = traffic.CostUnit(sc.Traffic)
		one.NamedWindowsNs = namedWindows(sc)
		at += n
		c := cfgs[i]
		c.TopKeys, c.KeyGlobs, c.Baseline = o.TopKeys, o.KeyGlobs, o.Baseline
		out[i] = &Report{Report: &one, Scenario: sc, Config: c}
	}
	return out, nil
}
