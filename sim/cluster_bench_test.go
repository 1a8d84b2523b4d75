package sim

import (
	"testing"
	"time"

	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/traffic"
)

// BenchmarkEngineCluster runs the engine benchmark's 1M-key workload
// (poisson-zipf-1M-keys of BenchmarkEngine: 1,000,000 requests per second
// of virtual time over 1,000,000 Zipf clients) on a cluster of 4 nodes
// behind round-robin, beside the same rows without a cluster, in one
// process, so that each figure reads as a ratio (the targets in BENCHMARKS.md: at
// most 3x for central, 1.3x for local and split):
//
//   - plain-8, central-4: the eight algorithms that can run in a store,
//     without a cluster, then each in central mode (rtt 1ms, the store's
//     defaults) beside its reference;
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
	plan := func(b *testing.B) traffic.Plan { return zipfPlan(1_000_000, int64(b.N)) }

	rows := func(nine bool, mode cluster.Mode) []Algorithm {
		var algs []Algorithm
		for _, a := range benchAlgorithms() {
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
	for _, c := range []struct {
		name string
		nine bool
		mode cluster.Mode
		cl   *cluster.Config
	}{
		{"plain-8", false, "", nil},
		{"central-4", false, cluster.Central, nodes},
		{"plain-9", true, "", nil},
		{"local-4", true, cluster.Local, nodes},
		{"split-4", true, cluster.Split, nodes},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchEngineOn(b, plan(b), 0, rows(c.nine, c.mode), c.cl)
		})
	}
}
