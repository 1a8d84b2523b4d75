package pages

import (
	"errors"
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestPopulateChangesNothing: a table backed at once holds what it held,
// zeros when fresh (Make), whatever its size or alignment, with huge
// pages asked for (the last size holds 2 MiB blocks) or not.
func TestPopulateChangesNothing(t *testing.T) {
	for _, n := range []int{0, 1, 1000, MinBytes/8 - 1, MinBytes / 8, 3*MinBytes/8 + 5, 5*hugeBytes/8 + 3} {
		fresh := Make[uint64](n)
		for i, v := range fresh {
			if v != 0 {
				t.Fatalf("fresh[%d] of %d: %d, want 0", i, n, v)
			}
		}
		full := make([]uint64, n)
		for i := range full {
			full[i] = uint64(i) * 0x9e3779b97f4a7c15
		}
		populateSlice(full)
		for i, v := range full {
			if want := uint64(i) * 0x9e3779b97f4a7c15; v != want {
				t.Fatalf("full[%d] of %d: %d, want %d", i, n, v, want)
			}
		}
		// a block that starts inside a page
		if n > 1 {
			populateSlice(full[1:])
			require.Equal(t, uint64(n-1)*0x9e3779b97f4a7c15, full[n-1])
		}
	}
}

// TestPopulateAsksTheSystem: on Linux the system call is made on whole
// pages and accepted, so that the tables do get their pages at once (an
// error, ignored by Make, would leave them to be backed one fault at a
// time). A kernel before 5.14 does not know the advice (EINVAL), and a
// sandbox may refuse it: skipped, saying which.
func TestPopulateAsksTheSystem(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux backs pages on request here")
	}
	s := make([]byte, 4*MinBytes+123)
	for _, off := range []int{0, 1, 4095, 4096, 4097} {
		err := populate(unsafe.Pointer(&s[off]), uintptr(len(s)-off))
		if err != nil && off == 0 {
			if errors.Is(err, syscall.EINVAL) {
				t.Skipf("this kernel does not know MADV_POPULATE_WRITE (Linux 5.14): %v", err)
			}
			t.Skipf("this system refuses MADV_POPULATE_WRITE: %v", err)
		}
		require.NoErrorf(t, err, "offset %d", off)
	}
	// less than a page past a boundary: nothing to ask
	require.NoError(t, populate(unsafe.Pointer(&s[1]), 100))
}
