package sim

import (
	"io"
	"sync"
	"time"
	"unsafe"

	"github.com/ratesim/ratesim/backend"
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
	// the service times of the first attempts, drawn once for every row's
	// backend when they vary (nil: not drawn), by slot as slots
	draws  *backend.Draws
	drawns []drawn
}

// drawOnce says whether the feed draws the first attempts' service times
// for every row's backend (a variable for the tests: false leaves each
// backend to draw its own, as it does every retry's).
var drawOnce = true

// drawn is the service times of a batch's first attempts, drawn once for
// every row's backend (backend.Draws): svc[i] is request from+i's (nil:
// none drawn, each backend draws its own).
type drawn struct {
	from uint64
	svc  []time.Duration
}

// prefetch asks for the service times of the batch's arrivals i to
// i+prefetchLen, one chunk ahead of the decisions as a limiter's state is:
// the producer wrote them long before, and they are seldom in the cache of
// the run that reads them.
func (d *drawn) prefetch(i int) {
	const perLine = 8 // 64-byte lines of 8-byte durations
	if i >= len(d.svc) {
		return
	}
	var lines [prefetchLen/perLine + 1]uintptr
	n := 0
	for j := i; j < min(i+prefetchLen, len(d.svc)); j += perLine {
		lines[n] = uintptr(unsafe.Pointer(&d.svc[j]))
		n++
	}
	prefetch.Lines(lines[:n])
}

// service returns request id's first attempt's service time when d holds
// it.
func (d *drawn) service(id uint64) (time.Duration, bool) {
	if i := id - d.from; id >= d.from && i < uint64(len(d.svc)) {
		return d.svc[i], true
	}
	return 0, false
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
	if cfg.Backend != nil && drawOnce {
		if d := backend.NewDraws(cfg.Backend); d.Varied() {
			f.draws = d
		}
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
		f.slots = make([][]traffic.Arrival, f.slotsN)
		for i := range f.slots {
			f.slots[i] = make([]traffic.Arrival, 0, f.size)
		}
		f.drawns = make([]drawn, f.slotsN)
	}
	var id uint64 // the next first attempt's identity (run.ids)
	cut := f.cfg.Duration > 0
	end := f.cfg.Start + f.cfg.Duration
	offered := f.offered
	var a traffic.Arrival
	for b, more := 0, true; more; b++ {
		f.waitRoom(b)
		buf := f.slots[b%f.slotsN][:0]
		for len(buf) < f.size {
			if !f.stream.Next(&a) || (cut && a.At >= end) {
				more = false
				break
			}
			if int(a.Key) >= len(offered) {
				offered = growFor(offered, int(a.Key))
			}
			if f.attempts != nil {
				f.attempts.add(a.At, a.Cost)
			}
			buf = append(buf, a)
		}
		f.slots[b%f.slotsN] = buf
		f.draw(&f.drawns[b%f.slotsN], id, buf)
		id += uint64(len(buf))
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

// draw fills d with the service times of batch's first attempts, the
// first of them request id, when the feed draws them.
func (f *feed) draw(d *drawn, id uint64, batch []traffic.Arrival) {
	if f.draws == nil {
		return
	}
	if cap(d.svc) < len(batch) {
		d.svc = make([]time.Duration, len(batch), f.size)
	}
	d.from, d.svc = id, d.svc[:len(batch)]
	for i := range batch {
		d.svc[i] = f.draws.Service(id+uint64(i), 1)
	}
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

// next returns batch b for reader r, and its first attempts' service
// times when drawn, waiting for the producer; ok is false once the traffic
// has ended before batch b.
func (f *feed) next(b int) (batch []traffic.Arrival, d drawn, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.published <= b && !f.ended {
		f.more.Wait()
	}
	if f.published <= b {
		return nil, drawn{}, false
	}
	return f.slots[b%f.slotsN], f.drawns[b%f.slotsN], true
}

// done tells the producer that reader r has finished batch b.
func (f *feed) done(r, b int) {
	f.mu.Lock()
	f.finished[r] = b + 1
	f.room.Signal() // only the producer waits for room
	f.mu.Unlock()
}

// growFor returns xs, or a copy grown geometrically to hold index i when
// it is too short.
func growFor[T any](xs []T, i int) []T {
	if i < len(xs) {
		return xs
	}
	out := make([]T, max(i+1, 2*len(xs), 64))
	copy(out, xs)
	return out
}
