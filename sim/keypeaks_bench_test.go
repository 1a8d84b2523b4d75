package sim

import (
	"runtime/debug"
	"testing"
)

// BenchmarkKeyPeaksPaired times the nine algorithms over a million Zipf
// keys (poisson-10m's traffic) with key peaks and without them
// (noKeyPeaks), in turn in one process, so that each pair of runs shares
// the machine's spell: the target is that key peaks cost at most 1.10x.
// Each run is poisson-10m's 10M requests (or b.N, if fewer; the peaks'
// longest window, a second, fills in the first million), and b.N/10M
// pairs are measured after one that is not, the order within a pair
// alternating. It reports the CPU (user and system, of the whole process)
// per request of each, medians, and the median of the pairs' ratios.
//
// In "warm", a run reuses the memory the runs before it freed, as runs
// in one process do (a sweep's); in "fresh", the heap is given back to
// the system before each run (debug.FreeOSMemory), so that, as in a
// compare's process, the run pays the kernel for zeroing the pages of
// every table it makes, key peaks' ring and totals among them:
//
//	go test ./sim -run '^$' -bench KeyPeaksPaired -benchtime 120000000x
func BenchmarkKeyPeaksPaired(b *testing.B) {
	for _, fresh := range []bool{false, true} {
		name := "warm"
		if fresh {
			name = "fresh"
		}
		b.Run(name, func(b *testing.B) { benchKeyPeaksPaired(b, fresh) })
	}
}

func benchKeyPeaksPaired(b *testing.B, fresh bool) {
	const per = 10_000_000
	requests := int64(min(b.N, per))
	rounds := max(b.N/per, 1)
	run := func(off bool) float64 {
		noKeyPeaks = off
		defer func() { noKeyPeaks = false }()
		cfg := benchConfig(zipfPlan(1_000_000, requests), benchAlgorithms())
		if fresh {
			debug.FreeOSMemory()
		}
		cpu := processCPU()
		rep, err := Run(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if got := len(rep.Results[0].KeyPeaks) > 0; got == off {
			b.Fatalf("key peaks kept: %v, with noKeyPeaks %v", got, off)
		}
		return float64(processCPU()-cpu) / float64(requests)
	}
	run(false)
	run(true)
	var with, without, ratios []float64
	for i := range rounds {
		var w, o float64
		if i%2 == 0 {
			w, o = run(false), run(true)
		} else {
			o, w = run(true), run(false)
		}
		with, without, ratios = append(with, w), append(without, o), append(ratios, w/o)
		b.Logf("pair %d: with key peaks %.0f, without %.0f cpu-ns/req: %.3fx", i+1, w, o, w/o)
	}
	b.ReportMetric(medianOf(with), "with-cpu-ns/req")
	b.ReportMetric(medianOf(without), "without-cpu-ns/req")
	b.ReportMetric(medianOf(ratios), "with/without")
	b.ReportMetric(0, "ns/op") // the run's own time is the pairs', not b.N's
}
