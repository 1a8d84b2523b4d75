package coord

import (
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/sim"
)

// lateScripts runs a central row's scripts when their trips vary (a store
// with jitter) but nothing else about the store does: no service time, so
// a script executes the instant it reaches the store and the store's order
// is the order of arrival (docs/cluster.md); no fault on the store; every
// round trip within the timeout, so none fails; and no watcher sampling
// the store's state between a script's arrival and its reply, nor a view
// of a decision (inspect.go) counting what is in flight. Then the
// store's state is read by the replies only, and each script may execute
// as late as its reply: the reply executes, in order of arrival, every
// script that reached the store no later than its own (all of them sent
// by then, as each was sent before it arrived), its own last. An operation
// is then one event of the row's agenda (its reply) instead of two. The
// scripts execute in the same order, on the same instants, as on the
// queued path; TestClusterLateScriptsMatchQueue holds it to it.
//
// The scripts in flight live in a ring in the order they were sent, each
// numbered by its place in that order, and wait for their arrival at the
// store and for their reply in two timing wheels (lateWheel) whose slots
// link the ring's entries: the trips of a script and of those sent about
// then end about together, so that what a reply reads was written near
// what the replies around it read, and an operation costs no node of its
// own in a queue.
type lateScripts struct {
	ring    []lateEntry // script n at n & (len(ring)-1)
	lo, hi  uint64      // the scripts not yet done with are lo..hi-1
	arrived lateWheel   // by arrival at the store: (instant, number)
	replies lateWheel   // by reply: (instant, arrival's instant, number)
	pf      algorithms.Prefetcher
	keys    [1]algorithms.Key // the key advance prefetches
}

// lateEntry is a script in flight. What the wheels read comes first,
// with the key and the cost in the same 64 bytes.
type lateEntry struct {
	arrive time.Duration // at the store
	reply  time.Duration // at its node
	link   [2]uint64     // the next entry in its slot of each wheel, or noItem
	done   bool          // executed (by its own reply or a later one's)
	freed  bool          // answered
	fired  int32         // the limit that decided dec (firedOf)
	at     sim.Attempt
	dec    algorithms.Decision
}

// newLateScripts returns the scripts of a row whose wheels span 2^shift
// ns a slot (storeEvents.trips), which prefetch the table's rows with pf
// (nil: no prefetch).
func newLateScripts(shift uint, pf algorithms.Prefetcher) *lateScripts {
	l := &lateScripts{ring: make([]lateEntry, 1024), pf: pf}
	l.arrived.init(0, shift)
	l.replies.init(1, shift)
	return l
}

func (l *lateScripts) entry(n uint64) *lateEntry { return &l.ring[n&uint64(len(l.ring)-1)] }

// lateOK reports whether the scripts of a central row on cl, watched as
// in says, may execute at their replies (lateScripts).
func lateOK(cl *cluster.Config, in *sim.Inspect) bool {
	st := cl.Store
	if st.Service != 0 || st.Jitter <= 0 || st.RTT+2*st.Jitter > st.Timeout || (in != nil && in.Every > 0) {
		return false
	}
	for _, f := range cl.Faults {
		switch f.Type {
		case cluster.StoreSlow, cluster.StoreDown, cluster.StoreFlush:
			return false
		}
	}
	return true
}

// sendLate sends the script for at from its node now, at its arrival: its
// trips are drawn as send draws them, and its reply is scheduled.
func (c *clusterRun) sendLate(at *sim.Attempt) {
	l := c.late
	t := at.Arrival.At
	rtt := c.cl.Store.RTT
	there, back := rtt/2, rtt-rtt/2
	j := int64(c.cl.Store.Jitter)
	there += time.Duration(c.netRng.Int64N(j))
	back += time.Duration(c.netRng.Int64N(j))
	c.storeOps++
	if l.hi-l.lo == uint64(len(l.ring)) {
		l.grow()
	}
	n := l.hi
	l.hi++
	e := l.entry(n)
	*e = lateEntry{at: *at, arrive: t + there, reply: t + there + back}
	l.arrived.push(l, n, cev{at: e.arrive, seq: n})
	// Replies at one instant are heard in the order their scripts
	// executed, which is the order of (arrival, number): sends, and so
	// their numbers, come in the order of their send times.
	l.replies.push(l, n, cev{at: e.reply, sub: e.arrive, seq: n})
	c.e.Wake(e.reply, sim.ClassReply)
}

// grow doubles the ring.
func (l *lateScripts) grow() {
	ring := make([]lateEntry, 2*len(l.ring))
	for n := l.lo; n < l.hi; n++ {
		ring[n&uint64(len(ring)-1)] = *l.entry(n)
	}
	l.ring = ring
}

// first returns the instant of the first reply, if any.
func (l *lateScripts) first() (time.Duration, bool) {
	if l.replies.Len() == 0 {
		return 0, false
	}
	return l.replies.peekAt(l).at, true
}

// lateReply takes the first reply at its node at t: the store executes,
// unless it has, every script that arrived before its own, then its own.
func (c *clusterRun) lateReply(t time.Duration) error {
	l := c.late
	n := l.replies.popAt(l).seq
	for !l.entry(n).done {
		e := l.entry(l.arrived.popAt(l).seq)
		now := e.arrive
		if c.nodeClock {
			now = e.at.Arrival.At + c.nodes[e.at.Node].skew
		}
		e.dec = c.table.Decide(now, algorithms.Key(e.at.Arrival.Key), e.at.Arrival.Cost)
		if c.firer {
			e.fired = firedOf(c.table)
		}
		e.done = true
		c.observeStore(&e.at, e.dec, now, e.arrive)
	}
	e := l.entry(n)
	c.fire(e.fired)
	err := c.decided(&e.at, e.dec, t)
	l.entry(n).freed = true
	for l.lo < l.hi && l.entry(l.lo).freed {
		l.lo++
	}
	return err
}

// lateWheel is a wheel whose lists link the entries of a lateScripts'
// ring (their link[which]); an entry's event is (arrive, 0, n) by arrival
// at the store (which 0), (reply, arrive, n) by reply (which 1), as (at,
// sub, seq).
type lateWheel struct {
	wheel
	which int
}

func (w *lateWheel) init(which int, shift uint) {
	w.which = which
	w.wheel.init(shift, wheelBits)
}

// push adds entry n, whose event is ev.
func (w *lateWheel) push(l *lateScripts, n uint64, ev cev) {
	if i, ok := w.list(ev.at); ok {
		l.entry(n).link[w.which] = w.link(i, n)
	} else {
		w.place(ev)
	}
}

func (w *lateWheel) peekAt(l *lateScripts) *cev {
	if len(w.now) == 0 {
		w.advance(l)
	}
	return &w.now[len(w.now)-1]
}

func (w *lateWheel) popAt(l *lateScripts) *cev {
	if len(w.now) == 0 {
		w.advance(l)
	}
	return w.pop()
}

// advance moves to the next slot that holds an entry and sorts its
// entries into now. Entering arrivals at the store, it has the table
// fetch the rows they will decide on.
func (w *lateWheel) advance(l *lateScripts) {
	for n := w.enter(); n != noItem; {
		e := l.entry(n)
		if w.which == 0 {
			w.insert(cev{at: e.arrive, seq: n})
			if l.pf != nil {
				l.keys[0] = algorithms.Key(e.at.Arrival.Key)
				l.pf.Prefetch(l.keys[:], e.arrive)
			}
		} else {
			w.insert(cev{at: e.reply, sub: e.arrive, seq: n})
		}
		n = e.link[w.which]
	}
	w.entered()
}

// lateFirst is First with lateScripts: the first of the row's own events
// (node-down faults) and of the replies.
func (c *clusterRun) lateFirst() (time.Duration, uint8, bool) {
	e, _ := c.q.peek()
	if t, ok := c.late.first(); ok && (e == nil || e.at > t || e.at == t && e.class > sim.ClassReply) {
		return t, sim.ClassReply, true
	}
	if e != nil {
		return e.at, e.class, true
	}
	return 0, 0, false
}

// lateFire is Fire with lateScripts.
func (c *clusterRun) lateFire() error {
	e, where := c.q.peek()
	if t, ok := c.late.first(); ok && (e == nil || e.at > t || e.at == t && e.class > sim.ClassReply) {
		return c.lateReply(t)
	}
	return c.event(c.q.pop(where))
}
