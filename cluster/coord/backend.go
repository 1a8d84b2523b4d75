package coord

import (
	"github.com/ratesim/ratesim/sim"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/cluster"
)

// A cluster row's backend (Config.Backend behind Config.Cluster): the
// row's one backend serves what every node admits. Each admitted attempt
// is submitted at its verdict's instant (decided, at its node), to reach
// the backend at decided plus a shaper's delay; its client's deadline
// counts from its arrival at the balancer, and its response time from
// there too (less a shaper's delay): the store's part is in it
// (backend.Request.Gate). The backend is one more event source of the
// cluster's loop (classBackend): at one instant its events come after the
// replies and the store's timeouts, whose verdicts it may be handed, and
// before the first attempts and the retries, as a row's backend comes
// before its arrivals without a cluster. Within the class the backend
// orders its own events (package backend: a fault's end, completions,
// client timeouts, admissions).
//
// The nodes' limiters that learn from the backend's answers (the
// concurrency limit, the adaptive limits: algorithms.Sampler) each take
// the samples of the requests they admitted themselves, on their node's
// clock: each node keeps its own limit and its own samples, as each pod of
// a gateway does. A sample of a request admitted before its node went down
// is dropped: the node's limiter that admitted it is gone (Request.Epoch).
// The row's limit series is the sum of its nodes' limits.
//
// The reference runs in front of its own copy of the backend when its
// limiter learns from the backend or its clients retry on its answers, so
// that such a row's extra is counted against one exact limiter that hears
// the same; otherwise what it admits does not depend on a backend, and it
// has none (run.newBackend).

// newBackend gives the row its backend, its faults on the run's clock from
// origin and its series from start (as run.newBackend).
func (c *clusterRun) newBackend(origin, start time.Duration) error {
	for n := range c.nodes {
		nd := &c.nodes[n]
		c.sampled = c.sampled || nd.sampler != nil
		c.limitOn = c.limitOn || nd.limits != nil
	}
	var emit func(backend.Event)
	if c.sampled || c.e.Retries() {
		emit = c.backendEvent
	}
	return c.e.OpenBackend(origin, start, emit)
}

// backendEvent takes one of the backend's events: a client's outcome is
// the sample of the limiter of the node that admitted the request, if it
// learns from them and is still the node's, then a retry through the
// balancer or a success for the client's budget (run.clientOutcome).
func (c *clusterRun) backendEvent(e backend.Event) {
	if !e.Client {
		return
	}
	if c.sampled {
		n := int(e.Req.Node)
		if nd := &c.nodes[n]; nd.sampler != nil && nd.epoch == e.Req.Epoch {
			rtt, _ := e.Sample()
			nd.sampler.Sample(e.At+nd.skew, algorithms.Key(e.Req.Key), e.Req.Cost, rtt, e.Req.InFlight, sim.Outcome(e.Kind))
			if c.limitOn {
				c.nodeLimit(n, e.At)
			}
		}
	}
	c.e.ClientOutcome(e)
}

// nodeLimit records that node n's limit may have moved at t (after one of
// its decisions or samples, or a fresh limiter): the row's limit, the sum
// of its nodes', in force from t. The first call counts every node's.
func (c *clusterRun) nodeLimit(n int, t time.Duration) {
	if !c.e.HasBackend() {
		return
	}
	limit := func(nd *clusterNode) int {
		if nd.limits == nil {
			return 0
		}
		return nd.limits.Limit(t + nd.skew)
	}
	if !c.limitInit {
		c.limitInit = true
		for i := range c.nodes {
			nd := &c.nodes[i]
			nd.limit = limit(nd)
			c.limitSum += nd.limit
		}
	} else {
		nd := &c.nodes[n]
		v := limit(nd)
		c.limitSum += v - nd.limit
		nd.limit = v
	}
	c.e.Limit(t, c.limitSum)
}

// modeList writes modes as "a, b or c".
func modeList(modes []cluster.Mode) string {
	s := ""
	for i, m := range modes {
		switch {
		case i == 0:
		case i == len(modes)-1:
			s += " or "
		default:
			s += ", "
		}
		s += string(m)
	}
	return s
}
