package intmath

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGCD(t *testing.T) {
	require.Equal(t, int64(6), GCD(12, 18))
	require.Equal(t, int64(7), GCD(7, 0))
	require.Equal(t, int64(1), GCD(1_000_000_000, 3))
}

// Floored, not truncated: -3/2 is -2, 3/-2 is -2, -2/2 is -1.
func TestFloorDiv(t *testing.T) {
	for _, c := range [][3]int64{{3, 2, 1}, {-3, 2, -2}, {3, -2, -2}, {-3, -2, 1}, {-2, 2, -1}, {0, 5, 0}} {
		require.Equal(t, c[2], FloorDiv(c[0], c[1]), "%d/%d", c[0], c[1])
	}
}
