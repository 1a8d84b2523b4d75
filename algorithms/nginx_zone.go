package algorithms

import (
	"math/bits"
	"time"
	"unsafe"
)

// NginxZone is Nginx with its keys' nodes in a limit_req zone of fixed size
// (`limit_req_zone ... zone=one:10m`), the scenario's `zone: SIZE`: the same
// rule for each request (nginxRule), plus what nginx does with the zone's
// memory, to the letter of ngx_http_limit_req_module.c (nginx 1.31.4,
// commit 3f6f7824d4e2; line numbers below are that file's) and of its slab
// allocator ngx_slab.c (slabPool).
//
// Nodes. A key's node is allocated when a request finds none, and is
// 80 bytes plus the key's length (ngx_http_limit_req_lookup, lines
// 488-490: the red-black tree node up to its color field, 32 bytes, and
// ngx_http_limit_req_node_t up to its data, 48, on 64-bit Linux); the slab
// allocator serves it from the smallest power-of-two class that holds it,
// 128 bytes for keys up to 48 bytes, 256 up to 176, and so on. The key is
// the key's name as the traffic writes it (an IPv4 address in a log is 7
// to 15 bytes; nginx's $binary_remote_addr would store 4, in the same
// 128-byte class). A node stays in the zone until nginx frees it, whether
// or not its state is fresh: unlike Nginx, nothing is released because it
// became fresh.
//
// LRU. Every lookup that finds a key's node moves it to the head of the
// zone's queue, a rejected request's too (lines 442-443); a new node goes
// to the head (line 518).
//
// Expiry on each lookup that misses (since nginx 1.1.14; 0.7 to 1.1.13
// ran it before every lookup), ngx_http_limit_req_expire(ctx, 1) (lines
// 632-695, called at line 492): from the queue's tail, up to two nodes are freed, each only
// if it has been idle at least 60 s (|now - last| >= 60000 ms) and its
// excess has drained (excess - rate*ms/1000 <= 0); the pass stops at the
// first node that is not.
//
// Forced expiry. When the allocation then fails, ngx_http_limit_req_expire
// (ctx, 0) (line 497) frees the tail node whatever its state (an eviction:
// the key's excess is lost, and its next request starts afresh), then up to
// two more under the rule above, and the allocation is tried once more.
//
// Refusal. When that fails too (lines 499-504: the freed chunks are of
// another size class, or in pages still partly used, or the queue was
// empty), nginx refuses the request with limit_req_status, 503 by default
// (lines 266-286). The expiries before it stay done. A refusal's
// retry_after is 1 ms, nginx's clock tick: nginx sends no Retry-After, and
// each retry frees one more node, so when one would succeed is not a
// property of the request alone.
//
// Zone size. limit_req_zone takes at least 32k (8 pages, lines 894-898).
// ngx_slab_init keeps 704 bytes of headers, 24 bytes per page and the
// alignment of the first page (slabPages); the zone's first two
// allocations, its tree head (80 bytes, a 128-byte chunk) and its log
// string (32), take a page each. A 1m zone so holds 254 pages: 8,095
// nodes of keys up to 48 bytes (252 pages of 32, plus 31 beside the tree
// head); 10m holds 81,375 (NginxZoneNodes). A key longer than 65535 bytes
// is not limited at all (lines 236-242).
//
// State per key: excess and last as Nginx, the key's place in the queue
// and its slab page (zoneNode).
type NginxZone struct {
	nginxRule
	slab  *slabPool
	nodes []zoneNode
	// the queue of nodes, most recently used first (-1: none)
	head, tail int32
	keyName    func(Key) string

	live, livePeak      int64
	evictions, refusals int64
}

// zoneNode is one key's node: nginx's excess (milli-requests) and last
// (ms), its neighbours in the LRU queue and the slab page its chunk is in.
type zoneNode struct {
	excess, last int64
	prev, next   int32 // toward the head, toward the tail (-1: none)
	page         int32 // the slab page, or -n for a run of n pages
	alive        bool
}

var (
	_ Limiter     = (*NginxZone)(nil)
	_ Reserver    = (*NginxZone)(nil)
	_ Prefetcher  = (*NginxZone)(nil)
	_ stateHolder = (*NginxZone)(nil)
	_ Inspector   = (*NginxZone)(nil)
	_ KeyNamer    = (*NginxZone)(nil)
	_ ZoneCounter = (*NginxZone)(nil)
)

// KeyNamer is implemented by limiters whose decisions depend on the keys'
// names (NginxZone: a node's size is the key's length). The engine gives
// them the names before the first decision; without, a key counts as
// 4 bytes long (an IPv4 address as nginx's $binary_remote_addr).
type KeyNamer interface {
	NameKeys(name func(Key) string)
}

// ZoneCounter is implemented by limiters that keep their keys in a zone of
// fixed size (NginxZone).
type ZoneCounter interface {
	// ZoneCounts returns the nodes evicted so far (freed by force when an
	// allocation failed, whatever their state) and the requests refused
	// because no node could be allocated.
	ZoneCounts() (evictions, refusals int64)
}

// zoneIdle is how long a node must be idle before an expiry pass may free
// it without force (ngx_http_limit_req_expire, line 675).
const zoneIdle = 60000 // ms

func newNginxZone(r *nginxRule, size int64) *NginxZone {
	z := &NginxZone{nginxRule: *r, slab: newSlabPool(size), head: -1, tail: -1}
	// ngx_http_limit_req_init_zone's own allocations (lines 736, 750)
	z.slab.alloc(slabClass(nginxShctx))
	z.slab.alloc(slabClass(nginxLogCtx))
	return z
}

// NameKeys implements KeyNamer.
func (z *NginxZone) NameKeys(name func(Key) string) { z.keyName = name }

// ZoneCounts implements ZoneCounter.
func (z *NginxZone) ZoneCounts() (evictions, refusals int64) { return z.evictions, z.refusals }

func (z *NginxZone) keyLen(key Key) int {
	if z.keyName == nil {
		return 4
	}
	return len(z.keyName(key))
}

// Reserve implements Reserver.
func (z *NginxZone) Reserve(n int) {
	if n > len(z.nodes) {
		z.nodes = append(z.nodes, make([]zoneNode, n-len(z.nodes))...)
	}
}

// Prefetch implements Prefetcher; it does nothing.
func (z *NginxZone) Prefetch([]Key, time.Duration) {}

// Decide runs nginx's lookup, with the zone's expiry, allocation and
// refusal, and the accounting for one request of cost requests.
func (z *NginxZone) Decide(now time.Duration, key Key, cost int64) Decision {
	if cost-1 > z.burst/1000 {
		return Decision{Verdict: Reject, RetryAfter: Never}
	}
	if int(key) >= len(z.nodes) {
		z.Reserve(max(int(key)+1, len(z.nodes)+len(z.nodes)/4))
	}
	n := &z.nodes[key]
	if n.alive {
		z.unqueue(key)
		z.enqueue(key)
		s := nginxState{excess: n.excess, last: n.last}
		d, _ := z.decide(&s, true, now, cost)
		n.excess, n.last = s.excess, s.last
		return d
	}
	kl := z.keyLen(key)
	if kl > nginxMaxKey {
		return Decision{Verdict: Accept}
	}
	class := slabClass(int64(nginxNodeHeader + kl))
	nowMs := msAt(now)
	z.expire(nowMs, 1)
	page, ok := z.slab.alloc(class)
	if !ok {
		z.expire(nowMs, 0)
		if page, ok = z.slab.alloc(class); !ok {
			z.refusals++
			return Decision{Verdict: Reject, RetryAfter: time.Millisecond}
		}
	}
	n = &z.nodes[key] // expire changes no slot, but keep the pointer honest
	var s nginxState
	d, _ := z.decide(&s, false, now, cost)
	*n = zoneNode{excess: s.excess, last: s.last, page: page, alive: true, prev: -1, next: -1}
	z.enqueue(key)
	z.live++
	z.livePeak = max(z.livePeak, z.live)
	return d
}

// expire is ngx_http_limit_req_expire(ctx, n) (lines 632-695): with n = 0
// the queue's tail is freed by force first; then, while n < 3, the tail is
// freed if it has been idle 60 s and drained, else the pass stops. (Its
// count check, line 660, concerns a request between two limit_req
// directives and never stops a single one.)
func (z *NginxZone) expire(nowMs int64, n int) {
	for ; n < 3; n++ {
		t := z.tail
		if t < 0 {
			return
		}
		node := &z.nodes[t]
		if n != 0 {
			ms := nowMs - node.last
			if ms < 0 {
				ms = -ms
			}
			if ms < zoneIdle {
				return
			}
			// excess - rate*ms/1000 > 0, i.e. rate*ms < excess*1000, in
			// 128 bits (ms may be any gap)
			hi, lo := bits.Mul64(uint64(ms), uint64(z.rate))
			if hi == 0 && lo < uint64(node.excess)*1000 {
				return
			}
		} else {
			z.evictions++
		}
		z.unqueue(Key(t))
		z.slab.release(node.page)
		*node = zoneNode{}
		z.live--
	}
}

func (z *NginxZone) enqueue(key Key) {
	n := &z.nodes[key]
	n.prev, n.next = -1, z.head
	if z.head >= 0 {
		z.nodes[z.head].prev = int32(key)
	} else {
		z.tail = int32(key)
	}
	z.head = int32(key)
}

func (z *NginxZone) unqueue(key Key) {
	n := &z.nodes[key]
	if n.prev >= 0 {
		z.nodes[n.prev].next = n.next
	} else {
		z.head = n.next
	}
	if n.next >= 0 {
		z.nodes[n.next].prev = n.prev
	} else {
		z.tail = n.prev
	}
	n.prev, n.next = -1, -1
}

// Memory reports the nodes in the zone: the most at once, and the Go
// state each holds (zoneNode). A node is released only when nginx frees it.
func (z *NginxZone) Memory() Memory {
	size := int64(unsafe.Sizeof(zoneNode{}))
	m := Memory{KeysPeak: z.livePeak, BytesPeak: z.livePeak * size}
	if z.livePeak > 0 {
		m.BytesPerKeyMax = size
	}
	return m
}

func (z *NginxZone) liveAt(time.Duration) (keys, bytes int64) {
	return z.live, z.live * int64(unsafe.Sizeof(zoneNode{}))
}

// Inspect returns key's gauges as Nginx's do, from its node if it has one.
func (z *NginxZone) Inspect(now time.Duration, key Key) []Gauge {
	var s nginxState
	known := int(key) < len(z.nodes) && z.nodes[key].alive
	if known {
		s = nginxState{excess: z.nodes[key].excess, last: z.nodes[key].last}
	}
	return z.gauges(&s, known, now)
}
