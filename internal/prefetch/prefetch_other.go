//go:build !amd64

package prefetch

// Lines does nothing here: a prefetch is only ever a hint.
func Lines(addrs []uintptr) {}
