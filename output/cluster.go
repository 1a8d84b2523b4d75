package output

import (
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/sim"
)

// What the outputs show of a cluster (docs/cluster.md), for reports whose
// rows ran on one: the table's mode, extra, store ops/req and p99 added
// columns, the CSV's cluster columns, the line under the heading and the
// findings' sentences on the overshoot.

// clustered reports whether any result ran on a cluster.
func clustered(r *sim.Report) bool {
	for i := range r.Results {
		if r.Results[i].Cluster != nil {
			return true
		}
	}
	return false
}

// clusterLine says what the rows ran on, under the heading: "on 3 nodes
// behind a round-robin balancer; extra is what each row admitted beyond one
// exact limiter on the same traffic".
// When the rows name balancers of their own, it lists them: "on 12 nodes
// behind each row's balancer (round-robin, random, weighted); ...".
func clusterLine(r *sim.Report) string {
	var first *sim.ClusterResult
	var bals []string
	for i := range r.Results {
		if c := r.Results[i].Cluster; c != nil {
			if first == nil {
				first = c
			}
			if !slices.Contains(bals, c.Balancer) {
				bals = append(bals, c.Balancer)
			}
		}
	}
	if first == nil {
		return ""
	}
	behind := "a " + first.Balancer + " balancer"
	if len(bals) > 1 {
		behind = "each row's balancer (" + strings.Join(bals, ", ") + ")"
	}
	return "on " + plural(int64(first.Nodes), "node") + " behind " + behind +
		"; extra is what each row admitted beyond one exact limiter on the same traffic"
}

// clusterHeader is the table's cluster columns, after the label.
var clusterHeader = []string{"mode"}

// clusterTailHeader is the table's cluster columns before bytes/key.
var clusterTailHeader = []string{"extra", "store ops/req", "p99 added"}

// modeCell writes a row's coordination with its knobs: "central", "central
// (clock node)", "racy (write incr)", "sync 100ms", "lease 5", "global
// 500us".
func modeCell(c *sim.ClusterResult) string {
	if c == nil {
		return "-"
	}
	switch {
	case c.Coordination == "central" && c.Clock == "node":
		return "central (clock node)"
	case c.Coordination == "racy" && c.Write == "incr":
		return "racy (write incr)"
	case c.Coordination == "sync":
		return "sync " + FormatDuration(time.Duration(c.SyncNs))
	case c.Coordination == "global":
		return "global " + FormatDuration(time.Duration(c.SyncNs))
	case c.Coordination == "lease":
		return "lease " + strconv.FormatInt(c.Lease, 10)
	}
	return c.Coordination
}

// clusterCells are a row's extra, store ops/req and p99 added cells.
func clusterCells(c *sim.ClusterResult) []string {
	if c == nil {
		return []string{"-", "-", "-"}
	}
	return []string{FormatExtra(c), formatFixed(float64(c.StoreOpsPerAttempt), 2),
		FormatDuration(time.Duration(c.AddedLatencyNs.P99))}
}

// FormatExtra writes the extra admissions with their share of the
// reference's: "+180 (+18.0%)", "-1 (-33.3%)", "0 (0.0%)".
func FormatExtra(c *sim.ClusterResult) string {
	s := signed(c.ExtraAdmitted)
	if c.ReferenceAdmitted == 0 {
		return s
	}
	pct := formatPercent(c.ExtraAdmitted, c.ReferenceAdmitted)
	if c.ExtraAdmitted > 0 {
		pct = "+" + pct
	}
	return s + " (" + pct + "%)"
}

// signed writes n with a + when positive.
func signed(n int64) string {
	if n > 0 {
		return "+" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// formatFixed writes x with d decimals, exactly as the float's decimal
// value rounds (half to even on the binary value, as strconv does).
func formatFixed(x float64, d int) string {
	return new(big.Float).SetFloat64(x).Text('f', d)
}

// clusterCSVHeader is the CSV's cluster columns, at the end of a row.
var clusterCSVHeader = []string{"coordination", "nodes", "balancer", "reference_admitted", "extra_admitted",
	"extra_ratio", "store_ops", "store_ops_per_attempt", "store_busy", "added_p50_ns", "added_p99_ns",
	"added_max_ns", "store_errors", "fail_open", "fail_closed"}

// clusterCSV is a row's cluster columns (empty for a row not on a cluster).
func clusterCSV(c *sim.ClusterResult) []string {
	if c == nil {
		return make([]string, len(clusterCSVHeader))
	}
	i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
	return []string{modeCell(c), strconv.Itoa(c.Nodes), c.Balancer, i64(c.ReferenceAdmitted),
		i64(c.ExtraAdmitted), c.ExtraRatio.Text(), i64(c.StoreOps), c.StoreOpsPerAttempt.Text(), c.StoreBusy.Text(),
		i64(c.AddedLatencyNs.P50), i64(c.AddedLatencyNs.P99), i64(c.AddedLatencyNs.Max),
		i64(c.StoreErrors), i64(c.FailOpen), i64(c.FailClosed)}
}

// clusterFindings says which rows let the most through beyond one exact
// limiter, which refused what one would admit, and what the store's
// failures did.
func clusterFindings(r *sim.Report) []string {
	var out []string
	var most, least []string
	var hi, lo int64
	var hiRes, loRes *sim.Result
	exact := []string{}
	for i := range r.Results {
		res := &r.Results[i]
		c := res.Cluster
		if c == nil {
			continue
		}
		switch e := c.ExtraAdmitted; {
		case e > 0 && (hiRes == nil || e > hi):
			hi, hiRes, most = e, res, []string{res.Label}
		case e > 0 && e == hi:
			most = append(most, res.Label)
		case e < 0 && (loRes == nil || e < lo):
			lo, loRes, least = e, res, []string{res.Label}
		case e < 0 && e == lo:
			least = append(least, res.Label)
		case e == 0:
			exact = append(exact, res.Label)
		}
	}
	if hiRes != nil {
		c := hiRes.Cluster
		out = append(out, Join(most)+" let the most through beyond one exact limiter: "+
			plural(c.Admitted, "request")+" admitted against "+strconv.FormatInt(c.ReferenceAdmitted, 10)+
			", "+FormatExtra(c)+".")
	}
	if loRes != nil {
		c := loRes.Cluster
		out = append(out, Join(least)+" refused the most that one exact limiter admits: "+
			FormatExtra(c)+".")
	}
	if len(exact) > 0 {
		out = append(out, Join(exact)+" admitted exactly as many as one exact limiter.")
	}
	for i := range r.Results {
		res := &r.Results[i]
		c := res.Cluster
		if c == nil || c.StoreErrors == 0 {
			continue
		}
		s := res.Label + ": " + plural(c.StoreErrors, "store operation") + " failed"
		if c.FailOpen > 0 {
			s += "; " + plural(c.FailOpen, "attempt") + " " + wasWere(c.FailOpen) + " admitted unchecked (fail open)"
		}
		if c.FailClosed > 0 {
			s += "; " + plural(c.FailClosed, "attempt") + " " + wasWere(c.FailClosed) + " rejected for it (fail closed)"
		}
		out = append(out, s+".")
	}
	return out
}

// wasWere agrees with a count.
func wasWere(n int64) string {
	if n == 1 {
		return "was"
	}
	return "were"
}
