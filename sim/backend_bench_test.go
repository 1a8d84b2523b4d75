package sim

import (
	"testing"
	"time"

	"github.com/ratesim/ratesim/backend"
)

// BenchmarkBackendPaired measures the backend benchmark's two ratios in pairs of runs
// taken back to back, so that the machine's swings (other tenants move a
// run's time by 10-20% from one minute to the next) fall on both runs of
// a pair: backend-10 against plain-10 (1M requests of the 1M-key workload,
// as in BenchmarkEngineBackend), and each adaptive row against a token
// bucket's (each alone with the same backend). Each of b.N rounds runs
// every configuration once, in turn, after a run of plain-10 and one of
// backend-10 that are not counted (they map again the pages of the ten
// rows' tables, which the Go runtime gives back to the system while the
// single rows run: a run that mapped them would pay the page faults);
// CPU time of the process (user + system) per request. It reports the
// median over the rounds of each ratio, and of each configuration's
// time; a first round is not counted either. b.N is the requests: runs of
// a million requests each, as many rounds as b.N holds millions (at least
// one, of b.N requests, so that the CI's brief runs stay brief).
//
//	go test ./sim -run '^$' -bench BackendPaired -benchtime 9000000x
func BenchmarkBackendPaired(b *testing.B) {
	requests := int64(min(b.N, 1_000_000))
	rounds := max(b.N/1_000_000, 1)
	withBackend := func(c *Config) {
		c.Backend = &backend.Config{Workers: 16, Service: backend.Service{Dist: backend.Exponential, Mean: 12 * time.Microsecond},
			Queue: 1000, Timeout: 100 * time.Millisecond, Seed: 1, Bucket: c.Bucket}
	}
	ten := append(benchAlgorithms(), benchAlgorithm("none"))
	type config struct {
		name string
		algs []Algorithm
		be   bool
	}
	configs := []config{{"plain-10", ten, false}, {"backend-10", ten, true}}
	adaptive := []string{"aimd", "vegas", "gradient2", "envoy-adaptive", "sre-throttle"}
	for _, name := range append([]string{"token-bucket"}, adaptive...) {
		alg := benchAlgorithm(name)
		if name == "envoy-adaptive" {
			alg.Params.Interval = 100 * time.Millisecond // required, as in envoy
		}
		configs = append(configs, config{name + "-1", []Algorithm{alg}, true})
	}
	run := func(c config) float64 {
		cfg := benchConfig(zipfPlan(1_000_000, requests), c.algs)
		if c.be {
			withBackend(&cfg)
		}
		cpu := processCPU()
		if _, err := Run(cfg); err != nil {
			b.Fatal(err)
		}
		return float64(processCPU()-cpu) / float64(requests)
	}
	times := make([][]float64, len(configs))
	for i := range rounds + 1 {
		// the ten rows' tables, freed by the single rows before and
		// given back to the system, are mapped again first (page
		// faults that neither measured run should pay)
		run(configs[0])
		run(configs[1])
		for j, c := range configs {
			t := run(c)
			if i > 0 {
				times[j] = append(times[j], t)
			}
		}
	}
	ratio := func(j, k int) float64 {
		var rs []float64
		for i := range times[j] {
			rs = append(rs, times[j][i]/times[k][i])
		}
		return medianOf(rs)
	}
	for j, c := range configs {
		b.ReportMetric(medianOf(times[j]), c.name+"-cpu-ns/req")
	}
	for i := range times[0] {
		b.Logf("round %d: plain-10 %.0f, backend-10 %.0f cpu-ns/req: %.3fx", i+1, times[0][i], times[1][i], times[1][i]/times[0][i])
	}
	b.ReportMetric(ratio(1, 0), "backend-10/plain-10")
	for k, name := range adaptive {
		b.ReportMetric(ratio(3+k, 2), name+"/token-bucket")
	}
}
