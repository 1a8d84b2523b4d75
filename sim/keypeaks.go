package sim

import (
	"math"
	"math/bits"
	"time"
	"unsafe"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/pages"
	"github.com/ratesim/ratesim/internal/prefetch"
)

// keyPeaks finds, over one stream of releases in non-decreasing time
// order, each of one key, for each of several window lengths V, the
// largest total cost that one key released in any half-open interval
// [a, a+V), that key, and the earliest start a of such an interval (of
// equal starts, that of the key whose release came first in the stream).
// It is peakSet per key, exact for every key: the peak to hold against
// the limit, which is per key (docs/metrics.md, key_peaks).
//
// It holds the releases of the longest window in a queue, in the order
// they came, and for each key a running total: the cost of the key's
// releases that have joined. Each release holds its key's total before it
// joined (pre), so the cost of its key's releases from it on is the
// total less pre. Each window has its own front in the queue. When a
// release x joins, every release f held with f+V <= x leaves window V,
// front first. Before it leaves, the interval [f, f+V) of f's key is
// complete and its count is the key's total less f's pre: every release
// of that key that joined after f came before f+V (x and the releases
// after it have not joined; one before x at f+V or later would have made
// f leave). The count is compared with the window's best, strictly
// greater replacing it, so that of equal counts the earliest start stays
// (the front moves in the stream's order). Leaving writes nothing: every
// window reads the same totals. finish closes the intervals still open
// the same way, front to back. A key's busiest interval can always be taken to start at one of
// its releases, so every candidate is evaluated, once, at its start, with
// no list per key. Releases of one key at one instant are held one by
// one: the first of them to leave counts them all, and the later ones,
// counting fewer, replace nothing.
//
// Memory: the releases of the longest window (16 bytes each, 4 more once
// a release of a cost other than 1 has come, and 4 more once the totals
// are wide) and a total per key, whatever the number of windows: 4 bytes,
// kept modulo 2^32 (a count, a difference of two totals, is exact while
// the cost held is under 2^31), or 8 once the cost held could pass 2^31-1
// (wide, for good); the stage of the releases not yet counted (10 KiB);
// and a table
// of the keys of a batch being counted (indexBatch), 64 KiB, made when a
// batch first needs one. Nothing grows with the number of releases.
//
// Speed: like peakSet, add only stores a release; every keyFlush releases
// (and before finishing) flush counts the stored ones (flushBatch). Over
// many keys a total is seldom in cache: flush asks for the totals of the
// releases keyAhead ahead of those it counts, joining or leaving
// (internal/prefetch). Reading totals is most of the cost: three per
// release (its join, and its leaving each of two windows), mostly from
// memory over a million keys, where a decision of an algorithm reads its
// key's state once (see BENCHMARKS.md). With it, each window's peak of
// every key together (peakSet's) is counted in the same passes, from the
// same releases.
//
// Any run loop can feed one (the engine's run does, from decide and
// release; a cluster node's view could): add, in time order, then finish
// or peaks once.
type keyPeaks struct {
	wins     []keyWin
	longest  int           // the index in wins of the longest window
	shortest time.Duration // the shortest window's length
	ring     ring[keyRelease]
	// the releases held, by sequence number: [head, tail); head is the
	// longest window's front. Those from done on are stored but not yet
	// counted: in stage (release done+i in stage[i]) until flush moves
	// them to the ring.
	head, tail, done int
	stage            [keyFlush]keyRelease
	stageCost        [keyFlush]uint32 // stage[i]'s cost (bigCost: in big)
	// costly: a release of cost other than 1 has come. Until then every
	// cost is 1 and none is held; from then on costs holds the cost of
	// each release by sequence number (bigCost: in big), and the passes
	// read it. preHi holds the high 32 bits of each counted release's pre
	// once the totals are wide.
	costly bool
	costs  ring[uint32]
	preHi  ring[uint32]
	// The totals, one per key: key k's cost of the releases counted so
	// far, modulo 2^32 in counts while narrow, else in wideCounts. keys
	// is how many they hold; base is the address of the first, shift the
	// log2 of a total's size in bytes.
	counts     []uint32
	wideCounts []uint64
	wide       bool
	keys       int
	base       uintptr
	shift      uint
	// room is how much more cost the releases held may add up to before a
	// count could pass what its width holds (it is not raised while
	// releases wait to be counted); past it, the counts widen.
	room int64
	// big holds by sequence number the cost of each release whose cost
	// does not fit in 32 bits (its entry holds bigCost).
	big map[int]int64
	// batch numbers the batches indexBatch indexes, and pass the walks
	// of batchLess over a batch; slots are the keys of the batch (see
	// keySlot).
	batch, pass uint32
	slots       *[keySlots]keySlot // made at the first batch indexed
}

// keyWin is one window of a keyPeaks: the releases in it are those from
// front to the set's done.
type keyWin struct {
	v     time.Duration
	front int
	// pf: the totals of the releases before it have been asked for
	pf    int
	best  int64
	key   uint32
	start time.Duration
	// the peak of every key together (peakSet's): the cost of the
	// releases in the window, and the best interval's cost and start
	sum    int64
	aBest  int64
	aStart time.Duration
}

// keyRelease is one release held by a keyPeaks.
//
// 16 bytes: its cost is 1 until a release of another cost comes
// (keyPeaks.costly), and the high bits of its pre are only held once the
// totals are wide (keyPeaks.preHi).
type keyRelease struct {
	at  time.Duration
	key uint32
	// pre, once the release is counted: its key's total before it, modulo
	// 2^32 (while the totals are narrow, all of it)
	pre uint32
}

// bigCost marks a release whose cost is held aside (keyPeaks.big).
const bigCost = math.MaxUint32

// keyFlush is how many releases a keyPeaks stores before it counts them;
// flush asks for the totals of the releases keyAhead ahead of those it
// counts, keyStep at a time.
const (
	keyFlush = 512
	keyAhead = 32
	keyStep  = 16
)

// keySlot is a slot of indexBatch's table of the keys of a batch, open
// addressing by the key's hash, linear probing: the slot is the key's when
// its batch is the batch being counted, and total is the cost of the key's
// releases in the batch; a slot of another batch is free. seen is the cost
// of those that batchLess's walk numbered pass has passed (none when the
// slot's pass is another). Batch and pass numbers run from 1 to
// keyBatches-1, then round again, when every slot is freed.
type keySlot struct {
	key, batch, pass uint32
	total, seen      uint64
}

// keySlots is the size of the table: four slots a release of a batch.
const (
	keySlotBits = 11
	keySlots    = 1 << keySlotBits
)

const keyBatches = math.MaxUint32

// slot returns the slot of key in the table of batch: the key's, or the
// free one where it would go.
func (k *keyPeaks) slot(key, batch uint32) *keySlot {
	h := key * 0x9e3779b1 >> (32 - keySlotBits)
	for {
		s := &k.slots[h]
		if s.batch != batch || s.key == key {
			return s
		}
		h = (h + 1) & (keySlots - 1)
	}
}

// wideRoom is the room of wide counts: they hold any sum of costs that
// the int64 peaks hold.
const wideRoom = math.MaxInt64 / 2

// keyPeakRaw is one window's key peak before it is named and rated: the
// count, the key's id and the start.
type keyPeakRaw struct {
	count int64
	key   uint32
	start time.Duration
}

// newKeyPeaks returns the key peak windows of lengths vs (each > 0).
func newKeyPeaks(vs []time.Duration) keyPeaks {
	k := keyPeaks{wins: make([]keyWin, len(vs))}
	for i, v := range vs {
		k.wins[i].v = v
		if v > k.wins[k.longest].v {
			k.longest = i
		}
		if i == 0 || v < k.shortest {
			k.shortest = v
		}
	}
	if len(vs) > 0 {
		k.room = math.MaxInt32
	}
	k.layout()
	return k
}

// layout notes where the totals are and their size.
func (k *keyPeaks) layout() {
	size := 4
	if k.wide {
		size = 8
	}
	k.shift = uint(bits.TrailingZeros(uint(size)))
	switch {
	case k.wide && len(k.wideCounts) > 0:
		k.base = uintptr(unsafe.Pointer(&k.wideCounts[0]))
	case !k.wide && len(k.counts) > 0:
		k.base = uintptr(unsafe.Pointer(&k.counts[0]))
	}
}

// reserve makes room for the totals of the keys 0 to n-1.
func (k *keyPeaks) reserve(n int) {
	if n > k.keys && len(k.wins) > 0 {
		k.grow(n)
	}
}

// grow makes room for at least n keys: n, or twice what it holds.
func (k *keyPeaks) grow(n int) {
	n = max(n, 2*k.keys, 1024)
	if k.wide {
		c := pages.Make[uint64](n)
		copy(c, k.wideCounts)
		k.wideCounts = c
	} else {
		c := pages.Make[uint32](n)
		copy(c, k.counts)
		k.counts = c
	}
	k.keys = n
	k.layout()
}

// add stores a release of cost at at by key; releases come in
// non-decreasing time order.
func (k *keyPeaks) add(at time.Duration, cost int64, key uint32) {
	c := uint32(cost)
	if int(key) >= k.keys || cost > k.room || cost >= bigCost || cost != 1 && !k.costly {
		if len(k.wins) == 0 {
			return
		}
		c = k.ready(cost, key)
	}
	k.room -= cost
	n := uint(k.tail-k.done) % keyFlush // < keyFlush: the mask spares a bounds check
	k.stage[n] = keyRelease{at: at, key: key}
	k.stageCost[n] = c
	k.tail++
	if int(n)+1 >= keyFlush {
		k.flush()
	}
}

// ready readies the set for a release of cost by key that add cannot
// store as it is: it starts holding costs at the first other than 1, grows
// the totals to hold key, widens them when the cost could make a count
// pass 32 bits (first counting what is stored as it is), and holds aside a
// cost past 32 bits (the totals are wide by then). It returns the cost to
// stage.
func (k *keyPeaks) ready(cost int64, key uint32) uint32 {
	if cost != 1 && !k.costly {
		// every release held so far cost 1 (those staged have theirs)
		k.costly = true
		for i := k.head; i < k.done; i++ {
			k.costs.push(k.head, i, 1)
		}
	}
	if int(key) >= k.keys {
		k.grow(int(key) + 1)
	}
	if !k.wide && cost > k.room {
		k.flush()
		k.widen()
	}
	if cost < bigCost {
		return uint32(cost)
	}
	if k.big == nil {
		k.big = map[int]int64{}
	}
	k.big[k.tail] = cost
	return bigCost
}

// widen moves the totals to 64 bits, for good, every release stored
// counted. Each total gains 2^32 and each pre held is set below its key's
// total by what it was below it modulo 2^32, so that every count, a
// difference, is as it was.
func (k *keyPeaks) widen() {
	k.wideCounts = pages.Make[uint64](len(k.counts))
	for i, c := range k.counts {
		k.wideCounts[i] = uint64(c) + 1<<32
	}
	for i := k.head; i < k.tail; i++ {
		e := k.ring.at(i)
		pre := k.wideCounts[e.key] - uint64(k.counts[e.key]-e.pre)
		e.pre = uint32(pre)
		k.preHi.push(k.head, i, uint32(pre>>32))
	}
	k.counts = nil
	k.wide = true
	k.room = wideRoom
	k.layout()
}

// flush counts the releases stored since the last flush, in order,
// moving them from the stage to the ring.
func (k *keyPeaks) flush() {
	if k.done == k.tail {
		return
	}
	n := k.tail - k.done
	k.ring.pushAll(k.head, k.done, k.stage[:n])
	if k.costly {
		k.costs.pushAll(k.head, k.done, k.stageCost[:n])
	}
	if k.wide {
		flushKeys(k, k.wideCounts)
	} else {
		flushKeys(k, k.counts)
	}
}

// cost is the cost of release i (held).
func (k *keyPeaks) cost(i int) int64 {
	if !k.costly {
		return 1
	}
	c := *k.costs.at(i)
	if c == bigCost {
		return k.big[i]
	}
	return int64(c)
}

// preOf is the pre of e, release i (counted).
func preOf[C uint32 | uint64](k *keyPeaks, e *keyRelease, i int) C {
	p := C(e.pre)
	if k.wide {
		p |= C(uint64(*k.preHi.at(i)) << 32)
	}
	return p
}

// join counts the release e, number i (the next to count: releases join
// in order), of cost c: its pre is its key's total, which gains c.
func join[C uint32 | uint64](k *keyPeaks, counts []C, e *keyRelease, i int, c int64) {
	t := &counts[e.key]
	v := *t
	e.pre = uint32(v)
	if k.wide {
		k.preHi.push(k.head, i, uint32(uint64(v)>>32))
	}
	*t = v + C(c)
}

// flushKeys counts the releases from done to tail in every window: before
// each release x joins, the releases f at each window's front with f+V <=
// x close their key's interval and leave. When the releases to count span
// less than the shortest window (a busy stream: none of them leaves
// before the last joins), in two passes (flushBatch); else, or while costs
// past 32 bits are held, release by release (flushEach).
func flushKeys[C uint32 | uint64](k *keyPeaks, counts []C) {
	if len(k.big) == 0 && k.ring.at(k.tail-1).at-k.ring.at(k.done).at < k.shortest {
		flushBatch(k, counts)
	} else {
		flushEach(k, counts)
	}
}

// flushBatch counts the releases from done to tail (the batch), which span
// less than the shortest window, in two passes: every release of the
// batch joins, then each window's front moves past the releases f with
// f+V at or before the batch's last release x. No release of the batch
// leaves (x - V is before the first of them), so the only difference with
// counting them in order is that when f leaves, the releases of f's key
// in the batch at or after f+V have already joined: its count is then
// the key's total less f's pre, less their cost. The total less pre is at
// least the count in order, so when it does not beat the window's best (a
// tie keeps the earlier start) neither does the count in order, and it is
// not needed: over many keys, almost every release that leaves. For the
// others, the batch's index (indexBatch, made at the first of them) finds
// those releases.
//
// The passes are loops of their own, which the processor predicts well,
// where counting in order branches on how many releases leave before each
// joins.
func flushBatch[C uint32 | uint64](k *keyPeaks, counts []C) {
	r := &k.ring
	n := k.tail - k.done
	indexed := false // the batch's index made
	fronts := false  // the totals at the fronts asked for
	var added int64  // the batch's cost
	k.prefetchTotals(k.done, k.done+min(keyAhead, n))
	// keyStep releases at a time, within one chunk, the totals of those
	// keyAhead on asked for before each span
	for i := 0; i < n; {
		k.prefetchTotals(k.done+min(i+keyAhead, n), k.done+min(i+keyAhead+keyStep, n))
		if !fronts && i+keyAhead+keyAhead/2 >= n {
			// those of the first releases to leave, which they do
			// after the joins
			fronts = true
			for wi := range k.wins {
				w := &k.wins[wi]
				k.prefetchFront(w, min(w.front+keyAhead, k.done))
			}
		}
		seg := r.span(k.done+i, min(keyStep, n-i))
		for x := range seg {
			c := k.cost(k.done + i + x)
			join(k, counts, &seg[x], k.done+i+x, c)
			added += c
		}
		i += len(seg)
	}
	last := r.at(k.tail - 1).at
	for wi := range k.wins {
		w := &k.wins[wi]
		v := w.v
		from, front := w.front, w.front
		best, key, start := w.best, w.key, w.start
		var left int64
		scan := batchScan{indexed: &indexed, next: k.done}
		// keyStep releases at a time, within one chunk, the totals of
		// those keyAhead on asked for before each span
		for span := true; span; {
			if front+keyAhead+keyStep > w.pf {
				w.front = front
				k.prefetchFront(w, min(front+keyAhead+keyStep, k.done))
			}
			seg := r.span(front, min(keyStep, k.tail-front))
			if len(seg) == 0 { // not met: the batch's last release stops the walk
				break
			}
			for {
				var j int
				if k.costly || k.wide {
					var l int64
					j, l = leaveSpanAll(k, seg, front, counts, last-v, best)
					left += l
				} else {
					j = leaveSpan(seg, counts, last-v, best)
					left += int64(j)
				}
				front += j
				if j == len(seg) {
					break
				}
				f := &seg[j]
				if f.at > last-v { // the batch's releases among them
					span = false
					break
				}
				// its count with the whole batch joined beats best
				if c := batchLess(k, f, counts[f.key]-preOf[C](k, f, front), f.at+v, &scan); int64(c) > best {
					best, key, start = int64(c), f.key, f.at
				}
				left += k.cost(front)
				front++
				seg = seg[j+1:]
			}
		}
		k.leaveAll(w, from, front, left, added)
		w.front, w.best, w.key, w.start = front, best, key, start
		if wi == k.longest {
			k.room += left
		}
	}
	k.done = k.tail
	k.dropBig(k.wins[k.longest].front)
}

// leaveSpan walks flushBatch's releases seg, which leave a window, up to
// the first that does not (it ends past the batch's last release: f.at >
// limit) or whose count with the whole batch joined beats best, and
// returns how many it walked past, every cost 1 and the totals narrow. A
// loop of its own, with nothing live but what it reads, so that its values
// stay in registers; flushBatch deals with the release it stops at.
//
//go:noinline
func leaveSpan[C uint32 | uint64](seg []keyRelease, counts []C, limit time.Duration, best int64) int {
	for j := range seg {
		f := &seg[j]
		if f.at > limit || int64(counts[f.key]-C(f.pre)) > best {
			return j
		}
	}
	return len(seg)
}

// leaveSpanAll is leaveSpan for any costs and totals, seg being the
// releases from number from on; it also returns the cost walked past.
func leaveSpanAll[C uint32 | uint64](k *keyPeaks, seg []keyRelease, from int, counts []C, limit time.Duration, best int64) (int, int64) {
	var left int64
	for j := range seg {
		f := &seg[j]
		if f.at > limit || int64(counts[f.key]-preOf[C](k, f, from+j)) > best {
			return j, left
		}
		left += k.cost(from + j)
	}
	return len(seg), left
}

// batchScan is batchLess's walk over the batch in one window's pass: the
// batch's releases before next have been passed.
type batchScan struct {
	indexed *bool
	pass    uint32
	next    int
}

// batchLess returns c, the count of f's key from f with the whole batch
// joined, less the cost of the batch's releases of that key at or after
// end (f+V). The batch's index (made at the first call of a batch) holds
// each key's cost in the batch; the walk passes the batch's releases
// before end, adding each one's cost to its key's seen, so what is left
// is the key's total less seen. end grows from call to call of a pass, so
// the walk passes each release once a pass, whatever the number of
// releases of one key: a key that takes every release costs no more than
// many. Out of flushBatch's loop, which seldom needs it over many keys.
func batchLess[C uint32 | uint64](k *keyPeaks, f *keyRelease, c C, end time.Duration, s *batchScan) C {
	if !*s.indexed {
		k.indexBatch()
		*s.indexed = true
	}
	if s.pass == 0 {
		if k.pass++; k.pass == keyBatches {
			// numbers wrap: no slot may hold a past pass's seen
			k.pass = 1
			for i := range k.slots {
				k.slots[i].pass = 0
			}
		}
		s.pass = k.pass
	}
	for ; s.next < k.tail; s.next++ {
		r := k.ring.at(s.next)
		if r.at >= end {
			break
		}
		sl := k.slot(r.key, k.batch) // the key's: every key of the batch has one
		if sl.pass != s.pass {
			sl.pass, sl.seen = s.pass, 0
		}
		sl.seen += uint64(k.cost(s.next))
	}
	if sl := k.slot(f.key, k.batch); sl.batch == k.batch {
		seen := sl.seen
		if sl.pass != s.pass {
			seen = 0
		}
		c -= C(sl.total - seen)
	}
	return c
}

// leaveAll counts, for flushBatch, the whole window w's intervals from the
// releases that left it in the batch's pass, from to to (of cost left),
// and moves its sum on: less them, plus the batch (of cost added). The
// interval from a release f holds the window's releases before the batch
// from f on (the sum less those that left before f) and the batch's
// releases before f+V: those before j (of cost joined), j growing with
// f. None beats aBest when all of the window from f on and the batch
// could not (a tie keeps the earlier start), nor any after f: they are not
// counted.
func (k *keyPeaks) leaveAll(w *keyWin, from, to int, left, added int64) {
	sum := w.sum
	if sum+added > w.aBest {
		aBest, aStart := w.aBest, w.aStart
		r := &k.ring
		j := k.done // the batch's releases before j are before f+V
		var joined int64
		for i := from; i < to && sum+added > aBest; i++ {
			f := r.at(i)
			for end := f.at + w.v; j < k.tail && r.at(j).at < end; j++ {
				joined += k.cost(j)
			}
			if s := sum + joined; s > aBest {
				aBest, aStart = s, f.at
			}
			sum -= k.cost(i)
		}
		w.aBest, w.aStart = aBest, aStart
	}
	w.sum = w.sum - left + added
}

// indexBatch makes the index of the batch being counted (the releases from
// done to tail) for flushBatch: in a table of the batch's keys (slots,
// which stays in cache) the cost of each key's releases in the batch.
func (k *keyPeaks) indexBatch() {
	if k.slots == nil {
		k.slots = new([keySlots]keySlot)
	}
	if k.batch++; k.batch == keyBatches {
		// numbers wrap: no slot may be taken for a past batch's
		k.batch = 1
		*k.slots = [keySlots]keySlot{}
	}
	batch := k.batch
	for i := k.done; i < k.tail; i++ {
		key, c := k.ring.at(i).key, uint64(k.cost(i))
		if sl := k.slot(key, batch); sl.batch == batch {
			sl.total += c
		} else {
			*sl = keySlot{key: key, batch: batch, total: c}
		}
	}
}

// prefetchFront asks for the totals of the releases from w's front (or
// the last one asked for) to end, and notes end.
func (k *keyPeaks) prefetchFront(w *keyWin, end int) {
	k.prefetchTotals(max(w.pf, w.front), end)
	w.pf = max(w.pf, end)
}

// prefetchTotals asks for the totals of the releases from i to end, span
// by span of the ring.
func (k *keyPeaks) prefetchTotals(i, end int) {
	for i < end {
		es := k.ring.span(i, end-i)
		prefetch.Keyed(k.base, k.shift&63, unsafe.Pointer(&es[0].key), len(es), unsafe.Sizeof(es[0]))
		i += len(es)
	}
}

// flushEach is flushKeys release by release, every window's front walked
// as each joins.
func flushEach[C uint32 | uint64](k *keyPeaks, counts []C) {
	r := &k.ring
	for j := k.done; j < k.tail; j++ {
		x := r.at(j)
		for wi := range k.wins {
			w := &k.wins[wi]
			for w.front < j && r.at(w.front).at+w.v <= x.at {
				leaveKey(k, counts, wi, w, r.at(w.front))
			}
		}
		cost := k.cost(j)
		join(k, counts, x, j, cost)
		for wi := range k.wins {
			k.wins[wi].sum += cost
		}
	}
	k.done = k.tail
	k.dropBig(k.wins[k.longest].front)
}

// dropBig moves the head to head, forgetting the costs held aside for the
// releases before it (which left every window).
func (k *keyPeaks) dropBig(head int) {
	if len(k.big) > 0 {
		for i := k.head; i < head; i++ {
			delete(k.big, i)
		}
	}
	k.head = head
}

// leaveKey closes the interval of the release f at w's front (window wi)
// and moves the front past it.
func leaveKey[C uint32 | uint64](k *keyPeaks, counts []C, wi int, w *keyWin, f *keyRelease) {
	c := counts[f.key] - preOf[C](k, f, w.front)
	if int64(c) > w.best {
		w.best, w.key, w.start = int64(c), f.key, f.at
	}
	if w.sum > w.aBest {
		w.aBest, w.aStart = w.sum, f.at
	}
	cost := k.cost(w.front)
	w.sum -= cost
	if wi == k.longest {
		k.room += cost
	}
	w.front++
}

// finish counts what is stored, closes every interval still open (every
// release from a window's front on starts one that ends after the latest
// release) and returns each window's peak, in the order of the windows.
func (k *keyPeaks) finish() []keyPeakRaw {
	k.flush()
	if k.wide {
		closeKeys(k, k.wideCounts)
	} else {
		closeKeys(k, k.counts)
	}
	out := make([]keyPeakRaw, len(k.wins))
	for i, w := range k.wins {
		out[i] = keyPeakRaw{w.best, w.key, w.start}
	}
	return out
}

// closeKeys closes every interval still open, all releases counted,
// asking for the totals keyAhead releases ahead. Each release from a
// window's front on starts an interval that holds every release after it
// (none has left), so the count of its key is the key's total less its
// pre, as leaveKey counts it, and the whole window's interval from the
// front holds the window's sum, which only falls from there on: only the
// front's can beat the window's best.
func closeKeys[C uint32 | uint64](k *keyPeaks, counts []C) {
	for wi := range k.wins {
		w := &k.wins[wi]
		if w.front < k.tail && w.sum > w.aBest {
			w.aBest, w.aStart = w.sum, k.ring.at(w.front).at
		}
		best, key, start := w.best, w.key, w.start
		for w.front < k.tail {
			k.prefetchFront(w, min(w.front+keyAhead+keyStep, k.tail))
			seg := k.ring.span(w.front, min(keyStep, k.tail-w.front))
			for j := range seg {
				f := &seg[j]
				if c := counts[f.key] - preOf[C](k, f, w.front+j); int64(c) > best {
					best, key, start = int64(c), f.key, f.at
				}
			}
			w.front += len(seg)
		}
		w.best, w.key, w.start = best, key, start
		if wi == k.longest {
			k.room += w.sum // the cost of every release, which left
		}
		w.sum = 0
	}
	k.dropBig(k.tail)
}

// heldReleases is how many releases the set holds once it has counted
// them.
func (k *keyPeaks) heldReleases() int {
	k.flush()
	return k.tail - k.head
}

// peaks closes the windows and reports them with their ratio to the
// policy: the key peaks, naming each window's key with name, and the peaks
// of every key together, which are peakSet's (so a run that keeps key
// peaks needs no peakSet for its releases).
func (k *keyPeaks) peaks(p algorithms.Policy, name func(uint32) string) ([]KeyPeak, []Peak) {
	keys := make([]KeyPeak, 0, len(k.wins))
	all := make([]Peak, 0, len(k.wins))
	for i, r := range k.finish() {
		w := &k.wins[i]
		kp := KeyPeak{
			WindowNs: int64(w.v),
			Count:    r.count,
			StartNs:  int64(r.start),
			Ratio:    peakRatio(r.count, w.v, p),
		}
		if r.count > 0 {
			kp.Key = name(r.key)
		}
		keys = append(keys, kp)
		all = append(all, newPeak(w.aBest, w.aStart, w.v, p))
	}
	return keys, all
}
