package output

import (
	"strconv"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/sim"
)

// PerNode returns a report whose rows are, for each result labelled in
// labels (in that order), one row per node of its cluster, labelled "LABEL
// nN", with that node's decisions (decisions[i] are r.Results[i]'s, in
// processing order): the per-node view of cluster rows that the timelines
// draw. A result not on a cluster keeps one row. Each node's row has the
// counts of its decisions and no peaks; nothing else of it is drawn. The
// second value is the new rows' decisions; ok is false when a label is not
// in r or the decisions were not kept. A node's row shares its result's
// Cluster object (the whole row's figures).
func PerNode(r *sim.Report, decisions [][]sim.Decision, labels []string) (*sim.Report, [][]sim.Decision, bool) {
	if len(decisions) != len(r.Results) {
		return nil, nil, false
	}
	out := *r
	out.Results = nil
	var outDec [][]sim.Decision
	for _, label := range labels {
		i := -1
		for j := range r.Results {
			if r.Results[j].Label == label {
				i = j
			}
		}
		if i < 0 || decisions[i] == nil {
			return nil, nil, false
		}
		res := &r.Results[i]
		if res.Cluster == nil {
			out.Results = append(out.Results, *res)
			outDec = append(outDec, decisions[i])
			continue
		}
		for n := range res.Cluster.Nodes {
			row := sim.Result{Algorithm: res.Algorithm, Label: label + " n" + strconv.Itoa(n),
				Params: res.Params, Limit: res.Limit, Cluster: res.Cluster}
			var ds []sim.Decision
			for _, d := range decisions[i] {
				if d.Node != n {
					continue
				}
				ds = append(ds, d)
				row.Attempts++
				switch d.Verdict {
				case algorithms.Accept:
					row.Accepted++
				case algorithms.Delay:
					row.Delayed++
				default:
					row.Rejected++
				}
			}
			out.Results = append(out.Results, row)
			outDec = append(outDec, ds)
		}
	}
	return &out, outDec, true
}
