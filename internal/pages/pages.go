// Package pages asks the operating system to back fresh memory with pages
// at once, for the tables sized for a million keys or more.
//
// Memory that make returns in large blocks is mapped but not yet backed:
// the kernel backs each page when it is first touched, by a fault. When
// that first touch is a read, as a table lookup's is, Linux maps its
// shared page of zeros, and the write that follows faults again: it gives
// the page a frame of its own and, while the process's threads run on
// other processors, interrupts each of them to flush the old mapping from
// their caches of translations. On this project's machine (2 virtual
// processors) the kernel had 22% of the samples of a 3-second compare over
// a million keys, most of them those faults; with the tables backed for
// writing when they are made, one system call each, it had 9%
// (BENCHMARKS.md as of cd714bd, "Pages backed when tables are made").
//
// A table of a million keys spans thousands of pages, more than a
// processor's cache of translations holds, so nearly every lookup of a
// key also walks the page tables. The blocks of 2 MiB aligned within a
// table are therefore asked for as huge pages (Linux's transparent huge
// pages, where the system allows them): one translation for 512 pages.
// Over a million keys with key peaks, the run took 0.915x the CPU
// (BENCHMARKS.md as of b35d95f, "Key peaks' bookkeeping cut, and huge
// pages for the tables").
package pages

import "unsafe"

// hugeBytes is the size of a huge page on x86-64 and on arm64 with 4 KiB
// pages (Linux's populate asks for them); elsewhere advice covering blocks
// that are not whole huge pages is backed with small ones.
const hugeBytes = 2 << 20

// MinBytes is the least size that Make backs at once (a table's flags
// for a million keys are 250 KB): smaller blocks share the runtime's
// spans with other objects.
const MinBytes = 64 << 10

// Make returns make([]T, n), its memory backed with writable pages now
// where the system can do it (Linux 5.14 and later); elsewhere, or if the
// system refuses, the pages are backed as they are touched, as make's
// are. Only the kernel's work moves: no value, no result changes. Blocks
// under MinBytes are made as make makes them.
func Make[T any](n int) []T {
	s := make([]T, n)
	populateSlice(s)
	return s
}

// populateSlice backs the memory of s, of MinBytes or more, for writing;
// it changes no value of s.
func populateSlice[T any](s []T) {
	if len(s) == 0 {
		return
	}
	var zero T
	n := uintptr(len(s)) * unsafe.Sizeof(zero)
	if n < MinBytes {
		return
	}
	_ = populate(unsafe.Pointer(unsafe.SliceData(s)), n)
}
