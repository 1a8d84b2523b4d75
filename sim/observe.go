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
	// MemberKeys says, for an all-of row whose limits count by
	// different keys (by:), under which key each limit counted the
	// request; the zero value for every other row.
	MemberKeys MemberKeys
	// Route is the route of a gateway's config that took the request
	// (traffic.Arrival.Route: 1 + its index in the router's routes), 0
	// when nothing routed it.
	Route uint16
}

// GlobalKey is the key of a limit that counts every request together
// (by: global) in MemberKeys.Append.
const GlobalKey = "global"

// MemberKeys is under which key each limit of an all-of row counted a
// request (Decision.MemberKeys). It refers to the run's key space, whose
// names and attribute tuples never change: a kept Decision keeps it.
type MemberKeys struct {
	row        *memberRow // nil: a row of one key
	key, attrs uint32
}

// memberRow is what MemberKeys reads a row's keys from.
type memberRow struct {
	keys *traffic.Keys
	by   []int // each member's algorithms.Member.By
}

// Append appends the key of each limit of the row, in its order: the
// request's key, an attribute's value, GlobalKey for by: global, "" where
// the request carries no value of the limit's attribute (the limit did
// not look at it). It appends nothing for a row of one key.
func (m MemberKeys) Append(dst []string) []string {
	if m.row == nil {
		return dst
	}
	attrs := m.row.keys.Attrs()
	var values []uint32
	for _, by := range m.row.by {
		switch {
		case by == algorithms.ByAll:
			dst = append(dst, GlobalKey)
		case by == algorithms.ByKey:
			dst = append(dst, m.row.keys.Name(m.key))
		default:
			if values == nil {
				values = attrs.Values(m.attrs)
			}
			if by-1 < len(values) && values[by-1] != traffic.NoValue {
				dst = append(dst, attrs.Value(by-1, values[by-1]))
			} else {
				dst = append(dst, "")
			}
		}
	}
	return dst
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
