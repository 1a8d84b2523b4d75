// Package cluster describes a scenario's cluster section (docs/cluster.md):
// N gateway nodes behind a load balancer that share one limit through a
// store reached over a simulated network, and how each algorithm row
// coordinates its nodes. It holds the configuration as the scenario loader
// validates it and the engine (package sim) runs it, which algorithm
// supports which coordination mode, and nothing else: no clock, no engine.
//
// How state is coordinated is kept apart from what the algorithm decides,
// as envoy's ratelimit service and Kong's policies do: the algorithm's rule
// stays one function of (state, now, cost) in package algorithms, and the
// modes here are ways of calling it.
package cluster

import (
	"cmp"
	"github.com/ratesim/ratesim/algorithms"
	"math"
	"slices"
	"time"
)

// Balancer is how arrivals are spread over the live nodes.
type Balancer string

const (
	// RoundRobin sends the i-th arrival (first attempts and retries, in
	// processing order) to the i-th live node in turn.
	RoundRobin Balancer = "round-robin"
	// Random draws a live node uniformly from the scenario's seed.
	Random Balancer = "random"
	// KeyHash sends a key to node FNV-1a-64(key) mod N, or, while that
	// node is down, to the next live node after it.
	KeyHash Balancer = "key-hash"
	// Weighted spreads arrivals over the live nodes in proportion to
	// Config.Weights, smoothly, as nginx's weighted round-robin does
	// (ngx_http_upstream_round_robin.c, ngx_http_upstream_get_peer): each
	// live node's current weight grows by its weight, the largest (the
	// first of equals) takes the arrival and loses the live nodes' total.
	// Weights 5, 1, 1 send a, a, b, a, c, a, a in each cycle of 7.
	Weighted Balancer = "weighted"
	// WeightedRandom draws a live node from the scenario's seed with
	// probability its weight over the live nodes' total (envoy's random
	// and weighted picks, where a connection or a zone sends one pod more
	// than its share).
	WeightedRandom Balancer = "weighted-random"
)

// Balancers lists the balancers in the order messages name them.
var Balancers = []Balancer{RoundRobin, Random, KeyHash, Weighted, WeightedRandom}

// Weighs reports whether balancer b reads Config.Weights.
func (b Balancer) Weighs() bool { return b == Weighted || b == WeightedRandom }

// OnError is what a node does with an attempt whose store operation failed.
type OnError string

const (
	// Allow admits it (fail open, the default of most libraries).
	Allow OnError = "allow"
	// Deny rejects it (fail closed).
	Deny OnError = "deny"
)

// Defaults of the store, as docs/cluster.md gives them.
const (
	DefaultRTT     = time.Millisecond
	DefaultTimeout = time.Second
)

// Config is a validated cluster section.
type Config struct {
	// Nodes is N >= 1.
	Nodes    int
	Balancer Balancer
	// Skew holds each node's clock offset: node i's clock reads t +
	// Skew[i]. It has Nodes entries.
	Skew []time.Duration
	// Weights holds each node's weight (>= 1) for the weighted balancers,
	// the cluster's or a row's own (Coordination.Balancer); nil when the
	// section gives none. It has Nodes entries.
	Weights      []int64
	Store        Store
	OnStoreError OnError
	// Faults in the order written.
	Faults []Fault
}

// Store is the shared store and the network to it.
type Store struct {
	// RTT is the round trip node <-> store: each one-way trip takes RTT/2
	// plus a jitter draw (the first half rounded down, the way back the
	// rest, so that a round trip without jitter is RTT exactly).
	RTT time.Duration
	// Jitter: each one-way trip adds a seeded uniform draw in [0, Jitter).
	Jitter time.Duration
	// Service is the store's time per operation: operations are served
	// one at a time, FIFO in order of arrival at the store.
	Service time.Duration
	// Timeout is how long a node waits for a reply before it gives the
	// operation up as failed.
	Timeout time.Duration
}

// FaultType names a fault.
type FaultType string

const (
	// NodeDown: the balancer skips the node during [At, At+For); its local
	// state is lost, and it comes back fresh.
	NodeDown FaultType = "node-down"
	// StoreDown: every operation that reaches the store during [At,
	// At+For) fails, at its send time plus the timeout.
	StoreDown FaultType = "store-down"
	// StoreSlow: operations sent during [At, At+For) travel with RTT
	// instead of the store's.
	StoreSlow FaultType = "store-slow"
	// StoreFlush: at At the store loses every key.
	StoreFlush FaultType = "store-flush"
)

// FaultTypes lists the fault types in the order messages name them.
var FaultTypes = []FaultType{NodeDown, StoreDown, StoreSlow, StoreFlush}

// Fault is one fault of the cluster section.
type Fault struct {
	Type FaultType
	// Node is the node a node-down fault takes down (0 <= Node < Nodes).
	Node int
	At   time.Duration
	// For is how long the fault lasts (0 for a store-flush, which is an
	// instant).
	For time.Duration
	// RTT is a store-slow fault's round trip.
	RTT time.Duration
}

// End is the first instant after the fault: At+For (the largest instant
// when that is beyond it).
func (f Fault) End() time.Duration {
	if f.At > math.MaxInt64-f.For {
		return math.MaxInt64
	}
	return f.At + f.For
}

// Mode is how the nodes of one algorithm row coordinate.
type Mode string

const (
	// Local: each node keeps its own limiter with the full policy, on its
	// own clock; no store (Kong's policy: local).
	Local Mode = "local"
	// Split: as Local, but node i enforces its share of the rate and the
	// burst.
	Split Mode = "split"
	// Central: the state lives in the store; one atomic script per attempt
	// (Redis EVAL).
	Central Mode = "central"
	// Racy: read-modify-write without a script: GET, decide on the node,
	// SET (or INCRBY with Write incr).
	Racy Mode = "racy"
	// Sync: counters kept on each node and synchronised with the store
	// every Sync (Kong's sync_rate).
	Sync Mode = "sync"
	// Lease: each node spends a local stock of tokens, taken from the
	// store's bucket in batches of up to Lease.
	Lease Mode = "lease"
	// Global: gubernator's GLOBAL behaviour. Each key has an owner node
	// (key-hash's); a request at the owner is decided on its state, one
	// elsewhere is answered from the node's copy of the owner's last
	// broadcast status (or, before any, on a limiter of the node's own)
	// while its hit is sent to the owner Sync later; the owner broadcasts
	// the status of the keys it changed Sync after the first change.
	Global Mode = "global"
)

// Modes lists every mode in the order docs/cluster.md lists them.
var Modes = []Mode{Local, Split, Central, Racy, Sync, Lease, Global}

// DefaultGlobalSync is global's Sync when the row does not set it:
// gubernator's default GlobalSyncWait, 500us (config.go).
const DefaultGlobalSync = 500 * time.Microsecond

// Clock is whose clock a central script reads.
type Clock string

const (
	// StoreClock: the script reads the store's clock when it executes
	// (redis_rate's TIME).
	StoreClock Clock = "store"
	// NodeClock: the script is passed the node's clock at send, t + skew,
	// so time can go backwards for a key.
	NodeClock Clock = "node"
)

// Write is how a racy node writes back.
type Write string

const (
	// WriteSet: a blind SET of the whole new state; last writer wins.
	WriteSet Write = "set"
	// WriteIncr: INCRBY of the cost (fixed-window and sliding-window), so
	// no update is lost and only the read is stale.
	WriteIncr Write = "incr"
)

// Coordination is how one algorithm row runs on the cluster.
type Coordination struct {
	Mode Mode
	// Clock is central's clock (StoreClock unless set).
	Clock Clock
	// Write is racy's write (WriteSet unless set).
	Write Write
	// Sync is sync's interval S > 0, and global's wait (gubernator's
	// GlobalSyncWait) before a node sends its hits and an owner its
	// broadcast.
	Sync time.Duration
	// Lease is lease's batch K; 0 means the default max(1, B/(2N)).
	Lease int64
	// LeaseTTL is how long a leased stock lives; 0 means the row's period W.
	LeaseTTL time.Duration
	// OnStoreError, when set, overrides the cluster's for this row (a
	// gateway plugin's own fault tolerance, as Kong's fault_tolerant).
	OnStoreError OnError
	// Balancer, when set, overrides the cluster's for this row: the rows
	// of one scenario then show what each balancer does to the same
	// traffic on the same nodes.
	Balancer Balancer
}

// BalancerOf returns the balancer of a row coordinated by co on c: the
// row's own, else the cluster's.
func (c *Config) BalancerOf(co Coordination) Balancer {
	return cmp.Or(co.Balancer, c.Balancer)
}

// modesOf lists, by algorithm name, the modes other than the default set
// (local, split, central, racy) that an algorithm takes. x-time-rate, which
// runs the real float library, cannot run in the store.
var modesOf = map[string][]Mode{
	"fixed-window":   {Local, Split, Central, Racy, Sync, Global},
	"sliding-window": {Local, Split, Central, Racy, Sync, Global},
	// Cloudflare's counters per data center (local), or counts that reach
	// the other data centers later (sync: each node decides on the counts
	// it knows and blocks on its own); its block has no rule in a store
	"cloudflare-rate-limit": {Local, Split, Sync},
	"token-bucket":          {Local, Split, Central, Racy, Lease, Global},
	"gcra":                  {Local, Split, Central, Racy, Lease, Global},
	"x-time-rate":           {Local, Split},
	"none":                  {Local, Split}, // nothing to keep in a store
	// an all-of row's members each keep their state on the node (local) or
	// in the store (central, racy: algorithms.NewTable's all-of Table);
	// split would share the row's policy, not its members'
	"all-of": {Local, Central, Racy},
	// HAProxy's stick tables are each process's own (peers sync
	// them, which no mode here models): each node counts alone.
	"haproxy": {Local, Split},
	// the libraries' and vendors' rows (docs/algorithms.md) have no rule
	// over a state held apart (no algorithms.Table): each node decides
	// alone, as a library in each process, SpikeArrest per message
	// processor and APIM per gateway do
	"guava-bursty": {Local, Split}, "guava-warming-up": {Local, Split},
	"uber-ratelimit": {Local, Split}, "resilience4j": {Local, Split},
	"redis-rate-at-most": {Local, Split}, "apigee-spike-arrest": {Local, Split},
	"apigee-quota": {Local, Split}, "azure-rate-limit": {Local, Split},
	"aws-usage-plan": {Local, Split}, "netflix-partitioned": {Local, Split},
	"stripe-fleet-shedder": {Local, Split},
}

// defaultModes are the modes of an algorithm not in modesOf.
var defaultModes = []Mode{Local, Split, Central, Racy, Global}

// ModesOf returns the modes the algorithm called name supports, in the
// order of Modes.
func ModesOf(name string) []Mode {
	if info, ok := algorithms.Lookup(name); ok && info.Adaptive {
		// an adaptive limit learns from the samples of the requests it
		// admitted: each node keeps its own limit and its own samples. A
		// store would need every completion sent back to it, and a share
		// of a limit that moves is not a split
		return []Mode{Local}
	}
	if m, ok := modesOf[name]; ok {
		return slices.Clone(m)
	}
	return slices.Clone(defaultModes)
}

// Supports reports whether the algorithm called name can run in mode m.
func Supports(name string, m Mode) bool { return slices.Contains(ModesOf(name), m) }

// IncrWrites reports whether the algorithm can be written back with INCRBY
// (racy's write: incr): its state is counters a cost adds to. An all-of
// row can when its commit is all-or-nothing and its members are all
// fixed-window or sliding-window (AllOfIncrWrites).
func IncrWrites(name string) bool {
	return name == "fixed-window" || name == "sliding-window" || name == "all-of"
}

// AllOfIncrWrites reports whether an all-of row of commit c over members
// can be written back with INCRBY: every member is a windowed counter and
// a decision charges all of them or none (all-or-nothing), so the cost
// alone says what to add (Kong's cluster policy with several windows).
func AllOfIncrWrites(c algorithms.Commit, members []algorithms.Member) bool {
	if c != algorithms.AllOrNothing && c != "" {
		return false
	}
	for _, m := range members {
		if m.Name != "fixed-window" && m.Name != "sliding-window" {
			return false
		}
	}
	return true
}

// SpreadSkew returns the skews of n nodes for one skew value v: node i gets
// -v + 2v*i/(n-1) (the quotient truncated toward zero), so that the nodes'
// clocks spread evenly over [-v, v]; one node gets 0.
func SpreadSkew(v time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	if n == 1 {
		return out
	}
	for i := range out {
		out[i] = -v + 2*v*time.Duration(i)/time.Duration(n-1)
	}
	return out
}

// Share returns node i's share of x over n nodes: floor(x/n), plus one for
// the first x mod n nodes, so that the shares add up to x (split's L_i and
// B_i).
func Share(x int64, i, n int) int64 {
	s := x / int64(n)
	if int64(i) < x%int64(n) {
		s++
	}
	return s
}

// DefaultLease is lease's K when the row does not set it: max(1, B/(2N)).
func DefaultLease(burst int64, nodes int) int64 {
	return max(1, burst/(2*int64(nodes)))
}

// WithDefaults returns c with each knob its mode reads filled in where c
// leaves it unset, as docs/cluster.md defaults them for a row of burst
// burst and period per on nodes nodes: the mode central; central's clock
// store; racy's write set; lease's K DefaultLease(burst, nodes) (when
// nodes > 0) and its lease-ttl per; global's wait DefaultGlobalSync.
func (c Coordination) WithDefaults(burst int64, per time.Duration, nodes int) Coordination {
	c.Mode = cmp.Or(c.Mode, Central)
	switch c.Mode {
	case Central:
		c.Clock = cmp.Or(c.Clock, StoreClock)
	case Racy:
		c.Write = cmp.Or(c.Write, WriteSet)
	case Lease:
		if c.Lease <= 0 && nodes > 0 {
			c.Lease = DefaultLease(burst, nodes)
		}
		if c.LeaseTTL <= 0 {
			c.LeaseTTL = per
		}
	case Global:
		if c.Sync <= 0 {
			c.Sync = DefaultGlobalSync
		}
	}
	return c
}

// Outage is an interval [From, To) in which node-down faults leave no
// node up; Cause is the index (in the faults given) of the fault that
// took the last node down.
type Outage struct {
	From, To time.Duration
	Cause    int
}

// AllDown returns the intervals in which the node-down faults of faults
// leave none of n nodes up, in time order. The balancer needs a live
// node at every instant, so a cluster with an outage cannot run. A
// fault's [At, At+For) is half-open: a node that comes back at t is up
// for a request at t, even if another goes down at t.
func AllDown(n int, faults []Fault) []Outage {
	if n == 0 {
		return nil
	}
	type event struct {
		t     time.Duration
		start bool
		f     int
	}
	var events []event
	for i, f := range faults {
		if f.Type == NodeDown {
			events = append(events, event{f.At, true, i}, event{f.End(), false, i})
		}
	}
	// in time order, ends before starts at one instant, then in the
	// faults' order
	slices.SortFunc(events, func(a, b event) int {
		bit := func(s bool) int {
			if s {
				return 1
			}
			return 0
		}
		return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(bit(a.start), bit(b.start)), cmp.Compare(a.f, b.f))
	})
	down := make([]int, n) // faults under way, by node
	nDown := 0
	var out []Outage
	var cur Outage
	for _, e := range events {
		node := faults[e.f].Node
		if node < 0 || node >= n {
			continue
		}
		if e.start {
			down[node]++
			if down[node] == 1 {
				nDown++
				if nDown == n {
					cur = Outage{From: e.t, Cause: e.f}
				}
			}
			continue
		}
		down[node]--
		if down[node] == 0 {
			if nDown == n {
				cur.To = e.t
				out = append(out, cur)
			}
			nDown--
		}
	}
	return out
}
