package sim

import (
	"errors"
	"math"
	"slices"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/traffic"
)

// A coordinated row is a row whose verdicts come from more than one
// limiter and may take effect after the attempt's arrival: a cluster's
// nodes, balancer and store (package cluster/coord). The engine's side of
// the row (Row) holds its accounting, its retries, its backend, its
// reference and the order its observer sees its decisions in; the
// Coordinator holds the nodes, the balancer and the store, and is one
// source of the row's agenda (queue.go). They meet in a few calls: the
// engine gives the coordinator each attempt (Arrive) and its events'
// turns (First, Fire), and the coordinator gives back its verdicts
// (Row.Decided, Row.Verdict) and the events it gains (Row.Wake).

// Coordinator decides the attempts of a coordinated row (Config.Coordinate).
type Coordinator interface {
	// First returns the instant and the class of the coordinator's first
	// event (one of the exported classes), and false when it has none.
	First() (at time.Duration, class uint8, ok bool)
	// Fire takes the first event and processes it.
	Fire() error
	// Reserve sizes the coordinator's state for the n keys the sources
	// declared.
	Reserve(n int)
	// Start places the coordinator's schedule (its faults, its backend)
	// on the row's clock from origin, and its backend's series from
	// start: when built, for synthetic traffic (origin 0), or at the first
	// attempt of a recorded trace.
	Start(origin, start time.Duration) error
	// Prefetch hints at the state that the first attempts of as (32 at
	// most) will read; it changes nothing.
	Prefetch(as []traffic.Arrival)
	// Arrive takes attempt n of a, counted already: the seq-th attempt to
	// reach the row, of request id. Its verdict is given back now or from
	// one of the coordinator's events.
	Arrive(a *traffic.Arrival, n int, seq, id uint64) error
	// Err is an error that stops the run at the next first attempt or at
	// the end (a store observer's).
	Err() error
	// Report completes res, the row's result, with the coordinator's
	// object; refAdmitted is what the reference admitted, span the
	// report's span.
	Report(res *Result, refAdmitted int64, span time.Duration)
}

// Row is the engine's side of a coordinated row. It reads the feed as a
// run does (reader).
type Row struct {
	acct *run // the row's accounting and its agenda (it has no limiter)
	ref  *run // the reference: one exact limiter on the same traffic
	co   Coordinator
	src  int    // co's index in acct's agenda
	seq  uint64 // attempts that reached the row
	// row is the series bucket of the attempt that arrive is giving the
	// coordinator, for Verdict
	row *[5]int64

	view *ClusterView // Config.Explain's answer (View)

	// fired is the limit of an all-of row that decided the verdict the
	// coordinator gives next (Fired): 1 + its index, 0 for none
	fired int

	// decisions for the observer, in arrival order
	order   []orderSlot
	orderLo uint64 // the sequence number of order[0]
}

// Attempt is an attempt on its way through a coordinated row: the
// arrival, its attempt number, the node that decides it, its place in
// arrival order and its request's identity.
type Attempt struct {
	Arrival traffic.Arrival
	N       int32
	Node    int32
	Seq     uint64
	ID      uint64 // the request's identity (its first attempt's place in the traffic)
}

// orderSlot holds a decision until those of earlier arrivals are shown.
type orderSlot struct {
	ok bool
	d  Decision
}

// newCoordRow builds the coordinated row of algorithm i, shown to obs,
// around the coordinator that cfg.Coordinate builds.
func newCoordRow(cfg *Config, i int, obs Observer) (*Row, error) {
	e := &Row{acct: newRunOf(cfg, i, obs, nil)}
	e.acct.retryBy(e.arrive)
	// an all-of row's limits, for the verdicts' attribution (Fired), as a
	// run whose limiter is a Firer keeps them
	members := cfg.Algorithms[i].Params.Members
	for j, m := range members {
		e.acct.fired = append(e.acct.fired, LimitFired{Limit: LimitName(m, j)})
	}
	// and, when they count by different keys (by:), each one's key for
	// the decisions and each one's busiest key, as a run whose limiter is
	// Attributed keeps them
	if slices.ContainsFunc(members, func(m algorithms.Member) bool { return m.By != algorithms.ByKey }) {
		e.acct.members = &memberRow{}
		for _, m := range members {
			e.acct.members.by = append(e.acct.members.by, m.By)
		}
		e.acct.limitPeaks = newLimitPeaks(members)
	}
	co, err := cfg.Coordinate(cfg, i, e)
	if err != nil {
		return nil, err
	}
	if e.ref == nil {
		if err := e.Reference(); err != nil {
			return nil, err
		}
	}
	e.co = co
	e.src = e.acct.q.add(co)
	if cfg.Duration > 0 {
		if err := co.Start(0, cfg.Start); err != nil {
			return nil, err
		}
		if cfg.Backend != nil { // the reference's own copy
			if err := e.ref.newBackend(0, cfg.Start); err != nil {
				return nil, err
			}
		}
	}
	return e, nil
}

// Reference builds the row's reference, one exact limiter of the row's
// algorithm on the same traffic, whose admissions the report holds the
// row's against: the coordinator calls it once, where a failure to build
// the limiter is the error to report (else it is built after the
// coordinator).
func (e *Row) Reference() error {
	ref, err := newRun(e.acct.cfg, e.acct.index, nil)
	if err != nil {
		return err
	}
	ref.progress, ref.watchers, ref.countOnly = nil, nil, true
	if t := referenceTable(ref); t != nil {
		ref.lim, ref.firer, ref.fired = t, nil, nil
	}
	e.ref = ref
	return nil
}

// referenceTable returns the Table that ref, a reference that only
// counts, decides with in place of its Limiter, or nil to keep the
// Limiter. A Table calls its algorithm's rule as the Limiter does and, on
// the same calls in time order, decides alike
// (algorithms.TestTableDecidesAsLimiter); it keeps every key's state
// where the Limiter releases each one that is fresh again (a queue of
// keys by the instant they become fresh, and for a log the expiry of each
// entry), only to count the keys and bytes alive at every instant: the
// Memory figures, which nobody reads of a reference. The Limiter stays
// when it is more than its rule over a key's state: its own constructor
// (Algorithm.New), an all-of row's, one that decides by attributes or by
// route, learns from a backend, moves its limit or names keys, and for
// an algorithm without a Table.
func referenceTable(ref *run) algorithms.Limiter {
	alg := ref.alg
	if alg.New != nil || len(alg.Params.Members) > 0 || ref.byAttrs != nil || ref.routed != nil {
		return nil
	}
	switch ref.lim.(type) {
	case algorithms.Sampler, algorithms.LimitReporter, algorithms.KeyNamer:
		return nil
	}
	p := alg.Params
	p.Seed = ref.cfg.Seed // as newLimiter's
	t, err := algorithms.NewTable(alg.Name, p)
	if err != nil {
		return nil
	}
	return t
}

// NewLimiter builds a limiter of the row's algorithm with params p (a
// node's, a node's share of the row's).
func (e *Row) NewLimiter(p algorithms.Params) (algorithms.Limiter, error) {
	return newLimiter(e.acct.cfg, e.acct.alg, p)
}

// attach attaches the row's accounting and its reference (run.attach),
// and has the coordinator size its state for the keys the sources
// declared.
func (e *Row) attach(keys *traffic.Keys, f *feed) {
	e.acct.attach(keys, f)
	e.ref.attach(keys, f)
	if n := keys.Len(); n > 0 {
		e.co.Reserve(n)
	}
}

func (e *Row) base() *run { return e.acct }

// decideBatch takes a batch of first attempts, each after the events
// before it, then the reference takes it. As a run does, it has the state
// the attempts will read fetched one chunk of prefetchLen ahead.
func (e *Row) decideBatch(batch []traffic.Arrival) error {
	r := e.acct
	for i := range batch {
		if i%prefetchLen == 0 {
			if i == 0 {
				e.co.Prefetch(batch[:min(prefetchLen, len(batch))])
			}
			if i+prefetchLen < len(batch) {
				e.co.Prefetch(batch[i+prefetchLen : min(i+2*prefetchLen, len(batch))])
			}
		}
		a := &batch[i]
		if r.route != 0 && a.Route != r.route && !r.takesToo(a.Route) {
			continue // another route's
		}
		if !r.started {
			r.started, r.first = true, a.At
			if r.cfg.Duration == 0 {
				start := a.At - a.At%r.series.bucket
				r.series.setStart(start)
				if err := e.co.Start(a.At, start); err != nil {
					return err
				}
			}
		}
		r.lastFresh = a.At
		if !r.quiet(a.At) {
			if err := r.until(a.At, classArrival); err != nil {
				return err
			}
		}
		r.cur = r.ids
		r.ids++
		if err := e.arrive(a, 1); err != nil {
			return err
		}
		if err := e.co.Err(); err != nil {
			return err
		}
	}
	return e.ref.decideBatch(batch)
}

// arrive counts attempt n of a and gives it to the coordinator.
func (e *Row) arrive(a *traffic.Arrival, n int) error {
	e.row = e.acct.series.row(a.At)
	if e.acct.limitPeaks != nil {
		e.acct.tuple(a.Attrs) // for the verdict's limit peaks
	}
	e.acct.arrived(a, n, e.row)
	seq := e.seq
	e.seq++
	return e.co.Arrive(a, n, seq, e.acct.cur)
}

// finish runs what is still scheduled once the traffic has ended.
func (e *Row) finish() error {
	r := e.acct
	if r.end == 0 {
		r.end = r.lastFresh + r.cfg.Limit.Per
	}
	if err := r.until(math.MaxInt64, 0); err != nil {
		return err
	}
	if err := e.co.Err(); err != nil {
		return err
	}
	if err := e.flushOrder(true); err != nil {
		return err
	}
	r.sampleEnd()
	return e.ref.finish()
}

// report is the row's result (its accounting's), completed by its
// coordinator, with the states its watchers sampled.
func (e *Row) report(span time.Duration) Result {
	res := e.acct.result()
	e.co.Report(&res, e.ref.res.Accepted+e.ref.res.Delayed, span)
	res.View = e.view
	for _, w := range e.acct.watchers {
		res.NodeStates = append(res.NodeStates, w.state)
	}
	return res
}

// The calls of the coordinator.

// Wake tells the row's agenda that the coordinator has gained an event at
// (at, class).
func (e *Row) Wake(at time.Duration, class uint8) {
	e.acct.q.wake(e.src, at, class)
}

// Quick reports whether a verdict may be given at once with Verdict: the
// row has no observer and no backend.
func (e *Row) Quick() bool { return e.acct.obs == nil && e.acct.be == nil }

// Verdict accounts for the verdict d on attempt n of a, which takes
// effect on its arrival: from within the coordinator's Arrive, when Quick.
func (e *Row) Verdict(a *traffic.Arrival, n int, d algorithms.Decision) error {
	if e.fired != 0 {
		e.blame(d)
	}
	return e.acct.verdict(a, n, d, a.At, e.row)
}

// Fired names the limit of an all-of row that decided the verdict the
// coordinator gives next (with Decided or Verdict): j is its index among
// the row's limits (algorithms.Firer's), -1 when none did. Result.Fired
// counts it, and the observer's Decision.Fired names it, as for a row of
// one limiter.
func (e *Row) Fired(j int) { e.fired = j + 1 }

// blame counts the limit that Fired named for the verdict d (run.blame)
// and makes it the decision's Fired; the next verdict names none unless
// Fired is called again.
func (e *Row) blame(d algorithms.Decision) {
	r := e.acct
	r.curFired = 0
	if j := e.fired - 1; j >= 0 && j < len(r.fired) {
		switch d.Verdict {
		case algorithms.Reject:
			r.fired[j].Rejected++
		case algorithms.Delay:
			r.fired[j].Delayed++
		}
		r.curFired = j + 1
	}
	e.fired = 0
}

// Decided accounts for the verdict d on at, which took effect at its node
// at when; with a backend, the node's limiter of epoch, sampler (nil when
// it learns nothing from the backend), admitted it. Verdicts come in
// order of when.
func (e *Row) Decided(at *Attempt, d algorithms.Decision, when time.Duration, epoch uint32, sampler algorithms.Sampler) error {
	r := e.acct
	if e.fired != 0 || r.curFired != 0 {
		e.blame(d)
	}
	if r.be != nil {
		r.cur, r.node = at.ID, at.Node
		r.epoch, r.sampler = epoch, sampler
	}
	if r.obs != nil {
		e.showInOrder(at, d, when)
		if err := e.flushOrder(false); err != nil {
			return err
		}
	}
	return r.verdict(&at.Arrival, int(at.N), d, when, r.series.row(at.Arrival.At))
}

// showInOrder keeps the decision on at until every earlier arrival's has
// been shown: the observer sees decisions in arrival order.
func (e *Row) showInOrder(at *Attempt, d algorithms.Decision, when time.Duration) {
	i := int(at.Seq - e.orderLo)
	for len(e.order) <= i {
		e.order = append(e.order, orderSlot{})
	}
	a := &at.Arrival
	e.order[i] = orderSlot{ok: true, d: Decision{Time: a.At, Key: e.KeyName(a.Key),
		Cost: a.Cost, Attempt: int(at.N), Decision: d, Node: int(at.Node), Decided: when, Logged: a.Logged,
		Fired: e.acct.curFired, Route: a.Route}}
	if m := e.acct.members; m != nil {
		e.order[i].d.MemberKeys = MemberKeys{row: m, key: a.Key, attrs: a.Attrs}
	}
}

// flushOrder shows the decisions held whose earlier ones have all been
// shown (all of them at the end).
func (e *Row) flushOrder(end bool) error {
	r := e.acct
	k := 0
	for k < len(e.order) && (e.order[k].ok || end) {
		if e.order[k].ok && r.obs != nil {
			err := r.obs.Observe(&e.order[k].d)
			if errors.Is(err, ErrStopObserving) {
				r.obs = nil
			} else if err != nil {
				return err
			}
		}
		k++
	}
	if k > 0 {
		n := copy(e.order, e.order[k:])
		clear(e.order[n:])
		e.order = e.order[:n]
		e.orderLo += uint64(k)
	}
	return nil
}

// KeyName is the name of key k.
func (e *Row) KeyName(k uint32) string { return e.acct.keys.Name(k) }

// Watch samples Config.Inspect's key in i, the state of where (a node,
// the store), for the row's NodeStates.
func (e *Row) Watch(where string, i algorithms.Inspector) {
	in := e.acct.cfg.Inspect
	e.acct.watchers = append(e.acct.watchers, &watcher{in: i, key: in.Key, every: in.Every,
		state: StateSeries{Key: in.Key, Where: where}})
}

// Retries reports whether some client retries.
func (e *Row) Retries() bool { return e.acct.retries }

// OpenBackend gives the row its backend (Config.Backend), with its faults
// on the row's clock from origin and its series from start, which emits
// its clients' outcomes to emit (nil: none wanted).
func (e *Row) OpenBackend(origin, start time.Duration, emit func(backend.Event)) error {
	return e.acct.openBackend(origin, start, emit)
}

// ClientOutcome takes a client's outcome at the backend, once its sample
// is taken: a success for its retry budget, or a retry as its policy says.
func (e *Row) ClientOutcome(ev backend.Event) { e.acct.clientOutcome(ev) }

// HasBackend reports whether the row's backend is open.
func (e *Row) HasBackend() bool { return e.acct.be != nil }

// Limit records the row's limit, in force from t, for its backend's limit
// series (HasBackend only).
func (e *Row) Limit(t time.Duration, v int) { e.acct.be.Limit(t, v) }
