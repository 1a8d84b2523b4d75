package sim

import (
	"slices"

	"github.com/ratesim/ratesim/traffic"
)

// TraceSummaries reads the statistics of every replay source of the plan,
// after a run has read them: what goes in Report.Traces.
func TraceSummaries(p traffic.Plan) []TraceSummary {
	var out []TraceSummary
	for _, src := range p.Sources {
		r, ok := src.(*traffic.Replay)
		if !ok {
			continue
		}
		st := r.Stats()
		if st == nil {
			continue
		}
		ts := TraceSummary{
			Path: st.Path, Format: st.Format,
			Lines: st.Lines, Used: st.Used, Malformed: st.Malformed, Late: st.Late, Sliced: st.Sliced,
			ByReason: st.ByReason,
			FirstNs:  int64(st.First), LastNs: int64(st.Last),
			Keys: st.Keys, PeakPerSecond: st.PeakPerSecond, NoValue: st.NoValue,
		}
		for name := range st.NoValue {
			if len(p.Named[name]) > 0 {
				ts.Classed = append(ts.Classed, name)
			}
		}
		slices.Sort(ts.Classed)
		if st.Routes != nil || st.Unrouted > 0 {
			ts.Routing = &TraceRouting{Routes: []RouteCount{}, Unrouted: st.Unrouted}
			for _, rc := range st.Routes {
				ts.Routing.Routes = append(ts.Routing.Routes, RouteCount{Route: rc.Name, Limited: rc.Limited, Shares: rc.Shares, Requests: rc.Requests})
			}
		}
		for _, b := range st.FirstBad {
			ts.FirstBad = append(ts.FirstBad, b.Error())
		}
		out = append(out, ts)
	}
	return out
}
