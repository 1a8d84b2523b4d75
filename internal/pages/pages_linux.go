package pages

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (since 5.14): back the
// range with writable pages, as writes would, without writing.
const madvPopulateWrite = 23

// populate backs the whole pages within [p, p+n) for writing; the partial
// pages at either end are left to their first touch.
func populate(p unsafe.Pointer, n uintptr) error {
	size := uintptr(syscall.Getpagesize())
	skip := -uintptr(p) & (size - 1) // to the first page boundary
	if n <= skip {
		return nil
	}
	whole := (n - skip) &^ (size - 1)
	if whole == 0 {
		return nil
	}
	return syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, skip)), whole), madvPopulateWrite)
}
