//go:build !linux

package pages

import "unsafe"

// populate does nothing here: the pages are backed as they are touched.
func populate(p unsafe.Pointer, n uintptr) error { return nil }
