package sim_test

import (
	"testing"
	"time"

	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/cluster/coord"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

// onCluster runs the rows on cl (nil: none).
func onCluster(cl *cluster.Config) func(*sim.Config) {
	return func(c *sim.Config) {
		if cl != nil {
			c.Cluster, c.Coordinate = cl, coord.New
		}
	}
}

// BenchmarkEngineCluster runs the engine benchmark's 1M-key workload
// (poisson-zipf-1M-keys of BenchmarkEngine: 1,000,000 requests per second
// of virtual time over 1,000,000 Zipf clients) on a cluster of 4 nodes
// behind round-robin, beside the same rows without a cluster, in one
// process, so that each figure reads as a ratio (the targets in BENCHMARKS.md: at
// most 3x for central, 1.3x for local and split):
//
//   - plain-8, central-4, central-jitter-4: the eight algorithms that can
//     run in a store, without a cluster, then each in central mode (rtt
//     1ms, the store's defaults) beside its reference, then the same with
//     200us of jitter each way (scenarios/bench/poisson-10m-central-jitter.yaml);
//   - plain-9, local-4, split-4: all nine, without a cluster, then each in
//     local mode, then in split mode.
//
// One op is one request; decisions counts the cluster rows' attempts (a
// row's reference, one exact limiter on the same traffic, runs too and is
// not counted). Reported as BenchmarkEngine reports: decisions/s,
// decisions/s/core, ns/decision, idle-%; ns/op is the time per request
// of the whole run, references included: the figure to compare.
//
//	go test ./sim -run '^$' -bench EngineCluster -benchtime 1000000x -count 5
func BenchmarkEngineCluster(b *testing.B) {
	plan := func(b *testing.B) traffic.Plan { return sim.ZipfPlan(1_000_000, int64(b.N)) }

	rows := func(nine bool, mode cluster.Mode) []sim.Algorithm {
		var algs []sim.Algorithm
		for _, a := range sim.BenchAlgorithms() {
			if !nine && a.Name == "x-time-rate" {
				continue
			}
			a.Coord = cluster.Coordination{Mode: mode}
			algs = append(algs, a)
		}
		return algs
	}
	nodes := &cluster.Config{Nodes: 4, Balancer: cluster.RoundRobin, Skew: make([]time.Duration, 4),
		Store: cluster.Store{RTT: cluster.DefaultRTT, Timeout: cluster.DefaultTimeout}, OnStoreError: cluster.Allow}
	jitter := *nodes
	jitter.Store.Jitter = 200 * time.Microsecond
	for _, c := range []struct {
		name string
		nine bool
		mode cluster.Mode
		cl   *cluster.Config
	}{
		{"plain-8", false, "", nil},
		{"central-4", false, cluster.Central, nodes},
		{"central-jitter-4", false, cluster.Central, &jitter},
		{"plain-9", true, "", nil},
		{"local-4", true, cluster.Local, nodes},
		{"split-4", true, cluster.Split, nodes},
	} {
		b.Run(c.name, func(b *testing.B) {
			sim.BenchEngineOn(b, plan(b), 0, rows(c.nine, c.mode), onCluster(c.cl))
		})
	}
}

// BenchmarkEngineBackend runs the engine benchmark's 1M-key workload
// (poisson-zipf-1M-keys of BenchmarkEngine) without a backend (plain-9:
// the nine algorithms, the default set without workers; plain-10: the
// nine and none, the same rows as backend-10) and with a backend of 16
// workers, exponential service of mean 12us, a queue of 1000 and clients
// waiting 100ms (backend-10: the nine and none, each row with its own
// backend), in one process, so that ns/op reads as a ratio (the
// target in BENCHMARKS.md: at most 1.5x); the same behind 4 nodes (backend-10-local-4,
// and backend-8-central-4 for the eight that run in a store); then
// token-bucket, none and each adaptive row
// (aimd, vegas, gradient2, envoy-adaptive with a 100ms interval,
// sre-throttle) alone with a backend (target: an adaptive row at most 2x
// a token bucket's).
//
//	go test ./sim -run '^$' -bench EngineBackend -benchtime 1000000x -count 5
func BenchmarkEngineBackend(b *testing.B) {
	plan := func(b *testing.B) traffic.Plan { return sim.ZipfPlan(1_000_000, int64(b.N)) }

	b.Run("plain-9", func(b *testing.B) {
		sim.BenchEngineOn(b, plan(b), 0, sim.BenchAlgorithms())
	})
	b.Run("plain-10", func(b *testing.B) {
		sim.BenchEngineOn(b, plan(b), 0, append(sim.BenchAlgorithms(), sim.BenchAlgorithm("none")))
	})
	withBackend := func(c *sim.Config) {
		c.Backend = &backend.Config{Workers: 16, Service: backend.Service{Dist: backend.Exponential, Mean: 12 * time.Microsecond},
			Queue: 1000, Timeout: 100 * time.Millisecond, Seed: 1, Bucket: c.Bucket}
	}
	b.Run("backend-10", func(b *testing.B) {
		algs := append(sim.BenchAlgorithms(), sim.BenchAlgorithm("none"))
		sim.BenchEngineOn(b, plan(b), 0, algs, withBackend)
	})
	// the same rows and backends behind a cluster of 4 nodes:
	// the nine and none in local mode, and the eight that run in a store
	// in central mode (rtt 1ms), each row beside its reference, which has
	// its own backend too
	nodes := &cluster.Config{Nodes: 4, Balancer: cluster.RoundRobin, Skew: make([]time.Duration, 4),
		Store: cluster.Store{RTT: cluster.DefaultRTT, Timeout: cluster.DefaultTimeout}, OnStoreError: cluster.Allow}
	b.Run("backend-10-local-4", func(b *testing.B) {
		algs := append(sim.BenchAlgorithms(), sim.BenchAlgorithm("none"))
		for i := range algs {
			algs[i].Coord = cluster.Coordination{Mode: cluster.Local}
		}
		sim.BenchEngineOn(b, plan(b), 0, algs, onCluster(nodes), withBackend)
	})
	b.Run("backend-8-central-4", func(b *testing.B) {
		var algs []sim.Algorithm
		for _, a := range sim.BenchAlgorithms() {
			if a.Name != "x-time-rate" {
				a.Coord = cluster.Coordination{Mode: cluster.Central}
				algs = append(algs, a)
			}
		}
		sim.BenchEngineOn(b, plan(b), 0, algs, onCluster(nodes), withBackend)
	})
	// one row each, with its backend: an adaptive row against a token
	// bucket's (the target in BENCHMARKS.md: at most 2x)
	for _, name := range []string{"token-bucket", "none", "aimd", "vegas", "gradient2", "envoy-adaptive", "sre-throttle"} {
		b.Run(name+"-1", func(b *testing.B) {
			alg := sim.BenchAlgorithm(name)
			if name == "envoy-adaptive" {
				alg.Params.Interval = 100 * time.Millisecond // required, as in envoy
			}
			sim.BenchEngineOn(b, plan(b), 0, []sim.Algorithm{alg}, withBackend)
		})
	}
}
