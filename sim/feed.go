package sim

import (
	"io"
	"sync"
	"time"
	"unsafe"

	"github.com/ratesim/ratesim/internal/grow"
	"github.com/ratesim/ratesim/internal/prefetch"
	"github.com/ratesim/ratesim/traffic"
)

// The traffic of a run is generated once and read by every algorithm's
// run: one producer (feed.produce) opens the plan and fills batches of
// arrivals into a ring of slots (ringBatches of batchArrivals for Run); each run reads every batch in
// order (fan-out). A slot is refilled only once every run has finished the
// batch it held, so the producer waits for the slowest run and memory is
// bounded by the ring, never by the number of requests.
//
// What differs between algorithms (retries, delayed releases, the
// limiter's state) stays in each run; what does not is computed here once:
// the first attempts themselves and how many each key sent.
const (
	// batchArrivals is how many arrivals a batch of Run's feed holds (32
	// bytes each).
	batchArrivals = 8192
	// ringBatches is how many batches Run's ring holds.
	ringBatches = 16
)

// feedShape is the shape of a feed's ring: arrivals a batch holds and
// batches the ring holds (Run's: batchArrivals and ringBatches; the tests
// take small ones to cross many batches).
type feedShape struct {
	batch, slots int
}

// feed is one Run's traffic, read once and shared by its runs.
type feed struct {
	cfg    *Config
	keys   *traffic.Keys
	stream traffic.Stream
	// the ring's shape
	size, slotsN int

	mu   sync.Mutex
	more sync.Cond // a batch was published, or the traffic ended
	room sync.Cond // a run finished a batch
	// slots[b%slotsN] holds batch b once published (published > b)
	slots     [][]traffic.Arrival
	published int
	finished  []int // by reader: how many batches it is done with
	ended     bool  // no batch will follow the published ones

	// set by the producer before it ends the traffic (read after it)
	err     error   // the stream's error
	nkeys   int64   // keys handed out when the traffic ended
	offered []int64 // first attempts by key id
	// the peaks of attempts, when no client retries: every run's attempts
	// are then the first attempts (nil: each run has its own)
	attempts *peakSet
	lines    []uintptr // count's addresses to prefetch, reused
	// first and last are the instants of the first and last arrival,
	// when any came (a row of one route may see fewer)
	any         bool
	first, last time.Duration
}

// newFeed prepares the traffic of cfg, opened as keys and stream, for
// readers runs, in a ring of shape rg.
func newFeed(cfg *Config, keys *traffic.Keys, stream traffic.Stream, readers int, rg feedShape) *feed {
	f := &feed{cfg: cfg, keys: keys, stream: stream, size: rg.batch, slotsN: rg.slots,
		finished: make([]int, readers)}
	f.more.L, f.room.L = &f.mu, &f.mu
	// sized once when the sources declared their keys (ranges), grown as
	// a trace brings new ones
	f.offered = make([]int64, keys.Len())
	if !retries(cfg.Retries) {
		attempts := newPeakSet(cfg.Windows)
		f.attempts = &attempts
	}
	return f
}

// retries reports whether any of the sources' policies can retry.
func retries(ps []traffic.RetryPolicy) bool {
	for _, p := range ps {
		if p.Policy != "" && p.Policy != "none" {
			return true
		}
	}
	return false
}

// produce reads the traffic to its end (or to the scenario's duration) and
// publishes it batch by batch, then ends it with the stream's error.
func (f *feed) produce() {
	if f.slots == nil {
		// each slot is made when the traffic first needs it: a short
		// run's few thousand arrivals take one batch, not the ring's
		// 4 MB (a page's rerun, docs/playground.md)
		f.slots = make([][]traffic.Arrival, f.slotsN)
	}
	cut := f.cfg.Duration > 0
	end := f.cfg.Start + f.cfg.Duration
	offered := f.offered
	var a traffic.Arrival
	for b, more := 0, true; more; b++ {
		f.waitRoom(b)
		buf := f.slots[b%f.slotsN][:0]
		if buf == nil {
			buf = make([]traffic.Arrival, 0, f.size)
		}
		for len(buf) < f.size {
			if !f.stream.Next(&a) || (cut && a.At >= end) {
				more = false
				break
			}
			if int(a.Key) >= len(offered) {
				offered = grow.For(offered, int(a.Key))
			}
			if f.attempts != nil {
				f.attempts.add(a.At, a.Cost)
			}
			buf = append(buf, a)
		}
		f.slots[b%f.slotsN] = buf
		if len(buf) > 0 {
			if !f.any {
				f.any, f.first = true, buf[0].At
			}
			f.last = buf[len(buf)-1].At
		}
		f.count(offered, buf)
		if len(buf) > 0 {
			f.mu.Lock()
			f.published++
			f.more.Broadcast()
			f.mu.Unlock()
		}
	}
	err := f.stream.Err()
	if c, ok := f.stream.(io.Closer); ok {
		// a trace cut short by the duration is not read to its end: close
		// its file (and stop its reading ahead); the stream's error stands
		c.Close()
	}
	nkeys := int64(f.keys.Len())
	f.mu.Lock()
	f.offered, f.err, f.nkeys = offered, err, nkeys
	f.ended = true
	f.more.Broadcast()
	f.mu.Unlock()
}

// count adds the batch's arrivals to offered (which holds every key of
// them). Over many keys a count is seldom in cache: the counts of the next
// countAhead arrivals are prefetched while the ones before are added.
func (f *feed) count(offered []int64, batch []traffic.Arrival) {
	const countAhead = 32
	for i := range batch {
		if i%countAhead == 0 {
			lines := f.lines[:0]
			for _, a := range batch[min(i+countAhead, len(batch)):min(i+2*countAhead, len(batch))] {
				lines = append(lines, uintptr(unsafe.Pointer(&offered[a.Key])))
			}
			prefetch.Lines(lines)
			f.lines = lines
		}
		offered[batch[i].Key]++
	}
}

// waitRoom waits until slot b%slotsN is free: every reader is done with
// batch b-slotsN.
func (f *feed) waitRoom(b int) {
	if b < f.slotsN {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		least := b
		for _, n := range f.finished {
			least = min(least, n)
		}
		if least > b-f.slotsN {
			return
		}
		f.room.Wait()
	}
}

// next returns batch b, waiting for the producer; ok is false once the
// traffic has ended before batch b.
func (f *feed) next(b int) (batch []traffic.Arrival, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.published <= b && !f.ended {
		f.more.Wait()
	}
	if f.published <= b {
		return nil, false
	}
	return f.slots[b%f.slotsN], true
}

// done tells the producer that reader r has finished batch b.
func (f *feed) done(r, b int) {
	f.mu.Lock()
	f.finished[r] = b + 1
	f.room.Signal() // only the producer waits for room
	f.mu.Unlock()
}
