package coord

import (
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
)

// An all-of row on a cluster whose limits count by different attributes of
// a request (docs/cluster.md, "Several limits on one request"): each limit
// keeps its state under its own key, on each node (local) or in the store
// (central, racy), as the row's single limiter does (algorithms.AllOf):
// the nodes' limiters decide with the request's attributes
// (algorithms.Attributed), and the store's table likewise
// (algorithms.AttrTable). A row whose limits all count by the request's
// key decides by that key alone.

// byAttributes reports whether some member counts by other than the
// request's key.
func byAttributes(members []algorithms.Member) bool {
	for _, m := range members {
		if m.By != algorithms.ByKey {
			return true
		}
	}
	return false
}

// nodeDecide decides a on a node's limiter lim at now, the node's clock.
func (c *clusterRun) nodeDecide(lim algorithms.Limiter, now time.Duration, a *traffic.Arrival) algorithms.Decision {
	if c.byAttrs {
		if at, ok := lim.(algorithms.Attributed); ok {
			return at.DecideAttrs(now, c.e.Attrs(a), a.Cost)
		}
	}
	return lim.Decide(now, algorithms.Key(a.Key), a.Cost)
}

// storeDecide runs the script on a in the store's table at now.
func (c *clusterRun) storeDecide(now time.Duration, a *traffic.Arrival) algorithms.Decision {
	if c.byAttrs {
		if at, ok := c.table.(algorithms.AttrTable); ok {
			return at.DecideAttrs(now, c.e.Attrs(a), a.Cost)
		}
	}
	return c.table.Decide(now, algorithms.Key(a.Key), a.Cost)
}

// storeDecideCopy decides a on a copy of its state in the store at now
// (racy's GET and the node's decision on it).
func (c *clusterRun) storeDecideCopy(now time.Duration, a *traffic.Arrival) (algorithms.Decision, algorithms.Copy) {
	if c.byAttrs {
		if at, ok := c.table.(algorithms.AttrTable); ok {
			return at.DecideCopyAttrs(now, c.e.Attrs(a), a.Cost)
		}
	}
	return c.table.DecideCopy(now, algorithms.Key(a.Key), a.Cost)
}

// storeIncr adds a's cost to its counts of the window that holds at
// (racy's INCR).
func (c *clusterRun) storeIncr(at time.Duration, a *traffic.Arrival) {
	if c.byAttrs {
		if inc, ok := c.incr.(algorithms.AttrIncrementer); ok {
			inc.IncrAttrs(at, c.e.Attrs(a), a.Cost)
			return
		}
	}
	c.incr.Incr(at, algorithms.Key(a.Key), a.Cost)
}
