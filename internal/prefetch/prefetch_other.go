//go:build !amd64

package prefetch

import "unsafe"

// Lines does nothing here: a prefetch is only ever a hint.
func Lines(addrs []uintptr) {}

// Keyed does nothing here: a prefetch is only ever a hint.
func Keyed(base uintptr, shift uint, p unsafe.Pointer, n int, stride uintptr) {}
