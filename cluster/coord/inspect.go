package coord

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/sim"
)

// The inspection of one decision (sim.Config.Explain): when the rule
// decides the attempt the config names, the row records where it ran, the
// key's state there just before and after, and the store operations in
// flight at that instant (sim.ClusterView, the playground's "why").
// Nothing else changes: the hooks read, and only for that attempt.

// explains reports whether at is the attempt Config.Explain names.
func (c *clusterRun) explains(at *sim.Attempt) bool {
	return c.explain && at.Seq == c.explainSeq
}

// viewBefore starts the view of at, decided where (a node or the store)
// by a state that ins shows (nil: none), at now on the clock read there,
// with the operations in flight then.
func (c *clusterRun) viewBefore(at *sim.Attempt, where string, ins any, now time.Duration, note string) {
	v := &sim.ClusterView{Where: where, At: now, Note: note}
	key := algorithms.Key(at.Arrival.Key)
	if in, ok := ins.(algorithms.Inspector); ok {
		v.Before = in.Inspect(now, key)
	}
	for i := range c.ops {
		o := &c.ops[i]
		if hasReply(o.kind) && !o.answered && !c.isFree(uint32(i)) && o.at.Seq != at.Seq {
			v.InFlight++
			if o.at.Arrival.Key == at.Arrival.Key {
				v.InFlightKey++
			}
		}
	}
	for i := range c.directQ.Len() {
		if r := c.directQ.At(i); r.at.Seq != at.Seq {
			v.InFlight++
			if r.at.Arrival.Key == at.Arrival.Key {
				v.InFlightKey++
			}
		}
	}
	c.view, c.viewIns, c.viewKey = v, ins, key
}

// viewAfter completes the view started by viewBefore with the state after
// the decision, and gives it to the row.
func (c *clusterRun) viewAfter() {
	v := c.view
	if v == nil {
		return
	}
	if in, ok := c.viewIns.(algorithms.Inspector); ok {
		v.After = in.Inspect(v.At, c.viewKey)
	}
	c.e.View(*v)
	c.view, c.viewIns = nil, nil
}

// isFree reports whether operation slot is free.
func (c *clusterRun) isFree(slot uint32) bool {
	for _, f := range c.freeOps {
		if f == slot {
			return true
		}
	}
	return false
}

// nodeName is how a view names node n.
func nodeName(n int) string { return "node " + strconv.Itoa(n) }

// syncNote says what a sync node decided on: its counts of the key.
func syncNote(sk *syncKey) string {
	return fmt.Sprintf("the node's counts of the key: current window %d (last heard %d + in flight %d + counted since %d), previous %d",
		sk.count(1), sk.g[1], sk.inflight[1], sk.delta[1], sk.count(0))
}

// leaseNote says what a lease node decided on: its stock of the key.
func leaseNote(stock int64) string {
	return fmt.Sprintf("the node's leased stock of the key: %d token(s); a request it cannot pay waits for a take from the store", stock)
}
