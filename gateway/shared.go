package gateway

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/scenarios"
)

// This file holds what several readers share: the parts of the scenario
// each writes alike, and --scope and key bookkeeping.

// noLimits is the error of a config that limits nothing; why says so.
func noLimits(file, why string) error {
	return &Error{File: file, Msg: "no limits at all: " + why}
}

// Import is the scenario an importer makes of a config: the File, and how
// ratesim import writes it, with comments that say where in the config
// each limit is and what of it the rows do not model.
type Import struct {
	File   *scenarios.File
	Layout scenarios.Layout
	notes  []string // comment lines for the next row
}

// newImport starts the scenario of the config base: its name (the file's
// base name without its extension), its description and the comment
// lines above them. The limit, duration and cluster are written first.
func newImport(base, description string, head ...string) *Import {
	return &Import{
		File: &scenarios.File{Name: str(strings.TrimSuffix(base, filepath.Ext(base))), Description: str(description)},
		Layout: scenarios.Layout{
			Head:  map[string][]string{"name": head},
			Foot:  map[string][]string{},
			Order: map[string][]string{"": {"name", "description", "limit", "duration", "cluster"}},
			Flow:  true,
		},
	}
}

// Text writes the scenario as ratesim import prints it.
func (im *Import) Text() (string, error) {
	out, err := scenarios.MarshalLayout(im.File, im.Layout)
	return string(out), err
}

// note adds comment lines before the next row, or after the last row
// when no row follows.
func (im *Import) note(lines ...string) { im.notes = append(im.notes, lines...) }

// row appends the row e, with the lines noted before it, and returns its
// index.
func (im *Import) row(e scenarios.AlgEntry) int {
	i := len(im.File.Algorithms)
	im.File.Algorithms = append(im.File.Algorithms, e)
	im.comment(fmt.Sprintf("algorithms[%d]", i), im.notes)
	im.notes = nil
	return i
}

// member appends the limit e, with the comment lines before it, to the
// all-of row i.
func (im *Import) member(i int, e scenarios.AlgEntry, lines ...string) {
	row := &im.File.Algorithms[i]
	im.comment(fmt.Sprintf("algorithms[%d].limits[%d]", i, len(row.Limits)), lines)
	row.Limits = append(row.Limits, e)
}

func (im *Import) comment(path string, lines []string) {
	if len(lines) > 0 {
		im.Layout.Head[path] = lines
	}
}

// placeholderTraffic ends the scenario with its traffic: a steady source
// of rate a unit (twice the first row's limit), for the user to replace,
// as the config says nothing of the traffic.
func (im *Import) placeholderTraffic(rate int64, unit string) {
	if len(im.notes) > 0 {
		im.Layout.Foot["algorithms"] = im.notes
		im.notes = nil
	}
	im.File.Traffic = []scenarios.Source{{Type: str("steady"), Key: str("client"), Rate: scenarios.RateOf(fmt.Sprintf("%d/%s", rate, unit))}}
	im.Layout.Head["traffic[0]"] = []string{"a placeholder: replace it with your traffic, or replay an access log"}
}

// str is s as a scenario's string, quoted when it is not a plain word.
func str(s string) scenarios.String {
	plain := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			plain = false
		}
	}
	if plain {
		if _, err := strconv.ParseFloat(s, 64); err != nil && s != "true" && s != "false" && s != "null" {
			return scenarios.String{Value: scenarios.Value{Text: s, Kind: scenarios.Plain}}
		}
	}
	return scenarios.StringOf(s)
}

// limit is the scenario's limit: rate per per.
func limit(rate int64, per string) *scenarios.Limit {
	return &scenarios.Limit{Rate: scenarios.IntOf(rate), Per: scenarios.DurationOf(per)}
}

// pickNamed returns the scopes that scope names: all of them when it is
// "", else those whose name it is, else those that in says are of the
// entity called scope (a route, router...), which what names for the
// error.
func pickNamed[S any](scopes []S, scope, file, what string, name func(S) string, in func(s S, entity string) bool) ([]S, error) {
	if scope == "" {
		return scopes, nil
	}
	var picked []S
	for _, s := range scopes {
		if name(s) == scope {
			picked = append(picked, s)
		}
	}
	if len(picked) == 0 {
		for _, s := range scopes {
			if in(s, scope) {
				picked = append(picked, s)
			}
		}
	}
	if len(picked) == 0 {
		var names []string
		for _, s := range scopes {
			names = append(names, strconv.Quote(name(s)))
		}
		return nil, fmt.Errorf("--scope %q: no scope, %s of %s has that name (its scopes: %s)", scope, what, file, strings.Join(names, ", "))
	}
	return picked, nil
}

// labels gives names once each: a name, then "name #2", "name #3"...
type labels map[string]int

func (l labels) unique(name string) string {
	l[name]++
	if k := l[name]; k > 1 {
		return fmt.Sprintf("%s #%d", name, k)
	}
	return name
}

// addKey appends k to keys unless they hold a key of its kind and name.
func addKey(keys []Key, k Key) []Key {
	if slices.ContainsFunc(keys, func(have Key) bool { return have.Kind == k.Kind && have.Name == k.Name }) {
		return keys
	}
	return append(keys, k)
}

// entriesPath names a descriptor by its entries, key or key=value, joined
// by "/".
func entriesPath(entries []EnvoyEntry) string {
	parts := make([]string, len(entries))
	for i, e := range entries {
		parts[i] = e.String()
	}
	return strings.Join(parts, "/")
}

// splitMember is one limit of an all-of row as --split-limits writes it
// alone: its own part of the label, the comment lines that say where it
// is, and its entry in the all-of row.
type splitMember struct {
	label   string   // appended to the all-of row's label
	comment []string // its comment lines, as in the all-of row
	entry   scenarios.AlgEntry
}

// splitRows adds what --split-limits (docs/gateways.md) writes after the
// all-of row labelled row: the comment lines why, then one row per
// member, labelled "ROW MEMBER" (made unique by names), with exactly the
// member's fields, and then what extra sets (the all-of row's cluster
// fields; nil without a cluster).
func (im *Import) splitRows(names labels, row string, why []string, members []splitMember, extra func(*scenarios.AlgEntry)) {
	im.note(why...)
	for _, m := range members {
		e := m.entry
		e.Label = str(names.unique(row + " " + m.label))
		if extra != nil {
			extra(&e)
		}
		im.note(m.comment...)
		im.row(e)
	}
}
