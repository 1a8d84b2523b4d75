//go:build !amd64

package algorithms

// prefetch does nothing where ratesim has no prefetch instruction to give
// (see prefetch_amd64.s): prefetching is only ever a hint.
func prefetch(addrs []uintptr) {}
