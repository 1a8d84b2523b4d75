package traffic

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// TestReadAheadSameBytes: whatever the size (empty, around a block and
// around the whole read-ahead), and whether the source hands out its bytes
// in full or a byte at a time, the reader gets the source's bytes, in
// order, then io.EOF, and the goroutine has ended.
func TestReadAheadSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sizes := []int{0, 1, readAheadBlock - 1, readAheadBlock, readAheadBlock + 1,
		readAheadBlocks * readAheadBlock, readAheadBlocks*readAheadBlock + 7, 3_000_000}
	for _, n := range sizes {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		for _, slow := range []bool{false, true} {
			var src io.Reader = bytes.NewReader(data)
			if slow && n < 100_000 {
				src = iotest.OneByteReader(src)
			}
			r := newReadAhead(src)
			// read in odd sizes, as bufio does not
			var got []byte
			buf := make([]byte, 1+rng.IntN(70_000))
			for {
				m, err := r.Read(buf)
				got = append(got, buf[:m]...)
				if err != nil {
					require.ErrorIs(t, err, io.EOF)
					break
				}
			}
			require.True(t, bytes.Equal(data, got), "size %d slow %v", n, slow)
			r.wait() // ended by itself at the end of the source
			m, err := r.Read(buf)
			require.Zero(t, m)
			require.ErrorIs(t, err, io.EOF, "the error again")
		}
	}
}

// TestReadAheadError: a source that fails after some bytes: the reader
// gets those bytes, then the error (not io.EOF), as from the source.
func TestReadAheadError(t *testing.T) {
	boom := errors.New("disk on fire")
	data := bytes.Repeat([]byte("0123456789"), 70_000) // 700,000 bytes: blocks and a part
	src := io.MultiReader(bytes.NewReader(data), iotest.ErrReader(boom))
	r := newReadAhead(src)
	got, err := io.ReadAll(r)
	require.ErrorIs(t, err, boom)
	require.Equal(t, data, got)
	r.wait()
}

// TestReadAheadClose: a reader that stops early and closes: the goroutine,
// blocked with every block full, ends.
func TestReadAheadClose(t *testing.T) {
	data := make([]byte, 10*readAheadBlock)
	r := newReadAhead(bytes.NewReader(data))
	buf := make([]byte, 100)
	_, err := r.Read(buf)
	require.NoError(t, err)
	r.close()
	r.wait()
	r.close() // twice is harmless
}
