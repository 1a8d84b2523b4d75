package backend

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratesim/ratesim/internal/portable"
)

// BenchmarkBackend: the mixed backend (mixedConfig: lognormal service,
// errors, LIFO queue of 20, timeouts with drop-expired, faults) over
// Poisson arrivals at 140/s, near its capacity; per request submitted.
func BenchmarkBackend(b *testing.B) {
	benchPoisson(b, mixedConfig(), 140, false)
}

// BenchmarkBackendExp16: the backend of sim's BenchmarkEngineBackend (16
// workers, exponential service of mean 12us, a queue of 1000, clients
// waiting 100ms) alone, over Poisson arrivals at 1.2M/s (90% of its
// capacity), emitting only the clients' outcomes as sim's engine asks;
// per request submitted. It isolates one row's backend of backend-10 from
// the engine's noise.
func BenchmarkBackendExp16(b *testing.B) {
	cfg := Config{Workers: 16, Service: Service{Dist: Exponential, Mean: 12 * time.Microsecond},
		Queue: 1000, Timeout: 100 * time.Millisecond, Seed: 1, Bucket: time.Second}
	benchPoisson(b, cfg, 1_200_000, true)
}

// benchPoisson submits b.N requests arriving as a Poisson process of rate
// a second to a backend of cfg, each admitted at its arrival (clientOnly:
// it emits only the clients' outcomes, as sim's engine asks).
func benchPoisson(b *testing.B, cfg Config, rate float64, clientOnly bool) {
	bk, err := New(cfg, func(Event) {})
	if err != nil {
		b.Fatal(err)
	}
	if clientOnly {
		bk.OnlyClientEvents()
	}
	rng := rand.New(rand.NewPCG(1, 2))
	gap := float64(time.Second) / rate
	var at time.Duration
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		u := float64(rng.Uint64()>>11+1) / (1 << 53)
		at += toDuration(float64(-portable.Log(u) * gap))
		bk.Until(at)
		if err := bk.Submit(&Request{ID: uint64(i), Attempt: 1, Arrived: at, Admitted: at}); err != nil {
			b.Fatal(err)
		}
	}
	bk.Until(math.MaxInt64)
}

// BenchmarkBackendWide: a backend of 256 workers (exponential service of
// mean 200us, a queue of 1000, clients waiting 100ms) over Poisson
// arrivals at 1.15M/s (90% of its capacity), emitting only the clients'
// outcomes: more workers than the completions keep sorted (sortedMax), so
// that every request's completion goes through their heap; per request
// submitted.
func BenchmarkBackendWide(b *testing.B) {
	cfg := Config{Workers: 256, Service: Service{Dist: Exponential, Mean: 200 * time.Microsecond},
		Queue: 1000, Timeout: 100 * time.Millisecond, Seed: 1, Bucket: time.Second}
	benchPoisson(b, cfg, 1_150_000, true)
}
