package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSheddingCompare: 20 batch requests at 0 and 20 live ones at 500ms,
// each in flight for 1s, against 10 in flight. concurrency admits the
// first 10 batch and no live one. Netflix's partitions (live 0.9, batch
// 0.1) let batch borrow the 10 while the total is under the limit, then
// keep live's 9: 19. Stripe's shedder with 20% reserved for live holds
// batch to its allocation of 8 and gives live the 2 left: 10.
func TestSheddingCompare(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shed.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`name: shed
duration: 2s
limit: 10/s
backend: {service: 1s}
traffic:
  - {type: burst, key: server, at: 0s, count: 20, attributes: {class: batch}}
  - {type: burst, key: server, at: 500ms, count: 20, attributes: {class: live}}
algorithms:
  - {name: concurrency, max: 10}
  - {name: netflix-partitioned, max: 10, by: class, partitions: {live: 0.9, batch: 0.1}}
  - {name: stripe-fleet-shedder, max: 10, by: class, critical: [live], reserve: 20%}
`), 0o644))
	status, out, errOut := run(t, "compare", path)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "| concurrency          |       10 |        0 |       30 |")
	require.Contains(t, out, "| netflix-partitioned  |       19 |        0 |       21 |")
	require.Contains(t, out, "| stripe-fleet-shedder |       10 |        0 |       30 |")
}
