package sim

import (
	"testing"
	"time"

	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/traffic"
)

// BenchmarkEngineBackend runs the engine benchmark's 1M-key workload
// (poisson-zipf-1M-keys of BenchmarkEngine) without a backend (plain-9:
// the nine algorithms, the default set without workers; plain-10: the
// nine and none, the same rows as backend-10) and with a backend of 16
// workers, exponential service of mean 12us, a queue of 1000 and clients
// waiting 100ms (backend-10: the nine and none, each row with its own
// backend), in one process, so that ns/op reads as a ratio (issue 14's
// target: at most 1.5x); the same behind 4 nodes (backend-10-local-4,
// and backend-8-central-4 for the eight that run in a store); then
// token-bucket, none and each adaptive row
// (aimd, vegas, gradient2, envoy-adaptive with a 100ms interval,
// sre-throttle) alone with a backend (target: an adaptive row at most 2x
// a token bucket's).
//
//	go test ./sim -run '^$' -bench EngineBackend -benchtime 1000000x -count 5
func BenchmarkEngineBackend(b *testing.B) {
	plan := func(b *testing.B) traffic.Plan { return zipfPlan(b, 1_000_000) }

	b.Run("plain-9", func(b *testing.B) {
		benchEngineOn(b, plan(b), 0, benchAlgorithms(), nil)
	})
	b.Run("plain-10", func(b *testing.B) {
		benchEngineOn(b, plan(b), 0, append(benchAlgorithms(), benchAlgorithm("none")), nil)
	})
	withBackend := func(c *Config) {
		c.Backend = &backend.Config{Workers: 16, Service: backend.Service{Dist: backend.Exponential, Mean: 12 * time.Microsecond},
			Queue: 1000, Timeout: 100 * time.Millisecond, Seed: 1, Bucket: c.Bucket}
	}
	b.Run("backend-10", func(b *testing.B) {
		algs := append(benchAlgorithms(), benchAlgorithm("none"))
		benchEngineOn(b, plan(b), 0, algs, nil, withBackend)
	})
	// the same rows and backends behind a cluster of 4 nodes (issue 14):
	// the nine and none in local mode, and the eight that run in a store
	// in central mode (rtt 1ms), each row beside its reference, which has
	// its own backend too
	nodes := &cluster.Config{Nodes: 4, Balancer: cluster.RoundRobin, Skew: make([]time.Duration, 4),
		Store: cluster.Store{RTT: cluster.DefaultRTT, Timeout: cluster.DefaultTimeout}, OnStoreError: cluster.Allow}
	b.Run("backend-10-local-4", func(b *testing.B) {
		algs := append(benchAlgorithms(), benchAlgorithm("none"))
		for i := range algs {
			algs[i].Coord = cluster.Coordination{Mode: cluster.Local}
		}
		benchEngineOn(b, plan(b), 0, algs, nodes, withBackend)
	})
	b.Run("backend-8-central-4", func(b *testing.B) {
		var algs []Algorithm
		for _, a := range benchAlgorithms() {
			if a.Name != "x-time-rate" {
				a.Coord = cluster.Coordination{Mode: cluster.Central}
				algs = append(algs, a)
			}
		}
		benchEngineOn(b, plan(b), 0, algs, nodes, withBackend)
	})
	// one row each, with its backend: an adaptive row against a token
	// bucket's (issue 14's target: at most 2x)
	for _, name := range []string{"token-bucket", "none", "aimd", "vegas", "gradient2", "envoy-adaptive", "sre-throttle"} {
		b.Run(name+"-1", func(b *testing.B) {
			alg := benchAlgorithm(name)
			if name == "envoy-adaptive" {
				alg.Params.Interval = 100 * time.Millisecond // required, as in envoy
			}
			benchEngineOn(b, plan(b), 0, []Algorithm{alg}, nil, withBackend)
		})
	}
}
