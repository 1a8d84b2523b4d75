package sim

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
)

// BenchmarkEngine runs sim.Run, all nine algorithms of the registry on
// GOMAXPROCS workers as `ratesim compare` does, on synthetic traffic. One op
// is one request of the traffic, decided by all nine algorithms: the plan
// sends exactly b.N requests, so `-benchtime 1000000x` is a run of one
// million requests (nine million decisions) and the default -benchtime
// grows the run until it takes about a second.
//
// Sub-benchmarks:
//
//   - steady-10k-keys: traffic.Steady over 10,000 clients, each sending at
//     twice the limit (200/s for 100/s, burst 10), round robin: 2,000,000
//     requests per second of virtual time. The moderate default.
//   - poisson-zipf-1M-keys: exponential gaps at 1,000,000 requests per
//     second over 1,000,000 keys drawn by a Zipf law of exponent 1.1 (key k
//     the k-th heaviest), the shape of issue 6's engine target. Its source
//     is defined here (benchZipfPoisson) so that the benchmark does not
//     depend on a traffic source still being written.
//
// Reported: decisions/s, the algorithm-decisions of all nine per second of
// wall time; decisions/s/core, that over GOMAXPROCS; ns/decision, wall time
// over decisions. ns/op is per request (nine decisions).
func BenchmarkEngine(b *testing.B) {
	b.Run("steady-10k-keys", func(b *testing.B) {
		const keys = 10_000
		per := benchPolicy.Per
		rate := traffic.Rate{Count: 2 * benchPolicy.Rate * keys, Per: per}
		// request i at floor(i*Per/Count): the n-th is the last before end
		end := time.Duration(int64(b.N-1)*int64(per)/rate.Count) + 1
		src := &traffic.Steady{
			Common: traffic.Common{Clients: traffic.Clients{N: keys, Prefix: "client"}, Cost: 1},
			Rate:   rate,
		}
		benchEngine(b, traffic.Plan{Sources: []traffic.Source{src}, Seed: 1}, end)
	})
	b.Run("poisson-zipf-1M-keys", func(b *testing.B) {
		src := &benchZipfPoisson{keys: 1_000_000, perSecond: 1_000_000, s: 1.1, n: int64(b.N)}
		benchEngine(b, traffic.Plan{Sources: []traffic.Source{src}, Seed: 1}, 0)
	})
}

// benchPolicy is the policy of every engine benchmark.
var benchPolicy = algorithms.Policy{Rate: 100, Per: time.Second, Burst: 10}

// benchEngine runs plan through every algorithm once per benchmark run
// (b.N requests) and reports the throughput. duration 0 runs the plan to
// its end.
func benchEngine(b *testing.B, plan traffic.Plan, duration time.Duration) {
	cfg := Config{
		Name: "bench", Seed: 1, Duration: duration,
		Limit:   benchPolicy,
		Traffic: plan,
		// a scenario's defaults: windows W and W/10, bucket W/10
		Windows: []time.Duration{benchPolicy.Per, benchPolicy.Per / 10},
		Bucket:  benchPolicy.Per / 10,
	}
	for _, info := range algorithms.All() {
		p := algorithms.Params{Policy: benchPolicy}
		if info.Name == "concurrency" {
			p.Service = time.Duration(int64(benchPolicy.Per) * benchPolicy.Burst / benchPolicy.Rate)
		}
		cfg.Algorithms = append(cfg.Algorithms, Algorithm{Name: info.Name, Label: info.Name, Params: p})
	}
	b.ReportAllocs()
	b.ResetTimer()
	rep, err := Run(cfg)
	b.StopTimer()
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

// benchZipfPoisson sends n requests with exponential gaps at perSecond
// requests per second, each to one of keys clients ("user-0" ..) drawn by
// math/rand/v2's Zipf generator of exponent s (client k the k-th
// heaviest), seeded from the source's seed.
type benchZipfPoisson struct {
	keys      int
	perSecond int64
	s         float64
	n         int64
}

func (z *benchZipfPoisson) Declare(k *traffic.Keys) { k.Range("user", z.keys) }
func (z *benchZipfPoisson) End() time.Duration      { return 0 }

func (z *benchZipfPoisson) Open(k *traffic.Keys, index int, seed uint64) (traffic.Stream, error) {
	gaps := rand.New(rand.NewPCG(seed, 1))
	keys := rand.New(rand.NewPCG(seed, 2))
	return &benchZipfStream{
		src: z, base: k.Range("user", z.keys), source: int32(index),
		gaps: gaps, zipf: rand.NewZipf(keys, z.s, 1, uint64(z.keys-1)),
		mean: float64(time.Second) / float64(z.perSecond),
	}, nil
}

type benchZipfStream struct {
	src    *benchZipfPoisson
	base   uint32
	source int32
	gaps   *rand.Rand
	zipf   *rand.Zipf
	mean   float64 // ns between requests
	at     time.Duration
	sent   int64
}

func (s *benchZipfStream) Err() error { return nil }

func (s *benchZipfStream) Next(a *traffic.Arrival) bool {
	if s.sent == s.src.n {
		return false
	}
	s.sent++
	s.at += time.Duration(math.Round(s.gaps.ExpFloat64() * s.mean))
	*a = traffic.Arrival{At: s.at, Key: s.base + uint32(s.zipf.Uint64()), Cost: 1, Source: s.source}
	return true
}
