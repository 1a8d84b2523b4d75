package sim_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/cluster/coord"
	"github.com/ratesim/ratesim/internal/clustertest"
	"github.com/ratesim/ratesim/sim"
)

// Backends across the feed's batches: every algorithm, on random
// backends (exponential and lognormal service, faults, timeouts, errors,
// LIFO, shapers), without a cluster and as a local cluster's reference,
// gives the same results, in JSON, with batches of 64 arrivals (a run
// crosses many batches with requests in its backend) as with Run's.
func TestBackendAcrossBatches(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 9))
	names := append(algorithms.Names(), "none", "aimd", "sre-throttle")
	for _, name := range names {
		for k := range 3 {
			t.Run(fmt.Sprintf("%s/%d", name, k), func(t *testing.T) {
				cfg := clustertest.RandomBackend(rng, name, cluster.Local)
				if k < 2 {
					cfg.Cluster = nil
				} else {
					cfg.Coordinate = coord.New
				}
				if k == 1 {
					cfg.Backend.Service = backend.Service{Dist: backend.Lognormal, Mean: 20 * time.Millisecond, P99: 90 * time.Millisecond}
				}
				if !clustertest.Adaptive(name) {
					cfg.Retries = nil // a row that hears nothing from its backend
				}
				run := func(batch int) string {
					rep, err := sim.RunBatches(cfg, batch)
					require.NoError(t, err)
					j, err := json.Marshal(rep.Results)
					require.NoError(t, err)
					return string(j)
				}
				require.Equal(t, run(sim.BatchArrivals), run(64))
			})
		}
	}
}
