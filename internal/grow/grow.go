// Package grow holds the growth of the dense tables indexed by a run's
// key indexes (sim's offered counts, a cluster's per-key state): one
// slot per key, made as the keys appear.
package grow

// For returns xs, or a copy grown geometrically to hold index i when it
// is too short: at least 64 slots, at least twice the old length.
func For[T any](xs []T, i int) []T {
	if i < len(xs) {
		return xs
	}
	out := make([]T, max(i+1, 2*len(xs), 64))
	copy(out, xs)
	return out
}
