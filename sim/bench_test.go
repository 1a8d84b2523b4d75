package sim

import (
	"runtime"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
)

// BenchmarkEngine runs sim.Run, all nine algorithms of the registry as
// `ratesim compare` runs them (the traffic generated once, each algorithm's
// run on its own goroutine), on synthetic traffic. One op
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
//   - poisson-zipf-1M-keys: traffic.Poisson at 1,000,000 requests per
//     second over 1,000,000 clients drawn by a Zipf law of exponent 1.1
//     (client k the k-th heaviest), the traffic of issue 6's engine target;
//     the run ends after its first b.N arrivals (benchTake).
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
		src := &traffic.Poisson{
			Common:  traffic.Common{Clients: traffic.Clients{N: 1_000_000, Prefix: "user"}, Cost: 1},
			Rate:    traffic.Rate{Count: 1_000_000, Per: time.Second},
			KeyDist: traffic.KeyZipf, ZipfS: 1.1,
		}
		benchEngine(b, traffic.Plan{Sources: []traffic.Source{benchTake{src, int64(b.N)}}, Seed: 1}, 0)
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
