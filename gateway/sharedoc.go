package gateway

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/scenarios"
)

// mergedRows are rows that Route made one: the limit they share, their
// labels, the one row's, and with perRoute each location's rule ("/a/
// burst=5 nodelay").
type mergedRows struct {
	name     string
	rows     []string
	label    string
	perRoute bool
	rules    []string
}

// ShareDoc writes into f, the scenario file of the replay (Doc with the
// trace's source), the rows that Route made one as that row: one entry
// labelled as the row, where the first stood, the others gone. The entry
// of an nginx zone keeps what its locations share and loses what each
// sets apart (burst, delay, nodelay), which the layout it returns says in
// a comment above it, location by location. merged is false, f unchanged,
// when Route made no row of several.
func (g *Replay) ShareDoc(f *scenarios.File) (l scenarios.Layout, merged bool) {
	for _, m := range g.merged {
		var at []int
		for _, label := range m.rows {
			i := slices.IndexFunc(f.Algorithms, func(a scenarios.AlgEntry) bool { return a.LabelText() == label })
			if i < 0 {
				break
			}
			at = append(at, i)
		}
		if len(at) != len(m.rows) {
			continue // Route found them in sc; the file names them so too
		}
		e := &f.Algorithms[at[0]]
		if e.Bare.Set() { // a bare name: the name, and the label of its row
			e.Name, e.Bare = e.Bare, scenarios.String{}
		}
		e.Label = scenarios.StringOf(m.label)
		if m.perRoute {
			e.Burst, e.Delay, e.Nodelay = scenarios.Int{}, scenarios.Int{}, scenarios.Bool{}
		}
		gone := slices.Clone(at[1:])
		slices.Sort(gone)
		for j := len(gone) - 1; j >= 0; j-- {
			f.Algorithms = slices.Delete(f.Algorithms, gone[j], gone[j]+1)
		}
		merged = true
	}
	if !merged {
		return l, false
	}
	// the comments go by the entries' places once every merge is done
	for _, m := range g.merged {
		i := slices.IndexFunc(f.Algorithms, func(a scenarios.AlgEntry) bool { return a.LabelText() == m.label })
		if i < 0 || !m.perRoute {
			continue
		}
		if l.Head == nil {
			l.Head = map[string][]string{}
		}
		l.Head["algorithms["+strconv.Itoa(i)+"]"] = []string{
			m.name + ": one state per key for " + strings.Join(m.rows, ", ") + ",",
			"each request checked with its location's burst: " + strings.Join(m.rules, ", "),
		}
	}
	return l, true
}
