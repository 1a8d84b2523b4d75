// Package coord runs an algorithm row on a cluster's nodes
// (docs/cluster.md): the balancer, the nodes and the store, as one source
// of events of the row's agenda in package sim (sim.Coordinator). New is
// sim.Config's Coordinate for a cluster; sim keeps the row's accounting,
// its retries, its backend and its reference (sim.Row).
package coord

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/internal/queue"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

// A cluster run is one algorithm row on the N gateway nodes of
// docs/cluster.md: a balancer spreads the attempts over the live nodes, and the nodes
// decide as the row's coordination mode says, alone (local, split), by an
// atomic script at a shared store (central), by a read, a decision on what
// was read and a write (racy), on counters synchronised every S (sync), or
// on tokens leased in batches (lease). The store is one more event source
// of the engine: operations travel to it over a network of round trip rtt
// (plus jitter draws), queue there FIFO, are served one at a time, and are
// answered; a verdict takes effect when the node hears back, and an
// operation whose reply would come later than the timeout fails then.
//
// The row's accounting is the engine's (sim.Row: counts, series, peaks,
// retries): it counts each attempt as it arrives, and the cluster run
// tells it of each verdict as it takes effect. Beside it runs the
// reference, the same algorithm as one exact limiter on the same traffic,
// whose admissions the row's extra is counted against.
//
// Order of events at one instant (docs/cluster.md and what it leaves open):
// releases of delayed requests; faults that begin or end (node-down, store
// flush), in the order written; operations reaching the store, by send
// time, then in the engine's processing order; operations executing from
// the store's queue, FIFO; replies reaching nodes, in the order their
// operations were sent, then timeouts; the backend's events, with a
// backend (in its own order: see backend.go); first attempts, in
// traffic order;
// retries, in the order they were scheduled; syncs, by node. So a node's
// sync at the instant of an arrival at that node comes after the arrival,
// and a reply at the instant of an arrival is heard first.
type clusterRun struct {
	e   *sim.Row // the engine's side of the row
	cfg *sim.Config
	alg *sim.Algorithm

	cl     *cluster.Config
	co     cluster.Coordination
	faults []cluster.Fault // cl's, on the run's clock (scheduleFaults)
	nodes  []clusterNode
	downN  int // nodes down now
	rr     int // round-robin: the next node to try
	balRng *rand.Rand
	netRng *rand.Rand

	// co's mode, cl's balancer and co's clock as the per-attempt paths
	// test them (the modes and balancers are strings)
	onNode    bool  // local or split: each node decides on its own limiter
	bal       uint8 // balRoundRobin, balRandom, balKeyHash, balWeighted, balWeightedRandom
	nodeClock bool  // central with clock: node

	weights weights // the weighted balancers' (balance.go)
	firer   bool    // an all-of row: verdicts name their limit (fired.go)
	// byAttrs: an all-of row whose limits count by different attributes
	// of a request (by:): the nodes' limiters and the store's table decide
	// each request with its attributes (allof.go)
	byAttrs bool
	global  global // global's nodes and messages (global.go)

	// Config.Explain's attempt of this row, and its view while it is
	// decided (inspect.go)
	explain    bool
	explainSeq uint64
	view       *sim.ClusterView
	viewIns    any
	viewKey    algorithms.Key

	q storeEvents // the row's own events, one source of the row's agenda
	// direct: central scripts run when they are sent, at the instant they
	// reach the store (see script), their verdicts waiting in directQ in
	// the order their replies wait in q's FIFO (all take the same trip
	// back), so that a script needs no operation slot
	direct  bool
	directQ queue.Deque[directReply]
	// late: central scripts over trips with jitter run at their replies
	// (lateScripts); nil otherwise
	late    *lateScripts
	ops     []clusterOp
	freeOps []uint32

	// the store
	table    algorithms.Table       // central, racy, lease
	incr     algorithms.Incrementer // racy with write: incr
	counts   syncStore              // sync
	busy     time.Duration          // the store is serving until then
	busyNs   int64                  // time spent serving
	rule     algorithms.WindowRule  // sync's nodes decide with it
	failWait time.Duration          // retry_after of an attempt a failure rejects

	ahead []algorithms.Key // the keys of the next arrivals, for Prefetch

	// Config.ObserveStore's observer, what it is shown, and its error
	storeObs    sim.Observer
	storeDec    sim.Decision
	storeObsErr error

	// the backend (Config.Backend): sampled when the nodes' limiters
	// learn from its answers, each from the requests it admitted;
	// limitSum, once limitOn, the sum of the nodes' limits (adaptive
	// rows), for the backend's limit series
	sampled   bool
	limitOn   bool
	limitInit bool
	limitSum  int

	perNode     []sim.NodeCount
	added       runHist
	storeOps    int64
	storeErrors int64
	failOpen    int64
	failClosed  int64
}

// clusterNode is one gateway node's own state.
type clusterNode struct {
	down bool
	// epoch counts the node's downs: a reply to an operation sent before
	// the node lost its state finds another epoch
	epoch uint32
	skew  time.Duration
	// local, split: the node's limiter (nil when split leaves it no share)
	// and the memory of the limiters a node-down threw away
	lim     algorithms.Limiter
	retired algorithms.Memory
	// with a backend: lim as a limiter that learns from the backend's
	// answers and as one whose limit moves (else nil), and its limit as
	// last counted in the cluster's limitSum
	sampler algorithms.Sampler
	limits  algorithms.LimitReporter
	limit   int
	sync    syncNode  // sync
	lease   leaseNode // lease
}

// The kinds of store operations.
const (
	opScript uint8 = iota // central: one atomic script
	opGet                 // racy: read the state, decide on the copy
	opSet                 // racy: write the whole new state
	opIncr                // racy with write: incr: add the cost
	opSync                // sync: add each delta, return each total
	opTake                // lease: take up to want tokens
)

// clusterOp is one store operation in flight.
type clusterOp struct {
	kind     uint8
	gen      uint32 // counts the slot's uses, for stale timeout entries
	node     int32
	epoch    uint32 // the node's epoch when it sent the operation
	answered bool   // the node has its reply or its failure
	done     bool   // the store has executed it or dropped it
	seq      uint64
	at       sim.Attempt
	sendAt   time.Duration
	back     time.Duration // the reply's trip
	deadline time.Duration
	dec      algorithms.Decision
	cp       algorithms.Copy // racy: the state decided on, to write back
	counted  bool            // racy with incr: the decision counted the cost
	fired    int32           // the limit that decided dec (firedOf)
	winAt    time.Duration   // racy with incr: the instant whose window
	want     int64           // lease
	need     int64
	granted  int64
	items    []syncItem // sync
}

// directReply is a direct script's verdict on its way back to the node.
type directReply struct {
	at    sim.Attempt
	dec   algorithms.Decision
	fired int32 // the limit that decided dec (firedOf)
}

// The balancers, as clusterRun.bal holds them.
const (
	balRoundRobin uint8 = iota
	balRandom
	balKeyHash
	balWeighted
	balWeightedRandom
)

// New builds the cluster of algorithm i's row on cfg.Cluster, whose
// engine side is e: it is sim.Config's Coordinate for a cluster.
func New(cfg *sim.Config, i int, e *sim.Row) (sim.Coordinator, error) {
	if cfg.Cluster == nil {
		return nil, errors.New("no cluster to run the rows on")
	}
	c, err := newClusterRun(cfg, i, e)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// newClusterRun builds the cluster of algorithm i's row, whose engine side
// is e.
func newClusterRun(cfg *sim.Config, i int, e *sim.Row) (*clusterRun, error) {
	alg := &cfg.Algorithms[i]
	if alg.Params.NginxZone != 0 {
		return nil, fmt.Errorf("%s: nginx's zone is one nginx's shared memory: it is not modelled on a cluster", alg.Label)
	}
	cl := cfg.Cluster
	if out := cluster.AllDown(cl.Nodes, cl.Faults); len(out) > 0 {
		return nil, fmt.Errorf("cluster: all %d nodes are down over [%v, %v): the balancer needs a live node at every instant", cl.Nodes, out[0].From, out[0].To)
	}
	if err := e.Reference(); err != nil {
		return nil, err
	}
	var err error
	name, p := alg.Name, alg.Params
	// the row's accounting has no limiter, so no watcher: the cluster's
	// watchers sample where the state is
	c := &clusterRun{e: e, cfg: cfg, alg: alg, cl: cl,
		co:      alg.Coord.WithDefaults(p.Burst, p.Per, cl.Nodes),
		nodes:   make([]clusterNode, cl.Nodes),
		perNode: make([]sim.NodeCount, cl.Nodes),
		// the same seed, other streams than the retries' jitter
		balRng:   rand.New(rand.NewPCG(cfg.Seed, 0xbb67ae8584caa73b)),
		netRng:   rand.New(rand.NewPCG(cfg.Seed, 0x3c6ef372fe94f82b)),
		failWait: alg.Params.Per,
	}
	for n := range c.nodes {
		c.nodes[n].skew = cl.Skew[n]
		c.perNode[n].Node = n
	}
	c.onNode = c.co.Mode == cluster.Local || c.co.Mode == cluster.Split
	c.firer = len(alg.Params.Members) > 0
	c.byAttrs = byAttributes(alg.Params.Members)
	if ex := cfg.Explain; ex != nil && ex.Row == i {
		c.explain, c.explainSeq = true, ex.Seq
	}
	c.nodeClock = c.co.Clock == cluster.NodeClock
	switch cl.BalancerOf(c.co) {
	case cluster.Random:
		c.bal = balRandom
	case cluster.KeyHash:
		c.bal = balKeyHash
	case cluster.Weighted:
		c.bal, c.weights = balWeighted, newWeights(cl)
	case cluster.WeightedRandom:
		c.bal, c.weights = balWeightedRandom, newWeights(cl)
	}
	if info, ok := algorithms.Lookup(name); ok && info.Adaptive && alg.New == nil && !cluster.Supports(name, c.co.Mode) {
		return nil, fmt.Errorf("%s: %s is an adaptive limit, which each node keeps with its own samples: it runs in coordination %s only, not %s",
			alg.Label, name, modeList(cluster.ModesOf(name)), c.co.Mode)
	}
	switch c.co.Mode {
	case cluster.Local, cluster.Split:
		if c.co.Mode == cluster.Split && alg.New != nil {
			return nil, fmt.Errorf("%s: split needs a registry algorithm: Algorithm.New takes no share of the params", alg.Label)
		}
		for n := range c.nodes {
			if err := c.newNodeLimiter(n); err != nil {
				return nil, fmt.Errorf("%s: node %d: %w", alg.Label, n, err)
			}
		}
	case cluster.Central, cluster.Racy, cluster.Lease:
		if c.table, err = algorithms.NewTable(name, p); err != nil {
			return nil, fmt.Errorf("%s: %w", alg.Label, err)
		}
		if c.co.Mode == cluster.Racy && c.co.Write == cluster.WriteIncr {
			inc, ok := c.table.(algorithms.Incrementer)
			if !ok {
				return nil, fmt.Errorf("%s: %s cannot be written back with write: incr", alg.Label, name)
			}
			c.incr = inc
		}
		if c.co.Mode == cluster.Lease && !cluster.Supports(name, cluster.Lease) {
			return nil, fmt.Errorf("%s: %s cannot lease (its modes: %v)", alg.Label, name, cluster.ModesOf(name))
		}
	case cluster.Global:
		if err := c.globalInit(); err != nil {
			return nil, err
		}
	case cluster.Sync:
		rule, ok, err := algorithms.NewWindowRule(name, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", alg.Label, err)
		}
		if !ok {
			return nil, fmt.Errorf("%s: %s cannot sync (its modes: %v)", alg.Label, name, cluster.ModesOf(name))
		}
		if c.co.Sync <= 0 {
			return nil, fmt.Errorf("%s: sync needs an interval > 0", alg.Label)
		}
		c.rule = rule
	default:
		return nil, fmt.Errorf("%s: unknown coordination %q", alg.Label, c.co.Mode)
	}
	if in := cfg.Inspect; in != nil && in.Every > 0 {
		c.watch(in)
	}
	if cfg.ObserveStore != nil && c.co.Mode == cluster.Central {
		c.storeObs = cfg.ObserveStore(i)
	}
	c.q.trips(cl)
	c.q.fixed = cl.Store.Jitter == 0
	// a store watcher (Config.Inspect) samples the state between the send
	// and the execution, which the direct path runs early, and a view
	// (Config.Explain) counts the scripts in flight at the execution: with
	// either the row takes the queued path
	c.direct = c.co.Mode == cluster.Central && cl.Store.Service == 0 && cl.Store.RTT <= cl.Store.Timeout &&
		cl.Store.Jitter == 0 && (cfg.Inspect == nil || cfg.Inspect.Every <= 0) && !c.explain
	for _, f := range cl.Faults {
		switch f.Type {
		case cluster.StoreSlow, cluster.StoreDown, cluster.StoreFlush:
			c.direct = false
		}
		if f.Type == cluster.StoreSlow {
			c.q.fixed = false
		}
	}
	if c.co.Mode == cluster.Central && lateOK(cl, cfg.Inspect) && !c.explain && !c.byAttrs {
		// (a row by attributes takes the queued path, which
		// TestClusterLateScriptsMatchQueue holds lateScripts to)
		c.late = newLateScripts(c.q.wheel.shift)
	}
	return c, nil
}

// Start schedules the faults and opens the backend (sim.Coordinator).
func (c *clusterRun) Start(origin, start time.Duration) error {
	c.scheduleFaults(origin)
	if c.cfg.Backend != nil {
		return c.newBackend(origin, start)
	}
	return nil
}

// Err is the store observer's error (sim.Coordinator).
func (c *clusterRun) Err() error { return c.storeObsErr }

// scheduleFaults places the faults on the run's clock, from origin: 0 for
// synthetic traffic, the first arrival's instant for a recorded trace,
// whose instants are absolute (a fault at 10s is 10s into the trace), and
// schedules their beginnings and ends.
func (c *clusterRun) scheduleFaults(origin time.Duration) {
	c.faults = make([]cluster.Fault, len(c.cl.Faults))
	for k, f := range c.cl.Faults {
		f.At = time.Duration(satAdd(int64(f.At), int64(origin)))
		c.faults[k] = f
		switch f.Type {
		case cluster.NodeDown:
			c.push(cev{at: f.At, class: sim.ClassFault, kind: evFault, id: uint32(k)})
			c.push(cev{at: time.Duration(satAdd(int64(f.At), int64(f.For))), class: sim.ClassFault, kind: evFault, id: uint32(k) | faultEnd})
		case cluster.StoreFlush:
			c.push(cev{at: f.At, class: sim.ClassFault, kind: evFault, id: uint32(k)})
		}
	}
}

// watch sets the watchers of Config.Inspect: the state on each node, for
// the modes whose nodes keep a limiter, or in the store, for those whose
// state lives there (sync's counts are not an algorithm's state).
func (c *clusterRun) watch(in *sim.Inspect) {
	add := c.e.Watch
	if i, ok := c.table.(algorithms.Inspector); ok {
		add("store", i)
		return
	}
	if !c.onNode {
		return
	}
	for n := range c.nodes {
		if _, ok := c.nodes[n].lim.(algorithms.Inspector); ok || c.nodes[n].lim == nil {
			add("node "+strconv.Itoa(n), nodeInspector{c, n})
		}
	}
}

// nodeInspector shows node n's state on the node's clock, whichever
// limiter the node holds now (a node-down gives it a fresh one); a node
// with no share of a split limit shows nothing.
type nodeInspector struct {
	c *clusterRun
	n int
}

func (ni nodeInspector) Inspect(now time.Duration, key algorithms.Key) []algorithms.Gauge {
	nd := &ni.c.nodes[ni.n]
	if i, ok := nd.lim.(algorithms.Inspector); ok {
		return i.Inspect(now+nd.skew, key)
	}
	return nil
}

// Reserve sizes the store's table and the nodes' limiters for n keys, as
// a run's limiter (sim.Coordinator).
func (c *clusterRun) Reserve(n int) {
	if rs, ok := c.table.(reserver); ok {
		rs.Reserve(n)
	}
	for i := range c.nodes {
		if rs, ok := c.nodes[i].lim.(reserver); ok {
			rs.Reserve(n)
		}
	}
}

// faultEnd marks the event of a fault's end in its id.
const faultEnd = 1 << 31

// newNodeLimiter gives node n a fresh limiter: the row's policy (local) or
// the node's share of it (split).
func (c *clusterRun) newNodeLimiter(n int) error {
	alg := c.alg
	p := alg.Params
	if c.co.Mode == cluster.Split {
		p = splitParams(alg.Name, p, n, len(c.nodes))
		if p.Rate == 0 || p.Burst == 0 || (p.NginxBurstSet && p.NginxBurst < 0) {
			nd := &c.nodes[n]
			nd.lim, nd.sampler, nd.limits = nil, nil, nil // no share: the node admits nothing
			return nil
		}
	}
	nd := &c.nodes[n]
	var err error
	if nd.lim, err = c.e.NewLimiter(p); err != nil {
		return err
	}
	if c.cfg.Backend != nil {
		nd.sampler, _ = nd.lim.(algorithms.Sampler)
		nd.limits, _ = nd.lim.(algorithms.LimitReporter)
	}
	return nil
}

// splitParams returns node n's share of p over nodes nodes: the rate and
// the burst shared as cluster.Share does, and likewise the algorithm's own
// counts of requests at once (nginx's burst=N, which admits N+1 at once;
// the concurrency limiter's max) and token-bucket's tokens-per-fill.
func splitParams(name string, p algorithms.Params, n, nodes int) algorithms.Params {
	p.Rate = cluster.Share(p.Rate, n, nodes)
	p.Burst = cluster.Share(p.Burst, n, nodes)
	if p.NginxBurstSet {
		p.NginxBurst = cluster.Share(p.NginxBurst+1, n, nodes) - 1
	}
	if p.TokensPerFill > 0 { // token-bucket's discrete refill: N shared too
		p.TokensPerFill = cluster.Share(p.TokensPerFill, n, nodes)
		if p.TokensPerFill == 0 {
			p.Rate = 0
		}
	}
	if p.Max > 0 {
		p.Max = cluster.Share(p.Max, n, nodes)
		if p.Max == 0 {
			p.Rate = 0
		}
	}
	return p
}

// push adds ev to the row's own events (storeEvents.push).
func (c *clusterRun) push(ev cev) {
	c.q.push(ev)
	c.e.Wake(ev.at, ev.class)
}

// pushTrip adds ev, an arrival at the store or a reply, to the row's own
// events (storeEvents.pushTrip).
func (c *clusterRun) pushTrip(ev cev, fifo int) {
	c.q.pushTrip(ev, fifo)
	c.e.Wake(ev.at, ev.class)
}

// First and Fire make the row's own events (storeEvents) a source of its
// agenda.
func (c *clusterRun) First() (time.Duration, uint8, bool) {
	if c.late != nil {
		return c.lateFirst()
	}
	if e, _ := c.q.peek(); e != nil {
		return e.at, e.class, true
	}
	return 0, 0, false
}

func (c *clusterRun) Fire() error {
	if c.late != nil {
		return c.lateFire()
	}
	_, where := c.q.peek()
	return c.event(c.q.pop(where))
}

// Prefetch asks for the state that the arrivals of chunk will read: the
// store's rows (which their operations read a trip later, or with
// lateScripts a trip of jitter later), or, with
// round-robin and every node up, the rows of the node limiter each will
// reach if no retry comes between. It is a hint: it changes nothing
// (sim.Coordinator).
func (c *clusterRun) Prefetch(chunk []traffic.Arrival) {
	horizon := chunk[len(chunk)-1].At
	if len(c.ahead) < len(chunk) {
		c.ahead = make([]algorithms.Key, len(chunk))
	}
	if pf, ok := c.table.(algorithms.Prefetcher); ok {
		for j := range chunk {
			c.ahead[j] = algorithms.Key(chunk[j].Key)
		}
		pf.Prefetch(c.ahead[:len(chunk)], horizon)
		return
	}
	if !c.onNode || c.bal != balRoundRobin || c.downN > 0 {
		return
	}
	n := len(c.nodes)
	for node := range c.nodes {
		pf, ok := c.nodes[node].lim.(algorithms.Prefetcher)
		if !ok {
			continue
		}
		k := 0
		for j := (node - c.rr + n) % n; j < len(chunk); j += n {
			c.ahead[k] = algorithms.Key(chunk[j].Key)
			k++
		}
		pf.Prefetch(c.ahead[:k], horizon)
	}
}

// event processes one event of the cluster queue.
func (c *clusterRun) event(ev cev) error {
	switch ev.kind {
	case evFault:
		return c.fault(ev)
	case evStoreArrival:
		c.storeArrival(ev.id, ev.at)
	case evStoreExec:
		c.exec(ev.id, ev.at)
	case evReply:
		return c.reply(ev.id, ev.at)
	case evSync:
		c.syncTick(int(ev.id), ev.at)
	case evTimeout:
		return c.timeout(ev.id, ev.at)
	case evDirectReply:
		r := c.directQ.Front()
		c.fire(r.fired)
		err := c.decided(&r.at, r.dec, ev.at)
		c.directQ.DropFront()
		return err
	case evGlobalSend, evGlobalHits, evGlobalBroadcast, evGlobalUpdate:
		return c.globalEvent(ev)
	}
	return nil
}

// Arrive takes attempt n of a at the balancer, the seq-th to reach it, of
// request id: it picks a node and has the node decide as the mode says
// (sim.Coordinator).
func (c *clusterRun) Arrive(a *traffic.Arrival, n int, seq, id uint64) error {
	node := c.pick(a)
	if c.onNode && c.e.Quick() && !c.explain {
		return c.decideOnNode(a, n, node)
	}
	at := sim.Attempt{Arrival: *a, N: int32(n), Node: int32(node), Seq: seq, ID: id}
	c.perNode[node].Attempts++
	switch c.co.Mode {
	case cluster.Local, cluster.Split:
		nd := &c.nodes[node]
		d := algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: algorithms.Never}
		if nd.lim != nil {
			if c.explain && c.explains(&at) {
				c.viewBefore(&at, nodeName(node), nd.lim, a.At+nd.skew, "")
			}
			d = c.nodeDecide(nd.lim, a.At+nd.skew, a)
			c.viewAfter()
			if c.limitOn {
				c.nodeLimit(node, a.At)
			}
			if c.firer {
				c.fire(firedOf(nd.lim))
			}
		}
		return c.decided(&at, d, a.At)
	case cluster.Central:
		if c.direct {
			c.script(&at)
			return nil
		}
		if c.late != nil {
			c.sendLate(&at)
			return nil
		}
		c.send(clusterOp{kind: opScript, at: at, node: at.Node}, a.At)
	case cluster.Racy:
		c.send(clusterOp{kind: opGet, at: at, node: at.Node}, a.At)
	case cluster.Sync:
		return c.syncDecide(&at)
	case cluster.Lease:
		return c.leaseArrive(&at)
	case cluster.Global:
		return c.globalArrive(&at)
	}
	return nil
}

// decideOnNode is arrive's path in local and split without an observer
// or a backend (coordRow.quick): node decides a (attempt n) on its own
// limiter at once, and the verdict takes effect there and then, with what
// decided does in that case and without the record of the attempt that
// the other paths carry to their reply. TestClusterOnNodePath holds it to
// the path with an observer.
func (c *clusterRun) decideOnNode(a *traffic.Arrival, n, node int) error {
	pn := &c.perNode[node]
	pn.Attempts++
	nd := &c.nodes[node]
	d := algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: algorithms.Never}
	if nd.lim != nil {
		d = c.nodeDecide(nd.lim, a.At+nd.skew, a)
		if c.limitOn {
			c.nodeLimit(node, a.At)
		}
		if c.firer {
			c.fire(firedOf(nd.lim))
		}
	}
	if d.Verdict == algorithms.Reject {
		pn.Rejected++
	} else {
		pn.Admitted++
	}
	c.added.add(0)
	return c.e.Verdict(a, n, d)
}

// pick returns the node the balancer sends a to.
func (c *clusterRun) pick(a *traffic.Arrival) int {
	n := len(c.nodes)
	switch c.bal {
	case balRandom:
		k := c.balRng.IntN(n - c.downN)
		for i := range c.nodes {
			if !c.nodes[i].down {
				if k == 0 {
					return i
				}
				k--
			}
		}
	case balKeyHash:
		h := fnv.New64a()
		h.Write([]byte(c.e.KeyName(a.Key)))
		i := int(h.Sum64() % uint64(n))
		for c.nodes[i].down {
			i = (i + 1) % n
		}
		return i
	case balWeighted:
		return c.pickWeighted()
	case balWeightedRandom:
		return c.pickWeightedRandom()
	}
	i := c.rr
	for c.nodes[i].down {
		if i++; i == n {
			i = 0
		}
	}
	if c.rr = i + 1; c.rr == n {
		c.rr = 0
	}
	return i
}

// decided accounts for the verdict d on at, which took effect at its node
// at when.
func (c *clusterRun) decided(at *sim.Attempt, d algorithms.Decision, when time.Duration) error {
	pn := &c.perNode[at.Node]
	if d.Verdict == algorithms.Reject {
		pn.Rejected++
	} else {
		pn.Admitted++
	}
	c.added.add(when - at.Arrival.At)
	nd := &c.nodes[at.Node]
	return c.e.Decided(at, d, when, nd.epoch, nd.sampler)
}

// The store.

// send sends operation o from its node at t: its trips are drawn now (the
// round trip of a store-slow fault in force at t), and it reaches the store
// after the first.
func (c *clusterRun) send(o clusterOp, t time.Duration) {
	rtt := c.cl.Store.RTT
	if f := c.faultAt(cluster.StoreSlow, t); f != nil {
		rtt = f.RTT
	}
	there, back := rtt/2, rtt-rtt/2
	if j := c.cl.Store.Jitter; j > 0 {
		there += time.Duration(c.netRng.Int64N(int64(j)))
		back += time.Duration(c.netRng.Int64N(int64(j)))
	}
	if o.kind != opSet {
		o.cp = algorithms.NoCopy // a SET carries its copy; no other holds one yet
	}
	o.sendAt, o.back, o.deadline = t, back, t+c.cl.Store.Timeout
	o.epoch = c.nodes[o.node].epoch
	o.seq = c.q.seq // the number its arrival at the store takes
	slot := c.newOp(o)
	c.storeOps++
	if hasReply(o.kind) && t+there > o.deadline {
		c.failAt(slot) // it reaches the store too late to be answered
	}
	ev := cev{at: t + there, sub: t, class: sim.ClassStoreArrival, kind: evStoreArrival, id: slot}
	c.pushTrip(ev, fifoArrivals)
}

// failAt schedules the failure of operation slot at its deadline: its
// reply would come later, or never. An operation's fate is known by the
// time it reaches the store (its execution's instant follows from the
// queue then), so failAt is called at the latest then, never after the
// deadline: when it leaves (a trip longer than the timeout) or when it
// arrives.
func (c *clusterRun) failAt(slot uint32) {
	o := &c.ops[slot]
	ev := cev{at: o.deadline, sub: 1, class: sim.ClassReply, kind: evTimeout, id: slot, seq: o.seq}
	c.q.pushNumbered(ev)
	c.e.Wake(ev.at, ev.class)
}

// script runs a central script for at, sent now, when the store cannot
// change between the send and the execution in any way the script would
// see (direct): every trip takes rtt/2, the store serves at once (no
// service time, so no queue) and has no fault, so scripts execute in the
// order they are sent, each rtt/2 after it, and nothing else touches the
// store. It executes the script at once with the store's instant (or the
// node's clock at send), as the store would rtt/2 later, and schedules the
// reply: the verdict waits in directQ, without an operation slot (with no
// fault on the store and a trip shorter than the timeout, nothing fails
// or times out). TestClusterFIFOsMatchQueue holds it to the queued path.
func (c *clusterRun) script(at *sim.Attempt) {
	t := at.Arrival.At
	rtt := c.cl.Store.RTT
	there, back := rtt/2, rtt-rtt/2
	now := t + there
	if c.nodeClock {
		now = t + c.nodes[at.Node].skew
	}
	c.storeOps++
	c.directQ.PushBack(directReply{at: *at})
	r := c.directQ.Back()
	if c.explain && c.explains(at) {
		c.viewBefore(at, "store", c.table, now, "")
	}
	r.dec = c.storeDecide(now, &at.Arrival)
	c.viewAfter()
	if c.firer {
		r.fired = firedOf(c.table)
	}
	if c.storeObs != nil {
		c.observeStore(&r.at, r.dec, now, t+there)
	}
	c.q.nextSeq() // as send numbers its arrival at the store
	c.pushTrip(cev{at: t + there + back, class: sim.ClassReply, kind: evDirectReply}, fifoReplies)
}

// observeStore shows the store observer the script on at that the store
// executed at e with now, and its verdict dec. The observer's error stops
// the run at the next arrival or at the end (storeErr).
func (c *clusterRun) observeStore(at *sim.Attempt, dec algorithms.Decision, now, e time.Duration) {
	if c.storeObs == nil {
		return
	}
	a := &at.Arrival
	c.storeDec = sim.Decision{Time: now, Key: c.e.KeyName(a.Key), Cost: a.Cost, Attempt: int(at.N),
		Decision: dec, Node: int(at.Node), Decided: e}
	if err := c.storeObs.Observe(&c.storeDec); err != nil {
		c.storeObs = nil
		if !errors.Is(err, sim.ErrStopObserving) {
			c.storeObsErr = err
		}
	}
}

// hasReply reports whether a node waits for the reply to an operation of
// kind k (a write is sent and forgotten).
func hasReply(k uint8) bool { return k != opSet && k != opIncr }

func (c *clusterRun) newOp(o clusterOp) uint32 {
	slot, p := c.takeOp()
	o.gen = p.gen
	*p = o
	return slot
}

// takeOp takes a free operation slot, or makes one, for the caller to
// fill in place; its gen is already the new use's and the caller keeps it.
func (c *clusterRun) takeOp() (uint32, *clusterOp) {
	if n := len(c.freeOps); n > 0 {
		slot := c.freeOps[n-1]
		c.freeOps = c.freeOps[:n-1]
		o := &c.ops[slot]
		o.gen++
		return slot, o
	}
	c.ops = append(c.ops, clusterOp{})
	return uint32(len(c.ops) - 1), &c.ops[len(c.ops)-1]
}

// release frees an operation's slot once the store and the node are both
// done with it.
func (c *clusterRun) releaseOp(slot uint32) {
	o := &c.ops[slot]
	if !o.done || (hasReply(o.kind) && !o.answered) {
		return
	}
	o.items = o.items[:0]
	c.freeOps = append(c.freeOps, slot)
}

// faultAt returns the last fault written of type typ that is in force at
// t, or nil.
func (c *clusterRun) faultAt(typ cluster.FaultType, t time.Duration) *cluster.Fault {
	var in *cluster.Fault
	for k := range c.faults {
		if f := &c.faults[k]; f.Type == typ && t >= f.At && t < f.End() {
			in = f
		}
	}
	return in
}

// storeArrival takes operation slot at the store at t: it fails when the
// store is down (its node gives it up at the timeout; a write is lost),
// and otherwise waits its turn.
func (c *clusterRun) storeArrival(slot uint32, t time.Duration) {
	o := &c.ops[slot]
	// the node hears of it at its deadline, unless it already knows
	late := hasReply(o.kind) && t <= o.deadline
	if c.faultAt(cluster.StoreDown, t) != nil {
		o.done = true
		if late {
			c.failAt(slot)
		}
		if !hasReply(o.kind) {
			c.storeErrors++
			if o.kind == opSet {
				c.table.Discard(o.cp)
			}
		}
		c.releaseOp(slot)
		return
	}
	e := max(t, c.busy)
	if late && e+c.cl.Store.Service+o.back > o.deadline {
		c.failAt(slot) // it still executes; its reply comes too late
	}
	c.busy = e + c.cl.Store.Service
	c.busyNs += int64(c.cl.Store.Service)
	if e == t {
		c.exec(slot, e)
		return
	}
	c.q.pushExec(cev{at: e, class: sim.ClassStoreExec, kind: evStoreExec, id: slot})
	c.e.Wake(e, sim.ClassStoreExec)
}

// exec executes operation slot at store time e and sends its reply.
func (c *clusterRun) exec(slot uint32, e time.Duration) {
	o := &c.ops[slot]
	o.done = true
	key := algorithms.Key(o.at.Arrival.Key)
	switch o.kind {
	case opScript:
		now := e
		if c.nodeClock {
			now = o.sendAt + c.nodes[o.node].skew
		}
		if c.explain && c.explains(&o.at) {
			c.viewBefore(&o.at, "store", c.table, now, "")
		}
		o.dec = c.storeDecide(now, &o.at.Arrival)
		c.viewAfter()
		if c.firer {
			o.fired = firedOf(c.table)
		}
		c.observeStore(&o.at, o.dec, now, e)
	case opGet:
		if c.explain && c.explains(&o.at) {
			c.viewBefore(&o.at, "store", c.table, e, "racy: the node decides on the state this GET reads; its write follows the reply")
		}
		o.dec, o.cp = c.storeDecideCopy(e, &o.at.Arrival)
		c.viewAfter()
		if c.firer {
			o.fired = firedOf(c.table)
		}
		if c.incr != nil && o.cp != algorithms.NoCopy {
			// only the cost goes back: the copy is not needed
			c.table.Discard(o.cp)
			o.cp, o.counted, o.winAt = algorithms.NoCopy, true, e
		}
		if o.answered && o.cp != algorithms.NoCopy {
			c.table.Discard(o.cp) // the node gave up: no write will follow
			o.cp = algorithms.NoCopy
		}
	case opSet:
		c.table.Write(key, o.cp)
	case opIncr:
		c.storeIncr(o.winAt, &o.at.Arrival)
	case opSync:
		for i := range o.items {
			it := &o.items[i]
			it.total = c.counts.add(it.key, it.win, it.delta)
		}
	case opTake:
		var ra time.Duration
		o.granted, ra = c.table.Take(e, key, o.want, o.need)
		o.dec = algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: ra}
	}
	if !hasReply(o.kind) {
		c.releaseOp(slot)
		return
	}
	if r := e + c.cl.Store.Service + o.back; r <= o.deadline && !o.answered {
		c.pushTrip(cev{at: r, class: sim.ClassReply, kind: evReply, id: slot}, fifoReplies)
		return
	}
	c.releaseOp(slot) // answered by its timeout already, or to be
}

// reply takes the reply to operation slot at its node at t.
func (c *clusterRun) reply(slot uint32, t time.Duration) error {
	o := &c.ops[slot]
	o.answered = true
	if o.kind == opScript { // central's path, without the defer
		c.fire(o.fired)
		err := c.decided(&o.at, o.dec, t)
		c.releaseOp(slot)
		return err
	}
	defer c.releaseOp(slot)
	switch o.kind {
	case opGet:
		at, d := o.at, o.dec
		if o.cp != algorithms.NoCopy {
			c.send(clusterOp{kind: opSet, at: at, cp: o.cp, node: at.Node}, t)
		} else if o.counted {
			c.send(clusterOp{kind: opIncr, at: at, winAt: o.winAt, node: at.Node}, t)
		}
		c.fire(o.fired)
		return c.decided(&at, d, t)
	case opSync:
		c.syncReply(o, false)
	case opTake:
		return c.leaseReply(slot, t, false)
	}
	return nil
}

// timeout fails operation slot at its deadline t, unless it was answered:
// the node admits or rejects the attempt as on-store-error says; a sync is
// lost.
func (c *clusterRun) timeout(slot uint32, t time.Duration) error {
	o := &c.ops[slot]
	if o.answered {
		return nil
	}
	o.answered = true
	c.storeErrors++
	defer c.releaseOp(slot)
	switch o.kind {
	case opScript, opGet:
		if o.done && o.cp != algorithms.NoCopy {
			c.table.Discard(o.cp)
			o.cp = algorithms.NoCopy
		}
		return c.failed(&o.at, t)
	case opSync:
		c.syncReply(o, true)
	case opTake:
		return c.leaseReply(slot, t, true)
	}
	return nil
}

// failed decides an attempt whose store operation failed at t.
func (c *clusterRun) failed(at *sim.Attempt, t time.Duration) error {
	if onErr := cmp.Or(c.co.OnStoreError, c.cl.OnStoreError); onErr == cluster.Deny {
		c.failClosed++
		return c.decided(at, algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: c.failWait}, t)
	}
	c.failOpen++
	return c.decided(at, algorithms.Decision{Verdict: algorithms.Accept}, t)
}

// fault begins or ends fault ev.id.
func (c *clusterRun) fault(ev cev) error {
	f := c.faults[ev.id&^faultEnd]
	switch f.Type {
	case cluster.StoreFlush:
		if c.table != nil {
			c.table.Flush()
		}
		c.counts.flush()
	case cluster.NodeDown:
		nd := &c.nodes[f.Node]
		if ev.id&faultEnd != 0 {
			nd.down = false
			c.downN--
			return nil
		}
		nd.down = true
		nd.epoch++
		c.downN++
		// its local state is lost: it comes back fresh
		if nd.lim != nil {
			addMemory(&nd.retired, nd.lim.Memory())
			if err := c.newNodeLimiter(f.Node); err != nil {
				return err
			}
			if c.limitOn {
				c.nodeLimit(f.Node, ev.at)
			}
		}
		nd.sync.reset()
		nd.lease.reset()
		if c.co.Mode == cluster.Global {
			c.globalDown(f.Node)
		}
	}
	return nil
}

// Report completes the row's result with its cluster object
// (sim.Coordinator).
func (c *clusterRun) Report(res *sim.Result, refAdm int64, span time.Duration) {
	adm := res.Accepted + res.Delayed
	cr := &sim.ClusterResult{
		Nodes:             len(c.nodes),
		Coordination:      string(c.co.Mode),
		Balancer:          string(c.cl.BalancerOf(c.co)),
		Admitted:          adm,
		ReferenceAdmitted: refAdm,
		ExtraAdmitted:     adm - refAdm,
		StoreOps:          c.storeOps,
		StoreErrors:       c.storeErrors,
		FailOpen:          c.failOpen,
		FailClosed:        c.failClosed,
		PerNode:           append([]sim.NodeCount(nil), c.perNode...),
	}
	switch c.co.Mode {
	case cluster.Central:
		cr.Clock = string(c.co.Clock)
	case cluster.Racy:
		cr.Write = string(c.co.Write)
	case cluster.Sync:
		cr.SyncNs = int64(c.co.Sync)
	case cluster.Lease:
		cr.Lease = c.co.Lease
	case cluster.Global:
		cr.SyncNs = int64(c.co.Sync)
	}
	if refAdm > 0 {
		cr.ExtraRatio = sim.Ratio(float64(cr.ExtraAdmitted) / float64(refAdm))
	}
	if res.Attempts > 0 {
		cr.StoreOpsPerAttempt = sim.Ratio(float64(c.storeOps) / float64(res.Attempts))
	}
	if span > 0 {
		cr.StoreBusy = sim.Ratio(float64(c.busyNs) / float64(span))
	}
	p := c.added.percentiles()
	cr.AddedLatencyNs = sim.LatencyPercentiles{P50: p.P50, P99: p.P99, Max: p.Max}
	res.Cluster = cr
	res.Memory = c.memory()
}

// memory is what the row's state took: the store's table (central, racy,
// lease), the store's counters (sync), or every node's limiter (local,
// split: the sum of each limiter's peaks, an upper bound of what the nodes
// held at once).
func (c *clusterRun) memory() sim.Memory {
	var m algorithms.Memory
	switch {
	case c.table != nil:
		m = c.table.Memory()
	case c.co.Mode == cluster.Sync:
		m = c.counts.memory()
	case c.co.Mode == cluster.Global:
		m = c.globalMemory()
	default:
		for i := range c.nodes {
			nd := &c.nodes[i]
			addMemory(&m, nd.retired)
			if nd.lim != nil {
				addMemory(&m, nd.lim.Memory())
			}
		}
	}
	return sim.Memory{BytesPerKeyMax: m.BytesPerKeyMax, KeysPeak: m.KeysPeak, BytesPeak: m.BytesPeak}
}

// addMemory adds x to m as limiters that held their state side by side:
// the peaks add up (an upper bound of what they held at once), the largest
// key is the larger.
func addMemory(m *algorithms.Memory, x algorithms.Memory) {
	m.KeysPeak += x.KeysPeak
	m.BytesPeak += x.BytesPeak
	m.BytesPerKeyMax = max(m.BytesPerKeyMax, x.BytesPerKeyMax)
}
