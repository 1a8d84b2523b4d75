package backend

import "time"

// entry is an internal event: at an instant, of a kind, for a request's
// slot (or a fault's index), in the order ord = kind<<56 | seq, seq the
// order it was scheduled in. Events are processed by (at, ord): by time,
// then kind, then scheduling order.
type entry struct {
	at   time.Duration
	ord  uint64
	slot uint32
	gen  uint32 // the slot's generation when scheduled (timeouts)
}

// The kinds of internal events, in their order at one instant.
const (
	evFaultEnd = iota // a pause or a workers cut ends: idle workers start
	evComplete        // a service ends
	evTimeout         // a client gives up
	evAdmit           // a request reaches the backend
)

const kindShift = 56

func (e *entry) kind() int { return int(e.ord >> kindShift) }

func (a *entry) Less(b *entry) bool { return a.at < b.at || (a.at == b.at && a.ord < b.ord) }
