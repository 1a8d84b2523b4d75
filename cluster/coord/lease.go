package coord

import (
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/grow"
	"github.com/ratesim/ratesim/sim"
)

// Lease (docs/cluster.md; token-bucket and gcra): a node spends a local
// stock of tokens per key without the store. When the stock cannot pay a
// request (cost c, stock s), one operation asks the store's bucket for
// want = max(K, c-s) tokens; the store grants as many as conform at once,
// up to want (algorithms.Table.Take), and, when it grants fewer than c-s,
// the wait until c-s would. The requests for that key wait for the reply,
// then are decided in arrival order on the new stock: paid ones are
// admitted; the first one the stock cannot pay sends another take when the
// last one was granted in full, and is rejected otherwise, with the wait
// the store gave (as is every request after it that the stock cannot pay).
// A stock lives lease-ttl (default W) from the reply that brought it, and
// is lost when its node goes down. When the take fails, the waiting
// requests are admitted or rejected as on-store-error says.

// leaseKey is one key's stock on one node.
type leaseKey struct {
	stock   int64
	expires time.Duration // the stock is gone from then on
	pending bool          // a take is on its way
	waiting []sim.Attempt // the requests waiting for it, in arrival order
}

// leaseNode is one node's stocks.
type leaseNode struct {
	keys []leaseKey
}

func (l *leaseNode) key(k algorithms.Key) *leaseKey {
	l.keys = grow.For(l.keys, int(k))
	return &l.keys[k]
}

// reset loses every stock (the node went down); requests waiting for a
// take are still decided when it comes back.
func (l *leaseNode) reset() {
	for i := range l.keys {
		l.keys[i].stock = 0
	}
}

// leaseArrive decides at on its node's stock, or sends it to wait for a
// take.
func (c *clusterRun) leaseArrive(at *sim.Attempt) error {
	nd := &c.nodes[at.Node]
	lk := nd.lease.key(algorithms.Key(at.Arrival.Key))
	t := at.Arrival.At
	if lk.pending {
		lk.waiting = append(lk.waiting, *at)
		return nil
	}
	if t >= lk.expires {
		lk.stock = 0
	}
	if c.explain && c.explains(at) {
		c.viewBefore(at, nodeName(int(at.Node)), nil, t+nd.skew, leaseNote(lk.stock))
		c.viewAfter()
	}
	if lk.stock >= at.Arrival.Cost {
		lk.stock -= at.Arrival.Cost
		return c.decided(at, algorithms.Decision{Verdict: algorithms.Accept}, t)
	}
	lk.pending = true
	lk.waiting = append(lk.waiting, *at)
	c.sendTake(at, at.Arrival.Cost-lk.stock, t)
	return nil
}

// sendTake asks the store for the tokens that at, the first request
// waiting, needs (and up to K).
func (c *clusterRun) sendTake(at *sim.Attempt, need int64, t time.Duration) {
	c.send(clusterOp{kind: opTake, at: *at, node: at.Node, want: max(c.co.Lease, need), need: need}, t)
}

// leaseReply takes a take's reply (or its failure) at its node at t and
// decides the requests waiting.
func (c *clusterRun) leaseReply(slot uint32, t time.Duration, failed bool) error {
	o := &c.ops[slot]
	nd := &c.nodes[o.node]
	lk := nd.lease.key(algorithms.Key(o.at.Arrival.Key))
	if failed {
		waiting := lk.waiting
		lk.waiting, lk.pending = nil, false
		for i := range waiting {
			if err := c.failed(&waiting[i], t); err != nil {
				return err
			}
		}
		return nil
	}
	if t >= lk.expires {
		lk.stock = 0
	}
	lk.stock += o.granted
	lk.expires = time.Duration(satAdd(int64(t), int64(c.co.LeaseTTL)))
	full := o.granted == o.want
	wait := o.dec.RetryAfter
	for len(lk.waiting) > 0 {
		w := lk.waiting[0]
		if lk.stock >= w.Arrival.Cost {
			lk.stock -= w.Arrival.Cost
			lk.waiting = lk.waiting[1:]
			if err := c.decided(&w, algorithms.Decision{Verdict: algorithms.Accept}, t); err != nil {
				return err
			}
			continue
		}
		if full {
			c.sendTake(&w, w.Arrival.Cost-lk.stock, t) // still pending
			return nil
		}
		lk.waiting = lk.waiting[1:]
		if err := c.decided(&w, algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: wait}, t); err != nil {
			return err
		}
	}
	lk.waiting, lk.pending = nil, false
	if nd.down {
		lk.stock = 0 // a stock that reaches a node that is down is lost
	}
	return nil
}
