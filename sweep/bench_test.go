package sweep

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/runner"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

// benchScenario is 1M Poisson requests (N per second for 1s... as set)
// over 100,000 Zipf keys, through gcra and sliding-window.
func benchScenario(requests int) string {
	return fmt.Sprintf(`name: bench-sweep
seed: 1
duration: 10s
limit: {rate: 100, per: 1s, burst: 10}
algorithms: [gcra, sliding-window]
traffic:
  - type: poisson
    rate: %d/s
    clients: 100000
    key-prefix: user
    key-dist: zipf
    zipf-s: 1.1
`, requests/10)
}

func benchBase(b *testing.B, requests int) *Base {
	data := []byte(benchScenario(requests))
	sc, err := scenarios.Parse("bench.yaml", data)
	require.NoError(b, err)
	base, err := NewBase("bench.yaml", data, sc)
	require.NoError(b, err)
	return base
}

// peakHeap samples the heap in use while f runs and returns the most.
func peakHeap(f func()) uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	return peak.Load()
}

// cpuTime is the process's user + system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report gives decisions per second per core two ways: over the wall
// time times GOMAXPROCS (what the cores could do), and over the CPU time
// the process used (what the cores did, which a loaded machine's waits do
// not inflate).
func report(b *testing.B, decisions int64, heap uint64, cpu time.Duration) {
	total := float64(decisions) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds()/float64(runtime.GOMAXPROCS(0)), "decisions/s/core")
	if cpu > 0 {
		b.ReportMetric(total/cpu.Seconds(), "decisions/cpu-s")
	}
	b.ReportMetric(float64(heap)/(1<<20), "MiB-heap-peak")
}

// BenchmarkCompare1M is one compare of the 1M-request scenario: the
// reference for the sweep's decisions per second per core.
func BenchmarkCompare1M(b *testing.B) {
	base := benchBase(b, 1_000_000)
	var heap uint64
	cpu := cpuTime()
	for b.Loop() {
		heap = max(heap, peakHeap(func() {
			_, err := sim.Run(runner.ConfigOf(base.Sc))
			require.NoError(b, err)
		}))
	}
	report(b, 2*1_000_000, heap, cpuTime()-cpu)
}

// BenchmarkSweep64 sweeps 64 bursts over the same scenario: one sim.Run of
// 128 rows, the traffic generated once.
func BenchmarkSweep64(b *testing.B) {
	benchSweep(b, 1_000_000, 64, 0)
}

// BenchmarkSweep64Apart runs the same 64 points one sim.Run each: the
// traffic generated 64 times.
func BenchmarkSweep64Apart(b *testing.B) {
	benchSweep(b, 1_000_000, 64, 1)
}

// BenchmarkSweepMemory holds the points in flight to 8 (one run of 8
// points at a time) and grows the grid: the heap's peak stays that of 8
// points.
func BenchmarkSweepMemory(b *testing.B) {
	for _, n := range []int{8, 32, 128} {
		b.Run(strconv.Itoa(n)+"points", func(b *testing.B) {
			base := benchBase(b, 200_000)
			f, err := ParseVary("limit.burst=1.." + strconv.Itoa(n) + ":1")
			require.NoError(b, err)
			var heap uint64
			cpu := cpuTime()
			for b.Loop() {
				heap = max(heap, peakHeap(func() {
					_, err := Run(Options{Base: base, Fields: []Field{f}, Parallel: 1, PointsPerRun: 8})
					require.NoError(b, err)
				}))
			}
			report(b, int64(2*200_000*n), heap, cpuTime()-cpu)
		})
	}
}

func benchSweep(b *testing.B, requests, points, perRun int) {
	base := benchBase(b, requests)
	f, err := ParseVary("limit.burst=1.." + strconv.Itoa(points) + ":1")
	require.NoError(b, err)
	var heap uint64
	cpu := cpuTime()
	for b.Loop() {
		heap = max(heap, peakHeap(func() {
			s, err := Run(Options{Base: base, Fields: []Field{f}, PointsPerRun: perRun})
			require.NoError(b, err)
			require.Len(b, s.Points, points)
		}))
	}
	report(b, int64(2*requests*points), heap, cpuTime()-cpu)
}

// BenchmarkTraffic1M is what generating the scenario's traffic costs on
// its own: what a sweep pays once per run of points instead of once per
// point.
func BenchmarkTraffic1M(b *testing.B) {
	base := benchBase(b, 1_000_000)
	for b.Loop() {
		_, stream, err := base.Sc.Traffic.Open()
		require.NoError(b, err)
		var a traffic.Arrival
		n := 0
		for stream.Next(&a) {
			n++
		}
		require.NoError(b, stream.Err())
		require.Greater(b, n, 900_000)
	}
}
