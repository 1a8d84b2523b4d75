package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/traffic"
)

// A row's backend (Config.Backend, docs/backend.md): the run submits each
// admitted attempt at its decision, to reach the backend at its admission
// (the decision, plus a shaper's delay), and processes the backend's
// events in time order with its own: at one instant the backend's first,
// then retries, then first attempts. A client that the backend sheds,
// times out or fails may retry, as its policy's `on` says.

// newBackend gives r its own backend, its faults on the run's clock from
// origin (0 for synthetic traffic, the first arrival's instant for a
// recorded trace, whose instants are absolute: a fault at 10s is 10s into
// the trace) and its series from start (the series' own start).
func (r *run) newBackend(origin, start time.Duration) error {
	r.limits, _ = r.lim.(algorithms.LimitReporter)
	r.sampler, _ = r.lim.(algorithms.Sampler)
	if r.countOnly && r.sampler == nil && !r.retries {
		// a cluster row's reference that only counts, whose limiter
		// learns nothing from the backend and whose clients do not
		// retry: what it admits does not depend on the backend, which
		// it would run for nothing
		r.limits = nil
		return nil
	}
	// backendEvent reads a client's outcomes only, for a limiter that
	// learns from them or a client that retries: with neither, none
	var emit func(backend.Event)
	if r.sampler != nil || r.retries {
		emit = r.backendEvent
	}
	if err := r.openBackend(origin, start, emit); err != nil {
		return err
	}
	r.backendLazy = !r.retries
	r.backendDeferred = r.backendLazy && emit == nil && r.limits == nil
	r.backendUntil = r.backendLazy && !r.backendDeferred
	if r.backendDeferred {
		r.deferred = make([]backend.Request, 0, deferredMax)
	}
	return nil
}

// openBackend gives r its backend, which emits its clients' outcomes to
// emit (nil: none wanted), as newBackend says.
func (r *run) openBackend(origin, start time.Duration, emit func(backend.Event)) error {
	cfg := *r.cfg.Backend
	cfg.Start = start
	cfg.Faults = append([]backend.Fault(nil), cfg.Faults...)
	for i := range cfg.Faults {
		cfg.Faults[i].At += origin
	}
	be, err := backend.New(cfg, emit)
	if err != nil {
		return fmt.Errorf("backend: %w", err)
	}
	be.OnlyClientEvents()
	r.be = be
	return nil
}

// limitAt records the limit of an adaptive row in force at t, for its
// series: after each decision and each sample, when it may move (envoy's
// timers move it in between: it is seen at the next of those).
func (r *run) limitAt(t time.Duration) {
	r.be.Limit(t, r.limits.Limit(t))
}

// A row whose clients do not retry (r.retries false) hears of its
// backend's events only through its limiter's samples, which it reads at
// its next decision: its backend's events are then processed in one go
// before each decision (the run's backendUntil), up to its instant, and
// after the traffic, rather than one by one in the run's loop. The order
// is the same: the loop processes the backend's events up to an instant
// before it decides there, and the events it interleaves with them
// (releases, the watched key's samples) do not read the backend. With
// retries, a client event may schedule a retry before the next decision:
// the loop then interleaves the backend's events with its own
// (backendFirst).
//
// A lazy row whose backend tells it nothing at all (no limiter learns from
// it, no limit is recorded: backendDeferred) goes further: it keeps its
// submissions and plays them to the backend deferredMax at a time, each
// once the backend has reached its decision's instant (Arrived + Gate)
// (playBackend), the same calls in the same order. The backend's
// structures (its slots, queues and histograms) are then in the cache
// while it works, where between one decision and the next the limiter's
// state over many keys evicts them.

// deferredMax is how many submissions a deferred backend holds before it
// plays them (a variable for the tests: 1 plays each at once).
var deferredMax = 512

// backendEnd processes every event of a lazy row's backend, the traffic
// over.
func (r *run) backendEnd() error {
	if !r.backendLazy {
		return nil
	}
	if err := r.playBackend(); err != nil {
		return err
	}
	r.be.Until(math.MaxInt64)
	return nil
}

// playBackend gives a deferred backend the submissions it holds.
func (r *run) playBackend() error {
	for i := range r.deferred {
		q := &r.deferred[i]
		r.be.Until(q.Arrived + q.Gate) // its decision's instant
		if err := r.be.Submit(q); err != nil {
			return err
		}
	}
	r.deferred = r.deferred[:0]
	return nil
}

// backendBusy reports whether the backend has events to come that the
// run's loop processes.
func (r *run) backendBusy() bool {
	if r.be == nil || r.backendLazy {
		return false
	}
	_, ok := r.be.Next()
	return ok
}

// backendFirst reports whether the backend's next event comes before the
// next retry and, when have, at or before t (the next first attempt's
// instant): at one instant the backend's events come first. Never for a
// row without a backend, or a lazy one (the run's backendUntil), which the
// run's loop asks before every arrival: that test is inlined there.
func (r *run) backendFirst(t time.Duration, have bool) bool {
	return r.be != nil && !r.backendLazy && r.backendNextFirst(t, have)
}

// backendNextFirst is backendFirst for a row that interleaves its
// backend's events with its own.
func (r *run) backendNextFirst(t time.Duration, have bool) bool {
	bt, ok := r.be.Next()
	return ok && (!have || bt <= t) && (r.events.len() == 0 || bt <= r.events.peek().at)
}

// submit gives the backend attempt a of request r.cur, whose verdict
// took effect gate after its arrival (0 but in a cluster) and which
// reaches the backend at admitted. In a cluster, r.node and r.epoch say
// which node's limiter admitted it, and r.sampler is that limiter's.
func (r *run) submit(a *traffic.Arrival, attempt int, admitted, gate time.Duration) error {
	if r.backendDeferred {
		// filled where it is kept, field by field: a Request built
		// apart and copied in is read back in 16-byte words across
		// the 8-byte stores that built it, which the processor cannot
		// forward (a stall of each copy), and only with what a backend
		// that emits nothing reads of it (the fields carried for the
		// events are not kept: fillTimes)
		n := len(r.deferred)
		r.deferred = r.deferred[:n+1]
		r.fillTimes(&r.deferred[n], a, attempt, admitted, gate)
		if n+1 == deferredMax {
			return r.playBackend()
		}
		return nil
	}
	var req backend.Request
	r.fillRequest(&req, a, attempt, admitted, gate)
	return r.be.Submit(&req)
}

// fillRequest sets every field of q: attempt attempt of request r.cur,
// arrived as a, which reaches the backend at admitted, its verdict gate
// after its arrival (see submit).
func (r *run) fillRequest(q *backend.Request, a *traffic.Arrival, attempt int, admitted, gate time.Duration) {
	r.fillTimes(q, a, attempt, admitted, gate)
	q.Key, q.Source, q.Attrs, q.Node, q.Epoch, q.Cost = a.Key, a.Source, a.Attrs, r.node, r.epoch, a.Cost
	q.InFlight = 0
	if r.sampler != nil {
		q.InFlight = r.sampler.InFlight()
	}
}

// fillTimes sets what a backend reads of q (fillRequest's fields but
// those carried for the events): its identity, instants and service time
// when the run drew it (a first attempt's: Drawn; else the backend draws
// it).
func (r *run) fillTimes(q *backend.Request, a *traffic.Arrival, attempt int, admitted, gate time.Duration) {
	q.ID, q.Attempt, q.Arrived, q.Admitted, q.Gate = r.cur, int32(attempt), a.At, admitted, gate
	q.Service, q.Drawn = 0, false
	if attempt == 1 {
		q.Service, q.Drawn = r.drawn.service(r.cur)
	}
}

// backendEvent takes one of the backend's events. A client's outcome is
// the sample of a limiter that learns from them (algorithms.Sampler: the
// concurrency limiter in front of a model, the adaptive limits). A shed, a
// timeout or an
// error is retried when the client's policy retries on it (its `on`), as
// a rejection is, with no retry_after (the backend gives none): a
// retry-after policy then waits nothing. An attempt that its policy would
// retry on its cause but that has run out of attempts counts as given up,
// as a rejected one does.
func (r *run) backendEvent(e backend.Event) {
	if !e.Client {
		return
	}
	if s := r.sampler; s != nil {
		rtt, _ := e.Sample()
		s.Sample(e.At, algorithms.Key(e.Req.Key), e.Req.Cost, rtt, e.Req.InFlight, outcomeOf(e.Kind))
		if r.limits != nil {
			r.limitAt(e.At)
		}
	}
	r.clientOutcome(e)
}

// clientOutcome takes a client's outcome e, once its sample is taken: a
// success for the client's retry budget, or a retry as its policy says.
func (r *run) clientOutcome(e backend.Event) {
	if e.Kind == backend.Completed {
		if r.budgets != nil {
			r.succeeded(e.Req.Source, e.Req.Key)
		}
		return
	}
	if !r.retries {
		return
	}
	a := traffic.Arrival{At: e.Req.Arrived, Key: e.Req.Key, Cost: e.Req.Cost, Source: e.Req.Source, Attrs: e.Req.Attrs}
	r.retry(&a, e.Req.ID, int(e.Req.Attempt), e.At, 0, causeOf(e.Kind))
}

// outcomeOf is what a backend outcome is to the limiter that admitted it.
func outcomeOf(k backend.Kind) algorithms.Outcome {
	switch k {
	case backend.Completed:
		return algorithms.Served
	case backend.TimedOut:
		return algorithms.Abandoned
	}
	return algorithms.Failed
}

// causeOf is the retry cause of a backend outcome.
func causeOf(k backend.Kind) traffic.Cause {
	switch k {
	case backend.Shed:
		return traffic.CauseShed
	case backend.TimedOut:
		return traffic.CauseTimeout
	}
	return traffic.CauseError
}

// backendResult is the row's backend object, over the run's span.
func (r *run) backendResult(end time.Duration) *backend.Result {
	from := r.cfg.Start
	if r.cfg.Duration == 0 {
		from = r.first
	}
	res := r.be.Result(from, end)
	if r.res.Offered > 0 {
		res.RetryAmplification = float64(r.res.Attempts) / float64(r.res.Offered)
	}
	return &res
}
