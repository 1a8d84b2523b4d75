package sim

import (
	"errors"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
)

// Decision is one decision of one algorithm, as the engine reports it to an
// Observer (and the decisions CSV writes it).
type Decision struct {
	Time    time.Duration // arrival instant of this attempt
	Key     string
	Cost    int64
	Attempt int // 1 for the first try
	algorithms.Decision
	// Node is the node that took the attempt and Decided when its verdict
	// took effect there, in a cluster row (docs/cluster.md); Node is -1 and
	// Decided equals Time otherwise.
	Node    int
	Decided time.Duration
	// Logged is what the gateway that wrote a replayed log decided of the
	// request (traffic.Arrival.Logged), for Config.Check.
	Logged traffic.Logged
	// Fired is, for an all-of row, 1 + the index of the limit that decided
	// the request (algorithms.Firer); 0 when none did (admitted at once)
	// and for every other row.
	Fired int
}

// Observer receives every decision of one algorithm's run, in processing
// order. It is called from that run's goroutine only. An observer that
// returns ErrStopObserving is not called again; any other error stops the
// run.
type Observer interface {
	Observe(d *Decision) error
}

// ErrStopObserving is what an Observer returns when it wants no more
// decisions (the run goes on without it).
var ErrStopObserving = errors.New("stop observing")
