package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/redistest"
	"github.com/ratesim/ratesim/internal/testenv"
	"github.com/ratesim/ratesim/redislua"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
)

// compareOnRedis runs compare (or replay) with --redis and the JSON format
// and returns the report.
func compareOnRedis(t *testing.T, url string, args ...string) *sim.Report {
	t.Helper()
	return jsonReport(t, append(args, "--redis", url)...)
}

// Every built-in scenario, and a recorded trace whose instants are dates
// (its epoch is far from 0), replayed on a real redis-server: every row
// with a script is replayed, decision for decision, with no mismatch. The
// rows that are not replayed say why: a row without a script (x-time-rate,
// resilience4j), a cluster row whose nodes decide on their own state runs
// none in a store, an nginx row with a zone frees nodes that Redis
// would keep, and an all-of row with a limit that has no script names it.
func TestCompareRedisBuiltins(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	check := func(t *testing.T, rep *sim.Report) {
		for _, res := range rep.Results {
			x := res.Redis
			require.NotNil(t, x, res.Label)
			if x.Skipped != "" {
				mode := ""
				if res.Cluster != nil {
					mode = res.Cluster.Coordination
				}
				info, _ := algorithms.Lookup(res.Algorithm)
				_, zoned := res.Params["zone"] // nginx's zone frees nodes; Redis keeps every key
				// an all-of row with a limit that has no script names it
				noScriptLimit := res.Algorithm == redislua.AllOf && strings.Contains(x.Skipped, " has no script: ")
				require.True(t, !redislua.Has(res.Algorithm) || info.Backend || (mode != "" && mode != "central") || zoned ||
					(res.Algorithm == "concurrency" && res.Backend != nil) || noScriptLimit,
					"%s skipped: %s", res.Label, x.Skipped)
				continue
			}
			require.Zero(t, x.Mismatches, "%s: %+v", res.Label, x.FirstMismatch)
			require.Nil(t, x.FirstMismatch)
			require.Positive(t, x.Decisions, res.Label)
			if res.Cluster == nil {
				// a plain row replays every attempt
				require.Equal(t, res.Attempts, x.Decisions, res.Label)
			} else {
				// a central row, every script its store ran
				require.Equal(t, res.Cluster.StoreOps-res.Cluster.StoreErrors, x.Decisions, res.Label)
			}
		}
	}
	for i, b := range scenarios.Builtins() {
		t.Run(b.Name, func(t *testing.T) {
			if longOnRedis[b.Name] {
				testenv.Long(t, b.Name+" on Redis, one of the built-ins that run the most scripts")
			}
			if i%4 != 0 {
				testenv.Long(t, "three built-ins of four on Redis (the quick suite runs every fourth)")
			}
			check(t, compareOnRedis(t, srv.URL(), "compare", b.Name))
		})
	}
	t.Run("trace", func(t *testing.T) {
		// an access log of 2015: instants of 1.4e18 ns, far beyond
		// 2^53, which the epoch brings near 0
		var log strings.Builder
		base := time.Date(2015, 5, 17, 10, 5, 3, 0, time.UTC)
		for i := range 600 {
			at := base.Add(time.Duration(i*i/40) * time.Second / 7) // in order, ties and gaps
			fmt.Fprintf(&log, "10.0.0.%d - - [%s] \"GET /x HTTP/1.1\" 200 1 \"-\" \"t\"\n", i%7, at.Format("02/Jan/2006:15:04:05 -0700"))
		}
		path := filepath.Join(t.TempDir(), "access.log")
		require.NoError(t, os.WriteFile(path, []byte(log.String()), 0o644))
		check(t, compareOnRedis(t, srv.URL(), "replay", path, "--limit", "2/s", "--burst", "3"))
	})
	n, err := srv.Client(t).DBSize(t.Context()).Result()
	require.NoError(t, err)
	require.Zero(t, n, "every run deletes its keys")
}

// longOnRedis are the built-ins whose replay on Redis runs the most
// scripts: plain rows under heavy traffic, whose scripts the other
// built-ins run too (and api-gateway's rows run on Redis in
// TestRedisDocExample); with RATESIM_LONG=1 only.
var longOnRedis = map[string]bool{"api-gateway": true, "retry-storm": true, "retry-storm-jitter": true}

// --redis-keep leaves the keys, named ratesim:{RUN}:LABEL:KEY.
func TestCompareRedisKeep(t *testing.T) {
	srv := redistest.Start(t)
	status, _, errOut := run(t, "compare", "double-burst", "--algorithms", "gcra", "--redis", srv.URL(), "--redis-keep")
	require.Equal(t, 0, status, errOut)
	keys, err := srv.Client(t).Keys(t.Context(), "ratesim:{*}:gcra:*").Result()
	require.NoError(t, err)
	require.Len(t, keys, 1, "double-burst has one client")
}

// Redis that cannot be reached is a clear error within the timeout, exit
// 1; a policy whose script would leave the exact range is bad input, exit
// 2, with what overflows and what would fit; a Redis that dies mid-run
// stops the run with how many decisions were checked.
func TestCompareRedisFailures(t *testing.T) {
	t.Parallel()
	start := time.Now()
	status, out, errOut := run(t, "compare", "double-burst", "--redis", "unix://"+filepath.Join(t.TempDir(), "none.sock"), "--redis-timeout", "500ms")
	require.Equal(t, 1, status)
	require.Empty(t, out)
	require.Contains(t, errOut, "does not answer within 500ms")
	require.NotContains(t, errOut, "goroutine")
	require.Less(t, time.Since(start), 10*time.Second)

	status, _, errOut = run(t, "compare", "double-burst", "--redis", "http://localhost:1")
	require.Equal(t, 1, status)
	require.Contains(t, errOut, "want redis://host:port/db or unix:///path/redis.sock")

	if !redistest.Available() {
		t.Skip(redistest.Missing)
	}
	srv := redistest.Start(t)
	dir := t.TempDir()
	wide := filepath.Join(dir, "wide.yaml")
	require.NoError(t, os.WriteFile(wide, []byte(`name: wide
duration: 2h
limit: {rate: 1000000, per: 1h}
traffic:
  - {type: constant, rate: 1/s}
algorithms: [sliding-window]
`), 0o644))
	status, out, errOut = run(t, "compare", wide, "--redis", srv.URL())
	require.Equal(t, 2, status, errOut)
	require.Empty(t, out)
	require.Contains(t, errOut, "sliding-window")
	require.Contains(t, errOut, "2^")

	long := filepath.Join(dir, "long.yaml")
	require.NoError(t, os.WriteFile(long, []byte(`name: long
duration: 20s
limit: {rate: 100, per: 1s, burst: 10}
traffic:
  - {type: poisson, rate: 20000/s, clients: 1000}
algorithms: [gcra]
`), 0o644))
	// kill the server once the replay is under way: when it has run a
	// hundred scripts (not after a fixed time, which a loaded machine can
	// spend before the replay starts)
	cli := srv.Client(t)
	go func() {
		defer srv.Kill()
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			info, err := cli.Info(context.Background(), "commandstats").Result()
			if err != nil {
				return
			}
			if m := evalshaCalls.FindStringSubmatch(info); m != nil {
				if n, _ := strconv.Atoi(m[1]); n >= 100 {
					return
				}
			}
		}
	}()
	status, out, errOut = run(t, "compare", long, "--redis", srv.URL())
	require.Equal(t, 1, status, errOut)
	require.Empty(t, out)
	require.Regexp(t, `gcra: redis: stopped after \d+ decisions were made and checked`, errOut)
	require.NotContains(t, errOut, "goroutine")
	require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
}

// evalshaCalls reads the scripts run from INFO commandstats.
var evalshaCalls = regexp.MustCompile(`cmdstat_evalsha:calls=(\d+)`)

// docs/redis.md shows compare --redis runs: the test runs each on a real
// server and requires the lines shown under "Replayed on Redis:", but for
// the figures that change from run to run (ops/s, p99, and the used memory
// per key, which moves with the allocator).
func TestRedisDocExample(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../docs/redis.md")
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	const prefix = "$ ratesim compare "
	srv := redistest.Start(t)
	mask := regexp.MustCompile(`\d+ B used per key|\d+ ops/s, p99 \S+`)
	ran := 0
	for at, l := range lines {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		var want []string
		for _, l := range lines[at+1:] {
			if strings.HasPrefix(l, "```") {
				break
			}
			want = append(want, l)
		}
		require.Equal(t, "...", want[0], "docs/redis.md:%d", at+1)
		want = want[1:]
		args := strings.Fields(strings.TrimPrefix(l, "$ ratesim "))
		require.Equal(t, "unix:///tmp/redis.sock", args[len(args)-1])
		args[len(args)-1] = srv.URL()
		if strings.HasPrefix(args[1], "examples/") {
			args[1] = "../" + args[1] // the page's paths are from the repository's root
		}
		status, out, errOut := run(t, args...)
		require.Equal(t, 0, status, errOut)
		got := strings.Split(strings.TrimRight(out[strings.Index(out, "Replayed on Redis:"):], "\n"), "\n")
		if i := slices.Index(got, ""); i >= 0 {
			got = got[:i] // the section ends at a blank line (a timeline may follow)
		}
		for i := range got {
			got[i] = mask.ReplaceAllString(got[i], "#")
		}
		for i := range want {
			want[i] = mask.ReplaceAllString(want[i], "#")
		}
		require.Equal(t, want, got, "docs/redis.md:%d", at+1)
		ran++
	}
	require.GreaterOrEqual(t, ran, 2, "docs/redis.md shows api-gateway's and an all-of row's runs")
}

// Each row that has no script says its own reason: haproxy's counter is in
// integers (no "floating point"); an all-of row with a limit that has no
// script names that limit; x-time-rate does decide in floating point. An
// all-of row whose limits all have scripts is replayed. A row that was replayed
// reports a used memory per key that is either measured (above 0) or said
// not to be, never "0 B used per key".
func TestCompareRedisReasonsAndMemory(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	path := writeFile(t, "rows.yaml", `name: rows
duration: 3s
limit: 5/s
algorithms:
  - token-bucket
  - x-time-rate
  - {name: haproxy, label: hap, rate: 5, per: 1s}
  - {name: all-of, label: both, limits: [{name: token-bucket, rate: 5, burst: 2}, {name: fixed-window, rate: 20, per: 1m}]}
  - {name: all-of, label: apim, commit: in-order, limits: [{name: token-bucket, rate: 5, burst: 2}, {name: azure-rate-limit, rate: 20, per: 1m}]}
traffic:
  - {type: steady, key: client, rate: 8/s}
`)
	for range 5 {
		status, out, errOut := run(t, "compare", path, "--redis", srv.URL())
		require.Equal(t, 0, status, errOut)
		require.Contains(t, out, "x-time-rate   not replayed: x-time-rate has no script: it decides in floating point\n")
		require.Contains(t, out, "hap           not replayed: haproxy has no script: ratesim has no script of HAProxy's stick-table counter (freq_ctr.c, in integers)")
		require.Regexp(t, `both          \d+ decisions, 0 mismatched`, out)
		require.Contains(t, out, "apim          not replayed: limits[1]: azure-rate-limit has no script: ratesim has no script of API Management's rate-limit policies")
		require.Regexp(t, `token-bucket  \d+ decisions, 0 mismatched; MEMORY USAGE max \d+ B, ([1-9]\d* B used per key|used memory per key not measured) \(1 key\)`, out)
		require.NotContains(t, out, " 0 B used per key")
	}
	status, out, errOut := run(t, "compare", path, "--redis", srv.URL(), "--redis-keep", "--algorithms", "token-bucket")
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "used memory per key not measured (1 key)")
}

// All-of rows replay on Redis in every commit mode, with limits counting by
// the request's key, by every request (by: global) and by attributes that
// some requests lack: every decision, and the limit that fired, the
// simulation's. Their limits' keys are shared by requests of different
// keys, so they go out on one connection, in the simulation's order.
func TestCompareRedisAllOf(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	path := writeFile(t, "allof.yaml", `name: allof
duration: 6s
limit: 10/s
traffic:
  - {type: poisson, rate: 50/s, clients: 20, key-prefix: addr, attributes: {server: api, user: u1}}
  - {type: poisson, rate: 20/s, clients: 5, key-prefix: anon, attributes: {server: api}}
  - {type: poisson, rate: 20/s, clients: 5, key-prefix: web, attributes: {server: web, user: u2}}
algorithms:
  - name: all-of
    label: two-zones
    limits:
      - {name: nginx, rate: 4, per: 1s, burst: 4}
      - {name: nginx, rate: 30, per: 1s, burst: 20, by: global, label: "zone=persrv"}
  - name: all-of
    label: every-hit
    commit: every-hit
    limits:
      - {name: fixed-window, rate: 5, per: 1s}
      - {name: sliding-window, rate: 40, per: 2s, by: server, count-rejected: true}
      - {name: token-bucket, rate: 10, per: 1s, burst: 5, max-delay: 200ms, by: user}
  - name: all-of
    label: in-order
    commit: in-order
    limits:
      - {name: token-bucket, rate: 10, per: 1s, burst: 5, by: user}
      - {name: fixed-window, rate: 3, per: 500ms}
      - {name: nginx, rate: 60, per: 1m, burst: 10, nodelay: true, by: server}
`)
	rep := compareOnRedis(t, srv.URL(), "compare", path)
	require.Len(t, rep.Results, 3)
	for _, res := range rep.Results {
		x := res.Redis
		require.NotNil(t, x, res.Label)
		require.Empty(t, x.Skipped, res.Label)
		require.Zero(t, x.Mismatches, "%s: %+v", res.Label, x.FirstMismatch)
		require.Equal(t, res.Attempts, x.Decisions, res.Label)
		require.Positive(t, res.Rejected, res.Label)
		fired := 0
		for _, f := range res.Fired {
			if f.Rejected > 0 || f.Delayed > 0 {
				fired++
			}
		}
		require.GreaterOrEqual(t, fired, 2, "%s: more than one limit fired: %+v", res.Label, res.Fired)
	}
}

// A scenario whose times are absolute instants (Unix times of 2015,
// written as durations) replays on Redis from its first request, as
// replay counts a trace from its first line: from 0 its instants would
// be past 2^53 ns, where the scripts' numbers stop being exact.
func TestCompareRedisAbsoluteTimes(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	path := writeFile(t, "abs.yaml", `name: absolute
limit: 1/s
algorithms: [fixed-window, sliding-window, token-bucket, gcra, nginx]
traffic:
  - {type: times, key: a, at: [398890h5m3s, 398890h5m3500ms, 398890h5m4s, 398890h5m4s, 398890h5m6s]}
  - {type: times, key: b, at: [398890h5m3100ms, 398890h5m3200ms, 398890h5m5s]}
`)
	status, out, errOut := run(t, "compare", path, "--redis", srv.URL())
	require.Equal(t, 0, status, errOut)
	for _, row := range []string{"fixed-window", "sliding-window", "token-bucket", "gcra", "nginx"} {
		require.Regexp(t, `\n  `+row+` +8 decisions, 0 mismatched`, out)
	}
}

// The same on a cluster: its central rows count from the first request
// less the most a node's clock is skewed back (here 1.5s), not from 0,
// where the span would be 2^61 ns and the row refused (exit 2).
func TestCompareRedisAbsoluteTimesCluster(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	path := writeFile(t, "abs.yaml", `name: absolute
limit: 1/s
algorithms: [fixed-window, gcra]
cluster:
  nodes: 2
  skew: [0, -1500ms]
  store: {rtt: 1ms}
traffic:
  - {type: times, key: a, at: [398890h5m3s, 398890h5m3500ms, 398890h5m4s, 398890h5m4s, 398890h5m6s]}
  - {type: times, key: b, at: [398890h5m3100ms, 398890h5m3200ms, 398890h5m5s]}
`)
	status, out, errOut := run(t, "compare", path, "--redis", srv.URL())
	require.Equal(t, 0, status, errOut)
	// central with the store's clock, as one limiter 0.5ms later: a is
	// admitted at 3s, 4s and 6s, rejected at 3.5s and the second 4s; b at
	// 3.1s and 5s, rejected at 3.2s. 8 scripts, each replayed.
	require.Regexp(t, `\| fixed-window \| central \| +5 \| +3 \|`, out)
	for _, row := range []string{"fixed-window", "gcra"} {
		require.Regexp(t, `\n  `+row+` +8 decisions, 0 mismatched`, out)
	}
}
