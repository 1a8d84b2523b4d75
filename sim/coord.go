package sim

import (
	"errors"
	"math"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/traffic"
)

// A coordinated row is a row whose verdicts come from more than one
// limiter and may take effect after the attempt's arrival: a cluster's
// nodes, balancer and store (cluster.go). The engine's side of the row
// (coordRow) holds its accounting, its retries, its backend, its
// reference and the order its observer sees its decisions in; the
// coordinator holds the nodes, the balancer and the store, and is one
// source of the row's agenda (queue.go). They meet in a few calls: the
// engine gives the coordinator each attempt (arrive) and its events'
// turns (first, fire), and the coordinator gives back its verdicts
// (decided, verdict) and the events it gains (wake).
type coordinator interface {
	source
	// reserve sizes the coordinator's state for the n keys the sources
	// declared.
	reserve(n int)
	// start places the coordinator's schedule (its faults, its backend)
	// on the row's clock from origin, and its backend's series from
	// start: when built for synthetic traffic (origin 0), at the first
	// attempt of a recorded trace.
	start(origin, start time.Duration) error
	// prefetch hints at the state the first prefetchLen attempts of as
	// will read; it changes nothing.
	prefetch(as []traffic.Arrival)
	// arrive takes attempt n of a, counted already: the seq-th attempt to
	// reach the row, of request id.
	arrive(a *traffic.Arrival, n int, seq, id uint64) error
	// err is an error that stops the run at the next first attempt or at
	// the end (a store observer's).
	err() error
	// report completes res, the row's result, with the coordinator's
	// object; refAdmitted is what the reference admitted, span the
	// report's span.
	report(res *Result, refAdmitted int64, span time.Duration)
}

// coordRow is the engine's side of a coordinated row. It reads the feed
// as a run does (reader).
type coordRow struct {
	acct *run // the row's accounting and its agenda (it has no limiter)
	ref  *run // the reference: one exact limiter on the same traffic
	co   coordinator
	src  int    // co's index in acct's agenda
	seq  uint64 // attempts that reached the row
	// row is the series bucket of the attempt that arrive is giving the
	// coordinator, for verdict
	row *[5]int64

	// decisions for the observer, in arrival order
	order   []orderSlot
	orderLo uint64 // the sequence number of order[0]
}

// attempt is an attempt on its way through a coordinated row: the arrival, its
// attempt number, the node and its place in arrival order.
type attempt struct {
	a    traffic.Arrival
	n    int32
	node int32
	seq  uint64
	id   uint64 // the request's identity (its first attempt's place in the traffic)
}

// orderSlot holds a decision until those of earlier arrivals are shown.
type orderSlot struct {
	ok bool
	d  Decision
}

// newCoordRow builds the row of algorithm i, shown to obs, whose
// coordinator newCo builds around it.
func newCoordRow(cfg *Config, i int, obs Observer, newCo func(e *coordRow) (coordinator, error)) (*coordRow, error) {
	e := &coordRow{acct: newRunOf(cfg, i, obs, nil)}
	e.acct.retryBy(e.arrive)
	co, err := newCo(e)
	if err != nil {
		return nil, err
	}
	e.co = co
	e.src = e.acct.q.add(co)
	if cfg.Duration > 0 {
		if err := co.start(0, cfg.Start); err != nil {
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

// reference builds the row's reference. The coordinator calls it once,
// after its own first checks.
func (e *coordRow) reference() error {
	ref, err := newRun(e.acct.cfg, e.acct.index, nil)
	if err != nil {
		return err
	}
	ref.progress, ref.watchers, ref.countOnly = nil, nil, true
	e.ref = ref
	return nil
}

// attach attaches the row's accounting and its reference (run.attach),
// and has the coordinator size its state for the keys the sources
// declared.
func (e *coordRow) attach(keys *traffic.Keys, f *feed) {
	e.acct.attach(keys, f)
	e.ref.attach(keys, f)
	if n := keys.Len(); n > 0 {
		e.co.reserve(n)
	}
}

func (e *coordRow) base() *run { return e.acct }

// decideBatch takes a batch of first attempts, each after the events
// before it, then the reference takes it. As a run does, it has the state
// the attempts will read fetched one chunk of prefetchLen ahead.
func (e *coordRow) decideBatch(batch []traffic.Arrival) error {
	r := e.acct
	for i := range batch {
		if i%prefetchLen == 0 {
			if i == 0 {
				e.co.prefetch(batch)
			}
			if i+prefetchLen < len(batch) {
				e.co.prefetch(batch[i+prefetchLen:])
			}
		}
		a := &batch[i]
		if !r.started {
			r.started, r.first = true, a.At
			if r.cfg.Duration == 0 {
				start := a.At - a.At%r.series.bucket
				r.series.setStart(start)
				if err := e.co.start(a.At, start); err != nil {
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
		if err := e.co.err(); err != nil {
			return err
		}
	}
	return e.ref.decideBatch(batch)
}

// arrive counts attempt n of a and gives it to the coordinator.
func (e *coordRow) arrive(a *traffic.Arrival, n int) error {
	e.row = e.acct.series.row(a.At)
	e.acct.arrived(a, n, e.row)
	seq := e.seq
	e.seq++
	return e.co.arrive(a, n, seq, e.acct.cur)
}

// finish runs what is still scheduled once the traffic has ended.
func (e *coordRow) finish() error {
	r := e.acct
	if r.end == 0 {
		r.end = r.lastFresh + r.cfg.Limit.Per
	}
	if err := r.until(math.MaxInt64, 0); err != nil {
		return err
	}
	if err := e.co.err(); err != nil {
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
func (e *coordRow) report(span time.Duration) Result {
	res := e.acct.result()
	e.co.report(&res, e.ref.res.Accepted+e.ref.res.Delayed, span)
	for _, w := range e.acct.watchers {
		res.NodeStates = append(res.NodeStates, w.state)
	}
	return res
}

// The calls of the coordinator.

// wake tells the row's agenda that the coordinator has gained an event at
// (at, class).
func (e *coordRow) wake(at time.Duration, class uint8) {
	e.acct.q.wake(e.src, at, class)
}

// quick reports whether a verdict may be given at once with verdict: the
// row has no observer and no backend.
func (e *coordRow) quick() bool { return e.acct.obs == nil && e.acct.be == nil }

// verdict accounts for the verdict d on attempt n of a, which takes
// effect on its arrival: from within the coordinator's arrive, when quick.
func (e *coordRow) verdict(a *traffic.Arrival, n int, d algorithms.Decision) error {
	return e.acct.verdict(a, n, d, a.At, e.row)
}

// decided accounts for the verdict d on at, which took effect at its node
// at when; with a backend, the node's limiter of epoch, sampler (nil when
// it learns nothing from the backend), admitted it.
func (e *coordRow) decided(at *attempt, d algorithms.Decision, when time.Duration, epoch uint32, sampler algorithms.Sampler) error {
	r := e.acct
	if r.be != nil {
		r.cur, r.node = at.id, at.node
		r.epoch, r.sampler = epoch, sampler
	}
	if r.obs != nil {
		e.showInOrder(at, d, when)
		if err := e.flushOrder(false); err != nil {
			return err
		}
	}
	return r.verdict(&at.a, int(at.n), d, when, r.series.row(at.a.At))
}

// showInOrder keeps the decision on at until every earlier arrival's has
// been shown: the observer sees decisions in arrival order.
func (e *coordRow) showInOrder(at *attempt, d algorithms.Decision, when time.Duration) {
	i := int(at.seq - e.orderLo)
	for len(e.order) <= i {
		e.order = append(e.order, orderSlot{})
	}
	e.order[i] = orderSlot{ok: true, d: Decision{Time: at.a.At, Key: e.keyName(at.a.Key),
		Cost: at.a.Cost, Attempt: int(at.n), Decision: d, Node: int(at.node), Decided: when, Logged: at.a.Logged}}
}

// flushOrder shows the decisions held whose earlier ones have all been
// shown (all of them at the end).
func (e *coordRow) flushOrder(end bool) error {
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

// keyName is the name of key k.
func (e *coordRow) keyName(k uint32) string { return e.acct.keys.Name(k) }

// watch samples Config.Inspect's key in i, the state of where (a node,
// the store).
func (e *coordRow) watch(where string, i algorithms.Inspector) {
	in := e.acct.cfg.Inspect
	e.acct.watchers = append(e.acct.watchers, &watcher{in: i, key: in.Key, every: in.Every,
		state: StateSeries{Key: in.Key, Where: where}})
}

// retries reports whether some client retries.
func (e *coordRow) retries() bool { return e.acct.retries }

// openBackend gives the row its backend (Config.Backend), with its faults
// on the row's clock from origin and its series from start, which emits
// its clients' outcomes to emit (nil: none wanted).
func (e *coordRow) openBackend(origin, start time.Duration, emit func(backend.Event)) error {
	return e.acct.openBackend(origin, start, emit)
}

// clientOutcome takes a client's outcome at the backend, once its sample
// is taken (run.clientOutcome).
func (e *coordRow) clientOutcome(ev backend.Event) { e.acct.clientOutcome(ev) }

// hasBackend reports whether the row has a backend (opened).
func (e *coordRow) hasBackend() bool { return e.acct.be != nil }

// limit records the row's limit, in force from t, for its backend's
// limit series.
func (e *coordRow) limit(t time.Duration, v int) { e.acct.be.Limit(t, v) }
