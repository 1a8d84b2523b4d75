package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
)

// ch is the head of the cluster snippets: 4 lines, so a cluster section
// after it starts on line 5.
const ch = "name: t\nlimit: {rate: 10, burst: 20}\nduration: 60s\ntraffic: [{type: steady, rate: 20/s}]\n"

// invalidClusters are cluster sections and coordination options with the
// exact errors Parse reports for them: one or more for each rule. FuzzParse
// is seeded with them too.
var invalidClusters = []struct {
	name, src, want string
}{
	// nodes
	{"nodes 0", ch + "cluster: {nodes: 0}\n",
		`s.yaml:5:18: cluster.nodes: 0: want an integer from 1 to 1024`},
	{"nodes negative", ch + "cluster: {nodes: -2}\n",
		`s.yaml:5:18: cluster.nodes: -2: want an integer from 1 to 1024`},
	{"nodes not an integer", ch + "cluster: {nodes: 2.5}\n",
		`s.yaml:5:18: cluster.nodes: found number 2.5, want an integer from 1 to 1024`},
	{"nodes a string", ch + "cluster: {nodes: four}\n",
		`s.yaml:5:18: cluster.nodes: found string "four", want an integer from 1 to 1024`},
	{"nodes above the bound", ch + "cluster: {nodes: 1025}\n",
		`s.yaml:5:18: cluster.nodes: 1025: want an integer from 1 to 1024`},
	{"nodes missing", ch + "cluster: {balancer: random}\n",
		`s.yaml:5:10: cluster.nodes: missing (want an integer from 1 to 1024: the number of gateway nodes)`},
	{"cluster not a mapping", ch + "cluster: 4\n",
		`s.yaml:5:10: cluster: found integer 4, want a mapping with nodes (and balancer, skew, store, on-store-error, faults)`},
	{"cluster null", ch + "cluster:\n",
		`s.yaml:5:10: cluster: found null, want a mapping with nodes (and balancer, skew, store, on-store-error, faults)`},
	// unknown fields and choices
	{"unknown cluster field", ch + "cluster:\n  nodes: 2\n  node: 3\n",
		`s.yaml:7:3: cluster.node: unknown field (want nodes, balancer, weights, skew, store, on-store-error or faults); did you mean "nodes"?`},
	{"unknown store field", ch + "cluster:\n  nodes: 2\n  store: {rtt: 1ms, latency: 2ms}\n",
		`s.yaml:7:21: cluster.store.latency: unknown field (want rtt, jitter, service or timeout)`},
	{"store not a mapping", ch + "cluster:\n  nodes: 2\n  store: 1ms\n",
		`s.yaml:7:10: cluster.store: found string "1ms", want a mapping {rtt, jitter, service, timeout}`},
	{"unknown fault field", ch + "cluster:\n  nodes: 2\n  faults:\n    - {type: store-down, at: 1s, for: 1s, until: 3s}\n",
		`s.yaml:8:43: cluster.faults[0].until: unknown field (want type, node, at, for or rtt)`},
	{"unknown balancer", ch + "cluster: {nodes: 2, balancer: least-conn}\n",
		`s.yaml:5:31: cluster.balancer: "least-conn": unknown balancer (want round-robin, random, key-hash, weighted or weighted-random)`},
	{"weighted without weights", ch + "cluster: {nodes: 2, balancer: weighted}\n",
		`s.yaml:5:31: cluster.balancer: "weighted": needs the cluster's weights (add weights: [w0, w1, ...], one per node)`},
	{"weights not a list", ch + "cluster: {nodes: 2, weights: 3}\n",
		`s.yaml:5:30: cluster.weights: found integer 3, want a list of one weight per node, like [3, 1, 1]`},
	{"a weight of 0", ch + "cluster: {nodes: 2, weights: [1, 0]}\n",
		`s.yaml:5:34: cluster.weights[1]: 0: want an integer weight from 1 to 1000000`},
	{"weights for other nodes", ch + "cluster: {nodes: 3, weights: [2, 1]}\n",
		`s.yaml:5:30: cluster.weights: a list of 2 weights for 3 nodes (want one weight per node)`},
	{"a row's weighted balancer without weights", ch + "cluster: {nodes: 2}\nalgorithms: [{name: gcra, coordination: local, balancer: weighted-random}]\n",
		`s.yaml:6:58: algorithms[0].balancer: "weighted-random": needs the cluster's weights (add weights: [w0, w1, ...], one per node, to the cluster section)`},
	{"a row's unknown balancer", ch + "cluster: {nodes: 2}\nalgorithms: [{name: gcra, balancer: least-conn}]\n",
		`s.yaml:6:37: algorithms[0].balancer: "least-conn": unknown balancer (want round-robin, random, key-hash, weighted or weighted-random)`},
	{"unknown on-store-error", ch + "cluster: {nodes: 2, on-store-error: open}\n",
		`s.yaml:5:37: cluster.on-store-error: "open": unknown on-store-error (want allow or deny)`},
	{"unknown fault type", ch + "cluster:\n  nodes: 2\n  faults: [{type: node-crash, node: 1, at: 1s}]\n",
		`s.yaml:7:19: cluster.faults[0].type: "node-crash": unknown fault type (want node-down, store-down, store-slow or store-flush)`},
	{"fault without type", ch + "cluster:\n  nodes: 2\n  faults: [{node: 1, at: 1s, for: 1s}]\n",
		`s.yaml:7:12: cluster.faults[0].type: missing (want node-down, store-down, store-slow or store-flush)`},
	{"fault not a mapping", ch + "cluster:\n  nodes: 2\n  faults: [node-down]\n",
		`s.yaml:7:12: cluster.faults[0]: found string "node-down", want a mapping with a type (node-down, store-down, store-slow or store-flush)`},
	{"faults not a list", ch + "cluster:\n  nodes: 2\n  faults: {type: store-flush, at: 1s}\n",
		`s.yaml:7:11: cluster.faults: found a mapping, want a list of faults like {type: node-down, node: 0, at: 10s, for: 5s}`},
	// skew
	{"skew list too short", ch + "cluster:\n  nodes: 4\n  skew: [0, 3ms, -2ms]\n",
		`s.yaml:7:9: cluster.skew: a list of 3 skews for 4 nodes (want one skew per node, or one value v to spread over [-v, v])`},
	{"skew list too long", ch + "cluster:\n  nodes: 1\n  skew: [0, 3ms]\n",
		`s.yaml:7:9: cluster.skew: a list of 2 skews for 1 node (want one skew per node, or one value v to spread over [-v, v])`},
	{"skew too large", ch + "cluster:\n  nodes: 2\n  skew: [0, -61m]\n",
		`s.yaml:7:13: cluster.skew[1]: "-61m": want a skew from -1h to 1h`},
	{"skew value too large", ch + "cluster: {nodes: 3, skew: 2h}\n",
		`s.yaml:5:27: cluster.skew: "2h": want a skew from -1h to 1h`},
	{"skew a mapping", ch + "cluster: {nodes: 3, skew: {node: 1}}\n",
		`s.yaml:5:27: cluster.skew: found a mapping, want a duration like 3ms (spread over the nodes) or a list of one skew per node`},
	{"skew without unit", ch + "cluster: {nodes: 3, skew: [0, 5, 0]}\n",
		`s.yaml:5:31: cluster.skew[1]: 5: no unit (add one: ns, us, ms, s, m or h, e.g. 5s)`},
	// store
	{"rtt negative", ch + "cluster:\n  nodes: 2\n  store: {rtt: -1ms}\n",
		`s.yaml:7:16: cluster.store.rtt: "-1ms": want a duration from 0 to 1h`},
	{"jitter negative", ch + "cluster:\n  nodes: 2\n  store: {jitter: -200us}\n",
		`s.yaml:7:19: cluster.store.jitter: "-200us": want a duration from 0 to 1h`},
	{"service negative", ch + "cluster:\n  nodes: 2\n  store: {service: -20us}\n",
		`s.yaml:7:20: cluster.store.service: "-20us": want a duration from 0 to 1h`},
	{"timeout 0", ch + "cluster:\n  nodes: 2\n  store: {timeout: 0}\n",
		`s.yaml:7:20: cluster.store.timeout: 0: want a duration > 0, at most 1h`},
	{"timeout negative", ch + "cluster:\n  nodes: 2\n  store: {timeout: -1s}\n",
		`s.yaml:7:20: cluster.store.timeout: "-1s": want a duration > 0, at most 1h`},
	{"rtt above the bound", ch + "cluster:\n  nodes: 2\n  store: {rtt: 1h0m0.000000001s}\n",
		`s.yaml:7:16: cluster.store.rtt: "1h0m0.000000001s": want a duration from 0 to 1h`},
	{"timeout above the bound", ch + "cluster:\n  nodes: 2\n  store: {timeout: 2h}\n",
		`s.yaml:7:20: cluster.store.timeout: "2h": want a duration > 0, at most 1h`},
	// faults
	{"node that does not exist", ch + "cluster:\n  nodes: 4\n  faults: [{type: node-down, node: 4, at: 10s, for: 5s}]\n",
		`s.yaml:7:36: cluster.faults[0].node: 4: a fault on a node that does not exist (want a node from 0 to 3: the cluster has 4 nodes)`},
	{"negative node", ch + "cluster:\n  nodes: 4\n  faults: [{type: node-down, node: -1, at: 10s, for: 5s}]\n",
		`s.yaml:7:36: cluster.faults[0].node: -1: a fault on a node that does not exist (want a node from 0 to 3: the cluster has 4 nodes)`},
	{"node of a 1-node cluster", ch + "cluster:\n  nodes: 1\n  faults: [{type: node-down, node: 1, at: 10s, for: 5s}]\n",
		`s.yaml:7:36: cluster.faults[0].node: 1: a fault on a node that does not exist (want node 0: the cluster has 1 node)`},
	{"node-down without node", ch + "cluster:\n  nodes: 4\n  faults: [{type: node-down, at: 10s, for: 5s}]\n",
		`s.yaml:7:12: cluster.faults[0].node: missing (want a node from 0 to 3: the cluster has 4 nodes)`},
	{"node on store-down", ch + "cluster:\n  nodes: 4\n  faults: [{type: store-down, node: 1, at: 10s, for: 5s}]\n",
		`s.yaml:7:31: cluster.faults[0].node: does not apply to a store-down fault (its fields: at, for)`},
	{"rtt on node-down", ch + "cluster:\n  nodes: 4\n  faults: [{type: node-down, node: 1, at: 10s, for: 5s, rtt: 5ms}]\n",
		`s.yaml:7:57: cluster.faults[0].rtt: does not apply to a node-down fault (its fields: node, at, for)`},
	{"store-slow without rtt", ch + "cluster:\n  nodes: 4\n  faults: [{type: store-slow, at: 10s, for: 5s}]\n",
		`s.yaml:7:12: cluster.faults[0].rtt: missing (want a duration from 0 to 1h: the store's round trip during the fault)`},
	{"store-slow rtt above the bound", ch + "cluster:\n  nodes: 4\n  faults: [{type: store-slow, at: 10s, for: 5s, rtt: 3h}]\n",
		`s.yaml:7:54: cluster.faults[0].rtt: "3h": want a duration from 0 to 1h`},
	{"store-flush with for", ch + "cluster:\n  nodes: 4\n  faults: [{type: store-flush, at: 10s, for: 5s}]\n",
		`s.yaml:7:41: cluster.faults[0].for: does not apply to a store-flush, which is an instant (its fields: at)`},
	{"fault without at", ch + "cluster:\n  nodes: 4\n  faults: [{type: store-flush}]\n",
		`s.yaml:7:12: cluster.faults[0].at: missing (want a duration >= 0: when the fault starts)`},
	{"fault without for", ch + "cluster:\n  nodes: 4\n  faults: [{type: store-down, at: 1s}]\n",
		`s.yaml:7:12: cluster.faults[0].for: missing (want a duration > 0: how long the fault lasts)`},
	{"for 0", ch + "cluster:\n  nodes: 4\n  faults: [{type: store-down, at: 1s, for: 0s}]\n",
		`s.yaml:7:44: cluster.faults[0].for: "0s": want a duration > 0`},
	{"at negative", ch + "cluster:\n  nodes: 4\n  faults: [{type: store-flush, at: -1s}]\n",
		`s.yaml:7:36: cluster.faults[0].at: "-1s": want a duration >= 0`},
	{"at + for beyond the largest time", ch + "cluster:\n  nodes: 4\n  faults: [{type: store-down, at: 2562047h, for: 1h}]\n",
		`s.yaml:7:35: cluster.faults[0].at: at + for is beyond the largest time 2562047h47m16.854775807s`},
	{"fault after the end", ch + "cluster:\n  nodes: 4\n  faults: [{type: store-flush, at: 60s}]\n",
		`s.yaml:7:36: cluster.faults[0].at: "60s": at or after the scenario's end 1m0s, so the fault never happens`},
	{"node-down faults of one node overlap", ch + "cluster:\n  nodes: 4\n  faults:\n    - {type: node-down, node: 2, at: 10s, for: 5s}\n    - {type: node-down, node: 1, at: 10s, for: 5s}\n    - {type: node-down, node: 2, at: 14s, for: 5s}\n",
		`s.yaml:10:7: cluster.faults[2]: node-down of node 2 over [14s, 19s) overlaps the node-down over [10s, 15s) of cluster.faults[0] at 8:7 (want the faults of one node apart: merge them into one)`},
	{"store-down and store-slow overlap", ch + "cluster:\n  nodes: 4\n  faults:\n    - {type: store-slow, at: 21s, for: 5s, rtt: 40ms}\n    - {type: store-flush, at: 21s}\n    - {type: store-down, at: 20s, for: 2s}\n",
		`s.yaml:8:7: cluster.faults[0]: store-slow over [21s, 26s) overlaps the store-down over [20s, 22s) of cluster.faults[2] at 10:7 (want the store's faults apart: store-down and store-slow share the store)`},
	{"two store-slow overlap", ch + "cluster:\n  nodes: 4\n  faults:\n    - {type: store-slow, at: 20s, for: 30s, rtt: 40ms}\n    - {type: store-slow, at: 30s, for: 1s, rtt: 10ms}\n",
		`s.yaml:9:7: cluster.faults[1]: store-slow over [30s, 31s) overlaps the store-slow over [20s, 50s) of cluster.faults[0] at 8:7 (want the store's faults apart: store-down and store-slow share the store)`},
	{"two store-down at one instant", ch + "cluster:\n  nodes: 4\n  faults:\n    - {type: store-down, at: 20s, for: 1s}\n    - {type: store-down, at: 20s, for: 1s}\n",
		`s.yaml:9:7: cluster.faults[1]: store-down over [20s, 21s) overlaps the store-down over [20s, 21s) of cluster.faults[0] at 8:7 (want the store's faults apart: store-down and store-slow share the store)`},
	{"every node down", ch + "cluster:\n  nodes: 3\n  faults:\n    - {type: node-down, node: 0, at: 10s, for: 10s}\n    - {type: node-down, node: 1, at: 12s, for: 10s}\n    - {type: node-down, node: 2, at: 15s, for: 1s}\n    - {type: node-down, node: 2, at: 18s, for: 10s}\n",
		strings.Join([]string{
			`s.yaml:10:7: cluster.faults[2]: all 3 nodes are down over [15s, 16s) (want some node up at every instant: the balancer needs a live node)`,
			`s.yaml:11:7: cluster.faults[3]: all 3 nodes are down over [18s, 20s) (want some node up at every instant: the balancer needs a live node)`,
		}, "\n")},
	{"the only node down", ch + "cluster:\n  nodes: 1\n  faults: [{type: node-down, node: 0, at: 10s, for: 5s}]\n",
		`s.yaml:7:12: cluster.faults[0]: the cluster's only node is down over [10s, 15s) (want some node up at every instant: the balancer needs a live node)`},
	// algorithm entries
	{"coordination without a cluster", ch + "algorithms:\n  - {name: gcra, coordination: racy}\n",
		`s.yaml:6:18: algorithms[0].coordination: needs a cluster section (add cluster: {nodes: N} at the top level, or remove coordination)`},
	{"clock without a cluster", ch + "algorithms:\n  - name: gcra\n    clock: node\n",
		`s.yaml:7:5: algorithms[0].clock: needs a cluster section (add cluster: {nodes: N} at the top level, or remove clock)`},
	{"unknown coordination", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: gcra, coordination: eventual}\n",
		`s.yaml:7:32: algorithms[0].coordination: "eventual": unknown coordination (want local, split, central, racy, sync, lease or global)`},
	{"sync on gcra", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: gcra, coordination: sync, sync: 100ms}\n",
		`s.yaml:7:32: algorithms[0].coordination: "sync": not a mode of gcra: sync is for fixed-window, sliding-window and cloudflare-rate-limit only (want local, split, central, racy, lease or global)`},
	{"lease on fixed-window", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: fixed-window, coordination: lease}\n",
		`s.yaml:7:40: algorithms[0].coordination: "lease": not a mode of fixed-window: lease is for token-bucket and gcra only (want local, split, central, racy, sync or global)`},
	{"sync on token-bucket", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: token-bucket, coordination: sync, sync: 1s}\n",
		`s.yaml:7:40: algorithms[0].coordination: "sync": not a mode of token-bucket: sync is for fixed-window, sliding-window and cloudflare-rate-limit only (want local, split, central, racy, lease or global)`},
	{"lease on sliding-log", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: sliding-log, coordination: lease}\n",
		`s.yaml:7:39: algorithms[0].coordination: "lease": not a mode of sliding-log: lease is for token-bucket and gcra only (want local, split, central, racy or global)`},
	{"x-time-rate central", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: x-time-rate, coordination: central}\n",
		`s.yaml:7:39: algorithms[0].coordination: "central": not a mode of x-time-rate, which cannot run in the store (want local or split)`},
	{"x-time-rate racy", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: x-time-rate, coordination: racy}\n",
		`s.yaml:7:39: algorithms[0].coordination: "racy": not a mode of x-time-rate, which cannot run in the store (want local or split)`},
	{"x-time-rate by default central", ch + "cluster: {nodes: 2}\nalgorithms:\n  - gcra\n  - {name: x-time-rate, max-delay: 1s}\n",
		`s.yaml:8:5: algorithms[1].coordination: missing: the default on a cluster is central, which x-time-rate does not take (want local or split)`},
	{"x-time-rate bare name on a cluster", ch + "cluster: {nodes: 2}\nalgorithms: [gcra, x-time-rate]\n",
		`s.yaml:6:20: algorithms[1].coordination: missing: the default on a cluster is central, which x-time-rate does not take (want local or split)`},
	{"aimd central", ch + "cluster: {nodes: 2}\nbackend: {workers: 2, service: 10ms}\nalgorithms:\n  - {name: aimd, coordination: central}\n",
		`s.yaml:8:32: algorithms[0].coordination: "central": not a mode of aimd, an adaptive limit: it learns from the backend's answers to the requests it admitted, so each node keeps its own (want local)`},
	{"vegas split", ch + "cluster: {nodes: 2}\nbackend: {workers: 2, service: 10ms}\nalgorithms:\n  - {name: vegas, coordination: split}\n",
		`s.yaml:8:33: algorithms[0].coordination: "split": not a mode of vegas, an adaptive limit: it learns from the backend's answers to the requests it admitted, so each node keeps its own (want local)`},
	{"gradient2 by default central", ch + "cluster: {nodes: 2}\nbackend: {workers: 2, service: 10ms}\nalgorithms:\n  - gradient2\n",
		`s.yaml:8:5: algorithms[0].coordination: missing: the default on a cluster is central, which gradient2 does not take (want local)`},
	{"clock with racy", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: gcra, coordination: racy, clock: node}\n",
		`s.yaml:7:38: algorithms[0].clock: applies only with coordination: central`},
	{"unknown clock", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: gcra, clock: wall}\n",
		`s.yaml:7:25: algorithms[0].clock: "wall": unknown clock (want store or node)`},
	{"write with central", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: fixed-window, write: incr}\n",
		`s.yaml:7:26: algorithms[0].write: applies only with coordination: racy`},
	{"unknown write", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: fixed-window, coordination: racy, write: add}\n",
		`s.yaml:7:53: algorithms[0].write: "add": unknown write (want set or incr)`},
	{"write incr on gcra", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: gcra, coordination: racy, write: incr}\n",
		`s.yaml:7:45: algorithms[0].write: "incr": only fixed-window and sliding-window write back by INCRBY (want set for gcra)`},
	{"sync with local", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: fixed-window, coordination: local, sync: 1s}\n",
		`s.yaml:7:47: algorithms[0].sync: applies only with coordination: sync or global`},
	{"sync missing", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: fixed-window, coordination: sync}\n",
		`s.yaml:7:5: algorithms[0].sync: missing (want a duration > 0, at most 1h: how often each node syncs its counts with the store)`},
	{"sync 0", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: fixed-window, coordination: sync, sync: 0}\n",
		`s.yaml:7:52: algorithms[0].sync: 0: want a duration > 0, at most 1h`},
	{"sync above the bound", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: sliding-window, coordination: sync, sync: 90m}\n",
		`s.yaml:7:54: algorithms[0].sync: "90m": want a duration > 0, at most 1h`},
	{"lease with central", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: gcra, lease: 5}\n",
		`s.yaml:7:18: algorithms[0].lease: applies only with coordination: lease`},
	{"lease-ttl with split", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: gcra, coordination: split, lease-ttl: 1s}\n",
		`s.yaml:7:39: algorithms[0].lease-ttl: applies only with coordination: lease`},
	{"lease 0", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: gcra, coordination: lease, lease: 0}\n",
		`s.yaml:7:46: algorithms[0].lease: 0: want an integer from 1 to 20, the row's burst`},
	{"lease above the burst", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: gcra, coordination: lease, lease: 21}\n",
		`s.yaml:7:46: algorithms[0].lease: 21: want an integer from 1 to 20, the row's burst`},
	{"lease above the entry's burst", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: token-bucket, burst: 5, coordination: lease, lease: 6}\n",
		`s.yaml:7:64: algorithms[0].lease: 6: want an integer from 1 to 5, the row's burst`},
	{"lease-ttl 0", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: token-bucket, coordination: lease, lease-ttl: 0s}\n",
		`s.yaml:7:58: algorithms[0].lease-ttl: "0s": want a duration > 0`},
	{"on-store-error on a local row", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: gcra, coordination: local, on-store-error: deny}\n",
		`s.yaml:7:39: algorithms[0].on-store-error: applies only with a mode that uses the store (coordination: central, racy, sync or lease), not local`},
	{"on-store-error unknown", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: gcra, on-store-error: retry}\n",
		`s.yaml:7:34: algorithms[0].on-store-error: "retry": unknown on-store-error (want allow or deny)`},
	{"coordination misspelt", ch + "cluster: {nodes: 2}\nalgorithms:\n  - {name: gcra, cordination: racy}\n",
		`s.yaml:7:18: algorithms[0].cordination: gcra takes no option "cordination" (its options: max-delay); did you mean "coordination"?`},
}

func TestParseInvalidCluster(t *testing.T) {
	for _, tc := range invalidClusters {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse("s.yaml", []byte(tc.src))
			require.Nil(t, sc)
			require.EqualError(t, err, tc.want)
		})
	}
}

// specCluster is the cluster section of docs/cluster.md, with every fault
// type and mode.
const specCluster = `cluster:
  nodes: 4
  balancer: round-robin
  skew: [0, 3ms, -2ms, 0]
  store:
    rtt: 1ms
    jitter: 200us
    service: 20us
    timeout: 50ms
  on-store-error: allow
  faults:
    - {type: node-down, node: 2, at: 10s, for: 5s}
    - {type: store-down, at: 20s, for: 2s}
    - {type: store-slow, at: 30s, for: 5s, rtt: 40ms}
    - {type: store-flush, at: 40s}
algorithms:
  - {name: gcra, coordination: central}
  - {name: gcra, label: gcra-racy, coordination: racy}
  - {name: fixed-window, label: fw-sync, coordination: sync, sync: 100ms}
  - {name: token-bucket, label: tb-lease, coordination: lease, lease: 5, lease-ttl: 1s}
  - {name: token-bucket, label: tb-local, coordination: local}
`

var (
	defaultStore = cluster.Store{RTT: time.Millisecond, Timeout: time.Second}
	central      = cluster.Coordination{Mode: cluster.Central, Clock: cluster.StoreClock}
)

// validClusters are valid cluster sections and what Parse makes of them.
// FuzzParse is seeded with them too.
var validClusters = []struct {
	name, src string
	check     func(t *testing.T, sc *Scenario)
}{
	{"defaults", ch + "cluster: {nodes: 4}\n", func(t *testing.T, sc *Scenario) {
		require.Equal(t, &cluster.Config{Nodes: 4, Balancer: cluster.RoundRobin, Skew: make([]time.Duration, 4),
			Store: defaultStore, OnStoreError: cluster.Allow}, sc.Cluster)
		// every algorithm but x-time-rate, central on the store's clock,
		// and concurrency, which the service time of 0 leaves out
		var want []string
		for _, info := range algorithms.All() {
			if name := info.Name; name != "x-time-rate" && name != "concurrency" {
				want = append(want, name)
			}
		}
		var got []string
		for _, a := range sc.Algorithms {
			got = append(got, a.Label)
			require.Equal(t, central, a.Coord, a.Name)
			require.Empty(t, a.Set)
		}
		require.Equal(t, want, got)
		require.Len(t, sc.Skipped, 2)
		require.Equal(t, "concurrency", sc.Skipped[0].Name)
		require.Equal(t, Skipped{Name: "x-time-rate",
			Reason: "cannot run in the store (coordination central, the default on a cluster); list it with coordination: local or split"}, sc.Skipped[1])
	}},
	{"the documented example", ch + specCluster, func(t *testing.T, sc *Scenario) {
		ms := time.Millisecond
		require.Equal(t, &cluster.Config{
			Nodes:        4,
			Balancer:     cluster.RoundRobin,
			Skew:         []time.Duration{0, 3 * ms, -2 * ms, 0},
			Store:        cluster.Store{RTT: ms, Jitter: 200 * time.Microsecond, Service: 20 * time.Microsecond, Timeout: 50 * ms},
			OnStoreError: cluster.Allow,
			Faults: []cluster.Fault{
				{Type: cluster.NodeDown, Node: 2, At: 10 * time.Second, For: 5 * time.Second},
				{Type: cluster.StoreDown, At: 20 * time.Second, For: 2 * time.Second},
				{Type: cluster.StoreSlow, At: 30 * time.Second, For: 5 * time.Second, RTT: 40 * ms},
				{Type: cluster.StoreFlush, At: 40 * time.Second},
			},
		}, sc.Cluster)
		require.Nil(t, sc.Skipped)
		var coords []cluster.Coordination
		for _, a := range sc.Algorithms {
			coords = append(coords, a.Coord)
			require.Empty(t, a.Set, "coordination options are not the algorithm's params")
		}
		require.Equal(t, []cluster.Coordination{
			central,
			{Mode: cluster.Racy, Write: cluster.WriteSet},
			{Mode: cluster.Sync, Sync: 100 * ms},
			{Mode: cluster.Lease, Lease: 5, LeaseTTL: time.Second},
			{Mode: cluster.Local},
		}, coords)
	}},
	{"balancer, on-store-error and store", ch + "cluster:\n  nodes: 2\n  balancer: key-hash\n  on-store-error: deny\n  store: {rtt: 0, timeout: 1h}\n",
		func(t *testing.T, sc *Scenario) {
			require.Equal(t, cluster.KeyHash, sc.Cluster.Balancer)
			require.Equal(t, cluster.Deny, sc.Cluster.OnStoreError)
			require.Equal(t, cluster.Store{Timeout: time.Hour}, sc.Cluster.Store)
		}},
	{"random balancer", ch + "cluster: {nodes: 2, balancer: random, store: {jitter: 1h, service: 1h}}\n", func(t *testing.T, sc *Scenario) {
		require.Equal(t, cluster.Random, sc.Cluster.Balancer)
		require.Equal(t, cluster.Store{RTT: time.Millisecond, Jitter: time.Hour, Service: time.Hour, Timeout: time.Second}, sc.Cluster.Store)
	}},
	{"skew spread", ch + "cluster: {nodes: 4, skew: 3ms}\n", func(t *testing.T, sc *Scenario) {
		ms := time.Millisecond
		require.Equal(t, []time.Duration{-3 * ms, -1 * ms, 1 * ms, 3 * ms}, sc.Cluster.Skew)
	}},
	{"negative skew spread", ch + "cluster: {nodes: 3, skew: -4ms}\n", func(t *testing.T, sc *Scenario) {
		require.Equal(t, []time.Duration{4 * time.Millisecond, 0, -4 * time.Millisecond}, sc.Cluster.Skew)
	}},
	{"skew spread on one node", ch + "cluster: {nodes: 1, skew: 1h}\n", func(t *testing.T, sc *Scenario) {
		require.Equal(t, []time.Duration{0}, sc.Cluster.Skew)
	}},
	{"skew list at the bounds", ch + "cluster: {nodes: 3, skew: [-1h, 0, 60m]}\n", func(t *testing.T, sc *Scenario) {
		require.Equal(t, []time.Duration{-time.Hour, 0, time.Hour}, sc.Cluster.Skew)
	}},
	{"largest cluster", ch + "cluster: {nodes: 1024, faults: [{type: node-down, node: 1023, at: 0s, for: 1h}]}\n", func(t *testing.T, sc *Scenario) {
		require.Equal(t, 1024, sc.Cluster.Nodes)
		require.Len(t, sc.Cluster.Skew, 1024)
		require.Equal(t, 1023, sc.Cluster.Faults[0].Node)
	}},
	{"faults that touch", ch + "cluster:\n  nodes: 2\n  faults:\n" +
		"    - {type: node-down, node: 0, at: 10s, for: 5s}\n" +
		"    - {type: node-down, node: 0, at: 15s, for: 5s}\n" +
		"    - {type: node-down, node: 1, at: 20s, for: 5s}\n" +
		"    - {type: node-down, node: 0, at: 25s, for: 1h}\n" +
		"    - {type: store-down, at: 20s, for: 2s}\n" +
		"    - {type: store-flush, at: 21s}\n" +
		"    - {type: store-slow, at: 22s, for: 3s, rtt: 1h}\n" +
		"    - {type: store-flush, at: 0s}\n",
		func(t *testing.T, sc *Scenario) {
			require.Len(t, sc.Cluster.Faults, 8)
			require.Equal(t, cluster.Fault{Type: cluster.NodeDown, Node: 0, At: 25 * time.Second, For: time.Hour}, sc.Cluster.Faults[3])
			require.Equal(t, cluster.Fault{Type: cluster.StoreSlow, At: 22 * time.Second, For: 3 * time.Second, RTT: time.Hour}, sc.Cluster.Faults[6])
		}},
	{"every mode", "name: t\nlimit: {rate: 100, per: 1s, burst: 40}\nduration: 60s\ntraffic: [{type: steady, rate: 200/s}]\n" +
		"cluster: {nodes: 4}\nalgorithms:\n" +
		"  - gcra\n" +
		"  - {name: gcra, label: g-node, clock: node}\n" +
		"  - {name: gcra, label: g-store, coordination: central, clock: store}\n" +
		"  - {name: nginx, coordination: racy}\n" +
		"  - {name: fixed-window, label: fw-incr, coordination: racy, write: incr}\n" +
		"  - {name: sliding-window, label: sw-incr, coordination: racy, write: incr, count-rejected: true}\n" +
		"  - {name: sliding-log, label: sl-set, coordination: racy, write: set}\n" +
		"  - {name: sliding-window, label: sw-sync, coordination: sync, sync: 1h}\n" +
		"  - {name: token-bucket, label: tb-lease, coordination: lease}\n" +
		"  - {name: gcra, label: g-lease, coordination: lease, burst: 100, per: 2s, lease-ttl: 2h}\n" +
		"  - {name: gcra, label: g-lease1, coordination: lease, burst: 7}\n" +
		"  - {name: x-time-rate, coordination: split}\n" +
		"  - {name: x-time-rate, label: x-local, coordination: local, max-delay: 1s}\n" +
		"  - {name: concurrency, coordination: split, max: 3}\n",
		func(t *testing.T, sc *Scenario) {
			var coords []cluster.Coordination
			for _, a := range sc.Algorithms {
				coords = append(coords, a.Coord)
			}
			require.Equal(t, []cluster.Coordination{
				central,
				{Mode: cluster.Central, Clock: cluster.NodeClock},
				central,
				{Mode: cluster.Racy, Write: cluster.WriteSet},
				{Mode: cluster.Racy, Write: cluster.WriteIncr},
				{Mode: cluster.Racy, Write: cluster.WriteIncr},
				{Mode: cluster.Racy, Write: cluster.WriteSet},
				{Mode: cluster.Sync, Sync: time.Hour},
				// lease's defaults: K = max(1, B/(2N)) = 40/8, the ttl the per
				{Mode: cluster.Lease, Lease: 5, LeaseTTL: time.Second},
				// with the entry's burst and per
				{Mode: cluster.Lease, Lease: 12, LeaseTTL: 2 * time.Hour},
				{Mode: cluster.Lease, Lease: 1, LeaseTTL: time.Second},
				{Mode: cluster.Split},
				{Mode: cluster.Local},
				{Mode: cluster.Split},
			}, coords)
			// the coordination options are not in Set: the algorithm's
			// params alone are
			require.Equal(t, map[string]any{"count-rejected": true}, sc.Algorithms[5].Set)
			require.Equal(t, map[string]any{"burst": int64(100), "per": "2s"}, sc.Algorithms[9].Set)
			require.Equal(t, algorithms.Policy{Rate: 100, Per: 2 * time.Second, Burst: 100}, sc.Algorithms[9].Params.Policy)
			require.Equal(t, map[string]any{"max-delay": "1s"}, sc.Algorithms[12].Set)
		}},
	{"on-store-error per row", ch + "cluster: {nodes: 2, on-store-error: allow}\nalgorithms: [{name: gcra, label: open}, {name: gcra, label: closed, on-store-error: deny}]\n",
		func(t *testing.T, sc *Scenario) {
			require.Equal(t, cluster.Allow, sc.Cluster.OnStoreError)
			require.Equal(t, cluster.OnError(""), sc.Algorithms[0].Coord.OnStoreError, "the cluster's")
			require.Equal(t, cluster.Deny, sc.Algorithms[1].Coord.OnStoreError)
		}},
	{"lease ttl defaults to the entry's per", ch + "cluster: {nodes: 2}\nalgorithms: [{name: token-bucket, coordination: lease, per: 1m, lease: 20}]\n",
		func(t *testing.T, sc *Scenario) {
			require.Equal(t, cluster.Coordination{Mode: cluster.Lease, Lease: 20, LeaseTTL: time.Minute}, sc.Algorithms[0].Coord)
		}},
	{"global waits 500us by default", ch + "cluster: {nodes: 3}\nalgorithms: [{name: gcra, coordination: global}, {name: fixed-window, coordination: global, sync: 1s}]\n",
		func(t *testing.T, sc *Scenario) {
			require.Equal(t, cluster.Coordination{Mode: cluster.Global, Sync: 500 * time.Microsecond}, sc.Algorithms[0].Coord)
			require.Equal(t, cluster.Coordination{Mode: cluster.Global, Sync: time.Second}, sc.Algorithms[1].Coord)
		}},
	{"weights and a row's own balancer", ch + "cluster: {nodes: 3, weights: [3, 1, 1]}\nalgorithms: [{name: gcra, coordination: local, balancer: weighted}, {name: gcra, label: even}]\n",
		func(t *testing.T, sc *Scenario) {
			require.Equal(t, []int64{3, 1, 1}, sc.Cluster.Weights)
			require.Equal(t, cluster.RoundRobin, sc.Cluster.Balancer)
			require.Equal(t, cluster.Weighted, sc.Cluster.BalancerOf(sc.Algorithms[0].Coord))
			require.Equal(t, cluster.RoundRobin, sc.Cluster.BalancerOf(sc.Algorithms[1].Coord))
		}},
	{"no cluster", ch + "algorithms: [gcra, {name: x-time-rate}]\n", func(t *testing.T, sc *Scenario) {
		require.Nil(t, sc.Cluster)
		for _, a := range sc.Algorithms {
			require.Equal(t, cluster.Coordination{}, a.Coord)
		}
	}},
}

func TestParseValidCluster(t *testing.T) {
	for _, tc := range validClusters {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse("s.yaml", []byte(tc.src))
			require.NoError(t, err)
			checkInvariants(t, sc)
			tc.check(t, sc)
		})
	}
}

// A cluster section with replay traffic: the faults are not held against
// a duration (the traces run until they end).
func TestClusterWithReplay(t *testing.T) {
	src := replayHead + "  - {type: replay, path: ../traffic/testdata/replay/combined.log}\n" +
		"cluster:\n  nodes: 2\n  faults: [{type: store-flush, at: 1h}]\n"
	sc, err := Parse("s.yaml", []byte(src))
	require.NoError(t, err)
	require.Equal(t, time.Hour, sc.Cluster.Faults[0].At)
}

// checkCluster checks what every accepted scenario's cluster section and
// coordination options satisfy.
func checkCluster(t testing.TB, sc *Scenario) {
	t.Helper()
	c := sc.Cluster
	if c == nil {
		for _, a := range sc.Algorithms {
			require.Equal(t, cluster.Coordination{}, a.Coord)
		}
		return
	}
	inBounds := func(d, lo time.Duration) {
		require.GreaterOrEqual(t, d, lo)
		require.LessOrEqual(t, d, maxClusterDuration)
	}
	require.GreaterOrEqual(t, c.Nodes, 1)
	require.LessOrEqual(t, c.Nodes, maxNodes)
	require.Contains(t, cluster.Balancers, c.Balancer)
	require.Contains(t, []cluster.OnError{cluster.Allow, cluster.Deny}, c.OnStoreError)
	require.Len(t, c.Skew, c.Nodes)
	for _, s := range c.Skew {
		inBounds(s, -maxClusterDuration)
	}
	inBounds(c.Store.RTT, 0)
	inBounds(c.Store.Jitter, 0)
	inBounds(c.Store.Service, 0)
	inBounds(c.Store.Timeout, 1)
	replays := len(sc.replays) > 0
	for _, f := range c.Faults {
		require.Contains(t, cluster.FaultTypes, f.Type)
		require.GreaterOrEqual(t, f.At, time.Duration(0))
		if !replays {
			require.Less(t, f.At, sc.Duration)
		}
		if f.Type == cluster.StoreFlush {
			require.Zero(t, f.For)
		} else {
			require.Greater(t, f.For, time.Duration(0))
			require.LessOrEqual(t, f.At, math.MaxInt64-f.For)
		}
		if f.Type == cluster.NodeDown {
			require.GreaterOrEqual(t, f.Node, 0)
			require.Less(t, f.Node, c.Nodes)
		} else {
			require.Zero(t, f.Node)
		}
		if f.Type == cluster.StoreSlow {
			inBounds(f.RTT, 0)
		} else {
			require.Zero(t, f.RTT)
		}
	}
	for _, a := range sc.Algorithms {
		co := a.Coord
		require.True(t, cluster.Supports(a.Name, co.Mode), "%s %s", a.Name, co.Mode)
		for _, k := range coordFields {
			require.NotContains(t, a.Set, k)
		}
		want := cluster.Coordination{Mode: co.Mode}
		switch co.Mode {
		case cluster.Central:
			require.Contains(t, []cluster.Clock{cluster.StoreClock, cluster.NodeClock}, co.Clock)
			want.Clock = co.Clock
		case cluster.Racy:
			require.Contains(t, []cluster.Write{cluster.WriteSet, cluster.WriteIncr}, co.Write)
			require.True(t, co.Write == cluster.WriteSet || cluster.IncrWrites(a.Name))
			want.Write = co.Write
		case cluster.Sync, cluster.Global:
			inBounds(co.Sync, 1)
			want.Sync = co.Sync
		case cluster.Lease:
			require.GreaterOrEqual(t, co.Lease, int64(1))
			require.LessOrEqual(t, co.Lease, a.Params.Burst)
			require.Greater(t, co.LeaseTTL, time.Duration(0))
			want.Lease, want.LeaseTTL = co.Lease, co.LeaseTTL
		}
		if co.Mode != cluster.Local && co.Mode != cluster.Split {
			// a mode that uses the store may fail over its own way
			require.Contains(t, []cluster.OnError{"", cluster.Allow, cluster.Deny}, co.OnStoreError)
			want.OnStoreError = co.OnStoreError
		}
		// a row's own balancer, in any mode; a weighted one reads the
		// cluster's weights
		require.True(t, co.Balancer == "" || slices.Contains(cluster.Balancers, co.Balancer), co.Balancer)
		if co.Balancer.Weighs() {
			require.Len(t, sc.Cluster.Weights, sc.Cluster.Nodes)
		}
		want.Balancer = co.Balancer
		require.Equal(t, want, co, "no option of another mode")
	}
}

// TestClusterExtremeValues puts extreme values in every field of cluster
// sections: whatever Parse accepts satisfies the invariants, and nothing
// panics.
func TestClusterExtremeValues(t *testing.T) {
	nodes := []string{"1", "2", "1024", "0", "-1", "9223372036854775807"}
	durations := []string{"0", "1ns", "59s", "1h", "-1h", "1h0m0.000000001s", "2562047h47m16.854775807s"}
	ints := []string{"0", "1", "1023", "9223372036854775807", "-9223372036854775808"}
	templates := []string{
		"cluster: {nodes: %[1]s, skew: %[2]s, store: {rtt: %[2]s, jitter: %[3]s, service: %[2]s, timeout: %[3]s}}\n",
		"cluster: {nodes: %[1]s, skew: [%[2]s, %[3]s]}\n",
		"cluster: {nodes: %[1]s, faults: [{type: node-down, node: %[4]s, at: %[2]s, for: %[3]s}, {type: node-down, node: 0, at: %[3]s, for: %[2]s}]}\n",
		"cluster: {nodes: %[1]s, faults: [{type: store-slow, at: %[2]s, for: %[3]s, rtt: %[2]s}, {type: store-down, at: %[3]s, for: %[2]s}, {type: store-flush, at: %[2]s}]}\n",
		"cluster: {nodes: %[1]s}\nalgorithms: [{name: gcra, coordination: lease, lease: %[4]s, lease-ttl: %[2]s}, {name: token-bucket, burst: %[4]s, coordination: lease}]\n",
		"cluster: {nodes: %[1]s}\nalgorithms: [{name: fixed-window, coordination: sync, sync: %[2]s}, {name: sliding-window, coordination: racy, write: incr, per: %[3]s}]\n",
	}
	accepted, long := 0, false
	for i, tmpl := range templates {
		var combos [][]any
		combos, long = extremeArgs(t, i, nodes, durations, durations, ints)
		for _, args := range combos {
			src := ch + fmt.Sprintf(tmpl, args...)
			sc, err := Parse("s.yaml", []byte(src))
			if err != nil {
				require.Nil(t, sc)
				continue
			}
			accepted++
			checkInvariants(t, sc)
		}
	}
	t.Logf("%d scenarios accepted", accepted)
	if long {
		require.Greater(t, accepted, 500)
	} else {
		require.Greater(t, accepted, 500/extremeStride)
	}
}
