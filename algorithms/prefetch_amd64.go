package algorithms

// prefetch asks the processor to bring the cache line of each address into
// its caches (PREFETCHT0), without waiting for it: a hint, which reads
// nothing a program sees and cannot fault.
//
//go:noescape
func prefetch(addrs []uintptr)
