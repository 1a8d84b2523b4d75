package algorithms

import (
	"fmt"
	"time"
)

// allOfTable is an all-of row's Table (a cluster's store holding several
// limits of one request, docs/cluster.md and docs/gateways.md): one Table per member,
// each holding that member's per-key states under its own rule, and the
// commit mode applied across them exactly as AllOf.Decide applies it to
// its members' Limiters:
//   - all-or-nothing: every member decides on a copy (DecideCopy); when any
//     rejects, every copy is discarded (no member is charged), otherwise
//     every changed copy is written.
//   - every-hit: every member decides and keeps its result.
//   - in-order: the members decide in order, each keeping its result,
//     stopping at the first that rejects.
//
// Decisions fold with merge, as AllOf's do. DecideCopy applies the same
// rule to copies of every member's state and returns one Copy holding each
// member's changed copy, which Write stores member by member (one SET of
// the whole row's state: the last writer wins for every member at once).
//
// Members may count by different attributes of a request (Member.By), as
// AllOf's do: each member holds its states under its own keys (the
// request's key, an attribute's value, or one key for by: global), and a
// member whose attribute the request does not carry is not asked and not
// charged (AttrTable).
//
// Take is not used: all-of has no lease mode (cluster.ModesOf).
//
// Memory: KeysPeak is the largest of the members' (a lower bound of the
// keys holding state in some member, exact when every member holds the
// same keys), BytesPeak and BytesPerKeyMax the sums of the members'
// (upper bounds: the members' peaks need not coincide).
type allOfTable struct {
	commit  Commit
	members []Table
	copies  [][]Copy // by Copy: each member's copy (NoCopy where unchanged)
	// by Copy: each member's key in the decision that made the copy
	copyKeys [][]Key
	freed    []Copy
	scratch  []Copy
	fired    int // Fired's answer for the last decision

	by      []int  // each member's Member.By
	byAttrs bool   // some member counts by other than the request's key
	keys    []Key  // each member's key for the request being decided
	asked   []bool // whether each member applies to it
	one     [1]Key // the attrs of a call by key
}

// allOfIncrTable is the Table of an all-of row with commit all-or-nothing
// whose members are all windowed counters (fixed-window, sliding-window):
// a decision either charges every member (admitted) or none (rejected), so
// racy's write: incr can send the cost alone, which every member adds to
// its count of at's window. That is Kong's cluster policy with several
// windows (kong/plugins/rate-limiting/policies/cluster.lua: the usage read
// from the database, then, for an admitted request, one increment of every
// window's counter).
type allOfIncrTable struct {
	*allOfTable
	incrs []Incrementer
}

var (
	_ Table           = (*allOfTable)(nil)
	_ Incrementer     = (*allOfIncrTable)(nil)
	_ Firer           = (*allOfTable)(nil)
	_ AttrTable       = (*allOfTable)(nil)
	_ AttrIncrementer = (*allOfIncrTable)(nil)
)

// AttrTable is the Table of a row whose limits may count by different
// attributes of a request (an all-of row's members, Member.By), as
// Attributed is the Limiter of one: when ByAttributes reports true, a
// cluster's store calls DecideAttrs and DecideCopyAttrs instead of Decide
// and DecideCopy, with attrs as Attributed's (attrs[0] the request's key,
// NoKey for an attribute the request does not carry). Each member decides
// under its own key; a Copy keeps each member's key, so that Write stores
// each member's copy under it, whatever key Write is given.
type AttrTable interface {
	Table
	ByAttributes() bool
	DecideAttrs(now time.Duration, attrs []Key, cost int64) Decision
	DecideCopyAttrs(now time.Duration, attrs []Key, cost int64) (Decision, Copy)
}

// AttrIncrementer is the Incrementer of an AttrTable: IncrAttrs adds cost
// to every member that applies to a request of attributes attrs, each
// under its own key (racy's write: incr after DecideCopyAttrs).
type AttrIncrementer interface {
	IncrAttrs(at time.Duration, attrs []Key, cost int64)
}

// Fired returns the member that decided the last Decide or DecideCopy, by
// AllOf.Fired's rule: the first that rejected, else the first with the
// largest delay; -1 when it was admitted at once. A cluster row in the
// store names it as a single limiter does.
func (t *allOfTable) Fired() int { return t.fired }

// newAllOfTable builds the Table of an all-of row with params p.
func newAllOfTable(p Params) (Table, error) {
	commit := p.Commit
	if commit == "" {
		commit = AllOrNothing
	}
	t := &allOfTable{commit: commit, fired: -1}
	var incrs []Incrementer
	for i, m := range p.Members {
		mt, err := NewTable(m.Name, m.Params)
		if err != nil {
			return nil, &MemberError{Index: i, Err: err}
		}
		if m.By < ByAll {
			return nil, &MemberError{Index: i, Err: &ParamError{Field: "by", Found: fmt.Sprint(m.By),
				Want: "want the request's key, every request or an attribute"}}
		}
		t.members = append(t.members, mt)
		t.by = append(t.by, m.By)
		t.byAttrs = t.byAttrs || m.By != ByKey
		if inc, ok := mt.(Incrementer); ok {
			incrs = append(incrs, inc)
		}
	}
	t.scratch = make([]Copy, len(t.members))
	t.keys = make([]Key, len(t.members))
	t.asked = make([]bool, len(t.members))
	if commit == AllOrNothing && len(incrs) == len(t.members) {
		return &allOfIncrTable{allOfTable: t, incrs: incrs}, nil
	}
	return t, nil
}

// ByAttributes reports whether some member counts by other than the
// request's key (AttrTable).
func (t *allOfTable) ByAttributes() bool { return t.byAttrs }

// Decide decides by key alone, as AllOf.Decide does: a member that counts
// by an attribute is not asked, a global one is.
func (t *allOfTable) Decide(now time.Duration, key Key, cost int64) Decision {
	t.one[0] = key
	return t.DecideAttrs(now, t.one[:], cost)
}

// DecideAttrs decides on every member that applies to a request of
// attributes attrs, each under its own key (AttrTable).
func (t *allOfTable) DecideAttrs(now time.Duration, attrs []Key, cost int64) Decision {
	memberKeys(t.by, attrs, t.keys, t.asked)
	var d Decision
	t.fired = -1
	switch t.commit {
	case AllOrNothing:
		rejected := false
		for i, m := range t.members {
			t.scratch[i] = NoCopy
			if !t.asked[i] {
				continue
			}
			md, c := m.DecideCopy(now, t.keys[i], cost)
			t.scratch[i] = c
			blameInto(&t.fired, i, d, md)
			rejected = merge(&d, md) || rejected
		}
		for i, m := range t.members {
			switch c := t.scratch[i]; {
			case c == NoCopy:
			case rejected:
				m.Discard(c)
			default:
				m.Write(t.keys[i], c)
			}
		}
	case EveryHit:
		for i, m := range t.members {
			if !t.asked[i] {
				continue
			}
			md := m.Decide(now, t.keys[i], cost)
			blameInto(&t.fired, i, d, md)
			merge(&d, md)
		}
	case InOrder:
		for i, m := range t.members {
			if !t.asked[i] {
				continue
			}
			md := m.Decide(now, t.keys[i], cost)
			blameInto(&t.fired, i, d, md)
			if merge(&d, md) {
				break
			}
		}
	}
	return finish(d)
}

// finish makes an admitted decision with a delay a Delay, as AllOf.Decide
// does.
func finish(d Decision) Decision {
	if d.Verdict != Reject && d.Delay > 0 {
		d.Verdict = Delay
	}
	return d
}

// DecideCopy decides on copies by key alone, as Decide does.
func (t *allOfTable) DecideCopy(now time.Duration, key Key, cost int64) (Decision, Copy) {
	t.one[0] = key
	return t.DecideCopyAttrs(now, t.one[:], cost)
}

// DecideCopyAttrs decides on copies of the state of every member that
// applies to a request of attributes attrs, each under its own key
// (AttrTable).
func (t *allOfTable) DecideCopyAttrs(now time.Duration, attrs []Key, cost int64) (Decision, Copy) {
	memberKeys(t.by, attrs, t.keys, t.asked)
	var d Decision
	for i := range t.scratch {
		t.scratch[i] = NoCopy
	}
	rejected := false
	t.fired = -1
	for i, m := range t.members {
		if !t.asked[i] {
			continue
		}
		md, c := m.DecideCopy(now, t.keys[i], cost)
		t.scratch[i] = c
		blameInto(&t.fired, i, d, md)
		rejected = merge(&d, md) || rejected
		if rejected && t.commit == InOrder {
			break
		}
	}
	if rejected && t.commit == AllOrNothing {
		for i, m := range t.members {
			if t.scratch[i] != NoCopy {
				m.Discard(t.scratch[i])
				t.scratch[i] = NoCopy
			}
		}
	}
	changed := false
	for _, c := range t.scratch {
		changed = changed || c != NoCopy
	}
	if !changed {
		return finish(d), NoCopy
	}
	var c Copy
	if n := len(t.freed); n > 0 {
		c, t.freed = t.freed[n-1], t.freed[:n-1]
	} else {
		t.copies = append(t.copies, make([]Copy, len(t.members)))
		t.copyKeys = append(t.copyKeys, make([]Key, len(t.members)))
		c = Copy(len(t.copies) - 1)
	}
	copy(t.copies[c], t.scratch)
	copy(t.copyKeys[c], t.keys)
	return finish(d), c
}

// Write stores each member's copy in c under the member's key in the
// decision that made c (the request's key for a member by key, so key is
// not read).
func (t *allOfTable) Write(_ Key, c Copy) {
	for i, m := range t.members {
		if mc := t.copies[c][i]; mc != NoCopy {
			m.Write(t.copyKeys[c][i], mc)
		}
	}
	t.freed = append(t.freed, c)
}

func (t *allOfTable) Discard(c Copy) {
	for i, m := range t.members {
		if mc := t.copies[c][i]; mc != NoCopy {
			m.Discard(mc)
		}
	}
	t.freed = append(t.freed, c)
}

// Take grants nothing: all-of has no lease mode, so nothing calls it.
func (t *allOfTable) Take(time.Duration, Key, int64, int64) (int64, time.Duration) {
	return 0, Never
}

func (t *allOfTable) Flush() {
	for _, m := range t.members {
		m.Flush()
	}
}

func (t *allOfTable) Memory() Memory {
	var mem Memory
	for _, m := range t.members {
		mm := m.Memory()
		mem.KeysPeak = max(mem.KeysPeak, mm.KeysPeak)
		mem.BytesPeak += mm.BytesPeak
		mem.BytesPerKeyMax += mm.BytesPerKeyMax
	}
	return mem
}

// Incr adds cost to every member's count of at's window: what an admitted
// decision of commit all-or-nothing charged.
func (t *allOfIncrTable) Incr(at time.Duration, key Key, cost int64) {
	t.one[0] = key
	t.IncrAttrs(at, t.one[:], cost)
}

// IncrAttrs adds cost to the count of at's window of every member that
// applies to a request of attributes attrs, each under its own key
// (AttrIncrementer).
func (t *allOfIncrTable) IncrAttrs(at time.Duration, attrs []Key, cost int64) {
	memberKeys(t.by, attrs, t.keys, t.asked)
	for i, inc := range t.incrs {
		if t.asked[i] {
			inc.Incr(at, t.keys[i], cost)
		}
	}
}
