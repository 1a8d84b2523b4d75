package grow

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// For keeps a table long enough, keeps what it held, and grows it by
// doubling, so that keys appearing one by one copy it few times.
func TestFor(t *testing.T) {
	var xs []int
	copies := 0
	for i := range 10_000 {
		old := len(xs)
		xs = For(xs, i)
		if len(xs) != old {
			copies++
		}
		require.Greater(t, len(xs), i)
		xs[i] = i
	}
	for i := range 10_000 {
		require.Equal(t, i, xs[i])
	}
	require.Equal(t, 9, copies, "64, 128, ..., 16384")
	same := For(xs, 5)
	require.Same(t, &xs[0], &same[0], "long enough: the same table")
}
