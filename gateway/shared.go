package gateway

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file holds what several readers share: the parts of the scenario
// each writes alike, and --scope and key bookkeeping.

// durationText writes d as a scenario writes a duration: in its largest
// whole unit of h, m, s, ms, us or ns (24h, 1m, 500ms).
func durationText(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "us"}} {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// noLimits is the error of a config that limits nothing; why says so.
func noLimits(file, why string) error {
	return &Error{File: file, Msg: "no limits at all: " + why}
}

// writeNames writes a scenario's name, the config file's base name
// without its extension, and its description.
func writeNames(b *strings.Builder, base, description string) {
	fmt.Fprintf(b, "name: %s\n", yamlString(strings.TrimSuffix(base, filepath.Ext(base))))
	fmt.Fprintf(b, "description: %s\n", yamlString(description))
}

// writePlaceholderTraffic writes a scenario's traffic: a steady source of
// rate a unit (twice the first row's limit), for the user to replace, as
// the config says nothing of the traffic.
func writePlaceholderTraffic(b *strings.Builder, rate int64, unit string) {
	b.WriteString("traffic:\n  # a placeholder: replace it with your traffic, or replay an access log\n")
	fmt.Fprintf(b, "  - {type: steady, key: client, rate: %d/%s}\n", rate, unit)
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
// is, and the fields it has in the all-of row.
type splitMember struct {
	label   string                                  // appended to the all-of row's label
	comment func(b *strings.Builder, indent string) // its comment lines, as in the all-of row
	alg     string                                  // its algorithm
	fields  string                                  // its fields, as in the all-of row
}

// writeSplitRows writes what --split-limits (docs/gateways.md) adds after
// the all-of row labelled row: the comment lines why (each written after
// "  # "), then one row per member, labelled "ROW MEMBER" (made unique by
// names), with exactly the member's fields and then extra (the all-of
// row's cluster fields, ", coordination: ..."; "" without a cluster).
func writeSplitRows(b *strings.Builder, names labels, row string, why []string, members []splitMember, extra string) {
	for _, line := range why {
		fmt.Fprintf(b, "  # %s\n", commentSafe(line))
	}
	for _, m := range members {
		m.comment(b, "  ")
		fmt.Fprintf(b, "  - {name: %s, label: %s, %s%s}\n", m.alg, yamlString(names.unique(row+" "+m.label)), m.fields, extra)
	}
}
