package prefetch

import "unsafe"

// Lines prefetches the cache line of each address into every level of the
// cache (PREFETCHT0) and returns without waiting for them.
//
//go:noescape
func Lines(addrs []uintptr)

// Keyed prefetches, for each of n entries (the first at p, each stride
// bytes after the one before), the cache line at base + key<<shift, where
// key is the uint32 at the entry's address: the slot, in a table indexed by
// key, of the key each entry names. It is Lines with each address computed
// as it is asked for, so that no list of them is written and read back.
// shift must be under 64.
//
//go:noescape
func Keyed(base uintptr, shift uint, p unsafe.Pointer, n int, stride uintptr)
