package prefetch

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestLinesChangesNothing: prefetching the lines of a table, and no line
// at all, leaves every value as it was.
func TestLinesChangesNothing(t *testing.T) {
	table := make([]uint64, 4096)
	for i := range table {
		table[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	var addrs []uintptr
	for i := 0; i < len(table); i += 7 {
		addrs = append(addrs, uintptr(unsafe.Pointer(&table[i])))
	}
	Lines(addrs)
	Lines(nil)
	for i := range table {
		require.Equal(t, uint64(i)*0x9e3779b97f4a7c15, table[i])
	}
}

// TestKeyedChangesNothing: prefetching the slots a table of entries names,
// and none, leaves the entries and the table as they were.
func TestKeyedChangesNothing(t *testing.T) {
	type entry struct {
		at  int64
		key uint32
		pad uint32
	}
	table := make([]uint32, 1<<16)
	for i := range table {
		table[i] = uint32(i) * 0x9e3779b1
	}
	es := make([]entry, 1000)
	for i := range es {
		es[i] = entry{int64(i), uint32(i*7919) % uint32(len(table)), 3}
	}
	base := uintptr(unsafe.Pointer(&table[0]))
	Keyed(base, 2, unsafe.Pointer(&es[0].key), len(es), unsafe.Sizeof(es[0]))
	Keyed(base, 2, nil, 0, 16)
	for i := range table {
		require.Equal(t, uint32(i)*0x9e3779b1, table[i])
	}
	for i := range es {
		require.Equal(t, entry{int64(i), uint32(i*7919) % uint32(len(table)), 3}, es[i])
	}
}
