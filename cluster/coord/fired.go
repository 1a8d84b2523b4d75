package coord

import "github.com/ratesim/ratesim/algorithms"

// Attribution on a cluster (docs/cluster.md, "Several limits on one
// request"): an all-of row's node limiter (AllOf) and its store table say
// which of its limits decided each request (algorithms.Firer); the row
// names it with the verdict (sim.Row.Fired), as a single gateway does.
// A verdict that no limit gave (a store's failure, a lease, a copy of
// another node's status) names none.

// firedOf returns the limit that decided the last request of x, a node's
// limiter or the store's table, or -1 when x is not a Firer.
func firedOf(x any) int32 {
	if f, ok := x.(algorithms.Firer); ok {
		return int32(f.Fired())
	}
	return -1
}

// fire names limit j (-1: none) for the verdict given next, when the row
// has limits to name.
func (c *clusterRun) fire(j int32) {
	if c.firer && j >= 0 {
		c.e.Fired(int(j))
	}
}
