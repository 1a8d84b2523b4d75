package sim

import (
	"fmt"
	"time"

	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/traffic"
)

// A row's backend (Config.Backend, SPEC section 11): the run submits each
// admitted attempt at its decision, to reach the backend at its admission
// (the decision, plus a shaper's delay), and processes the backend's
// events in time order with its own: at one instant the backend's first,
// then retries, then first attempts. A client that the backend sheds,
// times out or fails may retry, as its policy's `on` says.

// newBackend gives r its own backend.
func (r *run) newBackend() error {
	be, err := backend.New(*r.cfg.Backend, r.backendEvent)
	if err != nil {
		return fmt.Errorf("backend: %w", err)
	}
	r.be = be
	return nil
}

// backendBusy reports whether the backend has events to come.
func (r *run) backendBusy() bool {
	if r.be == nil {
		return false
	}
	_, ok := r.be.Next()
	return ok
}

// backendFirst reports whether the backend's next event comes before the
// next retry and, when have, at or before t (the next first attempt's
// instant): at one instant the backend's events come first.
func (r *run) backendFirst(t time.Duration, have bool) bool {
	if r.be == nil {
		return false
	}
	bt, ok := r.be.Next()
	return ok && (!have || bt <= t) && (r.events.len() == 0 || bt <= r.events.peek().at)
}

// submit gives the backend attempt a of request r.cur, admitted at
// admitted.
func (r *run) submit(a *traffic.Arrival, attempt int, admitted time.Duration) error {
	return r.be.Submit(backend.Request{ID: r.cur, Attempt: int32(attempt), Key: a.Key, Source: a.Source,
		Cost: a.Cost, Arrived: a.At, Admitted: admitted})
}

// backendEvent takes one of the backend's events: a shed, a timeout or an
// error is retried when the client's policy retries on it.
func (r *run) backendEvent(e backend.Event) {
	if !e.Client || e.Kind == backend.Completed || !r.retries {
		return
	}
	src := int(e.Req.Source)
	if src >= len(r.cfg.Retries) || !retryOn(&r.cfg.Retries[src], e.Kind) {
		return
	}
	a := traffic.Arrival{At: e.Req.Arrived, Key: e.Req.Key, Cost: e.Req.Cost, Source: e.Req.Source}
	cur := r.cur
	r.cur = e.Req.ID
	r.retry(&a, int(e.Req.Attempt), e.At, 0)
	r.cur = cur
}

// retryOn reports whether policy p retries an attempt that ended as k.
func retryOn(p *traffic.RetryPolicy, k backend.Kind) bool {
	return false // until the scenario's `on` comes
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
