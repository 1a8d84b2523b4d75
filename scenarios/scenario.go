package scenarios

import (
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/traffic"
)

// Scenario is a validated scenario file (docs/scenario-file.md).
type Scenario struct {
	Name        string
	Description string
	// File is the path the scenario was read from, or "builtin:NAME".
	File string
	Seed uint64
	// Duration is the scenario's duration: as written, or, when every
	// source ends by itself, derived from the latest source end; 0 for a
	// scenario of replay sources only and no duration: until the traces
	// end.
	Duration time.Duration
	Limit    algorithms.Policy
	// Algorithms in the order written; every algorithm with the scenario's
	// policy when the file has none.
	Algorithms []Algorithm
	// Skipped lists, for a file without an algorithms list, the algorithms
	// left out because they cannot enforce the policy (nginx takes only
	// per 1s or 1m), on a cluster, cannot run in the store (x-time-rate),
	// or, with backend.service 0 and no workers, would never refuse a
	// request (concurrency), with the reason; nil when the file lists
	// algorithms.
	Skipped []Skipped
	Traffic traffic.Plan
	// Retry is the scenario-wide client retry policy (clients.retry).
	Retry traffic.RetryPolicy
	// Retries holds the retry policy of each source, in the order of
	// Traffic.Sources (index it with Arrival.Source): the source's own
	// retry when it has one, else Retry.
	Retries []traffic.RetryPolicy
	// Service is what the algorithms assume of the backend (the concurrency
	// limiter's time in flight, algorithms.Params.Service): backend.service
	// without workers, the pure delay of docs/scenario-file.md; with workers the
	// service distribution's mean, what the concurrency limiter assumes
	// when no model drives it.
	Service time.Duration
	// Backend is the backend model of docs/backend.md when the backend
	// section has workers, else nil (the backend is the pure delay
	// Service). Its Seed is the scenario's, its Bucket the report's bucket
	// and its Start 0: fault instants count from the scenario's start,
	// and for a scenario of replay sources, whose series begin at the first
	// arrival, the engine moves Start and the faults there, as it does the
	// cluster's faults.
	Backend *backend.Config
	// Windows are the peak window lengths (report.windows, default W and
	// W/10); Bucket the time-series bucket (report.bucket, default W/10).
	Windows []time.Duration
	Bucket  time.Duration
	// WindowsNamed says that report.windows was written: its windows,
	// the policy's period aside, are observation windows that tables and
	// charts show (docs/metrics.md); without it the default W/10 is in the
	// JSON only. Presence decides, not the values: a file that writes
	// [W, W/10] shows its W/10.
	WindowsNamed bool
	// Cluster is the cluster section (docs/cluster.md) with its defaults
	// filled in, or nil: without one every algorithm runs as one exact
	// limiter.
	Cluster *cluster.Config
	// Expect is what the file's expect section claims of the run's
	// figures, each assertion as written and where (docs/expect.md);
	// package expect reads them.
	Expect []Expectation

	// replays are the replay sources and where their paths were written,
	// for CheckFiles.
	replays []replayRef
}

// Algorithm is one entry of the algorithms list.
type Algorithm struct {
	Name  string
	Label string // unique; the name unless the entry sets one
	// Params is the scenario's policy with this entry's overrides and
	// options applied.
	Params algorithms.Params
	// Set holds the overrides and options as written, for the JSON
	// "params" object: option name to value (int64, bool, or a duration
	// as its string). The coordination options (coordination, clock,
	// write, sync, lease, lease-ttl) are not in it: they are not the
	// algorithm's, and a cluster result reports them.
	Set map[string]any
	// Coord is how the row runs on the scenario's cluster, with every
	// default filled in: Mode central unless the entry says otherwise;
	// Clock for central (store by default), Write for racy (set by
	// default), Sync for sync, and for lease Lease (default
	// cluster.DefaultLease of the row's burst and the nodes) and LeaseTTL
	// (default the row's per). Its Mode is empty without a cluster section.
	Coord cluster.Coordination
	// Route, when not 0, is the route whose requests the row takes
	// (traffic.Arrival.Route, sim.Algorithm.Route). No scenario field
	// sets it: replay --gateway routes the trace and names each row's
	// route (gateway.Replay.Route).
	Route uint16
	// Routes are the other routes the row takes (sim.Algorithm.Routes):
	// replay --gateway sets them on a row whose limit several routes
	// share.
	Routes []uint16

	// by is, for an all-of row, each limit's by as written (unset when
	// not), resolved into its Member.By once the traffic's attributes
	// are known
	by []val
	// shed is a priority-shedding row's by and named values, resolved
	// into its Params once the traffic's attributes are known
	shed *shedSpec
}
