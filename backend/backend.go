// Package backend models the service a rate limiter protects
// (docs/backend.md): c workers, a bounded waiting room served FIFO or LIFO, service
// times drawn per request, client timeouts, errors and faults, on a
// virtual clock of integer nanoseconds. It is a discrete-event model that
// an engine drives: the engine submits what its limiter admitted and asks
// for the backend's own events in time order, interleaving them with its
// arrivals and retries.
//
// # The model
//
// A request admitted by the limiter reaches the backend at its admission
// instant (Request.Admitted: the decision, plus a shaper's delay). If a
// worker may start (fewer than c in service, no pause, no capacity cut
// below the number in service) and nobody waits, it starts at once;
// else it joins the waiting room; if the waiting room is full (Queue
// requests wait already) it is shed: a 503, at once. When a worker frees
// up, it takes the request that has waited longest (FIFO) or the latest to
// join (LIFO). A request's service time is drawn from the seed and the
// request's identity (see Request), times a slow fault's factor when it
// starts in one.
//
// The client waits Timeout from its attempt's arrival at the limiter
// (Request.Arrived), so a shaper's delay counts against its patience: the
// client's clock starts when it sends. At its deadline, unless the
// response has come, it gives up (TimedOut); the backend knows nothing of
// it and still serves the request, the worker time after the deadline
// being wasted, unless DropExpired is set: then a request whose deadline
// has come (deadline <= now) when it reaches a worker is dropped unserved
// (Dropped). A response at the deadline itself is in time.
//
// A served request fails with probability Errors, drawn per request too;
// it takes its full service time and its client gets the error then.
//
// Faults are windows [At, At+For): Slow multiplies the service time of the
// requests that start in the window; Pause lets no worker start anything
// in it; Workers lets no request start while Count or more are in
// service. Requests in service always finish. Faults of different types
// may overlap, two of one type may not.
//
// # Events
//
// The backend's internal events are, at one instant, processed in this
// order, and in the order they were scheduled within one kind:
//
//  1. the end of a pause or of a workers cut: idle workers take waiting
//     requests;
//  2. completions (in the order the services started): the worker takes
//     the next waiting request at once;
//  3. client timeouts (in the order the requests were submitted);
//  4. admissions (in the order they were submitted).
//
// So a response at an instant is in time for a deadline at that instant, a
// worker freed at an instant serves a waiting request before a request
// admitted at that instant is queued (or shed), and a request admitted at
// the instant a fault ends finds the workers the fault held back busy.
//
// Each internal event emits zero or more Events, through the function
// given to New, in the order they happen: a completion emits Completed or
// Failed and then Started (or Dropped) for the next waiting request. Every
// submitted request gets exactly one Event with Client set: its outcome as
// the client sees it (Completed or Failed in time, Shed, or TimedOut), at
// which the client is free to retry and an adaptive limiter takes its
// sample (Event.Sample).
//
// An engine interleaves the backend with its own events (arrivals,
// retries) by time, the backend's first at one instant:
//
//	for {
//		t, have := the instant of the engine's next event (arrival or retry)
//		if bt, ok := b.Next(); ok && (!have || bt <= t) {
//			b.Step() // may schedule a retry before t: look again
//			continue
//		}
//		if !have {
//			break // nothing left on either side
//		}
//		decide the engine's event at t; b.Submit(...) what is admitted
//	}
//
// The same loop drains the backend after the traffic (Until with the
// largest instant does, when no client retries). An admission submitted at
// the current instant is processed by a later Step, after the engine's
// other events at that instant; but one at its decision (Admitted ==
// Arrived) with no event of the backend at or before it, which would come
// next in any case, is processed by Submit itself when it starts or
// queues the request (not when it sheds it, a client's outcome).
//
// An engine whose clients never retry hears of the backend only through
// its limiter's samples, which it reads at its decisions: it may call
// Until(t) before deciding at t, instead of interleaving Next and Step
// with its own events, and Until with the largest instant after the
// traffic. The order is the same.
//
// A client's timeout whose request is gone, or whose client has its
// answer, is dropped unprocessed from the front of its queue; its instant
// still counts as an event's for Result, which is why Result wants the
// backend drained.
//
// # Determinism
//
// The backend reads no clock and no shared random stream: every draw is a
// hash of (Seed, ID, Attempt), and the float arithmetic of the draws is
// written so that it is the same on every platform and GOAMD64 level (see
// draw.go). The same submissions give the same events, byte for byte.
//
// # Memory
//
// The backend holds the requests present (admissions pending, waiting, in
// service, and clients' timers still running), its histograms (bounded:
// ExactValues) and its series (bounded: MaxBuckets), never a record per
// request served.
package backend

import (
	"errors"
	"fmt"
	"github.com/ratesim/ratesim/internal/hist"
	"github.com/ratesim/ratesim/internal/queue"
	"math"
	"time"
)

// Request is one attempt that the limiter admitted.
//
// Its identity is (ID, Attempt): ID numbers the request (its first
// attempt's position in the traffic, the same in every algorithm row), and
// Attempt is 1 for the first try and one more for each retry. The service
// time and the error draw of a request are functions of the seed and of
// its identity only, so every row serves the same attempt of the same
// request in the same time.
type Request struct {
	ID      uint64
	Attempt int32
	// Key, Source and Cost are carried for the engine, and given back in
	// every Event; the backend does not read them (a request takes one
	// worker, whatever its cost).
	Key    uint32
	Source int32
	Attrs  uint32 // the request's other attributes (traffic.Arrival.Attrs)
	// Node and Epoch are carried for the engine too: in a cluster, the
	// gateway node that admitted the request and how many times that
	// node had gone down then (its limiter's generation), so that a
	// sample goes back to the limiter that admitted the request.
	Node  int32
	Epoch uint32
	Cost  int64
	// InFlight is carried for the engine: its limiter's units in flight
	// when it admitted the request, itself included (an adaptive limit's
	// sample takes it).
	InFlight int64
	// Arrived is when the attempt reached the limiter: the client's
	// timeout counts from it. Admitted is when it reaches the backend
	// (Arrived plus a shaper's delay), at or after Arrived.
	Arrived  time.Duration
	Admitted time.Duration
	// Gate is how long the verdict took to take effect after the arrival:
	// in a cluster, the wait for the store (decided - arrived,
	// docs/cluster.md's added latency); 0 for a limiter that decides at the
	// arrival. The request is submitted at Arrived + Gate, the verdict's
	// instant; its response time counts from Admitted - Gate (the
	// arrival, plus a shaper's delay), so the store's part is in it.
	Gate time.Duration
}

// Kind is what happened to a request.
type Kind uint8

const (
	// Started: a worker began serving the request.
	Started Kind = iota + 1
	// Completed: its service ended without error.
	Completed
	// Failed: its service ended with an error.
	Failed
	// Shed: the waiting room was full at its admission (a 503).
	Shed
	// TimedOut: its client stopped waiting, at its deadline.
	TimedOut
	// Dropped: it reached a worker after its client had gone, with
	// DropExpired set, and was not served.
	Dropped
)

var kindNames = [...]string{"", "started", "completed", "failed", "shed", "timed-out", "dropped"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Event is one thing that happened to a request, at an instant.
type Event struct {
	At   time.Duration
	Kind Kind
	Req  Request
	// Client is set on the one event of each request that is its outcome
	// for its client: Completed or Failed at or before its deadline, Shed
	// while its client waits, or TimedOut.
	Client bool
	// Service is the request's service time (Started, Completed, Failed).
	Service time.Duration
}

// Sample is the completion sample of a client event, for a concurrency or
// adaptive limiter (docs/adaptive.md): rtt = the event's instant minus the
// admission (queueing included), and drop for a shed, an error or a
// timeout. A timeout before the admission (a shaper held the request
// longer than its client's patience) has rtt 0.
func (e *Event) Sample() (rtt time.Duration, drop bool) {
	return max(e.At-e.Req.Admitted, 0), e.Kind != Completed
}

// The states of a request in the backend.
const (
	stPending = iota // its admission is scheduled
	stWaiting        // in the waiting room
	stServing        // a worker serves it
)

// slot is a request present in the backend: what the backend reads of it,
// 56 bytes, in one cache line when the slots' array is aligned to one (a
// shaper's row holds thousands of requests to come, each read again when
// it reaches the backend). The request itself, which only the events
// carry, is kept apart (Backend.reqs), and only when events are emitted.
type slot struct {
	admitted time.Duration // req.Admitted
	gate     time.Duration // req.Gate
	deadline time.Duration // math.MaxInt64: none
	start    time.Duration
	service  time.Duration // its service time, once it starts
	draw     uint64        // the hash of (seed, ID), the root of its draws
	attempt  int32         // req.Attempt
	state    uint8
}

// tag is what a timeout reads of its slot to know whether it would do
// anything, apart from the slot: a timeout is looked at long after it was
// scheduled, and the slots' tags, 8 bytes each, stay in the cache where
// the slots do not.
type tag struct {
	gen        uint32 // incremented when the slot is freed
	clientDone bool   // its request's client event has been emitted
}

// Backend is one algorithm row's backend. It is not safe for concurrent
// use.
type Backend struct {
	cfg  Config
	s    sampler
	emit func(Event)

	now time.Duration // the instant of the last event processed
	// what Result.HeldPeak counts: the requests held now, as of heldAt
	heldNow int64
	heldAt  time.Duration
	seq     uint64
	slots   []slot
	tags    []tag     // by slot
	reqs    []Request // by slot: the requests, for the events (none when want is wantNone)
	free    []uint32
	wait    queue.Deque[uint32] // the waiting room, by slot
	busy    int                 // requests in service
	lifo    bool
	qcap    int // Unbounded or >= 0

	// the scheduled events: completions (at most Workers), admissions
	// and timeouts in the order submitted (their instants do not go
	// back, in the usual case), and the others (admissions or timeouts
	// that would go back, fault ends)
	done     completions
	admits   queue.Deque[entry]
	timeouts queue.Deque[entry]
	other    evHeap
	late     *lateAdmits // admissions out of their queue's order (nil until the first: its timing wheel is 40 KB)
	// the next event (see next), and the earliest of the sources but the
	// completions (see rest), each once found
	nx, rs found
	// the events emitted: wantAll, wantClient (a client's outcomes only:
	// OnlyClientEvents), or wantNone (no emit function)
	want uint8

	// faults by type, sorted, and the first not over of each
	pauses, cuts, slows []Fault
	ip, ic, is          int
	held                bool // a pause or a workers cut is yet to end (ip, ic)
	firstFault          time.Duration
	lastFaultEnd        time.Duration

	// the figures
	res      Result
	waits    hist.Hist
	resps    hist.Hist
	series   series
	lastSeen time.Duration // the latest instant of an event
	// the latest deadline of a request submitted: a client's timeout is
	// an event whether or not it is processed (a timeout whose request is
	// gone, or whose client has its answer, is dropped unprocessed)
	lastDeadline time.Duration
}

// New returns a backend of cfg, which emits its events to emit (nil: none
// wanted).
func New(cfg Config, emit func(Event)) (*Backend, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	cfg.Faults = append([]Fault(nil), cfg.Faults...)
	if cfg.MaxBuckets == 0 {
		cfg.MaxBuckets = DefaultMaxBuckets
	}
	if cfg.RecoverWindow == 0 {
		cfg.RecoverWindow = DefaultRecoverWindow
	}
	want := uint8(wantAll)
	if emit == nil {
		want = wantNone
	}
	b := &Backend{
		cfg: cfg, s: newSampler(&cfg), emit: emit, want: want,
		now:    math.MinInt64,
		lifo:   cfg.Discipline == LIFO,
		qcap:   cfg.Queue,
		series: newSeries(cfg.Start, cfg.Bucket, cfg.MaxBuckets),
		done:   newCompletions(cfg.Workers),
	}
	b.series.all = &b.resps // the series feeds it
	for i, f := range cfg.Faults {
		switch f.Type {
		case Pause:
			b.pauses = append(b.pauses, f)
		case Workers:
			b.cuts = append(b.cuts, f)
		case Slow:
			b.slows = append(b.slows, f)
		}
		if f.Type != Slow && f.Type != Trigger && f.End() < math.MaxInt64 {
			b.other.Push(entry{at: f.End(), ord: b.order(evFaultEnd), slot: uint32(i)})
		}
		if i == 0 || f.At < b.firstFault {
			b.firstFault = f.At
		}
		b.lastFaultEnd = max(b.lastFaultEnd, f.End())
	}
	for _, fs := range [][]Fault{b.pauses, b.cuts, b.slows} {
		sortFaults(fs)
	}
	b.held = len(b.pauses) > 0 || len(b.cuts) > 0
	return b, nil
}

func sortFaults(fs []Fault) {
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].At < fs[j-1].At; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}

// OnlyClientEvents makes the backend emit only the events with Client
// set (a client's outcome), for an engine that reads no other: the others
// are not built.
func (b *Backend) OnlyClientEvents() { b.want = min(b.want, wantClient) }

// emits reports whether the backend emits an event that is a client's
// outcome (client) or not.
func (b *Backend) emits(client bool) bool {
	return b.want != wantNone && (b.want == wantAll || client) // wantNone, the usual, in one test
}

// What a backend emits (Backend.want).
const (
	wantNone = iota
	wantClient
	wantAll
)

// order is the ord of an event of kind k scheduled now.
func (b *Backend) order(k int) uint64 {
	b.seq++
	return uint64(k)<<kindShift | b.seq
}

// Now is the instant of the last event processed (math.MinInt64 before
// the first).
func (b *Backend) Now() time.Duration { return b.now }

// InService is the number of requests being served; Waiting the number in
// the waiting room.
func (b *Backend) InService() int { return b.busy }
func (b *Backend) Waiting() int   { return b.wait.Len() }

// ErrPast is returned by Submit for a request that comes before the
// backend's clock.
var ErrPast = errors.New("backend: request submitted in the past")

// Limit records, for the series and the result, that the limit of the
// limiter in front (an adaptive row's) is v from t on. Calls come in time
// order; a limit is in force from the first call to the end.
func (b *Backend) Limit(t time.Duration, v int) {
	b.series.limit(t, int64(v))
}

// Submit gives the backend a request the limiter admitted (it copies *r:
// the caller may reuse it). Its verdict's
// instant, Arrived + Gate, must not be before the last event processed
// (submit at the verdict, in time order), its Gate not negative, and its
// Admitted not before the verdict. Its admission is processed by a later
// Step, at Admitted, or at once when it comes next in any case and
// starts or queues the request (see Events).
//
// The client's deadline counts from Arrived. A deadline that passed
// before the verdict (a client that gave up while its gateway waited for
// the store) is processed at the verdict's instant: the engine learns of
// it then, and no event of the backend goes back in time.
func (b *Backend) Submit(r *Request) error {
	decided := r.Arrived + r.Gate
	if r.Gate < 0 || decided < b.now || r.Admitted < decided {
		return fmt.Errorf("%w: arrived %v, decided %v, admitted %v, backend at %v", ErrPast, r.Arrived, decided, r.Admitted, b.now)
	}
	var i uint32
	if n := len(b.free); n > 0 {
		i = b.free[n-1]
		b.free = b.free[:n-1]
	} else {
		b.slots = append(b.slots, slot{})
		b.tags = append(b.tags, tag{})
		if b.want != wantNone {
			b.reqs = append(b.reqs, Request{})
		}
		i = uint32(len(b.slots) - 1)
	}
	if b.want != wantNone {
		b.reqs[i] = *r
	}
	deadline := time.Duration(math.MaxInt64)
	if b.cfg.Timeout > 0 && r.Arrived <= math.MaxInt64-b.cfg.Timeout {
		deadline = r.Arrived + b.cfg.Timeout
	}
	admitted := r.Admitted
	if b.cfg.Latency > 0 {
		// it reaches the queue Latency after its admission
		admitted = min(admitted, math.MaxInt64-b.cfg.Latency) + b.cfg.Latency
	}
	b.holds(decided, 1)
	s := &b.slots[i]
	s.admitted, s.gate, s.deadline, s.attempt, s.state = admitted, r.Gate, deadline, r.Attempt, stPending
	s.service, s.draw = 0, b.s.root(r.ID)
	b.tags[i].clientDone = false
	b.res.Submitted++
	// An admission at the decision with no event of the backend at or
	// before it comes next in any case (the engine's loop processes the
	// backend's events up to an instant before it decides there): when it
	// starts the request or queues it, which the engine does not hear of,
	// it is processed now rather than by the next Step. (A shed is a
	// client's outcome, processed in its turn.)
	now, starts := false, false // processed now; a worker starts it
	if t := admitted; t == decided && t < deadline {
		b.find()
		if !b.nx.due(t) {
			starts = b.wait.Len() == 0 && b.canStart(t)
			now = starts || b.qcap == Unbounded || b.wait.Len() < b.qcap
		}
	}
	if deadline < math.MaxInt64 {
		b.lastDeadline = max(b.lastDeadline, deadline)
	}
	if !now {
		b.schedule(&b.admits, 1, entry{at: admitted, ord: b.order(evAdmit), slot: i})
		if deadline < math.MaxInt64 {
			b.scheduleTimeout(i, max(deadline, decided))
		}
		return nil
	}
	t := admitted
	b.now = t
	b.lastSeen = max(b.lastSeen, t)
	if starts {
		b.start(t, i) // admit, its worker asked for already
	} else {
		b.enqueue(t, i)
	}
	// a request that started at once and completes by its deadline (a
	// completion comes before a timeout at one instant) needs no timeout:
	// it would do nothing. Events of different kinds are ordered by kind
	// before the order they were scheduled in, so scheduling the timeout
	// after the start's completion moves nothing.
	if deadline < math.MaxInt64 && (s.state != stServing || s.start+s.service > deadline) {
		b.scheduleTimeout(i, max(deadline, decided))
	}
	return nil
}

// scheduleTimeout schedules the timeout of the request in slot i at at.
func (b *Backend) scheduleTimeout(i uint32, at time.Duration) {
	b.schedule(&b.timeouts, 2, entry{at: at, ord: b.order(evTimeout), slot: i, gen: b.tags[i].gen})
}

// schedule puts e at the back of q, the queue of source src, when its
// instant does not go back there (the usual case), else among the late
// admissions (an admission) or the other events.
func (b *Backend) schedule(q *queue.Deque[entry], src int, e entry) {
	switch {
	case q.Len() == 0 || q.Back().at <= e.at:
		q.PushBack(e)
	case e.kind() == evAdmit && b.lateQueue().push(e):
		src = 4
	default:
		b.other.Push(e)
		src = 3
	}
	b.nx.offer(&e, src)
	b.rs.offer(&e, src)
}

// lateQueue returns the late admissions, made at the first.
func (b *Backend) lateQueue() *lateAdmits {
	if b.late == nil {
		b.late = new(lateAdmits)
	}
	return b.late
}

// stale reports whether the timeout e would do nothing: its request is
// gone, or its client has its answer. Once stale, it stays so.
func (b *Backend) stale(e *entry) bool {
	g := b.tags[e.slot]
	return g.gen != e.gen || g.clientDone
}

// next finds the next internal event (nx): the next completion, or the
// earliest of the other sources (rest), whichever comes first.
func (b *Backend) next() {
	for {
		if !b.rs.ok {
			b.rest()
		}
		if b.done.Len() > 0 {
			if e := b.done.Peek(); b.rs.after(e) {
				b.nx = found{ok: true, src: 0, at: e.at, ord: e.ord}
				return
			}
		}
		// the rest's comes first: a timeout that would do nothing is
		// dropped (rest) rather than processed
		if b.rs.src == 2 && b.stale(b.timeouts.Front()) {
			b.rs.ok = false
			continue
		}
		b.nx = b.rs
		return
	}
}

// rest finds the earliest event of the sources other than the completions
// (rs), which change far less often: it stays found until one of them
// loses an event, or the timeout found would do nothing when it comes
// next. Timeouts that would do nothing are dropped from the front of their
// queue first (Result counts their instants, lastDeadline).
func (b *Backend) rest() {
	for b.timeouts.Len() > 0 && b.stale(b.timeouts.Front()) {
		b.timeouts.PopFront()
	}
	var best *entry
	src := -1
	if b.admits.Len() > 0 {
		best, src = b.admits.Front(), 1
	}
	if b.timeouts.Len() > 0 {
		if e := b.timeouts.Front(); best == nil || e.Less(best) {
			best, src = e, 2
		}
	}
	if b.other.Len() > 0 {
		if e := b.other.Peek(); best == nil || e.Less(best) {
			best, src = e, 3
		}
	}
	if b.late != nil && b.late.len() > 0 {
		if e := b.late.peek(); best == nil || e.Less(best) {
			best, src = e, 4
		}
	}
	b.rs = found{ok: true, src: src}
	if best != nil {
		b.rs.at, b.rs.ord = best.at, best.ord
	}
}

// found is the earliest event of some sources, once found (ok): its
// source (-1: none), instant and order.
type found struct {
	ok  bool
	src int
	at  time.Duration
	ord uint64
}

// after reports whether e comes before the event found, or there is none
// (f found).
func (f *found) after(e *entry) bool {
	return f.src < 0 || e.at < f.at || e.at == f.at && e.ord < f.ord
}

// offer keeps e, just scheduled from source src, when it comes before
// the event found (once found: an entry that is not the least of its
// source comes after that least, so after the event found).
func (f *found) offer(e *entry, src int) {
	if f.ok && f.after(e) {
		f.src, f.at, f.ord = src, e.at, e.ord
	}
}

// due reports whether an event may come at or before t: one found does, or
// none is found yet.
func (f *found) due(t time.Duration) bool { return !f.ok || f.src >= 0 && f.at <= t }

// find finds the next internal event (nx), unless it is found already.
func (b *Backend) find() {
	if !b.nx.ok {
		b.next()
	}
}

// Next returns the instant of the backend's next internal event, if it has
// one.
func (b *Backend) Next() (time.Duration, bool) {
	b.find()
	return b.nx.at, b.nx.src >= 0
}

// Step processes the next internal event, emitting what it makes happen,
// and reports whether there was one.
func (b *Backend) Step() bool {
	b.find()
	if b.nx.src < 0 {
		return false
	}
	b.step()
	return true
}

// step processes the next internal event, found (nx) and present. A
// completion, the usual event, is taken apart: its source holds nothing
// else.
func (b *Backend) step() {
	src := b.nx.src
	b.nx.ok = false
	if src == 0 {
		var ev entry
		if b.done.heaped {
			ev = b.done.Pop()
		} else {
			ev = b.done.popSorted() // in line
		}
		b.now = ev.at
		b.lastSeen = max(b.lastSeen, ev.at)
		b.complete(ev.at, ev.slot)
		return
	}
	b.rs.ok = false // a source of the rest loses its earliest
	var ev entry
	switch src {
	case 1:
		ev = b.admits.PopFront()
	case 2:
		ev = b.timeouts.PopFront()
	case 3:
		ev = b.other.Pop()
	default:
		ev = b.late.pop()
	}
	b.now = ev.at
	b.lastSeen = max(b.lastSeen, ev.at)
	switch ev.kind() {
	case evFaultEnd:
		b.dispatch(ev.at)
	case evComplete:
		b.complete(ev.at, ev.slot)
	case evTimeout:
		b.timeout(ev.at, ev.slot, ev.gen)
	case evAdmit:
		b.admit(ev.at, ev.slot)
	}
}

// Until processes every internal event at or before t, in order.
func (b *Backend) Until(t time.Duration) {
	if b.nx.due(t) { // else nothing is due, known already: the usual case, inlined
		b.until(t)
	}
}

// until is Until once the next event is to be found, or due.
func (b *Backend) until(t time.Duration) {
	for {
		b.find()
		if !b.nx.due(t) {
			return
		}
		b.step()
	}
}

// active returns whether a fault of the list fs (sorted, not overlapping)
// covers t, moving *i past the faults over by t (t never goes back).
func active(fs []Fault, i *int, t time.Duration) (Fault, bool) {
	for *i < len(fs) && fs[*i].End() <= t {
		*i++
	}
	if *i < len(fs) && fs[*i].At <= t {
		return fs[*i], true
	}
	return Fault{}, false
}

// canStart reports whether a worker may start a request at t.
func (b *Backend) canStart(t time.Duration) bool {
	if !b.held {
		return b.busy < b.cfg.Workers // no pause or cut to come: inlined
	}
	return b.canStartInFaults(t)
}

// canStartInFaults is canStart while a pause or a workers cut is to come.
func (b *Backend) canStartInFaults(t time.Duration) bool {
	_, paused := active(b.pauses, &b.ip, t)
	limit := b.cfg.Workers
	if f, ok := active(b.cuts, &b.ic, t); ok {
		limit = min(limit, f.Count)
	}
	b.held = b.ip < len(b.pauses) || b.ic < len(b.cuts)
	return !paused && b.busy < limit
}

// admit lets request i in at t: a worker starts it, else it waits or is
// shed (enqueue).
func (b *Backend) admit(t time.Duration, i uint32) {
	if b.wait.Len() == 0 && b.canStart(t) {
		b.start(t, i)
		return
	}
	b.enqueue(t, i)
}

// enqueue puts request i, which no worker starts at t, in the waiting
// room, or sheds it when the room is full.
func (b *Backend) enqueue(t time.Duration, i uint32) {
	if b.qcap == Unbounded || b.wait.Len() < b.qcap {
		b.slots[i].state = stWaiting
		b.wait.PushBack(i)
		b.series.queue(t, b.wait.Len())
		return
	}
	b.res.Shed++
	if r := b.series.index(t); r >= 0 {
		b.series.rows[r].shed++
	}
	client := !b.tags[i].clientDone
	b.tags[i].clientDone = true
	if b.emits(client) {
		b.emit(Event{At: t, Kind: Shed, Req: b.reqs[i], Client: client})
	}
	b.release(t, i)
}

// dispatch starts waiting requests while a worker may.
func (b *Backend) dispatch(t time.Duration) {
	for b.wait.Len() > 0 && b.canStart(t) {
		var i uint32
		if b.lifo {
			i = b.wait.PopBack()
		} else {
			i = b.wait.PopFront()
		}
		b.series.queue(t, b.wait.Len())
		b.start(t, i)
	}
}

// start gives request i a worker at t, or drops it if its client has gone
// and DropExpired is set.
func (b *Backend) start(t time.Duration, i uint32) {
	s := &b.slots[i]
	if b.cfg.DropExpired && t >= s.deadline {
		if !b.tags[i].clientDone { // its timeout is at t, not processed yet
			b.timeout(t, i, b.tags[i].gen)
		}
		b.res.Dropped++
		if b.emits(false) {
			b.emit(Event{At: t, Kind: Dropped, Req: b.reqs[i]})
		}
		b.release(t, i)
		return
	}
	d := b.s.service(s.draw, s.attempt)
	if b.is < len(b.slows) {
		if f, ok := active(b.slows, &b.is, t); ok {
			d = scale(d, f.Factor)
		}
	}
	s.state, s.start, s.service = stServing, t, d
	b.busy++
	b.res.Started++
	b.waits.Add(int64(t - s.admitted))
	c := entry{at: t + d, ord: b.order(evComplete), slot: i}
	if b.done.heaped {
		b.done.Push(c)
	} else {
		b.done.pushSorted(c) // in line
	}
	b.nx.offer(&c, 0)
	if b.emits(false) {
		b.emit(Event{At: t, Kind: Started, Req: b.reqs[i], Service: d})
	}
}

func (b *Backend) complete(t time.Duration, i uint32) {
	s := &b.slots[i]
	b.busy--
	b.res.Served++
	b.res.BusyNs += int64(s.service)
	fail := b.s.errs && b.s.fails(s.draw, s.attempt)
	if fail {
		b.res.Errors++
	} else {
		b.res.CompletedOK++
	}
	resp := t - s.admitted + s.gate + b.cfg.Latency
	b.series.response(t, resp)      // the series feeds b.resps
	client := !b.tags[i].clientDone // else its deadline has passed: t > deadline
	if client {
		b.tags[i].clientDone = true
		if !fail {
			b.res.Goodput++
			if r := b.series.index(t); r >= 0 {
				b.series.rows[r].goodput++
			}
		}
	} else {
		b.res.WastedNs += int64(t - max(s.start, s.deadline))
	}
	kind := Completed
	if fail {
		kind = Failed
	}
	if b.emits(client) {
		b.emit(Event{At: t, Kind: kind, Req: b.reqs[i], Client: client, Service: s.service})
	}
	b.release(t, i)
	if b.wait.Len() > 0 { // else nobody to start: no call
		b.dispatch(t)
	}
}

func (b *Backend) timeout(t time.Duration, i uint32, gen uint32) {
	g := &b.tags[i]
	if g.gen != gen || g.clientDone {
		return // the request is gone, or its client has its answer
	}
	g.clientDone = true
	b.res.TimedOut++
	if r := b.series.index(t); r >= 0 {
		b.series.rows[r].timedOut++
	}
	if b.emits(true) {
		b.emit(Event{At: t, Kind: TimedOut, Req: b.reqs[i], Client: true})
	}
}

// release frees slot i once the backend is done with its request (Submit
// sets the fields of the slot it takes before any is read).
func (b *Backend) release(t time.Duration, i uint32) {
	b.tags[i].gen++
	b.free = append(b.free, i)
	b.holds(t, -1)
}

// holds counts a request the backend takes (+1, at its verdict) or lets go
// (-1: served, shed or dropped) at t, for Result.HeldPeak: the most it
// holds at once, counted after every change at one instant (a request
// served at t and one submitted at t are not held together). Changes come
// in time order but for ties, which the engine may give in either order.
func (b *Backend) holds(t time.Duration, delta int64) {
	if t > b.heldAt {
		b.res.HeldPeak = max(b.res.HeldPeak, b.heldNow)
		b.heldAt = t
	}
	b.heldNow += delta
}

// Result returns the figures of the run so far, held against the span
// [from, to): Utilization divides by Workers * (max(to, the last event) -
// from); the series covers the buckets from Config.Start to the later of
// to and the last event; recovery is looked for in windows that end by
// to. Call it once the traffic has ended and Until has drained the
// backend.
//
// RecoveredNs: with faults, f0 the first fault's start and f1 the last
// fault's end, the level is the mean goodput per bucket over the buckets
// wholly before f0, and the backend has recovered at the start of the
// first window of RecoverWindow (whole buckets) that starts at or after
// f1, ends by to, and in which the mean goodput per bucket is at least 90%
// of the level (within 10% of it, or above it: a backlog served fast after
// the fault counts as recovered). RecoveredNs is that start minus f1, to a
// bucket's resolution. nil when there is no fault, no whole bucket before
// f0, no goodput in them, or no such window.
func (b *Backend) Result(from, to time.Duration) Result {
	r := b.res
	r.HeldPeak = max(r.HeldPeak, b.heldNow)
	s := b.series // a copy, with its own rows (its buf and resp are only read)
	s.rows = append([]row(nil), b.series.rows...)
	end := max(to, b.lastSeen, b.lastDeadline)
	s.spread(end)
	s.spreadLimit(end)
	if end > s.start {
		s.index(end - 1)
	}
	rows := s.rows
	if s.open >= 0 {
		rows[s.open].p99 = max(rows[s.open].p99, s.openP99())
	}
	r.SpanNs = int64(end - from)
	r.Utilization = utilization(r.BusyNs, b.cfg.Workers, r.SpanNs)
	r.QueueWaitNs = Percentiles(b.waits.Summary())
	resps := b.resps.Clone() // with the open bucket's responses, which it lacks
	b.series.pending(&resps)
	r.ResponseNs = Percentiles(resps.Summary())
	r.Faults = len(b.cfg.Faults)
	for _, f := range b.cfg.Faults {
		r.FaultWindows = append(r.FaultWindows, FaultWindow{Type: f.Type, StartNs: int64(f.At), EndNs: int64(f.End())})
	}
	if len(b.cfg.Faults) > 0 {
		m := int((b.cfg.RecoverWindow + s.bucket - 1) / s.bucket)
		r.RecoveredNs = recovered(rows, s.start, s.bucket, max(m, 1), b.firstFault, b.lastFaultEnd, to)
	}
	out := Series{StartNs: int64(s.start), BucketNs: int64(s.bucket)}
	for _, w := range rows {
		out.Queue = append(out.Queue, areaMean(w.queueArea, s.bucket))
		out.QueueMax = append(out.QueueMax, w.queueMax)
		out.ResponseP99Ns = append(out.ResponseP99Ns, w.p99)
		out.Goodput = append(out.Goodput, w.goodput)
		out.Shed = append(out.Shed, w.shed)
		out.TimedOut = append(out.TimedOut, w.timedOut)
		if s.limOn {
			mean := math.NaN()
			if w.limTime > 0 {
				mean = float64(w.limArea) / float64(w.limTime)
			}
			out.LimitMin = append(out.LimitMin, w.limMin)
			out.LimitMean = append(out.LimitMean, mean)
			out.LimitMax = append(out.LimitMax, w.limMax)
		}
	}
	if s.limTime > 0 {
		r.Limit = &LimitStats{Min: s.limMin, Mean: float64(s.limArea) / float64(s.limTime), Max: s.limMax}
	}
	r.Series = out
	return r
}
