package coord

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/grow"
	"github.com/ratesim/ratesim/sim"
)

// Global is gubernator's GLOBAL behaviour (docs/cluster.md, "global"),
// after gubernator's gubernator.go (getGlobalRateLimit, UpdatePeerGlobals)
// and global.go (runAsyncHits, runBroadcasts) of its v2 releases:
//
//   - Each key has one owner, node FNV-1a-64(key) mod N (gubernator picks
//     the owner by a consistent hash of the peers). The owners' states are
//     the cluster's only exact ones; there is no store.
//   - A request at the key's owner is decided on the owner's state, on the
//     owner's clock, at once.
//   - A request at another node is answered from that node's copy of the
//     owner's last broadcast status, as it stands: under the limit admits,
//     over it rejects, with retry_after to the status's reset, and the copy
//     does not change (gubernator returns the cached RateLimitResp). A
//     status over the limit expires at its reset (the cache item's
//     ExpireAt). A node that holds no copy, or an expired one, decides
//     "like it owns" the key, on a limiter of its own with the full
//     policy, until a broadcast replaces it.
//   - Either way the non-owner queues the hit (its cost) for the owner:
//     hits add up per key, and Sync after the first hit queued since its
//     last send (GlobalSyncWait) it sends each owner one message with its
//     keys' sums. The owner applies each sum as one request of that cost
//     (a sum the state cannot take whole is refused whole, and takes
//     nothing), at the message's arrival.
//   - Sync after the first change since its last broadcast, an owner
//     broadcasts the status of every key it changed to every other live
//     node: whether a request of cost 1 would be admitted then, and if not,
//     when. A node's copy of the key is the last status it heard.
//
// Messages travel between nodes over the cluster's network: rtt/2 one
// way plus a jitter draw, as a store operation's trip. They count as the
// row's store operations. A node that is down loses its owned states, its
// copies, its own limiters and the hits it had not sent; messages to it
// are lost. A status under the limit is kept until the next broadcast
// replaces it (its reset is not broadcast).

// The kinds of global's events (after queue.go's).
const (
	evGlobalSend      uint8 = 64 + iota // a node sends its queued hits
	evGlobalHits                        // hits reach their owner
	evGlobalBroadcast                   // an owner broadcasts its changes
	evGlobalUpdate                      // a broadcast reaches a node
)

// globalNode is one node's part in global.
type globalNode struct {
	owned algorithms.Table // the keys this node owns
	// hits queued per key, and the keys with hits, in the order queued
	hits   []int64
	queued []algorithms.Key
	sendAt time.Duration // the scheduled send, or -1
	// the owned keys changed since the last broadcast
	changed     []algorithms.Key
	isChanged   []bool
	broadcastAt time.Duration // the scheduled broadcast, or -1
	copies      []globalStatus
}

// globalStatus is a key's status as an owner broadcast it.
type globalStatus struct {
	set   bool
	admit bool
	reset time.Duration // when a request would be admitted, if !admit
}

// globalMsg is a message between nodes: hits for an owner, or an owner's
// statuses for a node.
type globalMsg struct {
	to    int32
	epoch uint32 // the addressee's epoch when sent
	items []globalItem
}

type globalItem struct {
	key    algorithms.Key
	hits   int64
	status globalStatus
}

// global is the row's global state: one part per node, the messages in
// flight (by slot) and the free slots.
type global struct {
	nodes []globalNode
	msgs  []globalMsg
	free  []uint32
}

// globalInit builds each node's owned table and its own limiter (for the
// keys it holds no copy of).
func (c *clusterRun) globalInit() error {
	alg := c.alg
	c.global.nodes = make([]globalNode, len(c.nodes))
	for n := range c.nodes {
		g := &c.global.nodes[n]
		var err error
		if g.owned, err = algorithms.NewTable(alg.Name, alg.Params); err != nil {
			return fmt.Errorf("%s: %w", alg.Label, err)
		}
		g.sendAt, g.broadcastAt = -1, -1
		if err := c.newNodeLimiter(n); err != nil {
			return fmt.Errorf("%s: node %d: %w", alg.Label, n, err)
		}
	}
	return nil
}

// owner returns the node that owns key k.
func (c *clusterRun) owner(k uint32) int {
	h := fnv.New64a()
	h.Write([]byte(c.e.KeyName(k)))
	return int(h.Sum64() % uint64(len(c.nodes)))
}

// globalArrive decides at on its node, at its arrival.
func (c *clusterRun) globalArrive(at *sim.Attempt) error {
	n := int(at.Node)
	t := at.Arrival.At
	key := algorithms.Key(at.Arrival.Key)
	g := &c.global.nodes[n]
	nd := &c.nodes[n]
	if c.owner(at.Arrival.Key) == n {
		if c.explain && c.explains(at) {
			c.viewBefore(at, nodeName(n), g.owned, t+nd.skew, "global: the key's owner decides on its state")
		}
		d := g.owned.Decide(t+nd.skew, key, at.Arrival.Cost)
		c.viewAfter()
		c.globalChanged(n, key, t)
		return c.decided(at, d, t)
	}
	var d algorithms.Decision
	if int(key) < len(g.copies) && g.copies[key].set && (g.copies[key].admit || g.copies[key].reset > t) {
		st := g.copies[key]
		if c.explain && c.explains(at) {
			note := "global: answered from the node's copy of the owner's last status, under the limit"
			if !st.admit {
				note = fmt.Sprintf("global: answered from the node's copy of the owner's last status, over the limit until %v", st.reset)
			}
			c.viewBefore(at, nodeName(n), nil, t+nd.skew, note)
			c.viewAfter()
		}
		d.Verdict = algorithms.Accept
		if !st.admit {
			d = algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: max(0, st.reset-t)}
		}
	} else {
		if c.explain && c.explains(at) {
			c.viewBefore(at, nodeName(n), nd.lim, t+nd.skew, "global: no copy of the owner's status yet: the node decides on its own limiter")
		}
		d = nd.lim.Decide(t+nd.skew, key, at.Arrival.Cost)
		c.viewAfter()
	}
	g.hits = grow.For(g.hits, int(key))
	if g.hits[key] == 0 {
		g.queued = append(g.queued, key)
	}
	g.hits[key] = satAdd(g.hits[key], at.Arrival.Cost)
	if g.sendAt < 0 {
		g.sendAt = t + c.co.Sync
		c.push(cev{at: g.sendAt, class: sim.ClassSync, kind: evGlobalSend, id: uint32(n)})
	}
	return c.decided(at, d, t)
}

// globalChanged notes that owner n changed key at t, and schedules its
// broadcast Sync later if none is.
func (c *clusterRun) globalChanged(n int, key algorithms.Key, t time.Duration) {
	g := &c.global.nodes[n]
	g.isChanged = grow.For(g.isChanged, int(key))
	if !g.isChanged[key] {
		g.isChanged[key] = true
		g.changed = append(g.changed, key)
	}
	if g.broadcastAt < 0 {
		g.broadcastAt = t + c.co.Sync
		c.push(cev{at: g.broadcastAt, class: sim.ClassSync, kind: evGlobalBroadcast, id: uint32(n)})
	}
}

// globalEvent processes one of global's events.
func (c *clusterRun) globalEvent(ev cev) error {
	switch ev.kind {
	case evGlobalSend:
		c.globalSend(int(ev.id), ev.at)
	case evGlobalBroadcast:
		c.globalBroadcast(int(ev.id), ev.at)
	case evGlobalHits:
		c.globalHits(ev.id, ev.at)
	case evGlobalUpdate:
		c.globalUpdate(ev.id)
	}
	return nil
}

// globalSend sends node n's queued hits at t, one message per owner.
func (c *clusterRun) globalSend(n int, t time.Duration) {
	g := &c.global.nodes[n]
	if g.sendAt != t {
		return // scheduled before the node went down
	}
	g.sendAt = -1
	byOwner := map[int]uint32{}
	var order []int
	for _, key := range g.queued {
		o := c.owner(uint32(key))
		slot, ok := byOwner[o]
		if !ok {
			slot = c.globalMsg(o)
			byOwner[o] = slot
			order = append(order, o)
		}
		m := &c.global.msgs[slot]
		m.items = append(m.items, globalItem{key: key, hits: g.hits[key]})
		g.hits[key] = 0
	}
	g.queued = g.queued[:0]
	for _, o := range order {
		c.globalPost(byOwner[o], evGlobalHits, t)
	}
}

// globalBroadcast sends owner n's changed keys' statuses at t to every
// other live node.
func (c *clusterRun) globalBroadcast(n int, t time.Duration) {
	g := &c.global.nodes[n]
	if g.broadcastAt != t {
		return
	}
	g.broadcastAt = -1
	items := make([]globalItem, 0, len(g.changed))
	now := t + c.nodes[n].skew
	for _, key := range g.changed {
		g.isChanged[key] = false
		d, cp := g.owned.DecideCopy(now, key, 1)
		if cp != algorithms.NoCopy {
			g.owned.Discard(cp)
		}
		st := globalStatus{set: true, admit: d.Verdict != algorithms.Reject}
		if !st.admit {
			st.reset = t + d.RetryAfter
		}
		items = append(items, globalItem{key: key, status: st})
	}
	g.changed = g.changed[:0]
	for m := range c.nodes {
		if m == n || c.nodes[m].down {
			continue
		}
		slot := c.globalMsg(m)
		c.global.msgs[slot].items = append(c.global.msgs[slot].items, items...)
		c.globalPost(slot, evGlobalUpdate, t)
	}
}

// globalMsg takes a message slot for node to.
func (c *clusterRun) globalMsg(to int) uint32 {
	gl := &c.global
	var slot uint32
	if k := len(gl.free); k > 0 {
		slot = gl.free[k-1]
		gl.free = gl.free[:k-1]
	} else {
		gl.msgs = append(gl.msgs, globalMsg{})
		slot = uint32(len(gl.msgs) - 1)
	}
	m := &gl.msgs[slot]
	m.to, m.epoch, m.items = int32(to), c.nodes[to].epoch, m.items[:0]
	return slot
}

// globalPost sends message slot at t: it arrives one trip later.
func (c *clusterRun) globalPost(slot uint32, kind uint8, t time.Duration) {
	c.storeOps++
	there := c.cl.Store.RTT / 2
	if j := c.cl.Store.Jitter; j > 0 {
		there += time.Duration(c.netRng.Int64N(int64(j)))
	}
	class := uint8(sim.ClassReply)
	if kind == evGlobalHits {
		class = sim.ClassStoreArrival
	}
	c.push(cev{at: t + there, class: class, kind: kind, id: slot})
}

// globalHits applies the hits of message slot at their owner at t.
func (c *clusterRun) globalHits(slot uint32, t time.Duration) {
	m := &c.global.msgs[slot]
	o := int(m.to)
	if nd := &c.nodes[o]; !nd.down && nd.epoch == m.epoch {
		g := &c.global.nodes[o]
		for _, it := range m.items {
			g.owned.Decide(t+nd.skew, it.key, it.hits)
			c.globalChanged(o, it.key, t)
		}
	}
	c.global.free = append(c.global.free, slot)
}

// globalUpdate stores the statuses of message slot as its node's copies.
func (c *clusterRun) globalUpdate(slot uint32) {
	m := &c.global.msgs[slot]
	if nd := &c.nodes[m.to]; !nd.down && nd.epoch == m.epoch {
		g := &c.global.nodes[m.to]
		for _, it := range m.items {
			g.copies = grow.For(g.copies, int(it.key))
			g.copies[it.key] = it.status
		}
	}
	c.global.free = append(c.global.free, slot)
}

// globalDown forgets what node n held: its owned states, its copies and
// the hits it had not sent (its own limiter is replaced by fault).
func (c *clusterRun) globalDown(n int) {
	g := &c.global.nodes[n]
	g.owned.Flush()
	clear(g.copies)
	clear(g.hits)
	g.queued = g.queued[:0]
	clear(g.isChanged)
	g.changed = g.changed[:0]
	g.sendAt, g.broadcastAt = -1, -1
}

// globalMemory is what the owners' states and the nodes' own limiters
// took (the peaks added up, as memory does for local).
func (c *clusterRun) globalMemory() algorithms.Memory {
	var m algorithms.Memory
	for n := range c.global.nodes {
		addMemory(&m, c.global.nodes[n].owned.Memory())
		nd := &c.nodes[n]
		addMemory(&m, nd.retired)
		if nd.lim != nil {
			addMemory(&m, nd.lim.Memory())
		}
	}
	return m
}
