package coord

import (
	"time"

	"github.com/ratesim/ratesim/internal/hist"
	"github.com/ratesim/ratesim/sim"
)

// runHist counts the latency a cluster's store adds to each attempt, fed
// through a run of equal values, counted at once when the value changes
// (the latency is most often one same round trip): the figures of a
// histogram fed one by one, one count per run.
type runHist struct {
	h hist.Hist
	v time.Duration
	n int64
}

func (r *runHist) add(d time.Duration) {
	if r.n > 0 && d == r.v {
		r.n++
		return
	}
	r.flush()
	r.v, r.n = d, 1
}

func (r *runHist) flush() {
	if r.n > 0 {
		r.h.AddN(int64(r.v), r.n)
		r.n = 0
	}
}

// percentiles by nearest rank, as the delays' (sim.Percentiles).
func (r *runHist) percentiles() sim.Percentiles {
	r.flush()
	s := r.h.Summary()
	return sim.Percentiles{P50: s.P50, P90: s.P90, P99: s.P99, Max: s.Max, Exact: s.Exact}
}

// reserver is a limiter that can size its per-key state for n keys up
// front (the algorithms' optional Reserver).
type reserver interface {
	Reserve(n int)
}
