package coord

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

// A cluster row's reference is one exact limiter of the row's algorithm on
// the same traffic: it admits what the algorithm admits in a row of its
// own without a cluster, retries included. Random traffic over three keys
// with costs of 1 to 3, in bursts and after idle gaps of up to 3s (after
// which a key is fresh again), for every algorithm a store can hold, with
// some of their options, on a central store with jitter.
func TestClusterReferenceIsPlainRow(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(36, 3))
	names := []string{"fixed-window", "sliding-log", "sliding-window", "token-bucket", "gcra", "leaky-bucket", "nginx", "concurrency"}
	for i := range 3 * len(names) {
		name := names[i%len(names)]
		l := int64(1 + r.IntN(10))
		p := algorithms.Params{Policy: algorithms.Policy{Rate: l, Per: time.Second, Burst: 1 + r.Int64N(2*l)}}
		switch name {
		case "fixed-window", "sliding-window", "sliding-log":
			p.CountRejected = r.IntN(2) == 0
		case "token-bucket", "gcra":
			p.MaxDelay = time.Duration(r.IntN(2)) * 300 * ms
		case "nginx":
			p.Nodelay = r.IntN(2) == 0
		case "concurrency":
			p.Service = time.Duration(1+r.IntN(300)) * ms
		}
		var sources []traffic.Source
		for k, key := range []string{"alice", "bob", "carol"} {
			var at []time.Duration
			t := time.Duration(r.IntN(500)) * ms
			gap := time.Second / time.Duration(l*int64(1+r.IntN(20)))
			for range 50 + r.IntN(150) {
				if r.IntN(20) == 0 {
					t += time.Duration(r.Int64N(int64(3 * time.Second)))
				} else {
					t += time.Duration(r.Int64N(int64(2 * gap)))
				}
				at = append(at, t)
			}
			sources = append(sources, &traffic.Times{At: at,
				Common: traffic.Common{Clients: traffic.Clients{Key: key}, Cost: int64(1 + k)}})
		}
		alg := sim.Algorithm{Name: name, Label: name, Params: p, Coord: cluster.Coordination{Mode: cluster.Central}}
		cfg := baseConfig(traffic.Plan{Sources: sources}, alg)
		cfg.Limit = p.Policy
		cfg.Duration = 20 * time.Second
		if r.IntN(2) == 0 {
			cfg.Retries = []traffic.RetryPolicy{{Policy: "retry-after", MaxAttempts: 3}}
		}
		desc := fmt.Sprintf("%s %+v retries=%v", name, p, cfg.Retries)

		plain, err := simRun(cfg)
		require.NoError(t, err, desc)
		cfg.Cluster = &cluster.Config{Nodes: 3, Balancer: cluster.RoundRobin, Skew: make([]time.Duration, 3),
			Store: cluster.Store{RTT: ms, Jitter: 200 * us, Timeout: time.Second}, OnStoreError: cluster.Allow}
		onCluster, err := simRun(cfg)
		require.NoError(t, err, desc)

		res := plain.Results[0]
		require.Positive(t, res.Rejected, desc) // the traffic goes over the limit
		require.Equal(t, res.Accepted+res.Delayed, onCluster.Results[0].Cluster.ReferenceAdmitted, desc)
	}
}
