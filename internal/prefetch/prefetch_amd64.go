package prefetch

// Lines prefetches the cache line of each address into every level of the
// cache (PREFETCHT0) and returns without waiting for them.
//
//go:noescape
func Lines(addrs []uintptr)
