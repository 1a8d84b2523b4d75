//go:build !linux

package pages

import "unsafe"

// populate does nothing here: the pages are backed as they are touched.
func populate(p unsafe.Pointer, n uintptr) error { return nil }

// hugeBytes is the size of a huge page where Linux gives them (2 MiB);
// here only the tests' sizes use it.
const hugeBytes = 2 << 20
