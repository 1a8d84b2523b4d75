package redischeck

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/redistest"
	"github.com/ratesim/ratesim/redislua"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

// benchKeys is the number of keys of the replay benchmark: the memory
// table of docs/redis.md is at 100k keys.
const benchKeys = 100_000

// benchConfig is b.N Poisson requests, 100,000 a second, over 100k
// clients picked uniformly (about one request per client per second), at
// 10 per second per client with bursts of 10, service 100ms (concurrency),
// through one algorithm.
func benchConfig(name string, n int) sim.Config {
	pol := algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}
	rate := int64(benchKeys)
	return sim.Config{
		Name: "redis-bench", Seed: 1,
		Duration: time.Duration(int64(n) * int64(time.Second) / rate),
		Limit:    pol,
		Traffic: traffic.Plan{Seed: 1, Sources: []traffic.Source{&traffic.Poisson{
			Common: traffic.Common{Clients: traffic.Clients{N: benchKeys, Prefix: "user"}, Cost: 1},
			Rate:   traffic.Rate{Count: rate, Per: time.Second},
		}}},
		Windows:    []time.Duration{time.Second},
		Bucket:     100 * time.Millisecond,
		Algorithms: []sim.Algorithm{{Name: name, Label: name, Params: algorithms.Params{Policy: pol, Service: 100 * time.Millisecond}}},
	}
}

// BenchmarkRedisReplay replays b.N decisions of each algorithm on a real
// redis-server (compare --redis's path: the simulation streamed into
// pipelines of 32 EVALSHA on DefaultLanes connections, each answer
// compared), and in the same run times redis-benchmark sending the same
// script as many times with the same pipeline depth on as many
// connections (-c 4 -P 32), so that the figure
// to read is the ratio (the target in BENCHMARKS.md: at least 0.8). It also reports what the
// replay measured of memory: MEMORY USAGE of the largest state, used
// memory per key, and the simulation's bytes per key; at -benchtime
// 500000x nearly every one of the 100k keys holds state.
//
//	go test ./redischeck -run '^$' -bench RedisReplay -benchtime 500000x -count 3
func BenchmarkRedisReplay(b *testing.B) {
	if !redistest.Available() {
		b.Skip(redistest.Missing)
	}
	rb, err := exec.LookPath("redis-benchmark")
	if err != nil {
		b.Skip("redis-benchmark is not installed (on Debian or Ubuntu: apt-get install redis-tools)")
	}
	srv := redistest.Start(b)
	ctx := context.Background()
	c, err := redislua.Dial(ctx, srv.URL(), 2*time.Second)
	require.NoError(b, err)
	b.Cleanup(func() { c.Close() })
	for _, name := range redislua.Names() {
		b.Run(name, func(b *testing.B) {
			cfg := benchConfig(name, b.N)
			rep, err := sim.Run(cfg)
			require.NoError(b, err)
			src, err := redislua.Script(name, redislua.ClockArg)
			require.NoError(b, err)
			sha, err := c.ScriptLoad(ctx, src).Result()
			require.NoError(b, err)
			// redis-benchmark: the same script, as many calls, the same
			// depth and connections; the keys random among 100k, the
			// arguments those of one decision. It runs before and after
			// the replay, and the replay is held to the mean of the two:
			// the machine's speed drifts.
			args := []string{"-s", srv.Socket, "-n", strconv.Itoa(max(b.N, 1000)), "-c", strconv.Itoa(DefaultLanes),
				"-P", strconv.Itoa(redislua.DefaultDepth), "-r", strconv.Itoa(benchKeys), "-q", "evalsha", sha, "1",
				"ratesim:{rb}:" + name + ":__rand_int__"}
			for _, a := range redislua.Args(name, cfg.Algorithms[0].Params, time.Second, 1) {
				args = append(args, fmt.Sprint(a))
			}
			redisBenchmark := func() float64 {
				out, err := exec.Command(rb, args...).CombinedOutput()
				require.NoError(b, err, string(out))
				m := regexp.MustCompile(`([0-9.]+) requests per second`).FindSubmatch(out)
				require.NotNil(b, m, string(out))
				v, err := strconv.ParseFloat(string(m[1]), 64)
				require.NoError(b, err)
				require.NoError(b, c.FlushAll(ctx).Err())
				return v
			}
			rbBefore := redisBenchmark()

			b.ResetTimer()
			res, err := Check(ctx, c, cfg, rep, Options{Run: "bench"})
			b.StopTimer()
			require.NoError(b, err)
			x := res[0]
			require.Zero(b, x.Mismatches)
			rbOps := (rbBefore + redisBenchmark()) / 2

			// the replay's own rate (Check's ops_per_s), without the
			// measuring and deleting of the keys that follows it
			ops := float64(x.OpsPerS)
			b.ReportMetric(ops, "ops/s")
			b.ReportMetric(rbOps, "redis-benchmark-ops/s")
			b.ReportMetric(ops/rbOps, "ratio")
			b.ReportMetric(float64(x.MemoryUsageMax), "memory-usage-B")
			b.ReportMetric(float64(x.UsedMemoryPerKey), "used-B/key")
			b.ReportMetric(float64(rep.Results[0].Memory.BytesPerKeyMax), "sim-B/key")
			b.ReportMetric(float64(x.Keys), "keys")
		})
	}
}
