package sim

import (
	"time"

	"github.com/ratesim/ratesim/algorithms"
)

// Decision is one decision of one algorithm, as the engine reports it to an
// Observer (and the decisions CSV writes it).
type Decision struct {
	Time    time.Duration // arrival instant of this attempt
	Key     string
	Cost    int64
	Attempt int // 1 for the first try
	algorithms.Decision
}

// Observer receives every decision of one algorithm's run, in processing
// order. It is called from that run's goroutine only.
type Observer interface {
	Observe(d *Decision) error
}
