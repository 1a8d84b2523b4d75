package algorithms

import "testing"

// BenchmarkDecideManyKeysReserved is BenchmarkDecideManyKeys with the state
// table sized up front by Reserve(1,000,000), as an engine that knows its
// keys would do: heap-B/key without the table's growth slack.
func BenchmarkDecideManyKeysReserved(b *testing.B) {
	const keys = 1_000_000
	for _, dist := range benchDists {
		b.Run(dist, func(b *testing.B) {
			for _, info := range All() {
				b.Run(info.Name, func(b *testing.B) {
					w := benchKeysWorkload(dist, keys)
					heap := benchHeapFrom(b, len(w.keys))
					l, c := benchLimiter(b, info.Name), &benchCursor{w: w}
					l.(Reserver).Reserve(keys)
					benchPlain(b, len(w.at), func(n int) int { return benchDecide(l, c, n) })
					b.ReportMetric(float64(l.Memory().BytesPerKeyMax), "B/key")
					heap.report(l, c)
				})
			}
		})
	}
}
