package sim

import (
	"fmt"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/traffic"
)

// A row's backend (Config.Backend, docs/backend.md): the run submits each
// admitted attempt at its decision, to reach the backend at its admission
// (the decision, plus a shaper's delay), and processes the backend's
// events in time order with its own (queue.go): at one instant the
// backend's first, then first attempts, then retries. A client that the backend sheds,
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
	return r.openBackend(origin, start, emit)
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
	r.beSrc = r.q.add(backendSource{r})
	return nil
}

// limitAt records the limit of an adaptive row in force at t, for its
// series: after each decision and each sample, when it may move (envoy's
// timers move it in between: it is seen at the next of those).
func (r *run) limitAt(t time.Duration) {
	r.be.Limit(t, r.limits.Limit(t))
}

// submit gives the backend attempt a of request r.cur, whose verdict
// took effect gate after its arrival (0 but in a cluster) and which
// reaches the backend at admitted. In a cluster, r.node and r.epoch say
// which node's limiter admitted it, and r.sampler is that limiter's.
func (r *run) submit(a *traffic.Arrival, attempt int, admitted, gate time.Duration) error {
	req := backend.Request{ID: r.cur, Attempt: int32(attempt), Arrived: a.At, Admitted: admitted, Gate: gate,
		Key: a.Key, Source: a.Source, Attrs: a.Attrs, Node: r.node, Epoch: r.epoch, Cost: a.Cost}
	if r.sampler != nil {
		req.InFlight = r.sampler.InFlight()
	}
	err := r.be.Submit(&req)
	r.q.read(r.beSrc) // its first event may be this admission, or one it made
	return err
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
		s.Sample(e.At, algorithms.Key(e.Req.Key), e.Req.Cost, rtt, e.Req.InFlight, Outcome(e.Kind))
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
		if r.gates != nil {
			r.succeeded(e.Req.Source, e.Req.Key, e.At)
		}
		return
	}
	if !r.retries {
		return
	}
	a := traffic.Arrival{At: e.Req.Arrived, Key: e.Req.Key, Cost: e.Req.Cost, Source: e.Req.Source, Attrs: e.Req.Attrs}
	r.retry(&a, e.Req.ID, int(e.Req.Attempt), e.At, 0, causeOf(e.Kind))
}

// Outcome is what a backend outcome is to the limiter that admitted it.
func Outcome(k backend.Kind) algorithms.Outcome {
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
