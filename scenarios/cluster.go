package scenarios

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
)

// This file reads the cluster section (docs/cluster.md) and each algorithm
// entry's coordination options.

const (
	// maxNodes bounds cluster.nodes.
	maxNodes = 1024
	// maxClusterDuration bounds every duration of the cluster section
	// (skews, the store's rtt, jitter, service and timeout, a store-slow
	// fault's rtt) and an entry's sync, so that the engine's sums of them
	// stay far from overflow.
	maxClusterDuration = time.Hour
	maxClusterText     = "1h"
)

var (
	clusterFields = fieldNames[Cluster]()
	storeFields   = fieldNames[Store]()
	faultFields   = fieldNames[ClusterFault]()
	// faultApplies lists the fields each fault type takes.
	faultApplies = map[cluster.FaultType][]string{
		cluster.NodeDown:   {"type", "node", "at", "for"},
		cluster.StoreDown:  {"type", "at", "for"},
		cluster.StoreSlow:  {"type", "at", "for", "rtt"},
		cluster.StoreFlush: {"type", "at"},
	}
	onErrors = []string{string(cluster.Allow), string(cluster.Deny)}
	clocks   = []string{string(cluster.StoreClock), string(cluster.NodeClock)}
	writes   = []string{string(cluster.WriteSet), string(cluster.WriteIncr)}
	// coordFields are the fields of an algorithm entry that say how it
	// runs on the cluster; they are not the algorithm's options.
	coordFields = []string{"coordination", "clock", "write", "sync", "lease", "lease-ttl", "on-store-error", "balancer"}
	// optionModes are the modes each coordination option applies to.
	optionModes = map[string][]cluster.Mode{
		"clock":     {cluster.Central},
		"write":     {cluster.Racy},
		"sync":      {cluster.Sync, cluster.Global},
		"lease":     {cluster.Lease},
		"lease-ttl": {cluster.Lease},
		// the modes that use the store
		"on-store-error": {cluster.Central, cluster.Racy, cluster.Sync, cluster.Lease},
		// every mode: a row's own balancer
		"balancer": cluster.Modes,
	}
)

const (
	wantNodes       = "an integer from 1 to 1024"
	wantClusterDur  = "a duration from 0 to " + maxClusterText
	wantClusterPos  = "a duration > 0, at most " + maxClusterText
	wantSkew        = "a skew from -" + maxClusterText + " to " + maxClusterText
	wantSkewField   = "a duration like 3ms (spread over the nodes) or a list of one skew per node"
	wantFaultsField = "a list of faults like {type: node-down, node: 0, at: 10s, for: 5s}"
	wantWeights     = "a list of one weight per node, like [3, 1, 1]"
	wantWeight      = "an integer weight from 1 to 1000000"
	maxWeight       = 1000000
)

// names writes a list of string-typed values as strings.
func names[T ~string](list []T) []string {
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = string(x)
	}
	return out
}

// clusterInfo is the cluster section as the rest of the file needs it.
type clusterInfo struct {
	// set says the file has a cluster section (even an invalid one: its
	// entries' coordination is then not reported as needing one).
	set bool
	cfg *cluster.Config // nil without a section or when it is not a mapping
	// nodes is N, or 0 when nodes is missing or invalid.
	nodes int
	// faults are the valid faults, with where they were written.
	faults []faultRef
	// weightsWritten says the section writes weights (valid or not: an
	// invalid list is reported once, where it is written).
	weightsWritten bool
}

// faultRef is one valid fault and where it was written.
type faultRef struct {
	v  val // the fault's mapping
	at val
	f  cluster.Fault
}

// cluster reads the cluster section: nodes (required), balancer, skew,
// store, on-store-error and faults, with their defaults filled in.
func (d *decoder) cluster(v val, c *Cluster) clusterInfo {
	ci := clusterInfo{set: v.set}
	if !v.set {
		return ci
	}
	m, ok := d.mapping(v, "a mapping with nodes (and balancer, skew, store, on-store-error, faults)", c)
	if !ok {
		return ci
	}
	d.allow(m, clusterFields, unknownField(clusterFields))
	cfg := &cluster.Config{Balancer: cluster.RoundRobin, OnStoreError: cluster.Allow}
	ci.cfg = cfg
	if nv := m.get("nodes", c.Nodes.Value); nv.set {
		if n, ok := d.integer(nv, 1, maxNodes, wantNodes); ok {
			cfg.Nodes, ci.nodes = int(n), int(n)
		}
	} else {
		d.missing(nv, wantNodes+": the number of gateway nodes")
	}
	bv := m.get("balancer", c.Balancer.Value)
	if bv.set {
		if s, ok := d.choice(bv, "balancer", names(cluster.Balancers)); ok {
			cfg.Balancer = cluster.Balancer(s)
		}
	}
	wv := m.get("weights", listOf(c.Weights))
	ci.weightsWritten = wv.set
	cfg.Weights = d.weights(wv, c.Weights, ci.nodes)
	if cfg.Balancer.Weighs() && !wv.set {
		d.errAt(bv.pos, bv.path, "%s: needs the cluster's weights (add weights: [w0, w1, ...], one per node)", quote(string(cfg.Balancer)))
	}
	cfg.Skew = d.skew(m.get("skew", c.Skew.written()), c.Skew, ci.nodes)
	cfg.Store = d.store(m.get("store", sectionOf(c.Store)), c.Store)
	if ev := m.get("on-store-error", c.OnStoreError.Value); ev.set {
		if s, ok := d.choice(ev, "on-store-error", onErrors); ok {
			cfg.OnStoreError = cluster.OnError(s)
		}
	}
	ci.faults = d.faults(m.get("faults", listOf(c.Faults)), c.Faults, ci.nodes)
	for _, f := range ci.faults {
		cfg.Faults = append(cfg.Faults, f.f)
	}
	return ci
}

// weights reads cluster.weights for n nodes (0 when nodes is invalid): a
// list of one integer weight from 1 to maxWeight per node, which the
// weighted balancers read; nil when not written or invalid.
func (d *decoder) weights(v val, ws []Int, n int) []int64 {
	if !v.set {
		return nil
	}
	items, ok := d.list(v, wantWeights, len(ws), func(i int) Value { return ws[i].Value })
	if !ok {
		return nil
	}
	out := make([]int64, 0, len(items))
	good := true
	for _, it := range items {
		w, ok := d.integer(it, 1, maxWeight, wantWeight)
		out = append(out, w)
		good = good && ok
	}
	if n > 0 && len(items) != n {
		d.errAt(v.pos, v.path, "a list of %s for %s (want one weight per node)", plural(len(items), "weight"), plural(n, "node"))
		good = false
	}
	if !good || n == 0 {
		return nil
	}
	return out
}

// durationIn reads a duration in [lo, hi] (negative only when lo < 0);
// want describes the range.
func (d *decoder) durationIn(v val, lo, hi time.Duration, want string) (time.Duration, bool) {
	text, ok := d.durationText(v)
	if !ok {
		return 0, false
	}
	dur, msg := parseSignedDuration(text)
	if msg == "" && (dur < lo || dur > hi) {
		msg = "want " + want
	}
	if msg != "" {
		d.errAt(v.pos, v.path, "%s: %s", v.found(), msg)
		return 0, false
	}
	return dur, true
}

// skew reads cluster.skew for n nodes (0 when nodes is invalid): a list of
// n signed durations, or one value v spread over [-v, v]
// (cluster.SpreadSkew); default 0 for every node.
func (d *decoder) skew(v val, sk *Skew, n int) []time.Duration {
	if !v.set {
		return make([]time.Duration, n)
	}
	if !v.ok() {
		return nil
	}
	switch {
	case v.n.Kind == List:
		items, _ := d.list(v, wantSkewField, len(sk.Each), func(i int) Value { return sk.Each[i].Value })
		out := make([]time.Duration, 0, len(items))
		for _, it := range items {
			s, _ := d.durationIn(it, -maxClusterDuration, maxClusterDuration, wantSkew)
			out = append(out, s)
		}
		if n > 0 && len(items) != n {
			d.errAt(v.pos, v.path, "a list of %s for %s (want one skew per node, or one value v to spread over [-v, v])",
				plural(len(items), "skew"), plural(n, "node"))
		}
		return out
	case isScalar(v.n):
		s, ok := d.durationIn(v, -maxClusterDuration, maxClusterDuration, wantSkew)
		if !ok || n == 0 {
			return nil
		}
		return cluster.SpreadSkew(s, n)
	}
	d.typeErr(v, wantSkewField)
	return nil
}

// plural writes n and a noun, in the plural unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// store reads cluster.store: rtt (default 1ms), jitter and service (default
// 0), each from 0 to 1h, and timeout (default 1s), > 0 and at most 1h.
func (d *decoder) store(v val, s *Store) cluster.Store {
	st := cluster.Store{RTT: cluster.DefaultRTT, Timeout: cluster.DefaultTimeout}
	if !v.set {
		return st
	}
	m, ok := d.mapping(v, "a mapping {rtt, jitter, service, timeout}", s)
	if !ok {
		return st
	}
	d.allow(m, storeFields, unknownField(storeFields))
	for _, f := range []struct {
		name string
		x    Value
		dst  *time.Duration
		lo   time.Duration
		want string
	}{
		{"rtt", s.RTT.Value, &st.RTT, 0, wantClusterDur},
		{"jitter", s.Jitter.Value, &st.Jitter, 0, wantClusterDur},
		{"service", s.Service.Value, &st.Service, 0, wantClusterDur},
		{"timeout", s.Timeout.Value, &st.Timeout, 1, wantClusterPos},
	} {
		if fv := m.get(f.name, f.x); fv.set {
			if dur, ok := d.durationIn(fv, f.lo, maxClusterDuration, f.want); ok {
				*f.dst = dur
			}
		}
	}
	return st
}

// faults reads cluster.faults for n nodes (0 when nodes is invalid) and
// checks them together: no two faults of one target overlap, and some node
// is up at every instant.
func (d *decoder) faults(v val, fs []ClusterFault, n int) []faultRef {
	if !v.set {
		return nil
	}
	items, ok := d.list(v, wantFaultsField, len(fs), func(int) Value { return Value{Kind: Mapping} })
	if !ok {
		return nil
	}
	var out []faultRef
	for i, it := range items {
		if f, ok := d.fault(it, &fs[i], n); ok {
			out = append(out, f)
		}
	}
	d.overlaps(out)
	d.allDown(out, n)
	return out
}

// fault reads one fault.
func (d *decoder) fault(it val, cf *ClusterFault, n int) (faultRef, bool) {
	m, s, good, ok := d.faultHead(it, cf, cf.Type.Value, names(cluster.FaultTypes), faultFields,
		func(typ string) []string { return faultApplies[cluster.FaultType(typ)] },
		func(typ, k string) string {
			if cluster.FaultType(typ) == cluster.StoreFlush && k == "for" {
				return "does not apply to a store-flush, which is an instant (its fields: at)"
			}
			return ""
		})
	if !ok {
		return faultRef{}, false
	}
	typ := cluster.FaultType(s)
	at, start, atOK := d.faultStart(m.get("at", cf.At.Value))
	f := faultRef{v: it, at: at, f: cluster.Fault{Type: typ, At: start}}
	good = good && atOK
	if slices.Contains(faultApplies[typ], "for") {
		var forOK bool
		f.f.For, forOK = d.faultLength(m.get("for", cf.For.Value), at, start, atOK)
		good = good && forOK
	}
	if typ == cluster.NodeDown {
		good = d.faultNode(m.get("node", cf.Node.Value), &f.f, n) && good
	}
	if typ == cluster.StoreSlow {
		rv := m.get("rtt", cf.RTT.Value)
		rttOK := false
		if rv.set {
			f.f.RTT, rttOK = d.durationIn(rv, 0, maxClusterDuration, wantClusterDur)
		} else {
			d.missing(rv, wantClusterDur+": the store's round trip during the fault")
		}
		good = good && rttOK
	}
	return f, good
}

// faultNode reads a node-down fault's node, in [0, n) (n = 0: nodes is
// invalid, any node up to the largest cluster's).
func (d *decoder) faultNode(nv val, f *cluster.Fault, n int) bool {
	want := fmt.Sprintf("a node from 0 to %d: the cluster has %d nodes", n-1, n)
	switch n {
	case 0:
		want = fmt.Sprintf("a node from 0 to %d", maxNodes-1)
	case 1:
		want = "node 0: the cluster has 1 node"
	}
	if !nv.set {
		d.missing(nv, want)
		return false
	}
	x, ok := d.integer(nv, math.MinInt64, math.MaxInt64, want)
	if !ok {
		return false
	}
	if x < 0 || x >= int64(cmp.Or(n, maxNodes)) {
		d.errAt(nv.pos, nv.path, "%d: a fault on a node that does not exist (want %s)", x, want)
		return false
	}
	f.Node = int(x)
	return true
}

// describeFault writes a fault for a message about overlaps.
func describeFault(f cluster.Fault) string {
	what := string(f.Type)
	if f.Type == cluster.NodeDown {
		what = fmt.Sprintf("node-down of node %d", f.Node)
	}
	return fmt.Sprintf("%s over [%v, %v)", what, f.At, f.End())
}

// overlaps reports faults of one target whose windows overlap: two
// node-down faults of one node, or any two of store-down and store-slow,
// which share the store. A store-flush is an instant and may fall anywhere.
func (d *decoder) overlaps(fs []faultRef) {
	groups := map[int][]faultRef{} // by node; -1 for the store
	var targets []int              // in order of first appearance
	for _, f := range fs {
		target := -1
		switch f.f.Type {
		case cluster.NodeDown:
			target = f.f.Node
		case cluster.StoreFlush:
			continue
		}
		if _, seen := groups[target]; !seen {
			targets = append(targets, target)
		}
		groups[target] = append(groups[target], f)
	}
	for _, target := range targets {
		want := "the store's faults apart: store-down and store-slow share the store"
		if target >= 0 {
			want = "the faults of one node apart: merge them into one"
		}
		overlapping(groups[target], func(f faultRef) (time.Duration, time.Duration) { return f.f.At, f.f.End() },
			func(f, last faultRef) {
				d.errAt(f.v.pos, f.v.path, "%s overlaps the %s over [%v, %v) of %s at %d:%d (want %s)",
					describeFault(f.f), last.f.Type, last.f.At, last.f.End(), last.v.path, last.v.pos.line, last.v.pos.col, want)
			})
	}
}

// allDown reports each interval in which node-down faults leave no node of
// n up (cluster.AllDown): the balancer needs a live node.
func (d *decoder) allDown(fs []faultRef, n int) {
	faults := make([]cluster.Fault, len(fs))
	for i, f := range fs {
		faults[i] = f.f
	}
	for _, o := range cluster.AllDown(n, faults) {
		what := fmt.Sprintf("all %d nodes are down", n)
		if n == 1 {
			what = "the cluster's only node is down"
		}
		cause := fs[o.Cause]
		d.errAt(cause.v.pos, cause.v.path, "%s over [%v, %v) (want some node up at every instant: the balancer needs a live node)",
			what, o.From, o.To)
	}
}

// faultsInRun reports the faults that start at or after the scenario's end
// dur: they would never happen.
func (d *decoder) faultsInRun(ci clusterInfo, dur time.Duration) {
	for _, f := range ci.faults {
		if f.f.At >= dur {
			d.errAt(f.at.pos, f.at.path, "%s: at or after the scenario's end %v, so the fault never happens", f.at.found(), dur)
		}
	}
}

// coordination reads how an algorithm entry runs on the cluster: its
// coordination (default central) and that mode's options, with their
// defaults filled in (see docs/scenario-file.md). m is nil for an entry written
// as a bare name; p is the entry's policy, overrides applied. Without a
// cluster section every coordination field is an error and the Mode stays
// empty.
func (d *decoder) coordination(entry val, m *mapping, e *AlgEntry, name string, p algorithms.Policy, ci clusterInfo) (cluster.Coordination, bool) {
	written := func(k string) (val, bool) {
		if m == nil {
			return val{}, false
		}
		v := m.get(k, e.coordValue(k))
		return v, v.set
	}
	if !ci.set {
		good := true
		for _, k := range coordFields {
			if _, ok := written(k); ok {
				d.errAt(m.keyPos[k], join(m.path, k), "needs a cluster section (add cluster: {nodes: N} at the top level, or remove %s)", k)
				good = false
			}
		}
		return cluster.Coordination{}, good
	}
	modes := orList(names(cluster.ModesOf(name)))
	c := cluster.Coordination{Mode: cluster.Central}
	if mv, ok := written("coordination"); ok {
		s, ok := d.choice(mv, "coordination", names(cluster.Modes))
		if !ok {
			return c, false
		}
		if mode := cluster.Mode(s); !cluster.Supports(name, mode) {
			d.errAt(mv.pos, mv.path, "%s: not a mode of %s%s (want %s)", quote(s), name, whyNot(name, mode), modes)
			return c, false
		}
		c.Mode = cluster.Mode(s)
	} else if !cluster.Supports(name, cluster.Central) {
		d.errAt(entry.pos, join(entry.path, "coordination"), "missing: the default on a cluster is central, which %s does not take (want %s)", name, modes)
		return c, false
	}
	good := true
	for _, k := range coordFields[1:] {
		v, ok := written(k)
		if !ok {
			continue
		}
		if want := optionModes[k]; !slices.Contains(want, c.Mode) {
			if k != "on-store-error" {
				d.errAt(m.keyPos[k], v.path, "applies only with coordination: %s", orList(names(want)))
			} else {
				d.errAt(m.keyPos[k], v.path, "applies only with a mode that uses the store (coordination: %s), not %s", orList(names(want)), c.Mode)
			}
			good = false
			continue
		}
		switch k {
		case "clock":
			s, ok := d.choice(v, "clock", clocks)
			c.Clock, good = cluster.Clock(s), good && ok
		case "write":
			s, ok := d.choice(v, "write", writes)
			if ok && cluster.Write(s) == cluster.WriteIncr && !cluster.IncrWrites(name) {
				d.errAt(v.pos, v.path, `"incr": only %s write back by INCRBY (want set for %s)`, takers(cluster.IncrWrites), name)
				ok = false
			}
			c.Write, good = cluster.Write(s), good && ok
		case "sync":
			s, ok := d.durationIn(v, 1, maxClusterDuration, wantClusterPos)
			c.Sync, good = s, good && ok
		case "lease":
			hi, want := p.Burst, fmt.Sprintf("an integer from 1 to %d, the row's burst", p.Burst)
			if hi < 1 { // the policy is invalid, and reported
				hi, want = math.MaxInt64, "an integer >= 1"
			}
			n, ok := d.integer(v, 1, hi, want)
			c.Lease, good = n, good && ok
		case "lease-ttl":
			ttl, ok := d.duration(v, true)
			c.LeaseTTL, good = ttl, good && ok
		case "on-store-error":
			s, ok := d.choice(v, "on-store-error", onErrors)
			c.OnStoreError, good = cluster.OnError(s), good && ok
		case "balancer":
			s, ok := d.choice(v, "balancer", names(cluster.Balancers))
			if ok && cluster.Balancer(s).Weighs() && ci.cfg != nil && ci.cfg.Weights == nil && !ci.weightsWritten {
				d.errAt(v.pos, v.path, "%s: needs the cluster's weights (add weights: [w0, w1, ...], one per node, to the cluster section)", quote(s))
				ok = false
			}
			c.Balancer, good = cluster.Balancer(s), good && ok
		}
	}
	if _, ok := written("sync"); c.Mode == cluster.Sync && !ok {
		sv := val{path: join(entry.path, "sync"), pos: entry.pos}
		d.missing(sv, wantClusterPos+": how often each node syncs its counts with the store")
		good = false
	}
	return c.WithDefaults(p.Burst, p.Per, ci.nodes), good
}

// whyNot says why the algorithm name does not take mode m, after its name.
func whyNot(name string, m cluster.Mode) string {
	if info, ok := algorithms.Lookup(name); ok && info.Adaptive {
		return ", an adaptive limit: it learns from the backend's answers to the requests it admitted, so each node keeps its own"
	}
	if m == cluster.Central || m == cluster.Racy {
		return ", which cannot run in the store"
	}
	who := takers(func(name string) bool { return cluster.Supports(name, m) })
	if who == "" {
		return ""
	}
	return fmt.Sprintf(": %s is for %s only", m, who)
}

// takers writes the algorithms for which ok holds, as "a, b and c": the
// named rows, then the opt-in ones (a vendor's that a scenario names).
func takers(ok func(name string) bool) string {
	var list []string
	names := algorithms.Names()
	for _, a := range algorithms.OptIn() {
		names = append(names, a.Name)
	}
	for _, name := range names {
		if ok(name) {
			list = append(list, name)
		}
	}
	return joinList(list, "and")
}

// defaultCoordination is the coordination of an entry of the default
// algorithm list on a cluster: central, or a reason to leave the algorithm
// out.
func defaultCoordination(name string) (cluster.Coordination, string) {
	if !cluster.Supports(name, cluster.Central) {
		return cluster.Coordination{}, "cannot run in the store (coordination central, the default on a cluster); list it with coordination: " +
			orList(names(cluster.ModesOf(name)))
	}
	return cluster.Coordination{}.WithDefaults(0, 0, 0), ""
}

// coordValue is the coordination field k (one of coordFields) of e.
func (e *AlgEntry) coordValue(k string) Value {
	switch k {
	case "coordination":
		return e.Coordination.Value
	case "clock":
		return e.Clock.Value
	case "write":
		return e.Write.Value
	case "sync":
		return e.Sync.Value
	case "lease":
		return e.Lease.Value
	case "lease-ttl":
		return e.LeaseTTL.Value
	case "on-store-error":
		return e.OnStoreError.Value
	case "balancer":
		return e.Balancer.Value
	}
	return Value{}
}
