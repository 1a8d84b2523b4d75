package coord

import (
	"fmt"
	"math"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/grow"
	"github.com/ratesim/ratesim/internal/intmath"
	"github.com/ratesim/ratesim/sim"
)

// Sync (docs/cluster.md, Kong's sync_rate, envoy's local cache): each node
// decides on its own clock with, for each key and window, the count g +
// inflight + delta, where g is the global count it learned at its last sync
// reply, inflight what it has sent and not heard back about, and delta what
// it counted since its last send. Node i syncs at k*S + floor(i*S/N): for
// every key and window with a nonzero delta it sends the delta (inflight +=
// delta, delta = 0), all in one operation; the store adds each on arrival
// and the reply carries each total as it stood then; on the reply g = that
// total and inflight -= what that sync sent. A node that counted nothing
// since its last sync sends nothing, and a failed sync is lost (inflight -=
// what it sent; the counts never reach the store).
//
// A node keeps the counts of the window its clock is in and the one
// before; a delta of a window two or more behind is dropped when the node
// moves on (no window it still decides in counts it). The store likewise
// keeps each key's counts of its latest window and the one before.

// syncKey is one key's counts on one node: [0] for window win-1, [1] for
// window win.
type syncKey struct {
	win                int64
	g, inflight, delta [2]int64
	dirty              bool // listed in syncNode.dirty
	used               bool // has counted anything
	// blocked is the end of the key's block on this node, on the node's
	// clock (a BlockRule's mitigation timeout), XOR algorithms.NoBlock:
	// the zero key has none
	blocked time.Duration
}

// syncNode is one node's counts.
type syncNode struct {
	keys    []syncKey
	dirty   []algorithms.Key // keys with a delta since the last sync
	ticking bool             // a sync is scheduled
}

// syncItem is one key's delta in a sync, and the total the store replied.
type syncItem struct {
	key   algorithms.Key
	win   int64
	delta int64
	total int64
}

func (s *syncNode) key(k algorithms.Key) *syncKey {
	s.keys = grow.For(s.keys, int(k))
	return &s.keys[k]
}

// reset forgets every count (the node went down).
func (s *syncNode) reset() {
	clear(s.keys)
	s.dirty = s.dirty[:0]
}

// at moves the key's counts to window k (never before its window: a node's
// clock only moves forward).
func (s *syncKey) at(k int64) {
	switch {
	case !s.used:
		s.win, s.used = k, true
	case s.win == k:
	case s.win == k-1:
		s.g[0], s.inflight[0], s.delta[0] = s.g[1], s.inflight[1], s.delta[1]
		s.g[1], s.inflight[1], s.delta[1] = 0, 0, 0
		s.win = k
	default:
		s.g, s.inflight, s.delta = [2]int64{}, [2]int64{}, [2]int64{}
		s.win = k
	}
}

// count returns the count the node believes for slot j.
func (s *syncKey) count(j int) int64 {
	return satAdd(satAdd(s.g[j], s.inflight[j]), s.delta[j])
}

// satAdd returns a+b for b >= 0 or a+b >= 0, saturating at MaxInt64.
func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// syncDecide decides at on its node's counts.
func (c *clusterRun) syncDecide(at *sim.Attempt) error {
	nd := &c.nodes[at.Node]
	t := at.Arrival.At
	now := t + nd.skew
	key := algorithms.Key(at.Arrival.Key)
	sk := nd.sync.key(key)
	sk.at(c.rule.WindowIndex(now))
	if c.explain && c.explains(at) {
		note := syncNote(sk)
		if end := sk.blocked ^ algorithms.NoBlock; now < end {
			note += fmt.Sprintf("; the node blocks the key until %v", end)
		}
		c.viewBefore(at, nodeName(int(at.Node)), nil, now, note)
		c.viewAfter()
	}
	var d algorithms.Decision
	var counted bool
	if br, ok := c.rule.(algorithms.BlockRule); ok {
		// cloudflare-rate-limit: each node blocks on its own for the
		// mitigation timeout when the counts it knows trigger the rule
		// (docs/algorithms.md)
		var end time.Duration
		d, counted, end = br.DecideBlocked(now, sk.blocked^algorithms.NoBlock, sk.count(0), sk.count(1), at.Arrival.Cost)
		sk.blocked = end ^ algorithms.NoBlock
	} else {
		d, counted = c.rule.DecideCounts(now, sk.count(0), sk.count(1), at.Arrival.Cost)
	}
	if counted {
		sk.delta[1] = satAdd(sk.delta[1], at.Arrival.Cost)
		if !sk.dirty {
			sk.dirty = true
			nd.sync.dirty = append(nd.sync.dirty, key)
		}
		if !nd.sync.ticking {
			nd.sync.ticking = true
			c.push(cev{at: c.nextSync(int(at.Node), t), class: sim.ClassSync, kind: evSync, id: uint32(at.Node)})
		}
	}
	return c.decided(at, d, t)
}

// nextSync returns node n's first sync instant at or after t: k*S +
// floor(n*S/N).
func (c *clusterRun) nextSync(n int, t time.Duration) time.Duration {
	s := int64(c.co.Sync)
	off := int64(n) * s / int64(len(c.nodes))
	k := intmath.FloorDiv(int64(t)-off+s-1, s)
	return time.Duration(k*s + off)
}

// syncTick sends node n's deltas to the store.
func (c *clusterRun) syncTick(n int, t time.Duration) {
	nd := &c.nodes[n]
	nd.sync.ticking = false
	var items []syncItem
	for _, key := range nd.sync.dirty {
		sk := &nd.sync.keys[key]
		sk.dirty = false
		for j := range 2 {
			if sk.delta[j] != 0 {
				items = append(items, syncItem{key: key, win: sk.win - 1 + int64(j), delta: sk.delta[j]})
				sk.inflight[j] = satAdd(sk.inflight[j], sk.delta[j])
				sk.delta[j] = 0
			}
		}
	}
	nd.sync.dirty = nd.sync.dirty[:0]
	if len(items) > 0 {
		c.send(clusterOp{kind: opSync, node: int32(n), items: items}, t)
	}
}

// syncReply takes a sync's reply (or its failure) at its node.
func (c *clusterRun) syncReply(o *clusterOp, failed bool) {
	nd := &c.nodes[o.node]
	if o.epoch != nd.epoch {
		return // the node lost its counts since it sent them
	}
	for _, it := range o.items {
		sk := nd.sync.key(it.key)
		var j int
		switch it.win {
		case sk.win:
			j = 1
		case sk.win - 1:
			j = 0
		default:
			continue // a window the node no longer counts
		}
		sk.inflight[j] -= it.delta
		if !failed {
			sk.g[j] = it.total
		}
	}
}

// syncStore is the store's counts for sync: each key's latest window and
// the one before.
type syncStore struct {
	keys []syncCount
	held int64 // keys with counts
	peak int64
}

type syncCount struct {
	win       int64
	prev, cur int64
	used      bool
}

// syncCountBytes is what one key's counts take in the store.
const syncCountBytes = 24

// add adds delta to key's count of window win and returns the count as it
// stands then (for a window older than the store keeps, the delta alone).
func (s *syncStore) add(key algorithms.Key, win, delta int64) int64 {
	s.keys = grow.For(s.keys, int(key))
	k := &s.keys[key]
	switch {
	case !k.used:
		*k = syncCount{win: win, used: true}
		s.held++
		s.peak = max(s.peak, s.held)
	case k.win == win-1:
		k.win, k.prev, k.cur = win, k.cur, 0
	case k.win < win-1:
		k.win, k.prev, k.cur = win, 0, 0
	}
	switch k.win {
	case win:
		k.cur = satAdd(k.cur, delta)
		return k.cur
	case win + 1:
		k.prev = satAdd(k.prev, delta)
		return k.prev
	}
	return delta
}

// flush forgets every count (store-flush).
func (s *syncStore) flush() {
	clear(s.keys)
	s.held = 0
}

func (s *syncStore) memory() algorithms.Memory {
	if s.peak == 0 {
		return algorithms.Memory{}
	}
	return algorithms.Memory{BytesPerKeyMax: syncCountBytes, KeysPeak: s.peak, BytesPeak: s.peak * syncCountBytes}
}
