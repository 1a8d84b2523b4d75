package sim

import (
	"math"
	"time"

	"github.com/ratesim/ratesim/traffic"
)

// A row's events come from a few sources: the releases of delayed
// requests, the clients' retries, the backend (Config.Backend), and in a
// coordinated row the coordinator's own events (a cluster's faults, its
// store's operations, replies and timeouts, syncs: package cluster/coord).
// The first attempts come from the feed. Each source orders its own
// events; the agenda orders the sources' first events by instant, then by
// class (below): at
// one instant, releases, then the cluster's faults, store and replies,
// then the backend, then first attempts, then retries, then syncs. No two
// sources share a class, so that order is total across sources, and a
// source's own order (the store's send times and sequence numbers, the
// backend's) decides within a class.
//
// A row without a cluster has no store source, and the same order: at the
// instant of a first attempt, its releases and its backend's events come
// before it, its retries after it.

// The classes of a row's events: at one instant, events of a lower class
// come first. Releases of delayed requests wait in the run's release
// queue, the backend's events in the backend (which orders its own at one
// instant: see package backend), first attempts come from the feed and
// retries from the run's retry queue; a coordinator (a cluster's nodes
// and store) holds its own, in the exported classes.
const (
	classRelease      = iota // a delayed request reaches the backend
	ClassFault               // a fault begins or ends; a store flush
	ClassStoreArrival        // an operation reaches the store
	ClassStoreExec           // a queued operation executes at the store
	ClassReply               // a reply reaches its node; then timeouts
	classBackend             // the backend's next event (Config.Backend)
	classArrival             // a first attempt reaches the balancer
	classRetry               // a retry reaches the balancer
	ClassSync                // a node synchronises its counters
)

// source is one source of a row's events.
type source interface {
	// First returns the instant and the class of the source's first
	// event, and false when it has none.
	First() (at time.Duration, class uint8, ok bool)
	// Fire takes the source's first event and processes it.
	Fire() error
}

// head is a source's first event as the agenda holds it: its instant and
// class, or noHead.
type head struct {
	at    time.Duration
	class uint8
}

func (h head) before(t time.Duration, class uint8) bool {
	return h.at < t || h.at == t && h.class < class
}

// noHead stands for a source without events: it is before nothing (until
// stops before (math.MaxInt64, 0)).
var noHead = head{at: math.MaxInt64, class: math.MaxUint8}

// maxSources is how many sources a row has at most: releases, retries,
// the backend and a coordinator.
const maxSources = 4

// agenda is one row's queue of events: its sources, each with its first
// event. A source that gains an event (a push at any moment, from any
// source's event or a first attempt's decision) tells the agenda (wake),
// and a source's first event is read again once it fires, so that heads
// always holds each source's first event; the next event is the least of
// heads, found without asking the sources.
type agenda struct {
	srcs  [maxSources]source
	heads [maxSources]head
	n     int
	// due is at most the instant of the first event of every source:
	// nothing comes before it (the first attempts' quick way through)
	due time.Duration
}

func newAgenda() agenda {
	q := agenda{due: math.MaxInt64}
	for i := range q.heads {
		q.heads[i] = noHead
	}
	return q
}

// add adds source s and returns its index, for wake.
func (q *agenda) add(s source) int {
	i := q.n
	q.srcs[i] = s
	q.n++
	q.read(i)
	return i
}

// wake tells the agenda that source i has gained an event at (at, class).
func (q *agenda) wake(i int, at time.Duration, class uint8) {
	if h := &q.heads[i]; h.before(at, class) {
		return
	}
	q.heads[i] = head{at, class}
	q.due = min(q.due, at)
}

// read reads source i's first event again (after it fired, or after a
// change that wake cannot say, such as the backend's).
func (q *agenda) read(i int) {
	h := noHead
	if at, class, ok := q.srcs[i].First(); ok {
		h = head{at, class}
	}
	q.heads[i] = h
	q.due = min(q.due, h.at)
}

// next returns the index of the source whose first event comes first and
// before (t, class), or -1, and that event's instant (t when -1).
func (q *agenda) next(t time.Duration, class uint8) (int, time.Duration) {
	best, at := -1, head{t, class}
	due := time.Duration(math.MaxInt64)
	for i := range q.n {
		h := q.heads[i]
		due = min(due, h.at)
		if h.before(at.at, at.class) {
			best, at = i, h
		}
	}
	q.due = due
	return best, at.at
}

// fire fires source i's first event.
func (q *agenda) fire(i int) error {
	err := q.srcs[i].Fire()
	q.read(i)
	return err
}

// until processes every event of the row's agenda that comes before (t,
// class): before a first attempt at t (class classArrival), or every one
// left at the end (math.MaxInt64, 0). Before each event it reports the
// row's progress and samples its watched key up to the event's instant.
func (r *run) until(t time.Duration, class uint8) error {
	q := &r.q
	for {
		if r.progress != nil {
			r.step(t != math.MaxInt64, t)
		}
		i, at := q.next(t, class)
		if r.watchers != nil && (i >= 0 || t != math.MaxInt64) { // not the end of the run
			for _, w := range r.watchers {
				w.sampleUntil(at, r) // before the events at at
			}
		}
		if i < 0 {
			return nil
		}
		if err := q.fire(i); err != nil {
			return err
		}
	}
}

// quiet reports whether nothing of the row's comes before a first attempt
// at t and nothing is watched: the attempt is decided at once, without
// until.
func (r *run) quiet(t time.Duration) bool {
	return t < r.q.due && r.progress == nil && r.watchers == nil
}

// The sources of a row's events.

// releaseSource is a row's releases of delayed requests.
type releaseSource struct{ r *run }

func (s releaseSource) First() (time.Duration, uint8, bool) {
	if s.r.releases.Len() == 0 {
		return 0, 0, false
	}
	return s.r.releases.Min(), classRelease, true
}

func (s releaseSource) Fire() error {
	rel := s.r.releases.Pop()
	s.r.release(rel.At, rel.V)
	return nil
}

// retrySource is a row's retries: each, at its instant, is an attempt
// that try takes (the run's limiter, or a cluster's balancer).
type retrySource struct {
	r   *run
	try func(a *traffic.Arrival, attempt int) error
}

func (s retrySource) First() (time.Duration, uint8, bool) {
	if s.r.events.len() == 0 {
		return 0, 0, false
	}
	return s.r.events.peek().at, classRetry, true
}

// Fire hands the next retry to try, which is done with it when it returns
// (the run's decide, and a coordinator's Arrive, which copies it).
func (s retrySource) Fire() error {
	retry, n, ok := s.r.nextRetry()
	if !ok {
		return nil
	}
	s.r.retried = retry
	return s.try(&s.r.retried, n)
}

// backendSource is a row's backend.
type backendSource struct{ r *run }

func (s backendSource) First() (time.Duration, uint8, bool) {
	at, ok := s.r.be.Next()
	return at, classBackend, ok
}

func (s backendSource) Fire() error {
	s.r.be.Step()
	return nil
}
