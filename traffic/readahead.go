package traffic

import (
	"io"
	"sync"
)

// readAhead reads its source on a goroutine of its own, up to
// readAheadBlocks blocks of readAheadBlock bytes ahead of its reader, so
// that reading the file (and gunzipping it) runs beside parsing instead of
// in turn with it. It hands out the same bytes, then the source's error,
// as the source would.
//
// close stops the goroutine and waits for it; it must be called (the
// trace's close does) unless the source has been read to its end or error,
// after which the goroutine has ended by itself.
type readAhead struct {
	full chan readBlock // blocks read, in order
	free chan []byte    // blocks handed out, for reuse
	stop chan struct{}  // closed by close
	done chan struct{}  // closed when the goroutine ends
	once sync.Once

	cur   []byte // the part of the current block not yet handed out
	buf   []byte // the current block, to give back once handed out
	err   error  // the source's error, after the last block
	ended bool   // the last block has been taken
}

type readBlock struct {
	b   []byte
	err error // the source's error after b (nil: more follow)
}

const (
	readAheadBlock  = 256 << 10
	readAheadBlocks = 4
)

func newReadAhead(src io.Reader) *readAhead {
	r := &readAhead{
		full: make(chan readBlock, readAheadBlocks),
		free: make(chan []byte, readAheadBlocks),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	for range readAheadBlocks {
		r.free <- make([]byte, readAheadBlock)
	}
	go r.fill(src)
	return r
}

// fill reads src block by block until its end or an error, or until
// stopped.
func (r *readAhead) fill(src io.Reader) {
	defer close(r.done)
	for {
		var b []byte
		select {
		case b = <-r.free:
		case <-r.stop:
			return
		}
		// fill the block: fewer, larger hand-overs
		n, err := 0, error(nil)
		for n < len(b) && err == nil {
			var m int
			m, err = src.Read(b[n:])
			n += m
		}
		select {
		case r.full <- readBlock{b[:n], err}:
		case <-r.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

func (r *readAhead) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.buf != nil {
			r.free <- r.buf[:cap(r.buf)] // room for it: it came from free
			r.buf = nil
		}
		if r.ended {
			return 0, r.err
		}
		blk := <-r.full
		r.cur, r.buf = blk.b, blk.b
		if blk.err != nil {
			r.ended, r.err = true, blk.err
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// close stops the goroutine and waits for it to end. A goroutine blocked
// reading the source returns once the source does (closing the file after
// stopping ends such a read).
func (r *readAhead) close() {
	r.once.Do(func() { close(r.stop) })
}

// wait waits for the goroutine to end (after close, or after the source's
// end).
func (r *readAhead) wait() { <-r.done }
