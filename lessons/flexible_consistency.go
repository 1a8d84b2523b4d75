package lessons

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/sim"
)

// flexibleConsistency measures the sentence of the product notes: the token
// bucket is "often implemented with Redis to keep centralised counters,
// although its consistency is 'flexible': it may occasionally let a few
// more requests through than the strict limit".
var flexibleConsistency = register(Lesson{
	order: 6,
	Name:  "flexible-consistency",
	Title: "a limit shared by several gateways lets a few more through: how many, why, and what it costs to remove them",
	Runs:  []RunSpec{{Scenario: "flexible-consistency", Algorithms: ""}},
	explain: []string{
		"The token bucket is often run with Redis holding the counters, and its consistency is " +
			"called flexible: it may let a few more requests through than the strict limit. Here one " +
			"client sends {offered} requests in {duration} against a token bucket of {limit} per {per} " +
			"with bursts of {burst}, through {nodes} gateway nodes behind a round-robin balancer, " +
			"{rtt} from the store.",
		"The nodes share the bucket in four ways: each keeps a bucket of its own (per-node, as " +
			"Kong's policy local); each reads the bucket from the store, decides, and writes it back " +
			"(read-write, a GET then a SET without a script); each leases {k} tokens at a time from " +
			"the store's bucket (lease); or each asks the store to decide with one atomic script " +
			"(script, as redis_rate). Every row runs beside one exact bucket on the same requests, " +
			"and extra is what it admitted beyond it.",
		"In the timeline, per-node and script have one line per node: the per-node buckets each " +
			"admit what reaches them, while the script's nodes refuse together once the one bucket is empty.",
	},
	shows: []string{
		"per-node admitted {local_adm} against the exact bucket's {ref}: {local_extra}. Each node " +
			"sees a {nodes_th} of the traffic and never runs out of tokens.",
		"read-write let {racy_extra} through: a read that runs before another node's write lands " +
			"still finds the tokens that node spent, and the writes overwrite each other. That is the " +
			"\"few more\", and it cost {racy_ops} store operations per request (a read, and a write " +
			"for each request it admitted).",
		"lease: {lease_extra}, at {lease_ops} store operations per request. Each node can hold " +
			"up to {k_less} unspent tokens, so the worst case is {lease_bound} more per {per}; " +
			"unspent tokens that expire refuse what one bucket would admit.",
		"script's extra is {script_extra}: exact, at the price of one store operation per request " +
			"and {script_p99} more latency for the slowest in a hundred ({script_max} at most). Removing the few more " +
			"costs a round trip to the store on every request.",
	},
	next: "ratesim compare flexible-consistency shows every figure; kong-local-pods, redis-race, " +
		"sync-interval and redis-outage push each mode further, and docs/cluster.md gives the bounds.",
	figures: flexibleFigures,
	picture: flexiblePicture,
})

// flexibleFigures computes the lesson's figures from its run.
func flexibleFigures(runs []*Run) (map[string]string, error) {
	o := runs[0]
	v := policyFigures(o)
	if o.Scenario.Cluster == nil {
		return nil, fmt.Errorf("scenario %s has no cluster", o.Report.Scenario)
	}
	cl := o.Scenario.Cluster
	v["nodes"] = strconv.Itoa(cl.Nodes)
	v["nodes_th"] = ordinalPart(cl.Nodes)
	v["rtt"] = output.FormatDuration(cl.Store.RTT)
	v["duration"] = output.FormatDuration(time.Duration(o.Report.DurationNs))
	rows := map[string]*sim.ClusterResult{}
	for _, label := range []string{"per-node", "read-write", "lease", "script"} {
		res, _, err := result(o, label)
		if err != nil {
			return nil, err
		}
		if res.Cluster == nil {
			return nil, fmt.Errorf("%s did not run on the cluster", label)
		}
		rows[label] = res.Cluster
		v["offered"] = strconv.FormatInt(res.Offered, 10)
	}
	ops := func(c *sim.ClusterResult) string {
		return strconv.FormatFloat(float64(c.StoreOpsPerAttempt), 'f', 2, 64)
	}
	local, racy, lease, script := rows["per-node"], rows["read-write"], rows["lease"], rows["script"]
	v["ref"] = strconv.FormatInt(local.ReferenceAdmitted, 10)
	v["local_adm"] = strconv.FormatInt(local.Admitted, 10)
	v["local_extra"] = output.FormatExtra(local)
	v["racy_extra"] = output.FormatExtra(racy)
	v["racy_ops"] = ops(racy)
	v["lease_extra"] = output.FormatExtra(lease)
	v["lease_ops"] = ops(lease)
	v["k"] = strconv.FormatInt(lease.Lease, 10)
	v["k_less"] = strconv.FormatInt(lease.Lease-1, 10)
	v["lease_bound"] = strconv.FormatInt(int64(lease.Nodes)*(lease.Lease-1), 10)
	v["script_extra"] = output.FormatExtra(script)
	v["script_p99"] = output.FormatDuration(time.Duration(script.AddedLatencyNs.P99))
	v["script_max"] = output.FormatDuration(time.Duration(script.AddedLatencyNs.Max))
	return v, nil
}

// ordinalPart names one part of n: "half", "third", "quarter", else "1/n".
func ordinalPart(n int) string {
	switch n {
	case 1:
		return "whole"
	case 2:
		return "half"
	case 3:
		return "third"
	case 4:
		return "quarter"
	}
	return "1/" + strconv.Itoa(n)
}

// flexiblePicture draws the timeline of per-node and script, a line per
// node.
func flexiblePicture(w io.Writer, runs []*Run, opt output.TermOptions) error {
	o := runs[0]
	rep, ds, ok := output.PerNode(o.Report, o.Decisions, []string{"per-node", "script"})
	if !ok {
		return nil
	}
	return output.TermTimeline(w, rep, ds, opt)
}
