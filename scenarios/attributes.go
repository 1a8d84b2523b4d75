package scenarios

import (
	"fmt"
	"slices"

	"github.com/ratesim/ratesim/algorithms"
)

// The names a limit's by takes besides the traffic's attributes: the
// request's key, and every request together (a global limit).
const (
	byKey    = "key"
	byGlobal = "global"
)

// attributes reads a source's attributes: a mapping of names to the
// string value the source gives every request it sends (docs/scenario-file.md).
func (d *decoder) attributes(v val, as Attributes) (map[string]string, bool) {
	const want = "a mapping of attribute names to values, e.g. {route: /checkout, server: api}"
	m, ok := d.mapping(v, want, as)
	if !ok {
		return nil, false
	}
	if len(m.keys) == 0 {
		d.errAt(v.pos, v.path, "empty mapping (want %s)", want)
		return nil, false
	}
	attrs := map[string]string{}
	good := true
	for _, a := range as {
		k := a.Name
		if k == byKey || k == byGlobal || k == "" {
			d.errAt(m.keyPos[k], join(m.path, k), "%s: reserved (a limit's by: key counts by the request's key, by: global every request together); name the attribute otherwise", quote(k))
			good = false
			continue
		}
		s, ok := d.str(m.get(k, a.Value.Value), false)
		attrs[k], good = s, good && ok
	}
	return attrs, good
}

// resolveBy sets every all-of limit's Member.By from its by: the request's
// key by default, every request with global, or one of names, the
// attributes the traffic gives (traffic.Plan.Attributes). On a cluster too:
// the nodes and the store keep each limit's state under its own key.
func (d *decoder) resolveBy(sc *Scenario, names []string) {
	choices := slices.Concat([]string{byKey, byGlobal}, names)
	for ai := range sc.Algorithms {
		a := &sc.Algorithms[ai]
		for i, v := range a.by {
			if !v.set {
				continue
			}
			name, ok := d.str(v, true)
			if !ok {
				continue
			}
			by := algorithms.ByKey
			switch j := slices.Index(names, name); {
			case name == byKey:
			case name == byGlobal:
				by = algorithms.ByAll
			case j >= 0:
				by = j + 1
			default:
				msg := fmt.Sprintf("%s: no source gives this attribute (want %s)", quote(name), orList(choices))
				if len(names) == 0 {
					msg = fmt.Sprintf("%s: no source gives this attribute (want key or global, or an attribute that a source sets in attributes)", quote(name))
				}
				if s := suggest(name, choices); s != "" {
					msg += fmt.Sprintf("; did you mean %q?", s)
				}
				d.errAt(v.pos, v.path, "%s", msg)
				continue
			}
			a.Params.Members[i].By = by
		}
		// resolved: a scenario parsed from a file equals the one built
		// from the File it decodes to, wherever its by: were written
		a.by = nil
	}
}
