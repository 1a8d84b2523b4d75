package algorithms

import "time"

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
	freed   []Copy
	scratch []Copy
	fired   int // Fired's answer for the last decision
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
	_ Table       = (*allOfTable)(nil)
	_ Incrementer = (*allOfIncrTable)(nil)
	_ Firer       = (*allOfTable)(nil)
)

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
		t.members = append(t.members, mt)
		if inc, ok := mt.(Incrementer); ok {
			incrs = append(incrs, inc)
		}
	}
	t.scratch = make([]Copy, len(t.members))
	if commit == AllOrNothing && len(incrs) == len(t.members) {
		return &allOfIncrTable{allOfTable: t, incrs: incrs}, nil
	}
	return t, nil
}

func (t *allOfTable) Decide(now time.Duration, key Key, cost int64) Decision {
	var d Decision
	t.fired = -1
	switch t.commit {
	case AllOrNothing:
		rejected := false
		for i, m := range t.members {
			md, c := m.DecideCopy(now, key, cost)
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
				m.Write(key, c)
			}
		}
	case EveryHit:
		for i, m := range t.members {
			md := m.Decide(now, key, cost)
			blameInto(&t.fired, i, d, md)
			merge(&d, md)
		}
	case InOrder:
		for i, m := range t.members {
			md := m.Decide(now, key, cost)
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

func (t *allOfTable) DecideCopy(now time.Duration, key Key, cost int64) (Decision, Copy) {
	var d Decision
	for i := range t.scratch {
		t.scratch[i] = NoCopy
	}
	rejected := false
	t.fired = -1
	for i, m := range t.members {
		md, c := m.DecideCopy(now, key, cost)
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
		c = Copy(len(t.copies) - 1)
	}
	copy(t.copies[c], t.scratch)
	return finish(d), c
}

func (t *allOfTable) Write(key Key, c Copy) {
	for i, m := range t.members {
		if mc := t.copies[c][i]; mc != NoCopy {
			m.Write(key, mc)
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
	for _, inc := range t.incrs {
		inc.Incr(at, key, cost)
	}
}
