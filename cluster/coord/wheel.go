package coord

import "math/bits"

// cevWheel is a min-queue of cev in cevLess order for events that are
// mostly made a short time ahead of the least, as a store's trips are: a
// hashed timing wheel (Varghese and Lauck, "Hashed and hierarchical timing
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
// where a heap of all of them sifts each through every level. The lists'
// nodes are taken from one array and given back to it last in, first out,
// so that the wheel's memory is about that of a heap of as many events.
//
// It is written for cev rather than generic, so that cevLess inlines (a
// generic queue calls Less through its dictionary, once a level).
type cevWheel struct {
	shift uint
	mask  int64 // slots-1
	cur   int64 // the current slot: now holds every event of a slot <= cur
	n     int   // events held
	now   []cev
	head  []int32   // the first node of slot s's list at s&mask, for cur < s <= cur+mask; -1 for none
	occ   []uint64  // bit s&mask set while slot s holds events
	nodes []cevNode // the lists' nodes
	free  int32     // the first free node, linked by next; -1 for none
	far   cevHeap
}

// cevNode is an event in a slot's list.
type cevNode struct {
	ev   cev
	next int32 // the next node of its list (or of the free ones), or -1
}

// newCevWheel returns an empty wheel of 2^bits slots of 2^shift ns each
// (bits at least 6).
func newCevWheel(shift, bits uint) *cevWheel {
	bits = max(bits, 6)
	w := &cevWheel{
		shift: shift,
		mask:  1<<bits - 1,
		head:  make([]int32, 1<<bits),
		occ:   make([]uint64, 1<<bits/64),
		free:  -1,
	}
	for i := range w.head {
		w.head[i] = -1
	}
	return w
}

// Len returns the number of events.
func (w *cevWheel) Len() int { return w.n }

// Push adds ev.
func (w *cevWheel) Push(ev cev) {
	s := int64(ev.at) >> w.shift
	w.n++
	switch {
	case w.n == 1:
		w.cur = s // the only event: its slot becomes the current one
		w.now = append(w.now[:0], ev)
	case s <= w.cur:
		w.insert(ev)
	case s <= w.cur+w.mask:
		i := s & w.mask
		k := w.free
		if k < 0 {
			k = int32(len(w.nodes))
			w.nodes = append(w.nodes, cevNode{})
		} else {
			w.free = w.nodes[k].next
		}
		nd := &w.nodes[k]
		nd.ev, nd.next = ev, w.head[i]
		w.head[i] = k
		w.occ[i>>6] |= 1 << (i & 63)
	default:
		w.far.Push(ev)
	}
}

// insert adds ev to now, in order.
func (w *cevWheel) insert(ev cev) {
	w.now = append(w.now, ev)
	i := len(w.now) - 1
	for i > 0 && cevLess(&w.now[i-1], &ev) {
		w.now[i] = w.now[i-1]
		i--
	}
	w.now[i] = ev
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
	w.n--
	ev := w.now[len(w.now)-1]
	w.now = w.now[:len(w.now)-1]
	return ev
}

// advance moves to the first slot that holds an event and sorts its
// events into now, which is empty (Len must be > 0).
func (w *cevWheel) advance() {
	s, ok := w.next()
	if w.far.Len() > 0 {
		if f := int64(w.far.Peek().at) >> w.shift; !ok || f < s {
			s = f
		}
	}
	w.cur = s
	if i := s & w.mask; w.occ[i>>6]&(1<<(i&63)) != 0 {
		for k := w.head[i]; k >= 0; {
			nd := &w.nodes[k]
			w.insert(nd.ev)
			next := nd.next
			nd.next, w.free = w.free, k
			k = next
		}
		w.head[i] = -1
		w.occ[i>>6] &^= 1 << (i & 63)
	}
	for w.far.Len() > 0 && int64(w.far.Peek().at)>>w.shift <= s {
		w.insert(w.far.Pop())
	}
}

// next returns the first slot after cur that holds an event in the
// wheel, if any.
func (w *cevWheel) next() (int64, bool) {
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
