package sim

import (
	"time"

	"github.com/ratesim/ratesim/algorithms"
)

// Explain asks a coordinated row (a cluster's, Config.Coordinate) what it
// saw when it decided one attempt: the Seq-th to reach row Row (its
// decision's index in the row, as the observer sees them). The row's
// Result.View holds the answer (the playground's "why this decision").
type Explain struct {
	Row int
	Seq uint64
}

// ClusterView is what a cluster row saw when its rule decided one attempt
// (Config.Explain): where the rule ran and on whose clock, the key's state
// there just before and just after (algorithms.Inspector's gauges), and
// the row's store operations in flight at that instant.
type ClusterView struct {
	// Where is "node N" or "store".
	Where string
	// At is the instant the rule decided, on the clock it read (the
	// node's, the store's).
	At time.Duration
	// Before and After are the key's gauges around the decision where it
	// was made (none when that state shows none).
	Before, After []algorithms.Gauge
	// InFlight counts the row's store operations sent and not yet
	// answered then (scripts, reads, syncs, takes; writes are not
	// awaited), InFlightKey those of the attempt's key.
	InFlight, InFlightKey int
	// Note says what else the mode decided on: a sync node's counts, a
	// lease's stock, a global node's copy of the owner's status.
	Note string
}

// View records what the coordinator saw when it decided the attempt
// Config.Explain names (Result.View).
func (e *Row) View(v ClusterView) { e.view = &v }
