package algorithms

import (
	"math"
	"math/bits"
	"time"
	"unsafe"
)

// SlidingLog is the sliding-window log, as Figma describes it in "An
// alternative approach to rate limiting": every admitted request is logged
// with its time, and a request is judged by the log of the last W.
//
// Rule: an entry logged at s counts at t iff t - s < W, so it stops counting
// at exactly s+W. A request of cost c at t is admitted iff the costs of the
// entries that count, plus c, are at most L; it is then logged as (t, c). It
// is the exact sliding window: no interval [a, a+W) ever admits more than L.
//
// RetryAfter: the wait until enough of the oldest entries have stopped
// counting for c to fit, s_i + W - t for the first entry i (oldest first)
// whose expiry brings the sum down to L - c; always in (0, W]. Never when
// c > L.
//
// count-rejected: a rejected request is logged too (Figma's log records
// every request), including one whose cost can never fit; retry_after is
// computed on the log with the rejected entry in it, so the rejected attempt
// counts against its own retry. A logged cost above L is logged as L+1: any
// set of entries holding it exceeds L - c for every c >= 1 whatever its
// size, so no decision and no retry_after changes, and the running sum cannot
// overflow.
//
// State per key: a ring of (expiry, cost) entries pruned from the front and
// the running sum of their costs, 32 bytes, plus 16 bytes per entry that
// still counts. The live entries of all keys are counted at every instant,
// not only when their key is touched. A key's state is released, and its
// log's ring given back to the limiter's ringPool, once its last entry stops
// counting (last s + W).
//
// Redis: redislua/lua/sliding_log.lua is this rule as a Lua script, decision for
// decision (`ratesim lua sliding-log` prints it; redislua's tests hold it to
// this type on randomised traces).
type SlidingLog struct {
	logKeyed
	slidingLogRule
}

// logKeyed is the state table of the limiters whose per-key state is a
// costLog (sliding-log, concurrency), with the expiry of every live entry of
// every key, so that the bytes alive are counted at every instant.
type logKeyed struct {
	keyed[costLog]
	expiring expiryFIFO
}

// logged accounts for an entry just added to key's log s, which stops
// counting at until.
func (l *logKeyed) logged(key Key, s *costLog, until time.Duration) {
	l.expiring.push(until)
	l.addBytes(costEntryBytes)
	l.touch(key, costEntryBytes*int64(s.len()))
}

// flush drops from the byte count the entries of every key that have
// stopped counting by now.
func (l *logKeyed) flush(now time.Duration) {
	if n := l.expiring.popDue(now); n > 0 {
		l.addBytes(-costEntryBytes * int64(n))
	}
}

// liveAt counts the entries that have stopped counting by now, then
// releases the keys that are fresh.
func (l *logKeyed) liveAt(now time.Duration) (keys, bytes int64) {
	l.flush(now)
	return l.keyed.liveAt(now)
}

// inspect releases what is fresh by now (as liveAt does) and returns key's
// log, without pruning it, and whether the key has one.
func (l *logKeyed) inspect(now time.Duration, key Key) (*costLog, bool) {
	l.flush(now)
	l.expire(now)
	if int(key) >= len(l.state) {
		return &costLog{}, false
	}
	return &l.state[key], true
}

// slidingLogRule is SlidingLog's rule over one key's log, which its Limiter
// and its Table (a cluster's store) both call.
//
// Time going back (a store passed the nodes' clocks): a request at t is
// judged by the entries logged at s with t - s < W, which includes entries
// logged after t, as a sorted set trimmed to scores above t - W counts
// them; its own entry is kept in time order among them.
type slidingLogRule struct {
	limit         int64         // L
	window        time.Duration // W
	countRejected bool
	logRule
}

// logRule is what the rules over a costLog share (sliding-log's entries,
// concurrency's requests in flight): the pool of their rings, how an entry
// is added, and the rule's state methods.
type logRule struct {
	rings ringPool // the keys' rings, and the slots of a first one
	// anyOrder is set in a store, where time can go back: entries are
	// kept in order (a Limiter's come in order already)
	anyOrder bool
}

// log adds an entry to s.
func (l *logRule) log(s *costLog, until time.Duration, cost int64) {
	if l.anyOrder {
		s.pushAny(until, cost, &l.rings)
	} else {
		s.push(until, cost, &l.rings)
	}
}

func (l *logRule) extra(s *costLog) int64  { return costEntryBytes * int64(s.len()) }
func (l *logRule) clone(dst, src *costLog) { src.cloneInto(dst, &l.rings) }
func (l *logRule) free(s *costLog)         { l.rings.release(s); *s = costLog{} }

var (
	_ Limiter     = (*SlidingLog)(nil)
	_ Reserver    = (*SlidingLog)(nil)
	_ stateHolder = (*SlidingLog)(nil)
	_ Inspector   = (*SlidingLog)(nil)
)

func newSlidingLogLimiter(p Params) (Limiter, error) {
	if err := checkPolicy(p.Policy); err != nil {
		return nil, err
	}
	if err := checkOptions("sliding-log", p, "count-rejected"); err != nil {
		return nil, err
	}
	l := &SlidingLog{slidingLogRule: *newSlidingLogRule(p)}
	l.keyed = newLogKeyed(&l.rings)
	return l, nil
}

// newLogKeyed returns the state table of a log whose rings come from rings.
func newLogKeyed(rings *ringPool) keyed[costLog] {
	k := newKeyed(int64(unsafe.Sizeof(costLog{})), (*costLog).freshAt)
	k.release = rings.release
	k.held = (*costLog).oldest
	return k
}

func newSlidingLogRule(p Params) *slidingLogRule {
	r := &slidingLogRule{limit: p.Rate, window: p.Per, countRejected: p.CountRejected}
	// Admitted entries cost >= 1 and sum to at most L; rejected ones
	// logged with count-rejected have no bound.
	r.rings.first = firstRing(r.limit)
	if r.countRejected {
		r.rings.first = costLogFirstSlots
	}
	return r
}

// Decide admits the request iff the entries of the last W leave room for
// cost.
func (l *SlidingLog) Decide(now time.Duration, key Key, cost int64) Decision {
	l.flush(now)
	s := l.get(now, key)
	d, logged := l.decide(s, true, now, cost)
	if logged {
		l.logged(key, s, now+l.window)
	}
	return d
}

func (l *slidingLogRule) decide(s *costLog, _ bool, now time.Duration, cost int64) (Decision, bool) {
	s.prune(now, &l.rings)
	if cost <= l.limit && s.sum <= l.limit-cost {
		l.log(s, now+l.window, cost)
		return Decision{Verdict: Accept}, true
	}
	if l.countRejected {
		l.log(s, now+l.window, min(cost, l.limit+1))
	}
	if cost > l.limit {
		return Decision{Verdict: Reject, RetryAfter: Never}, l.countRejected
	}
	return Decision{Verdict: Reject, RetryAfter: s.waitFor(now, cost, l.limit)}, l.countRejected
}

// expiryFIFO counts entries that stop counting at non-decreasing instants
// (sliding-log entries at s+W, requests in flight at their completion), so
// that a limiter keeps an exact count of the live entries of all keys
// without visiting each key. It is a FIFO of instants held in a
// linked list of chunks of expiryChunkLen instants, oldest first. push
// writes at the end of the newest chunk (tail), taking an empty chunk when
// it is full; popDue reads from the oldest (head), and a chunk it has read
// to the end goes to a free list for the next push. Nothing is ever copied,
// and once the FIFO has held its most instants no push allocates: it holds
// at most one chunk per expiryChunkLen instants at its peak, plus one,
// where a doubling ring (what this replaced) holds up to twice its
// instants and copies them at each doubling. Over 1M uniform keys, where
// the live entries grow by a million every 5.2ms of virtual time, the
// doublings (copies into fresh memory) took about 6% of a sliding-log
// decision in a CPU profile, and allocated 16 of its 59 bytes per decision.
//
// The zero value is empty.
type expiryFIFO struct {
	head *expiryChunk // the oldest chunk, nil before the first push
	next int          // the index in head of the oldest instant
	size int          // instants held
	tail *expiryChunk // the newest chunk
	end  int          // the instants written in tail
	free *expiryChunk // empty chunks, linked by next
}

// expiryChunkLen makes an expiryChunk, with the link and the allocator's
// 8-byte header of an object that holds a pointer, 4 KiB.
const expiryChunkLen = 510

// expiryChunk is a block of an expiryFIFO, oldest instant first.
type expiryChunk struct {
	// next is the newer chunk, or the next free one. It comes first so
	// that the garbage collector, which scans an object only up to its
	// last pointer, reads one word of a chunk.
	next *expiryChunk
	at   [expiryChunkLen]time.Duration
}

// push appends at, which must not be before the last instant pushed.
func (q *expiryFIFO) push(at time.Duration) {
	if q.tail == nil || q.end == expiryChunkLen {
		q.chunk()
	}
	q.tail.at[q.end] = at
	q.end++
	q.size++
}

// chunk appends an empty chunk, from the free list when it has one.
func (q *expiryFIFO) chunk() {
	c := q.free
	if c != nil {
		q.free = c.next
		c.next = nil
	} else {
		c = new(expiryChunk)
	}
	if q.tail == nil {
		q.head, q.next = c, 0
	} else {
		q.tail.next = c
	}
	q.tail, q.end = c, 0
}

// popDue removes the instants at or before now and returns how many.
func (q *expiryFIFO) popDue(now time.Duration) int {
	n := 0
	for q.size > 0 && q.head.at[q.next] <= now {
		q.next++
		q.size--
		n++
		if q.next == expiryChunkLen {
			q.drop()
		}
	}
	return n
}

// drop frees the head chunk, read to its end: the next chunk becomes the
// head, or, when it was the only one, it starts over empty.
func (q *expiryFIFO) drop() {
	c := q.head
	if c == q.tail {
		q.next, q.end = 0, 0 // empty (size is 0): write from the start
		return
	}
	q.head, q.next = c.next, 0
	c.next, q.free = q.free, c
}

// costEntry is one entry of a costLog: cost units that count until until
// (excluded).
type costEntry struct {
	until time.Duration // the instant the entry stops counting
	cost  int64
}

// costEntryBytes is what one live entry costs a key.
const costEntryBytes = int64(unsafe.Sizeof(costEntry{}))

// costLog is a FIFO of entries that stop counting at non-decreasing
// instants, and the sum of their costs: the sliding log's entries, and the
// concurrency limiter's requests in flight. Expired entries are dropped from
// the front by prune, new ones written at the back by push.
//
// The entries live in a ring of a power-of-two number of slots, reused in
// place: once a key's log has reached its steady size, neither prune nor
// push allocates. A key's first ring has 8 slots (fewer when the log can
// never hold 8, see firstRing); it doubles when it is full, and a ring of 64
// slots or more shrinks when it is at most an eighth full, to twice its
// entries (16 slots at least), so that between two reallocations a log at
// least doubles or halves. Rings are taken from and given back to the
// limiter's ringPool: a ring left by a resize, or by a key whose state is
// released, serves the next log that needs a ring of its size.
//
// The state is 32 bytes, as the slice header and sum it replaces: the ring
// is held by a pointer to its first slot rather than a slice header
// (ring() rebuilds the slice with unsafe.Slice; the pointer is always the
// start of an array made by make, which it keeps alive for the garbage
// collector), and the ring's head, count and size are packed in one word.
// That leaves room for first, a copy of the oldest entry's expiry: a
// decision reads the ring only when an entry has stopped counting or to
// compute a retry_after, and otherwise touches the ring only to write the
// new entry. Over many keys that saves a cache miss per decision.
//
// A log that has never held more than one entry since it was fresh has no
// ring: its one entry is (first, sum), and its ring is made when a second
// entry comes. Most keys of a long-tailed (Zipf) key distribution never log
// a second entry before their first stops counting; they cost no allocation
// and no access outside the state.
type costLog struct {
	entries *costEntry    // slot 0 of the ring; nil when the key holds no ring
	first   time.Duration // the oldest entry's until, when the log is not empty
	sum     int64
	pos     costLogPos
}

// costLogPos packs the ring's head slot (bits 0-28), its entry count (bits
// 29-58) and the log2 of its size (bits 59-63).
type costLogPos uint64

const (
	costLogHeadBits  = 29
	costLogCountBits = 30
	// costLogMaxSlots bounds one key's ring: 2^29 entries, 8 GiB.
	costLogMaxSlots = 1 << costLogHeadBits
)

func (p costLogPos) head() uint32 { return uint32(p & (1<<costLogHeadBits - 1)) }
func (p costLogPos) n() uint32 {
	return uint32(p >> costLogHeadBits & (1<<costLogCountBits - 1))
}
func (p costLogPos) mask() uint32 { return 1<<(p>>(costLogHeadBits+costLogCountBits)) - 1 }

func makeCostLogPos(head, n, mask uint32) costLogPos {
	return costLogPos(head) | costLogPos(n)<<costLogHeadBits |
		costLogPos(bits.Len32(mask))<<(costLogHeadBits+costLogCountBits)
}

// costLogFirstSlots is the most slots of a key's first ring: eight entries,
// 128 bytes. Smaller first rings made the 1M-key benchmarks slower (with 4,
// sliding-log and concurrency took 10-20% longer: most keys outgrew them and
// paid an allocation and a copy); a log that can never hold eight entries
// gets a first ring of its most (see firstRing). costLogShrinkSlots is the
// smallest ring that shrinks, and costLogShrunkSlots the least it shrinks
// to.
const (
	costLogFirstSlots  = 8
	costLogShrinkSlots = 64
	costLogShrunkSlots = 16
)

// firstRing returns the size of a key's first ring for a log that holds at
// most most entries (>= 1): costLogFirstSlots, or the least power of two
// that holds them all when that is smaller.
func firstRing(most int64) uint64 {
	if most >= costLogFirstSlots {
		return costLogFirstSlots
	}
	return ceilPow2(uint64(most))
}

// len returns the number of entries.
func (q *costLog) len() uint32 { return q.pos.n() }

// ring returns the ring's slots; entries must not be nil.
// oldest returns the address of the ring's oldest entry, which a decision
// reads first, or 0 when the log holds no ring (keyed's held hook).
func (q *costLog) oldest() uintptr {
	if q.entries == nil {
		return 0
	}
	return uintptr(unsafe.Pointer(&q.ring()[q.pos.head()]))
}

func (q *costLog) ring() []costEntry { return unsafe.Slice(q.entries, int(q.pos.mask())+1) }

// prune drops the entries that have stopped counting by now; a ring that
// shrinks is taken from and given back to p.
func (q *costLog) prune(now time.Duration, p *ringPool) {
	if q.first > now || q.pos.n() == 0 {
		return
	}
	if q.entries == nil {
		// No ring: the one entry, (first, sum), has stopped counting.
		q.pos, q.sum = makeCostLogPos(0, 0, 0), 0
		return
	}
	r, mask := q.ring(), q.pos.mask()
	h, n, sum := q.pos.head(), q.pos.n(), q.sum
	for n > 0 {
		e := &r[h&mask]
		if e.until > now {
			q.first = e.until
			break
		}
		sum -= e.cost
		h++
		n--
	}
	q.pos, q.sum = makeCostLogPos(h&mask, n, mask), sum
	if slots := uint64(mask) + 1; slots >= costLogShrinkSlots && uint64(n) <= slots/8 {
		q.resize(max(ceilPow2(2*uint64(n)), costLogShrunkSlots), p)
	}
}

// push appends an entry; until must not be before the last entry's (a
// Limiter's time never goes back). An empty log without a ring keeps the
// entry as (first, sum); a log without a ring that holds one entry gets a
// ring of p.first slots (a power of two, see firstRing; 2 at least). Rings
// are taken from and given back to p.
func (q *costLog) push(until time.Duration, cost int64, p *ringPool) {
	head, n, mask := q.pos.head(), q.pos.n(), q.pos.mask()
	if q.entries == nil {
		if n == 0 {
			q.first, q.sum, q.pos = until, cost, makeCostLogPos(0, 1, 0)
			return
		}
		q.resize(max(p.first, 2), p)
		head, mask = 0, q.pos.mask()
	} else if n > mask {
		q.resize(2*(uint64(mask)+1), p)
		head, mask = 0, q.pos.mask()
	}
	if n == 0 {
		q.first = until
	}
	q.ring()[(head+n)&mask] = costEntry{until, cost}
	q.pos = makeCostLogPos(head, n+1, mask)
	q.sum += cost
}

// pushAny is push for an entry that may stop counting before the newest
// one (in a store, where time can go back): it is moved to its place in
// order.
func (q *costLog) pushAny(until time.Duration, cost int64, p *ringPool) {
	n := q.pos.n()
	late := n > 0 && until < q.at(n-1).until
	q.push(until, cost, p)
	if late {
		q.sortBack()
	}
}

// sortBack moves the newest entry down to its place in order of until.
func (q *costLog) sortBack() {
	r, head, mask := q.ring(), q.pos.head(), q.pos.mask()
	for i := q.pos.n() - 1; i > 0; i-- {
		a, b := &r[(head+i-1)&mask], &r[(head+i)&mask]
		if a.until <= b.until {
			break
		}
		*a, *b = *b, *a
	}
	q.first = r[head].until
}

// cloneInto makes dst (zero) a copy of q with a ring of its own from p.
func (q *costLog) cloneInto(dst *costLog, p *ringPool) {
	*dst = costLog{}
	for i := range q.len() {
		e := q.at(i)
		dst.push(e.until, e.cost, p)
	}
}

// resize moves the entries, in order, to the front of a ring of slots
// slots (a power of two, at least the entries) taken from p, and gives the
// old ring back to p.
func (q *costLog) resize(slots uint64, p *ringPool) {
	if slots > costLogMaxSlots {
		panic("algorithms: one key's log would exceed 2^29 entries")
	}
	r := unsafe.Slice(p.get(slots), slots)
	n := q.pos.n()
	if n > 0 && q.entries == nil {
		r[0] = costEntry{q.first, q.sum} // the one entry of a log without a ring
	} else if n > 0 {
		old, head := q.ring(), q.pos.head()
		k := copy(r, old[head:min(int(head)+int(n), len(old))])
		copy(r[k:n], old)
	}
	if q.entries != nil {
		p.put(q.entries, uint64(q.pos.mask())+1)
	}
	q.entries, q.pos = &r[0], makeCostLogPos(0, n, uint32(slots-1))
}

// ringPool hands out the rings of a limiter's costLogs and takes them back
// when a log resizes its ring or its key is released, so that once the logs
// have reached their peak sizes no ring is made again: over many keys, a
// ring left by a released key serves the next key whose log outgrows its
// one entry.
//
// Rule: free[i] holds pooled rings of 2^i slots, the last given back taken
// first. get(s) takes a ring of s slots from free[log2 s] when it holds one
// and makes one otherwise; put(r, s) keeps r only while the slots pooled,
// r's included, stay at most peak, the most slots that logs have held at
// once (live), and leaves it to the garbage collector otherwise. So the
// pool never holds more memory than the logs held at their peak. A pooled
// ring keeps its old entries: a costLog reads only the slots from its head
// that it has written since it took the ring (resize writes the entries it
// moves), so a reused ring decides as a new one.
//
// The zero value, with first set, is an empty pool.
type ringPool struct {
	first              uint64 // the slots of a key's first ring
	free               [costLogMaxLog + 1][]*costEntry
	live, peak, pooled uint64 // slots held by logs, their most, slots pooled
}

// costLogMaxLog is log2 of costLogMaxSlots.
const costLogMaxLog = costLogHeadBits

// get returns slot 0 of a ring of slots slots (a power of two, at most
// costLogMaxSlots) for a log to hold.
func (p *ringPool) get(slots uint64) *costEntry {
	p.live += slots
	p.peak = max(p.peak, p.live)
	f := &p.free[bits.TrailingZeros64(slots)]
	if n := len(*f); n > 0 {
		r := (*f)[n-1]
		(*f)[n-1] = nil // a ring that put drops later must not stay reachable
		*f = (*f)[:n-1]
		p.pooled -= slots
		return r
	}
	return &make([]costEntry, slots)[0]
}

// put takes back the ring of slots slots whose slot 0 is r, which a log no
// longer holds.
func (p *ringPool) put(r *costEntry, slots uint64) {
	p.live -= slots
	if p.pooled+slots > p.peak {
		return
	}
	f := &p.free[bits.TrailingZeros64(slots)]
	*f = append(*f, r)
	p.pooled += slots
}

// release takes back the ring of a log whose key is released (keyed's
// release hook).
func (p *ringPool) release(q *costLog) {
	if q.entries != nil {
		p.put(q.entries, uint64(q.pos.mask())+1)
	}
}

// at returns the i-th entry from the oldest, for i < len().
func (q *costLog) at(i uint32) costEntry {
	if q.entries == nil {
		return costEntry{q.first, q.sum} // no ring: one entry
	}
	return q.ring()[(q.pos.head()+i)&q.pos.mask()]
}

// waitFor returns the shortest wait w > 0 after which the entries still
// counting at now+w leave room for cost under limit. It requires a pruned
// log with sum + cost > limit and cost <= limit.
func (q *costLog) waitFor(now time.Duration, cost, limit int64) time.Duration {
	over := q.sum - (limit - cost) // > 0: how much must stop counting
	if over <= 1 || q.pos.n() == 1 {
		// The oldest entry is enough: its cost is at least 1, or it is
		// the only one (over <= sum since limit-cost >= 0). Its expiry is
		// at hand: a log saturated by requests of cost 1, or holding one
		// entry, never reads its ring to reject.
		return q.first - now
	}
	r, head, mask := q.ring(), q.pos.head(), q.pos.mask()
	for i := range q.pos.n() {
		e := &r[(head+i)&mask]
		over -= e.cost
		if over <= 0 {
			return e.until - now
		}
	}
	// Unreachable: the entries sum to q.sum and limit-cost >= 0.
	return q.at(q.len()-1).until - now
}

// freshAt is the instant the last entry stops counting: from then on the
// log is empty, as a fresh key's. A log of one entry answers from its state
// (first), without reading its ring.
func (q *costLog) freshAt() time.Duration {
	switch n := q.len(); n {
	case 0:
		return math.MinInt64
	case 1:
		return q.first
	default:
		return q.at(n - 1).until
	}
}

// Inspect returns key's gauges at now: "in window", the cost of the entries
// that still count at now, and "limit", L. It releases what is fresh by now
// (as liveAt does) and does not prune a live key's log.
func (l *SlidingLog) Inspect(now time.Duration, key Key) []Gauge {
	s, known := l.inspect(now, key)
	return l.gauges(s, known, now)
}

func (l *slidingLogRule) gauges(s *costLog, _ bool, now time.Duration) []Gauge {
	return []Gauge{{"in window", float64(s.sumAt(now))}, {"limit", float64(l.limit)}}
}

// sumAt returns the cost of the entries that still count at now, as prune
// would leave it, without pruning.
func (q *costLog) sumAt(now time.Duration) int64 {
	sum := q.sum
	for i := range q.len() {
		e := q.at(i)
		if e.until > now {
			break
		}
		sum -= e.cost
	}
	return sum
}
