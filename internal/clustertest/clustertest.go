// Package clustertest builds the configurations of cluster rows that the
// tests of package sim and of package cluster/coord share. A config's
// Coordinate is left for the caller to set (coord.New).
package clustertest

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

const (
	ms = time.Millisecond
	us = time.Microsecond
)

// Adaptive reports whether the algorithm called name is an adaptive limit
// (it needs a backend).
func Adaptive(name string) bool {
	info, ok := algorithms.Lookup(name)
	return ok && info.Adaptive
}

// Times is one client, alice, whose requests of cost 1 come at at.
func Times(at ...time.Duration) traffic.Plan {
	return traffic.Plan{Sources: []traffic.Source{
		&traffic.Times{Common: traffic.Common{Clients: traffic.Clients{Key: "alice"}, Cost: 1}, At: at},
	}}
}

// Base is a config of algs on plan for 1s, 10 per 1s with bursts of 10,
// windows 1s and 100ms, buckets of 100ms.
func Base(plan traffic.Plan, algs ...sim.Algorithm) sim.Config {
	return sim.Config{
		Name: "t", Seed: 1, Duration: time.Second,
		Limit:      algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10},
		Algorithms: algs,
		Traffic:    plan,
		Windows:    []time.Duration{time.Second, 100 * ms},
		Bucket:     100 * ms,
	}
}

// Config is a config of one algorithm row on a cluster of n nodes,
// round-robin, no skew, no jitter, store rtt rtt.
func Config(name string, pol algorithms.Policy, co cluster.Coordination, n int, rtt time.Duration, at ...time.Duration) sim.Config {
	cfg := Base(Times(at...), sim.Algorithm{Name: name, Label: name,
		Params: algorithms.Params{Policy: pol}, Coord: co})
	cfg.Limit = pol
	cfg.Duration = 3 * time.Second
	cfg.Cluster = &cluster.Config{Nodes: n, Balancer: cluster.RoundRobin, Skew: make([]time.Duration, n),
		Store: cluster.Store{RTT: rtt, Timeout: time.Second}, OnStoreError: cluster.Allow}
	return cfg
}

// RandomBackend is a random cluster row of name in mode in front of
// a random backend, with clients that retry on every cause.
func RandomBackend(rng *rand.Rand, name string, mode cluster.Mode) sim.Config {
	pol := algorithms.Policy{Rate: int64(2 + rng.IntN(20)), Per: time.Second, Burst: int64(1 + rng.IntN(10))}
	var at []time.Duration
	for range 150 + rng.IntN(150) {
		at = append(at, time.Duration(rng.Int64N(int64(2500*ms))))
	}
	slices.Sort(at)
	co := cluster.Coordination{Mode: mode}
	switch mode {
	case cluster.Sync:
		co.Sync = time.Duration(1+rng.IntN(100)) * ms
	case cluster.Lease:
		co.Lease = int64(1 + rng.IntN(int(pol.Burst)))
	case cluster.Central:
		if rng.IntN(2) == 0 {
			co.Clock = cluster.NodeClock
		}
	}
	n := 1 + rng.IntN(4)
	cfg := Config(name, pol, co, n, time.Duration(rng.IntN(5000))*us, at...)
	p := &cfg.Algorithms[0].Params
	p.Service = time.Duration(1+rng.IntN(50)) * ms
	switch name {
	case "envoy-adaptive":
		p.Interval = 100 * ms
	case "concurrency":
		p.Max = int64(1 + rng.IntN(6))
	}
	cl := cfg.Cluster
	cl.Balancer = []cluster.Balancer{cluster.RoundRobin, cluster.Random, cluster.KeyHash}[rng.IntN(3)]
	cl.Store.Jitter = time.Duration(rng.IntN(1000)) * us
	cl.Store.Service = time.Duration(rng.IntN(200)) * us
	cl.Store.Timeout = time.Duration(5+rng.IntN(60)) * ms
	for i := range cl.Skew {
		cl.Skew[i] = time.Duration(rng.IntN(7)-3) * ms
	}
	if rng.IntN(2) == 0 {
		cl.OnStoreError = cluster.Deny
	}
	cl.Faults = []cluster.Fault{
		{Type: cluster.StoreDown, At: 1500 * ms, For: 100 * ms},
		{Type: cluster.StoreSlow, At: 1800 * ms, For: 200 * ms, RTT: 30 * ms},
	}
	if n > 1 { // the loader refuses a cluster with every node down
		cl.Faults = append(cl.Faults, cluster.Fault{Type: cluster.NodeDown, Node: rng.IntN(n), At: 300 * ms, For: 400 * ms})
	}
	disc := backend.FIFO
	if rng.IntN(2) == 0 {
		disc = backend.LIFO
	}
	cfg.Backend = &backend.Config{Workers: 1 + rng.IntN(4),
		Service:     backend.Service{Dist: backend.Exponential, Mean: time.Duration(5+rng.IntN(60)) * ms},
		Queue:       rng.IntN(10),
		Discipline:  disc,
		Timeout:     time.Duration(rng.IntN(300)) * ms,
		DropExpired: rng.IntN(2) == 0,
		Errors:      0.05,
		Seed:        7, Bucket: 100 * ms,
		Faults: []backend.Fault{{Type: backend.Pause, At: time.Second, For: 100 * ms},
			{Type: backend.Slow, At: 2 * time.Second, For: 300 * ms, Factor: 3}},
	}
	if name == "none" || Adaptive(name) {
		// a row that admits everything, or learns from the backend: no
		// retry on reject, so that the traffic stays bounded
		cfg.Retries = []traffic.RetryPolicy{{Policy: "backoff", Delay: 10 * ms, MaxAttempts: 3, Jitter: "full",
			On: traffic.RetryOnOf(traffic.CauseShed, traffic.CauseTimeout, traffic.CauseError)}}
	} else {
		cfg.Retries = []traffic.RetryPolicy{{Policy: "backoff", Delay: 10 * ms, MaxAttempts: 3, Jitter: "full",
			On: traffic.RetryOnOf(traffic.CauseReject, traffic.CauseShed, traffic.CauseTimeout, traffic.CauseError)}}
	}
	return cfg
}
