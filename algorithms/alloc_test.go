package algorithms

import "testing"

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
// The first must be 0 for every exact algorithm. The second is 0 for all
// but the two of allocatesWhenWarm, which skip with the reason until their
// log stops allocating; when it does, remove them from the list.
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
			total := testing.AllocsPerRun(1, func() { benchDecide(l, c, long) })
			if perDecision != 0 {
				t.Errorf("%v allocations per decision on a warm hot key, want 0", perDecision)
			}
			if why, ok := allocatesWhenWarm[info.Name]; ok && total != 0 {
				t.Skipf("%v allocations in %d decisions on a warm hot key: %s", total, long, why)
			}
			if total != 0 {
				t.Errorf("%v allocations in %d decisions on a warm hot key, want 0", total, long)
			}
		})
	}
}

// allocatesWhenWarm are the exact algorithms known to allocate on a warm
// hot key, and why. Both keep a costLog (sliding_log.go): a slice pruned from
// the front (entries = entries[i:]) and appended at the back, so the live
// entries slide along the array and append reallocates, and copies them,
// each time they reach its end. A ring reused in place would not.
var allocatesWhenWarm = map[string]string{
	"sliding-log": "costLog.push reallocates the log each time its live entries (about L) slide to the end of " +
		"the array (costLog.prune reslices from the front): about one allocation per 200 decisions here",
	"concurrency": "costLog.push reallocates the FIFO of requests in flight each time its few live entries " +
		"(up to max) slide to the end of the array (costLog.prune reslices from the front): about one " +
		"allocation per 20 decisions here",
}
