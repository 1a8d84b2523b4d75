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
				b.Run(info.Name, func(b *testing.B) { benchManyKeysRun(b, info.Name, dist, keys, true) })
			}
		})
	}
}
