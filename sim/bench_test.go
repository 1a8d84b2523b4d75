package sim

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
)

// BenchmarkEngine runs sim.Run as `ratesim compare` runs it (the traffic
// generated once, each algorithm's run on its own goroutine) on synthetic
// traffic. One op is one request of the traffic, decided by nine
// algorithm runs: the plan sends exactly b.N requests, so `-benchtime
// 1000000x` is a run of one million requests (nine million decisions) and
// the default -benchtime grows the run until it takes about a second.
//
// Each workload has two sub-benchmarks, run one after the other in the same
// process, so that a figure can be read as a ratio to the reference:
//
//   - nine: the nine algorithms of the registry, as compare runs them;
//   - x-time-rate-x9: the same engine and the same requests through nine
//     runs of the x-time-rate row (golang.org/x/time/rate, one
//     *rate.Limiter per key), the same number of decisions made by the
//     production library.
//
// Workloads:
//
//   - steady-10k-keys: traffic.Steady over 10,000 clients, each sending at
//     twice the limit (200/s for 100/s, burst 10), round robin: 2,000,000
//     requests per second of virtual time.
//   - poisson-zipf-1M-keys: traffic.Poisson at 1,000,000 requests per
//     second over 1,000,000 clients drawn by a Zipf law of exponent 1.1
//     (client k the k-th heaviest), the traffic of the engine's target in BENCHMARKS.md
//     (scenarios/bench/poisson-10m.yaml); the run ends after its first b.N
//     arrivals (benchTake). The same with 1,000, 100,000 and 10,000,000
//     clients shows how the cost grows with the keys.
//
// Reported: decisions/s, the decisions of all nine runs per second of wall
// time; decisions/s/core, that over GOMAXPROCS; ns/decision, wall time over
// decisions; idle-%, the share of the GOMAXPROCS cores' time that the Go
// scheduler found nothing to run (how well the runs fill the cores,
// whatever else the machine runs); cpu-ns/op, the process's CPU time (user
// and system) per request, which, unlike the wall time, does not count the
// time other processes held the cores. ns/op is per request (nine
// decisions).
func BenchmarkEngine(b *testing.B) {
	steady := func(b *testing.B) (traffic.Plan, time.Duration) {
		const keys = 10_000
		per := benchPolicy.Per
		rate := traffic.Rate{Count: 2 * benchPolicy.Rate * keys, Per: per}
		// request i at floor(i*Per/Count): the n-th is the last before end
		end := time.Duration(int64(b.N-1)*int64(per)/rate.Count) + 1
		src := &traffic.Steady{
			Common: traffic.Common{Clients: traffic.Clients{N: keys, Prefix: "client"}, Cost: 1},
			Rate:   rate,
		}
		return traffic.Plan{Sources: []traffic.Source{src}, Seed: 1}, end
	}
	zipf := func(clients int) func(b *testing.B) (traffic.Plan, time.Duration) {
		return func(b *testing.B) (traffic.Plan, time.Duration) { return zipfPlan(clients, int64(b.N)), 0 }
	}
	workloads := []struct {
		name string
		plan func(b *testing.B) (traffic.Plan, time.Duration)
	}{
		{"steady-10k-keys", steady},
		{"poisson-zipf-1k-keys", zipf(1_000)},
		{"poisson-zipf-100k-keys", zipf(100_000)},
		{"poisson-zipf-1M-keys", zipf(1_000_000)},
		{"poisson-zipf-10M-keys", zipf(10_000_000)},
	}
	for _, w := range workloads {
		b.Run(w.name, func(b *testing.B) {
			b.Run("nine", func(b *testing.B) {
				plan, end := w.plan(b)
				benchEngine(b, plan, end, benchAlgorithms())
			})
			b.Run("x-time-rate-x9", func(b *testing.B) {
				plan, end := w.plan(b)
				var algs []Algorithm
				for i := range 9 {
					a := benchAlgorithm("x-time-rate")
					a.Label = fmt.Sprintf("x-time-rate-%d", i+1)
					algs = append(algs, a)
				}
				benchEngine(b, plan, end, algs)
			})
		})
	}
}

// zipfPlan is requests Poisson requests, 1,000,000 a second, from
// clients whose activity follows a Zipf law (s = 1.1): with a million
// clients, poisson-10m's traffic cut to requests.
func zipfPlan(clients int, requests int64) traffic.Plan {
	src := &traffic.Poisson{
		Common:  traffic.Common{Clients: traffic.Clients{N: clients, Prefix: "user"}, Cost: 1},
		Rate:    traffic.Rate{Count: 1_000_000, Per: time.Second},
		KeyDist: traffic.KeyZipf, ZipfS: 1.1,
	}
	return traffic.Plan{Sources: []traffic.Source{benchTake{src, requests}}, Seed: 1}
}

// benchConfig runs plan through algs on benchPolicy, with a scenario's
// defaults: windows W and W/10, bucket W/10.
func benchConfig(plan traffic.Plan, algs []Algorithm) Config {
	return Config{Name: "bench", Seed: 1, Limit: benchPolicy, Traffic: plan,
		Windows: []time.Duration{benchPolicy.Per, benchPolicy.Per / 10}, Bucket: benchPolicy.Per / 10,
		Algorithms: algs}
}

// medianOf is the median of xs (not empty).
func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// benchPolicy is the policy of every engine benchmark.
var benchPolicy = algorithms.Policy{Rate: 100, Per: time.Second, Burst: 10}

// benchAlgorithms returns the nine algorithms of the registry on
// benchPolicy.
func benchAlgorithms() []Algorithm {
	var algs []Algorithm
	for _, info := range algorithms.All() {
		algs = append(algs, benchAlgorithm(info.Name))
	}
	return algs
}

// benchEngine runs plan through algs once per benchmark run (b.N
// requests) and reports the throughput. duration 0 runs the plan to its
// end.
func benchEngine(b *testing.B, plan traffic.Plan, duration time.Duration, algs []Algorithm) {
	benchEngineOn(b, plan, duration, algs)
}

// benchEngineOn is benchEngine on the config that mods change (a
// cluster, a backend). A cluster row's decisions are its attempts; its
// reference runs too and is not counted.
func benchEngineOn(b *testing.B, plan traffic.Plan, duration time.Duration, algs []Algorithm, mods ...func(*Config)) {
	cfg := benchConfig(plan, algs)
	cfg.Duration = duration
	for _, m := range mods {
		m(&cfg)
	}
	b.ReportAllocs()
	idle := startIdle()
	cpu := processCPU()
	b.ResetTimer()
	rep, err := Run(cfg)
	b.StopTimer()
	b.ReportMetric(idle.percent(), "idle-%")
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	if err != nil {
		b.Fatal(err)
	}
	var decisions int64
	for _, r := range rep.Results {
		decisions += r.Attempts
	}
	if want := int64(b.N) * int64(len(cfg.Algorithms)); decisions != want {
		b.Fatalf("%d decisions, want %d (%d requests, %d algorithms)", decisions, want, b.N, len(cfg.Algorithms))
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(decisions)/sec, "decisions/s")
	b.ReportMetric(float64(decisions)/sec/float64(runtime.GOMAXPROCS(0)), "decisions/s/core")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(decisions), "ns/decision")
}

// benchTake is the first n arrivals of a source: a run of exactly n
// requests from a source that has no end of its own.
type benchTake struct {
	traffic.Source
	n int64
}

func (t benchTake) Open(k *traffic.Keys, index int, seed uint64) (traffic.Stream, error) {
	s, err := t.Source.Open(k, index, seed)
	if err != nil {
		return nil, err
	}
	return &benchTakeStream{Stream: s, left: t.n}, nil
}

type benchTakeStream struct {
	traffic.Stream
	left int64
}

func (s *benchTakeStream) Next(a *traffic.Arrival) bool {
	if s.left == 0 {
		return false
	}
	s.left--
	return s.Stream.Next(a)
}

// BenchmarkReplay replays a recorded trace through sim.Run: a combined
// access log (see writeCombinedLog), read by a traffic.Replay source (the
// file read, every line parsed, its key interned, the reorder buffer, even
// spreading) and decided by the engine. One op is one line of the trace:
// the log has exactly b.N lines, written once per size to a temporary
// directory (outside the timing) and shared by the sub-benchmarks, so
// `-benchtime 1000000x` is a run of a million lines. Reported: lines/s,
// the lines over wall time, and lines/s/core, that over GOMAXPROCS (the
// target in BENCHMARKS.md is 1,000,000 lines per second per core through
// parsing and the engine); idle-% as for BenchmarkEngine.
//
// Sub-benchmarks: all nine algorithms (nine decisions a line), gcra
// alone, and x-time-rate alone (the reference, in the same run).
//
//	go test ./sim -run '^$' -bench Replay -benchtime 1000000x
func BenchmarkReplay(b *testing.B) {
	dir := b.TempDir()
	logs := map[int]string{} // by lines
	logOf := func(b *testing.B) string {
		if path, ok := logs[b.N]; ok {
			return path
		}
		path := writeCombinedLog(b, dir, b.N)
		logs[b.N] = path
		return path
	}
	var all []Algorithm
	for _, info := range algorithms.All() {
		all = append(all, benchAlgorithm(info.Name))
	}
	b.Run("all-nine", func(b *testing.B) { benchReplay(b, logOf(b), all) })
	b.Run("gcra", func(b *testing.B) { benchReplay(b, logOf(b), []Algorithm{benchAlgorithm("gcra")}) })
	b.Run("x-time-rate", func(b *testing.B) { benchReplay(b, logOf(b), []Algorithm{benchAlgorithm("x-time-rate")}) })
}

// benchAlgorithm is algorithm name under benchPolicy, as benchEngine runs
// it.
func benchAlgorithm(name string) Algorithm {
	p := algorithms.Params{Policy: benchPolicy}
	if name == "concurrency" {
		p.Service = time.Duration(int64(benchPolicy.Per) * benchPolicy.Burst / benchPolicy.Rate)
	}
	return Algorithm{Name: name, Label: name, Params: p}
}

// benchReplay runs the trace at path (b.N lines) through algs once and
// reports the lines per second.
func benchReplay(b *testing.B, path string, algs []Algorithm) {
	// the scenario file's default reorder window
	cfg := benchConfig(traffic.Plan{Sources: []traffic.Source{&traffic.Replay{Path: path, Reorder: 5 * time.Minute}}, Seed: 1}, algs)
	cfg.Name = "replay"
	b.ReportAllocs()
	idle := startIdle()
	b.ResetTimer()
	rep, err := Run(cfg)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if got := rep.Results[0].Offered; got != int64(b.N) {
		b.Fatalf("%d lines replayed, want %d", got, b.N)
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(idle.percent(), "idle-%")
	b.ReportMetric(float64(b.N)/sec, "lines/s")
	b.ReportMetric(float64(b.N)/sec/float64(runtime.GOMAXPROCS(0)), "lines/s/core")
}

// writeCombinedLog writes n lines of a combined access log to a file in
// dir and returns its path: 2,000 lines a second stamped in whole seconds
// (so every line is spread; a million lines span 500s, more than the
// reorder window of 5m, so lines leave the buffer as others come), clients
// (the ip, the replay's default key) drawn from 20,000 by a seeded Zipf
// law (s = 1.1: the heaviest sends about 190 a second against
// benchPolicy's 100, most one now and then), one line
// in 50 stamped 2s early (out of order, within the reorder window), about
// 200 bytes a line as real logs have. (traffic's replay benchmark has a
// writer of its own, unexported.)
func writeCombinedLog(tb testing.TB, dir string, n int) string {
	tb.Helper()
	path := filepath.Join(dir, fmt.Sprintf("access-%d.log", n))
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	zipf := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), 1.1, 1, 20_000-1)
	start := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range n {
		t := start.Add(time.Duration(i/2_000) * time.Second)
		if i%50 == 7 {
			t = t.Add(-2 * time.Second)
		}
		c := zipf.Uint64()
		fmt.Fprintf(w, "10.%d.%d.%d - - [%s] \"GET /api/v1/items/%d?page=%d HTTP/1.1\" %d %d \"https://example.com/\" \"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36\"\n",
			c>>16, c>>8&255, c&255, t.Format("02/Jan/2006:15:04:05 -0700"), i%997, i%13, 200+(i%3)*100, 1000+i%5000)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// idleMeter measures the share of the cores' time (GOMAXPROCS of them,
// over wall time) that the Go scheduler had nothing to run, from the
// runtime's /cpu/classes metrics: a run that keeps every core busy shows
// about 0 (a GC's idle marking aside), whatever else the machine runs.
type idleMeter struct {
	samples   []metrics.Sample
	idle, all float64
}

func startIdle() *idleMeter {
	m := &idleMeter{samples: []metrics.Sample{
		{Name: "/cpu/classes/idle:cpu-seconds"},
		{Name: "/cpu/classes/total:cpu-seconds"},
	}}
	m.idle, m.all = m.read()
	return m
}

func (m *idleMeter) read() (idle, all float64) {
	metrics.Read(m.samples)
	return m.samples[0].Value.Float64(), m.samples[1].Value.Float64()
}

// percent is the idle share since startIdle, in percent.
func (m *idleMeter) percent() float64 {
	idle, all := m.read()
	if all <= m.all {
		return 0
	}
	return 100 * (idle - m.idle) / (all - m.all)
}
