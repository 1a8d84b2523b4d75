package coord

import (
	"math"
	"math/bits"
	"time"
)

// wheel is a min-queue of cev in cevLess order for events that are mostly
// made a short time ahead of the least, as a store's trips are: a hashed
// timing wheel (Varghese and Lauck, "Hashed and hierarchical timing
// wheels", SOSP 1987) whose current slot is held sorted.
//
// Time is cut into slots of 2^shift ns. The events of the current slot,
// and of any slot before it, wait in now, sorted with the least last. The
// events of the next 2^bits-1 slots wait unsorted in their slot's list,
// and a bitmap says which slots hold any; events further ahead wait in a
// heap (far). When now is empty, the wheel moves to the first slot that
// holds an event (the bitmap's next, or far's least) and sorts that
// slot's events, and far's of that slot, into now. An event is thus
// written once into its slot and sorted among its slot's few events only,
// where a heap of all of them sifts each through every level.
//
// wheel holds the slots, now and far; the lists belong to its user, who
// links items of its own, numbered, through the heads wheel keeps: a
// cevWheel links nodes that hold the events, lateScripts the entries of
// its ring, whose event it makes again from the entry when the wheel
// reaches their slot (so the wheel reads the entry the script reads
// next). Its user pushes with place and link, and before a peek or a pop
// with an empty now moves it on with enter, then inserts each item of
// the list enter gives. It is written for cev rather than generic, so
// that cevLess inlines (a generic queue calls Less through its
// dictionary, once a level).
type wheel struct {
	shift uint
	mask  int64 // slots-1
	cur   int64 // the current slot: now holds every event of a slot <= cur
	n     int   // events held
	now   []cev
	head  []uint64 // the first item of slot s's list at s&mask, for cur < s <= cur+mask; noItem for none
	occ   []uint64 // bit s&mask set while slot s holds events
	far   cevHeap
}

// noItem ends a slot's list.
const noItem = math.MaxUint64

// init makes w an empty wheel of 2^bits slots of 2^shift ns each (bits
// at least 6).
func (w *wheel) init(shift, bits uint) {
	bits = max(bits, 6)
	w.shift, w.mask = shift, 1<<bits-1
	w.head = make([]uint64, 1<<bits)
	w.occ = make([]uint64, 1<<bits/64)
	for i := range w.head {
		w.head[i] = noItem
	}
}

// Len returns the number of events.
func (w *wheel) Len() int { return w.n }

// list counts an event at t as held if it belongs in a slot's list, and
// returns the slot's index: the caller links the item that holds the
// event there (link). Else the caller places the event with place.
func (w *wheel) list(t time.Duration) (int64, bool) {
	s := int64(t) >> w.shift
	if w.n == 0 || s <= w.cur || s > w.cur+w.mask {
		return 0, false
	}
	w.n++
	return s & w.mask, true
}

// place counts ev as held and puts it in now or far, where list did not
// take it.
func (w *wheel) place(ev cev) {
	s := int64(ev.at) >> w.shift
	w.n++
	switch {
	case w.n == 1:
		w.cur = s // the only event: its slot becomes the current one
		w.now = append(w.now[:0], ev)
	case s <= w.cur:
		w.insert(ev)
	default:
		w.far.Push(ev)
	}
}

// link makes item the first of slot index i's list and returns the item
// it is to link to next (noItem: none).
func (w *wheel) link(i int64, item uint64) uint64 {
	next := w.head[i]
	w.head[i] = item
	w.occ[i>>6] |= 1 << (i & 63)
	return next
}

// insert adds ev to now, in order.
func (w *wheel) insert(ev cev) {
	w.now = append(w.now, ev)
	i := len(w.now) - 1
	for i > 0 && cevLess(&w.now[i-1], &ev) {
		w.now[i] = w.now[i-1]
		i--
	}
	w.now[i] = ev
}

// pop removes the least event (now must not be empty) and returns it
// where it was, valid until the next push.
func (w *wheel) pop() *cev {
	w.n--
	ev := &w.now[len(w.now)-1]
	w.now = w.now[:len(w.now)-1]
	return ev
}

// enter moves to the first slot that holds an event, with now empty and
// Len > 0, and returns the first item of the slot's list (noItem for
// none): the caller inserts their events, then calls entered.
func (w *wheel) enter() uint64 {
	s, ok := w.next()
	if w.far.Len() > 0 {
		if f := int64(w.far.Peek().at) >> w.shift; !ok || f < s {
			s = f
		}
	}
	w.cur = s
	first := uint64(noItem)
	if i := s & w.mask; w.occ[i>>6]&(1<<(i&63)) != 0 {
		first = w.head[i]
		w.head[i] = noItem
		w.occ[i>>6] &^= 1 << (i & 63)
	}
	return first
}

// entered sorts far's events of the slot enter moved to into now.
func (w *wheel) entered() {
	if w.far.Len() > 0 {
		w.fromFar()
	}
}

func (w *wheel) fromFar() {
	for w.far.Len() > 0 && int64(w.far.Peek().at)>>w.shift <= w.cur {
		w.insert(w.far.Pop())
	}
}

// next returns the first slot after cur that holds an event in the
// wheel, if any.
func (w *wheel) next() (int64, bool) {
	words := len(w.occ)
	i := (w.cur + 1) & w.mask // cur's own index holds nothing
	k := int(i >> 6)
	m := w.occ[k] &^ (1<<(i&63) - 1)
	for range words + 1 {
		if m != 0 {
			j := int64(k)<<6 | int64(bits.TrailingZeros64(m))
			return w.cur + (j-w.cur)&w.mask, true
		}
		k = (k + 1) % words
		m = w.occ[k]
	}
	return 0, false
}

// cevWheel is a wheel whose lists link nodes of its own, each holding its
// event. The nodes are taken from one array and given back to it last
// in, first out, so that the wheel's memory is about that of a heap of
// as many events.
type cevWheel struct {
	wheel
	nodes []cevNode // the lists' nodes
	free  int32     // the first free node, linked by next; -1 for none
}

// cevNode is an event in a slot's list.
type cevNode struct {
	ev   cev
	next int32 // the next node of its list (or of the free ones), or -1
}

// newCevWheel returns an empty wheel of 2^bits slots of 2^shift ns each
// (bits at least 6).
func newCevWheel(shift, bits uint) *cevWheel {
	w := &cevWheel{free: -1}
	w.init(shift, bits)
	return w
}

// Push adds ev.
func (w *cevWheel) Push(ev cev) {
	i, ok := w.list(ev.at)
	if !ok {
		w.place(ev)
		return
	}
	k := w.free
	if k < 0 {
		k = int32(len(w.nodes))
		w.nodes = append(w.nodes, cevNode{})
	} else {
		w.free = w.nodes[k].next
	}
	nd := &w.nodes[k]
	nd.ev = ev
	nd.next = nodeOf(w.link(i, uint64(k)))
}

// nodeOf is the node of a list's item (-1 for noItem).
func nodeOf(item uint64) int32 {
	if item == noItem {
		return -1
	}
	return int32(item)
}

// Peek returns the least event (Len must be > 0).
func (w *cevWheel) Peek() *cev {
	if len(w.now) == 0 {
		w.advance()
	}
	return &w.now[len(w.now)-1]
}

// Pop removes and returns the least event (Len must be > 0).
func (w *cevWheel) Pop() cev {
	if len(w.now) == 0 {
		w.advance()
	}
	return *w.pop()
}

// advance moves to the next slot that holds an event and sorts its
// events into now, giving their nodes back.
func (w *cevWheel) advance() {
	for k := nodeOf(w.enter()); k >= 0; {
		nd := &w.nodes[k]
		w.insert(nd.ev)
		next := nd.next
		nd.next, w.free = w.free, k
		k = next
	}
	w.entered()
}
