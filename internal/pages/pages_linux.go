package pages

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (since 5.14): back the
// range with writable pages, as writes would, without writing.
const madvPopulateWrite = 23

// madvHugepage is Linux's MADV_HUGEPAGE: back the range with huge pages
// where the kernel can (transparent huge pages, when the system's setting
// is madvise or always; with never, nothing).
const madvHugepage = 14

// populate backs the whole pages within [p, p+n) for writing, the 2 MiB
// blocks aligned within it with huge pages where the kernel gives them;
// the partial pages at either end are left to their first touch. Only the
// population's error is returned: the huge pages are a hint.
func populate(p unsafe.Pointer, n uintptr) error {
	if lo, hi := (uintptr(p)+hugeBytes-1)&^(hugeBytes-1), (uintptr(p)+n)&^(hugeBytes-1); hi > lo {
		_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, lo-uintptr(p))), hi-lo), madvHugepage)
	}
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
