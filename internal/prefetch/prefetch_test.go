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
