package coord

import (
	"time"
	"unsafe"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/internal/prefetch"
	"github.com/ratesim/ratesim/sim"
)

// lateScripts runs a central row's scripts when their trips vary (a store
// with jitter) but nothing else about the store does: no service time, so
// a script executes the instant it reaches the store and the store's order
// is the order of arrival (docs/cluster.md); no fault on the store; every
// round trip within the timeout, so none fails; and no watcher sampling
// the store's state between a script's arrival and its reply, nor a view
// of a decision (inspect.go) counting what is in flight. Then the
// store's state is read by the scripts only, and a script may execute at
// any moment between the sends of every script that reaches the store
// before it and its reply, with the instant of its arrival: an operation
// is one event of the row's agenda (its reply) instead of two. A script
// executes as soon as no script still to be sent can reach the store
// before it: at the send of one sent rtt/2 before its arrival or later
// (each trip there takes at least rtt/2), or else at its reply, which
// executes, in order of arrival, every script that reached the store no
// later than its own (all sent by then). So a script executes while what
// it reads is still in cache, a trip of jitter after it was written. The
// scripts execute in the same order, on the same instants, as on the
// queued path; TestClusterLateScriptsMatchQueue holds it to it.
//
// The scripts in flight live in a ring in the order they were sent, each
// numbered by its place in that order, and wait for their arrival at the
// store and for their reply in two timing wheels (lateWheel) whose slots
// link the ring's entries, through their trips (lateTrip, apart), so that
// an operation costs no node of its own in a queue. A reply reads its
// entry a round trip after its send, when it has left the cache: the
// wheel of replies has the entries of the next few slots fetched ahead.
type lateScripts struct {
	ring    []lateEntry // script n at n & (len(ring)-1)
	trips   []lateTrip  // script n's trips, at the same place as in ring
	lo, hi  uint64      // the scripts not yet done with are lo..hi-1
	arrived lateWheel   // by arrival at the store: (instant, number)
	replies lateWheel   // by reply: (instant, arrival's instant, number)
	// ahead is the last slot of replies whose entries were prefetched
	ahead int64
	lines []uintptr // the addresses to prefetch
}

// lateTrip is what the wheels read of a script in flight: its instants
// and its links, apart from the rest of its entry, so that the wheels'
// lists are walked over a few bytes a script.
type lateTrip struct {
	arrive time.Duration // at the store
	reply  time.Duration // at its node
	link   [2]uint64     // the next entry in its slot of each wheel, or noItem
}

// lateEntry is the rest of a script in flight.
type lateEntry struct {
	done  bool  // executed (by its own reply or a later one's)
	freed bool  // answered
	fired int32 // the limit that decided dec (firedOf)
	at    sim.Attempt
	dec   algorithms.Decision
}

// newLateScripts returns the scripts of a row whose wheels span 2^shift
// ns a slot (storeEvents.trips).
func newLateScripts(shift uint) *lateScripts {
	l := &lateScripts{ring: make([]lateEntry, 1024), trips: make([]lateTrip, 1024)}
	l.arrived.init(0, shift)
	l.replies.init(1, shift)
	return l
}

func (l *lateScripts) entry(n uint64) *lateEntry { return &l.ring[n&uint64(len(l.ring)-1)] }

func (l *lateScripts) trip(n uint64) *lateTrip { return &l.trips[n&uint64(len(l.trips)-1)] }

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
	// every script sent from now on reaches the store at t+rtt/2 or
	// later, and after those that reach it then: the scripts that
	// reach it no later are next in the store's order, and execute now
	c.lateExecUntil(t + rtt/2)
	n := l.hi
	l.hi++
	*l.entry(n) = lateEntry{at: *at}
	tr := l.trip(n)
	*tr = lateTrip{arrive: t + there, reply: t + there + back}
	l.arrived.push(l, n, cev{at: tr.arrive, seq: n})
	// Replies at one instant are heard in the order their scripts
	// executed, which is the order of (arrival, number): sends, and so
	// their numbers, come in the order of their send times.
	l.replies.push(l, n, cev{at: tr.reply, sub: tr.arrive, seq: n})
	c.e.Wake(tr.reply, sim.ClassReply)
}

// grow doubles the ring.
func (l *lateScripts) grow() {
	ring := make([]lateEntry, 2*len(l.ring))
	trips := make([]lateTrip, 2*len(l.trips))
	for n := l.lo; n < l.hi; n++ {
		ring[n&uint64(len(ring)-1)] = *l.entry(n)
		trips[n&uint64(len(trips)-1)] = *l.trip(n)
	}
	l.ring, l.trips = ring, trips
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
		c.lateExec()
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

// lateExecUntil executes, in the store's order, the scripts that reach
// the store no later than t.
func (c *clusterRun) lateExecUntil(t time.Duration) {
	l := c.late
	for l.arrived.Len() > 0 && l.arrived.peekAt(l).at <= t {
		c.lateExec()
	}
}

// lateExec executes the first script to reach the store of those not
// executed yet.
func (c *clusterRun) lateExec() {
	l := c.late
	n := l.arrived.popAt(l).seq
	e := l.entry(n)
	arrive := l.trip(n).arrive
	now := arrive
	if c.nodeClock {
		now = e.at.Arrival.At + c.nodes[e.at.Node].skew
	}
	e.dec = c.table.Decide(now, algorithms.Key(e.at.Arrival.Key), e.at.Arrival.Cost)
	if c.firer {
		e.fired = firedOf(c.table)
	}
	e.done = true
	c.observeStore(&e.at, e.dec, now, arrive)
}

// lateWheel is a wheel whose lists link the scripts of a lateScripts
// (their trips' link[which]); script n's event is (arrive, 0, n) by
// arrival at the store (which 0), (reply, arrive, n) by reply (which 1),
// as (at, sub, seq).
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
		l.trip(n).link[w.which] = w.link(i, n)
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
// entries into now. Entering a slot of replies, it has the entries of
// the replies a few slots ahead fetched, which were last read a trip
// before.
func (w *lateWheel) advance(l *lateScripts) {
	for n := w.enter(); n != noItem; {
		tr := l.trip(n)
		if w.which == 0 {
			w.insert(cev{at: tr.arrive, seq: n})
		} else {
			w.insert(cev{at: tr.reply, sub: tr.arrive, seq: n})
		}
		n = tr.link[w.which]
	}
	w.entered()
	if w.which == 1 {
		l.prefetchReplies()
	}
}

// lateAhead is how many slots ahead of its current one the wheel of
// replies has their entries fetched.
const lateAhead = 8

// prefetchReplies has the entries of the replies in the slots up to
// lateAhead after the current one fetched, those of each slot once.
func (l *lateScripts) prefetchReplies() {
	w := &l.replies
	l.lines = l.lines[:0]
	if l.ahead < w.cur || l.ahead > w.cur+lateAhead {
		l.ahead = w.cur // (the wheel's slot moved back, emptied)
	}
	for s := l.ahead + 1; s <= w.cur+lateAhead; s++ {
		i := s & w.mask
		if w.occ[i>>6]&(1<<(i&63)) == 0 {
			continue
		}
		for n := w.head[i]; n != noItem; n = l.trip(n).link[1] {
			p := uintptr(unsafe.Pointer(l.entry(n)))
			l.lines = append(l.lines, p, p+unsafe.Sizeof(lateEntry{})-1)
		}
	}
	l.ahead = w.cur + lateAhead
	prefetch.Lines(l.lines)
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
