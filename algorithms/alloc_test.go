package algorithms

import (
	"runtime"
	"testing"
)

// TestDecideAllocatesNothing: once a hot key is warm, a decision of an exact
// algorithm allocates nothing. It runs the benchmarks' hot-key traffic
// (bench_test.go): 10,000 decisions of warm-up, which let the tables, the
// expiry heap and the logs reach their steady size, then two counts:
//
//   - testing.AllocsPerRun(1000, one decision), the average per decision;
//   - testing.AllocsPerRun(1, 100,000 decisions), every allocation of a long
//     run. AllocsPerRun rounds its average down, so an allocation every few
//     hundred decisions (a slice that grows now and then) reads as 0 in the
//     first count; the second counts each one.
//
// Both must be 0 for every exact algorithm: sliding-log and concurrency keep
// their entries in a ring reused in place (costLog, sliding_log.go), and the
// expiry queue of their live entries reuses its blocks (expiryFIFO, sliding_log.go).
func TestDecideAllocatesNothing(t *testing.T) {
	for _, info := range All() {
		if !info.Exact {
			continue
		}
		t.Run(info.Name, func(t *testing.T) {
			l, c := benchLimiter(t, info.Name), &benchCursor{w: benchHotKey()}
			benchDecide(l, c, 10_000)
			perDecision := testing.AllocsPerRun(1000, func() {
				now, key := c.next()
				l.Decide(now, key, 1)
			})
			const long = 100_000
			total := allocsIn(func() { benchDecide(l, c, long) })
			if perDecision != 0 {
				t.Errorf("%v allocations per decision on a warm hot key, want 0", perDecision)
			}
			if total != 0 {
				t.Errorf("%v allocations in %d decisions on a warm hot key, want 0", total, long)
			}
		})
	}
}

// TestDecideManyKeysAllocatesNothing: once a run over many keys has reached
// its steady state, a decision allocates nothing, for every algorithm, even
// as keys are released and become live again: sliding-log and concurrency
// take the rings of their logs from a ringPool (sliding_log.go) and
// x-time-rate takes released keys' Limiters back (XTimeRate.newLimiter).
// It runs the benchmarks' Zipf workload over 1,000 keys (bench_test.go),
// where most keys are released and come back many times in a cycle: one
// cycle of warm-up (2^20 decisions, which lets the table, the expiry heap,
// the pools and the rings reach their peak sizes), then counts every
// allocation of the next 200,000 decisions.
func TestDecideManyKeysAllocatesNothing(t *testing.T) {
	for _, info := range All() {
		t.Run(info.Name, func(t *testing.T) {
			l := benchLimiter(t, info.Name)
			c := &benchCursor{w: benchKeysWorkload("zipf", 1_000)}
			benchDecide(l, c, len(c.w.at))
			const long = 200_000
			if total := allocsIn(func() { benchDecide(l, c, long) }); total != 0 {
				t.Errorf("%v allocations in %d decisions over 1,000 warm keys, want 0", total, long)
			}
		})
	}
}

// allocsIn counts the allocations of a run of f (after one to warm up, as
// testing.AllocsPerRun(1, f) does); when there are any, it counts two more
// runs, after a collection, and returns the least count. The count is of
// the whole process: an allocation of another goroutine while f runs (one
// `go test ./...` under load made a single one in 100,000 decisions, and
// none in the runs that followed) counts as f's, where one of f's own per
// decision or per run recurs in every run. What this lets pass, an
// allocation only some runs make, grows the heap with the requests, which
// sim's TestMemoryIndependentOfRequests holds flat.
func allocsIn(f func()) float64 {
	least := testing.AllocsPerRun(1, f)
	for i := 0; i < 2 && least > 0; i++ {
		runtime.GC() // finalizers queued before now run before the count
		least = min(least, testing.AllocsPerRun(1, f))
	}
	return least
}
