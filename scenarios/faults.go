package scenarios

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// faultHead reads what every fault of a list (the cluster's, the
// backend's) starts with: a mapping (sec, the typed fault) whose type
// (typeValue), one of types, says which of fields apply (applies(type),
// the type's first); a field that applies to none is unknown, one that
// applies to another type is an error that says so (notFor, when it has
// more to say for the type and field, else the fields the type takes). It
// returns the mapping and the type, and whether every field applied; ok is
// false when there is no mapping or no valid type, and then there is
// nothing more to read.
func (d *decoder) faultHead(it val, sec any, typeValue Value, types, fields []string, applies func(typ string) []string,
	notFor func(typ, k string) string) (m *mapping, typ string, fieldsOK, ok bool) {
	m, ok = d.mapping(it, "a mapping with a type ("+orList(types)+")", sec)
	if !ok {
		return nil, "", false, false
	}
	unknown := unknownField(fields)
	tv := m.get("type", typeValue)
	if !tv.set {
		d.missing(tv, orList(types))
		d.allow(m, fields, unknown)
		return nil, "", false, false
	}
	if typ, ok = d.choice(tv, "fault type", types); !ok {
		d.allow(m, fields, unknown)
		return nil, "", false, false
	}
	takes := applies(typ)
	fieldsOK = true
	d.allow(m, takes, func(k string) string {
		fieldsOK = false
		if !slices.Contains(fields, k) {
			return unknown(k)
		}
		if notFor != nil {
			if s := notFor(typ, k); s != "" {
				return s
			}
		}
		return fmt.Sprintf("does not apply to a %s fault (its fields: %s)", typ, strings.Join(takes[1:], ", "))
	})
	return m, typ, fieldsOK, true
}

// faultStart reads a fault's at: when it starts, a duration >= 0.
func (d *decoder) faultStart(at val) (val, time.Duration, bool) {
	if !at.set {
		d.missing(at, "a duration >= 0: when the fault starts")
		return at, 0, false
	}
	start, ok := d.duration(at, false)
	return at, start, ok
}

// faultLength reads a fault's for: how long it lasts, a duration > 0 that
// keeps at + for a time (start is at's, startOK whether it was read).
func (d *decoder) faultLength(fv, at val, start time.Duration, startOK bool) (time.Duration, bool) {
	if !fv.set {
		d.missing(fv, "a duration > 0: how long the fault lasts")
		return 0, false
	}
	length, ok := d.duration(fv, true)
	if ok && startOK && start > math.MaxInt64-length {
		d.errAt(at.pos, at.path, "at + for is beyond the largest time %v", time.Duration(math.MaxInt64))
		return length, false
	}
	return length, ok
}

// overlapping sorts g by start (stably: faults that start together keep
// their order) and calls report for each fault that starts before the
// latest end of the faults before it, with the fault of that end.
func overlapping[F any](g []F, span func(F) (start, end time.Duration), report func(f, last F)) {
	slices.SortStableFunc(g, func(a, b F) int {
		sa, _ := span(a)
		sb, _ := span(b)
		return cmp.Compare(sa, sb)
	})
	var last F // the fault with the latest end so far
	var lastEnd time.Duration
	for i, f := range g {
		start, end := span(f)
		if i > 0 && start < lastEnd {
			report(f, last)
		}
		if i == 0 || end > lastEnd {
			last, lastEnd = f, end
		}
	}
}
