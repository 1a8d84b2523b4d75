package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratesim/ratesim/sim"
	"github.com/stretchr/testify/require"
)

// compareJSON runs `ratesim compare NAME --format json` and decodes it.
func compareJSON(t *testing.T, args ...string) map[string]sim.Result {
	t.Helper()
	status, out, errOut := run(t, append([]string{"compare", "--format", "json"}, args...)...)
	require.Equal(t, 0, status, errOut)
	var rep sim.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	byLabel := map[string]sim.Result{}
	for _, r := range rep.Results {
		byLabel[r.Label] = r
	}
	return byLabel
}

func attemptPeak(t *testing.T, r sim.Result, windowNs int64) int64 {
	for _, p := range r.AttemptPeaks {
		if p.WindowNs == windowNs {
			return p.Count
		}
	}
	t.Fatalf("%s: no attempt peak for window %d", r.Label, windowNs)
	return 0
}

// TestRetryStormHerd: clients that honour Retry-After: 1 (resolution 1s)
// come back one second after their rejection at a boundary, at the next
// boundary, with the next wave, so the busiest 100ms of attempts holds
// several waves; the same clients backing off with full jitter spread out.
// The figures are measured, not assumed: the herd must be at least 2.5x the
// jittered one for every algorithm that rejects.
func TestRetryStormHerd(t *testing.T) {
	herd := compareJSON(t, "retry-storm")
	jitter := compareJSON(t, "retry-storm-jitter")
	const w10 = int64(100e6)
	for label, h := range herd {
		j := jitter[label]
		if h.Rejected == 0 {
			continue // concurrency: nothing in flight, nobody retries
		}
		hp, jp := attemptPeak(t, h, w10), attemptPeak(t, j, w10)
		t.Logf("%-14s attempts/100ms: retry-after %d, jittered backoff %d (%.1fx)", label, hp, jp, float64(hp)/float64(jp))
		require.GreaterOrEqual(t, 2*hp, 5*jp, "%s: the Retry-After herd (%d) is not several times the jittered one (%d)", label, hp, jp)
		// every wave brings 150 new requests; the herd is retries on top
		require.Greater(t, h.Attempts, h.Offered, label)
		require.Equal(t, h.Offered, j.Offered, "%s: the same traffic", label)
	}
	// fixed-window's herd sits at the boundary: its busiest 100ms holds a
	// whole second (the earliest such interval may start a little before
	// it, with a request of the trickle).
	fw := herd["fixed-window"]
	for _, p := range fw.AttemptPeaks {
		if p.WindowNs == w10 {
			next := (p.StartNs + 1e9 - 1) / 1e9 * 1e9
			require.Less(t, next, p.StartNs+w10, "the herd's 100ms [%d, +100ms) holds a window boundary", p.StartNs)
		}
	}
}

// TestAPIGatewayWhoIsLimited: every algorithm that limits rates limits the
// three abusers and the heaviest Zipf client, and only a handful of the
// 10,000 clients.
func TestAPIGatewayWhoIsLimited(t *testing.T) {
	res := compareJSON(t, "api-gateway", "--top", "6")
	for label, r := range res {
		if label == "concurrency" {
			require.Zero(t, r.Keys.Limited, "no backend time: nothing in flight")
			continue
		}
		require.GreaterOrEqual(t, r.Keys.Limited, int64(4), label)
		require.Less(t, r.Keys.Limited, int64(50), "%s: a handful of 10,003 keys", label)
		require.Len(t, r.Keys.Top, 6, label)
		require.Equal(t, "user-0", r.Keys.Top[0].Key, "%s: the heaviest Zipf client is the most limited", label)
		top := map[string]bool{}
		for _, k := range r.Keys.Top {
			top[k.Key] = true
			require.LessOrEqual(t, k.Rejected, k.Offered, "%s %s: no retries here", label, k.Key)
		}
		for _, abuser := range []string{"abuser-a", "abuser-b", "abuser-c"} {
			require.True(t, top[abuser], "%s: %s is among the most limited", label, abuser)
		}
	}
}

// TestCronAlignedBoundary: jobs 2s before and right at the five-minute mark
// (50 each) fall in two fixed windows, which admit all 100 within 3s; the
// sliding log admits the limit, 60.
func TestCronAlignedBoundary(t *testing.T) {
	res := compareJSON(t, "cron-aligned")
	fw := res["fixed-window"].Peaks[0]
	require.Equal(t, int64(60e9), fw.WindowNs)
	require.Equal(t, int64(100), fw.Count)
	require.Equal(t, int64(298e9), fw.StartNs, "starting with the early jobs at 4m58s")
	require.Equal(t, int64(60), res["sliding-log"].Peaks[0].Count)
	// token bucket: its burst of 60, then 2 tokens drip in over the 2s
	// before the punctual jobs (60 per minute is one per second)
	require.Equal(t, int64(62), res["token-bucket"].Peaks[0].Count)
}

// TestRetriesDeterministic: with retries and jitter on, the same scenario and
// seed give byte-identical output; another seed gives other figures.
func TestRetriesDeterministic(t *testing.T) {
	t.Parallel()
	_, first, _ := run(t, "compare", "retry-storm-jitter", "--format", "json")
	for i := 0; i < 3; i++ {
		_, again, _ := run(t, "compare", "retry-storm-jitter", "--format", "json")
		require.Equal(t, first, again)
	}
	_, other, _ := run(t, "compare", "retry-storm-jitter", "--format", "json", "--seed", "2")
	require.NotEqual(t, first, other)
}

// TestClusterDeterministic: a cluster with jitter on every trip, a random
// balancer, skews, store service and faults gives byte-identical output,
// decisions included, run after run; another seed gives other figures.
func TestClusterDeterministic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := dir + "/c.yaml"
	require.NoError(t, os.WriteFile(path, []byte(`name: jitter
seed: 3
duration: 5s
limit: {rate: 20, per: 1s, burst: 10}
cluster:
  nodes: 4
  balancer: random
  skew: 2ms
  store: {rtt: 2ms, jitter: 1ms, service: 30us, timeout: 20ms}
  faults:
    - {type: node-down, node: 1, at: 1s, for: 1s}
    - {type: store-slow, at: 2s, for: 1s, rtt: 30ms}
    - {type: store-flush, at: 4s}
algorithms:
  - {name: gcra, coordination: central}
  - {name: gcra, label: g-node, coordination: central, clock: node}
  - {name: sliding-log, coordination: racy}
  - {name: fixed-window, label: fw-incr, coordination: racy, write: incr}
  - {name: sliding-window, coordination: sync, sync: 50ms}
  - {name: token-bucket, coordination: lease, lease: 3}
  - {name: leaky-bucket, coordination: local}
  - {name: nginx, coordination: split}
  - {name: x-time-rate, coordination: local}
traffic:
  - {type: poisson, clients: 20, rate: 400/s}
clients:
  retry: {policy: backoff, delay: 10ms, jitter: full, max-attempts: 3}
`), 0o644))
	get := func(seed string) (string, string) {
		d := filepath.Join(dir, "d-"+seed+".csv")
		status, out, errOut := run(t, "compare", path, "--format", "json", "--decisions", d, "--seed", seed)
		require.Equal(t, 0, status, errOut)
		data, err := os.ReadFile(d)
		require.NoError(t, err)
		return out, string(data)
	}
	first, firstDec := get("3")
	for range 2 {
		again, againDec := get("3")
		require.Equal(t, first, again)
		require.Equal(t, firstDec, againDec)
	}
	other, _ := get("4")
	require.NotEqual(t, first, other)
}

// TestMetastableRetry holds metastable-retry to its story. Before the
// trigger (30s at 9 a second: 270 requests) the backend keeps up; after
// it, with no limiter, no request completes in time again: goodput stays
// near those 270 and never recovers. Behind a token bucket or a
// concurrency limit the queue drains: they recover, and serve most of the
// 1,730 requests. Jittered backoff (metastable-retry-jitter) does not save
// the row without a limiter; a retry budget (metastable-retry-budget)
// does, once the backlog has drained: it recovers, later than the
// limiters, with some retries throttled. The same scenario with an exponential service
// collapses before the trigger: its goodput is far
// below the 270 of the first 30s, which is why the built-in uses a
// lognormal (docs/backend.md).
func TestMetastableRetry(t *testing.T) {
	res := compareJSON(t, "metastable-retry")
	none := res["none"].Backend
	require.Nil(t, none.RecoveredNs, "none recovers")
	require.InDelta(t, 270, none.Goodput, 15, "none: what completed in time is the 30s before the trigger")
	for _, label := range []string{"token-bucket", "concurrency"} {
		b := res[label].Backend
		require.NotNil(t, b.RecoveredNs, label)
		require.Greater(t, b.Goodput, int64(1500), label)
	}
	jitter := compareJSON(t, "metastable-retry-jitter")["none"].Backend
	require.Nil(t, jitter.RecoveredNs, "jitter alone recovers")
	budget := compareJSON(t, "metastable-retry-budget")["none"]
	require.NotNil(t, budget.Backend.RecoveredNs, "a retry budget does not recover")
	require.Greater(t, *budget.Backend.RecoveredNs, int64(10e9), "a budget recovers only once the backlog drains")
	require.Positive(t, budget.RetriesThrottled)

	src, err := os.ReadFile(filepath.Join("..", "scenarios", "builtin", "metastable-retry.yaml"))
	require.NoError(t, err)
	exp := strings.Replace(string(src), "service: {dist: lognormal, mean: 100ms, p99: 200ms}", "service: {dist: exponential, mean: 100ms}", 1)
	require.NotEqual(t, string(src), exp)
	path := filepath.Join(t.TempDir(), "exp.yaml")
	require.NoError(t, os.WriteFile(path, []byte(exp), 0o644))
	res = compareJSON(t, path, "--algorithms", "none")
	require.Less(t, res["none"].Backend.Goodput, int64(100), "an exponential service at 90% collapses before the trigger")
}

// TestAdaptiveRowsGolden holds every adaptive row (aimd, vegas, gradient2
// bare and windowed, envoy-adaptive, sre-throttle with two settings) in
// front of a backend with errors and a slow spell, with budgeted retries,
// to its JSON output. The limits compute in floating point: CI runs this
// test under GOAMD64=v3 as well, where the compiler may fuse a multiply
// and an add unless the code prevents it; the golden must hold there too.
func TestAdaptiveRowsGolden(t *testing.T) {
	status, out, errOut := run(t, "compare", filepath.Join("testdata", "adaptive", "rows.yaml"), "--format", "json")
	require.Equal(t, 0, status, errOut)
	golden(t, filepath.Join("adaptive", "rows.json"), out)
}

// TestSeedFlagIsTheFilesSeed: --seed N runs what the same file with seed:
// N runs, backend draws included.
func TestSeedFlagIsTheFilesSeed(t *testing.T) {
	text, err := os.ReadFile("../scenarios/builtin/protect-the-backend.yaml")
	require.NoError(t, err)
	require.Contains(t, string(text), "\nseed: 11\n")
	path := filepath.Join(t.TempDir(), "protect-the-backend.yaml")
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(text), "\nseed: 11\n", "\nseed: 9\n", 1)), 0o644))
	status, want, errOut := run(t, "compare", path, "--format", "json")
	require.Equal(t, 0, status, errOut)
	status, got, errOut := run(t, "compare", "protect-the-backend", "--format", "json", "--seed", "9")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, want, got)
}
