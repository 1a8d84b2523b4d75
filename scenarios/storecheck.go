package scenarios

import (
	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
)

// inStore reports whether a row of mode keeps its rule's state in the
// cluster's store, where it runs as an algorithms.Table (central, racy).
func inStore(mode cluster.Mode) bool {
	return mode == cluster.Central || mode == cluster.Racy
}

// storeMembers refuses, at read time, an all-of row kept in the store
// whose limits include one that has no rule over a state held apart (no
// algorithms.Table: aws-usage-plan), naming the limit where it is written;
// the run would otherwise fail when it builds the store.
func (d *decoder) storeMembers(a *Algorithm, items []val, e *AlgEntry) bool {
	if !inStore(a.Coord.Mode) {
		return true
	}
	good := true
	for i, m := range a.Params.Members {
		if _, err := algorithms.NewTable(m.Name, m.Params); err == nil {
			continue
		}
		at := items[i]
		if !isString(at.n) {
			if mm, ok := d.mapping(at, wantAlgorithm, &e.Limits[i]); ok {
				at = mm.get("name", e.Limits[i].Name.Value)
			}
		}
		d.errAt(at.pos, at.path, "%s: an all-of row with coordination: %s keeps its limits in the store, where %s cannot run (it has no rule over a state held apart): use coordination: local, or a limit that can", quote(m.Name), a.Coord.Mode, m.Name)
		good = false
	}
	return good
}

// storeRow refuses, at read time, a row kept in the store (central by
// default on a cluster) whose algorithm has no rule over a state held
// apart (no algorithms.Table: the vendors' rows), at its coordination, or
// at the entry when the default put it there.
func (d *decoder) storeRow(entry val, m *mapping, e *AlgEntry, a *Algorithm) bool {
	if !inStore(a.Coord.Mode) || a.Name == "all-of" {
		return true
	}
	if _, err := algorithms.New(a.Name, a.Params); err != nil {
		return true // refused for its parameters, where they are written
	}
	if _, err := algorithms.NewTable(a.Name, a.Params); err == nil {
		return true
	}
	at, why := entry, "the default on a cluster is central, which keeps the row's state in the store"
	if m != nil {
		if v := m.get("coordination", e.Coordination.Value); v.set {
			at, why = v, "coordination: "+string(a.Coord.Mode)+" keeps the row's state in the store"
		}
	}
	d.errAt(at.pos, at.path, "%s: %s, where %s cannot run (it has no rule over a state held apart): use coordination: local or split", a.Name, why, a.Name)
	return false
}
