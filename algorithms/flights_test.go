package algorithms

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// flights against a map, over random additions and subtractions on keys
// chosen so that they collide (a few hundred keys of which some dozens are
// in flight at once, in tables of 16 to 256 slots): after every operation
// each key's units, the number of keys held and what sub took are the map's.
// Keys spaced by a power of two share their home slot often; the others
// wrap around the table's end.
func TestFlightsAgainstMap(t *testing.T) {
	for _, spread := range []uint32{1, 64, 1 << 20} {
		r := rand.New(rand.NewPCG(1, uint64(spread)))
		var f flights
		want := map[Key]int64{}
		for op := 0; op < 50_000; op++ {
			key := Key(r.Uint32N(300) * spread)
			units := int64(1 + r.IntN(3))
			if r.IntN(2) == 0 {
				fresh := f.add(key, units)
				require.Equal(t, want[key] == 0, fresh, "op %d: add %d to key %d", op, units, key)
				want[key] += units
			} else {
				took := f.sub(key, units)
				require.Equal(t, min(units, want[key]), took, "op %d: sub %d from key %d", op, units, key)
				if want[key] -= took; want[key] == 0 {
					delete(want, key)
				}
			}
			require.Equal(t, len(want), f.n, "op %d", op)
			if op%97 == 0 {
				for k := Key(0); k < 300; k++ {
					require.Equal(t, want[k*Key(spread)], f.get(k*Key(spread)), "op %d: key %d", op, k*Key(spread))
				}
			}
		}
	}
}
