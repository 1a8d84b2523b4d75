package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/traffic"
)

// fuzzArrivals is the most arrivals a scenario of FuzzCompare may send:
// above it the input is left out, so that the fuzzer spends its time on
// many small runs (and the seeds run quickly in every go test).
const fuzzArrivals = 20_000

// fuzzClusters are seeds of FuzzCompare beyond the built-ins: a cluster
// in every mode, with the knobs that make the engine's paths differ
// (jitter, a random or key-hash balancer, skew, faults of each kind,
// sync, lease, a backend, retries).
var fuzzClusters = []string{
	`name: every-mode
seed: 3
duration: 2s
limit: {rate: 10, per: 1s, burst: 5}
cluster:
  nodes: 3
  balancer: random
  skew: [0ms, 5ms, -3ms]
  store: {rtt: 2ms, jitter: 1ms, service: 50us, timeout: 20ms}
  faults:
    - {type: node-down, node: 1, at: 500ms, for: 300ms}
    - {type: store-slow, at: 1s, for: 200ms, rtt: 30ms}
algorithms:
  - {name: gcra, coordination: central}
  - {name: fixed-window, coordination: racy, write: set}
  - {name: sliding-window, coordination: sync, sync: 100ms}
  - {name: token-bucket, coordination: lease, lease: 3}
  - {name: x-time-rate, coordination: split}
  - {name: concurrency, coordination: local}
traffic:
  - {type: poisson, rate: 2000/s, clients: 20}
`,
	`name: faults-and-retries
seed: 5
duration: 1s
limit: {rate: 5, per: 1s, burst: 2}
backend: {service: 20ms, workers: 4}
cluster:
  nodes: 2
  balancer: key-hash
  store: {rtt: 1ms, timeout: 5ms}
  faults:
    - {type: store-down, at: 200ms, for: 100ms}
    - {type: store-flush, at: 600ms}
algorithms:
  - {name: sliding-log, coordination: central, clock: node, on-store-error: allow}
  - {name: fixed-window, coordination: racy, write: incr}
  - {name: leaky-bucket, coordination: racy}
  - {name: nginx, coordination: local}
traffic:
  - type: onoff
    key: k
    rate: 400/s
    on: 100ms
    off: 100ms
clients:
  retry: {policy: backoff, delay: 10ms, max-attempts: 3, jitter: full}
`,
}

// FuzzCompare runs compare on scenario files, end to end: whatever the
// input, compare ends with status 0 or 2 and no panic, and an input it
// refuses says where (file:line:col) and what. Inputs that do not parse are
// FuzzParse's; here they are left out, as are scenarios of more than
// fuzzArrivals arrivals.
//
//	go test ./cmd -run '^$' -fuzz FuzzCompare -fuzztime 10m -parallel 1
func FuzzCompare(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("..", "scenarios", "builtin", "*.yaml"))
	require.NoError(f, err)
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, src := range fuzzClusters {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := scenarios.Parse("f.yaml", data)
		if err != nil || !fewArrivals(sc.Traffic) {
			return
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "f.yaml")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		format := []string{"table", "json", "csv"}[len(data)%3]
		status, stdout, stderr := run(t, "compare", path, "--format", format)
		// Run turns a panic into "internal error" and status 1
		require.NotContains(t, stderr, "internal error", "input:\n%s", data)
		require.NotContains(t, stderr, "goroutine ", "input:\n%s", data)
		switch status {
		case 0:
			require.NotEmpty(t, stdout)
		case 2:
			require.Regexp(t, `f\.yaml:\d+:\d+`, stderr, "a refusal names file:line:col\ninput:\n%s", data)
		default:
			t.Fatalf("status %d, stderr %s\ninput:\n%s", status, stderr, data)
		}
		require.False(t, strings.Contains(stdout, "NaN"), "NaN in the output of\n%s", data)
	})
}

// fewArrivals reports whether plan sends at most fuzzArrivals arrivals.
func fewArrivals(plan traffic.Plan) bool {
	_, st, err := plan.Open()
	if err != nil {
		return true // compare refuses it
	}
	var a traffic.Arrival
	for n := 0; st.Next(&a); n++ {
		if n >= fuzzArrivals {
			return false
		}
	}
	return true
}
