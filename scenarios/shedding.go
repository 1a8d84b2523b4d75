package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
)

// The priority-shedding rows (netflix-partitioned, stripe-fleet-shedder)
// class requests by the value of one attribute (by:) and name some values
// (partitions:, critical:). Values reach a row as ids, numbered per
// attribute in a run; the loader reads the names here and resolves them
// once the traffic is known (resolveClasses), naming in the plan those of
// an attribute that a replay reads from its lines.

// shedSpec is a shedding row's by and named values as written.
type shedSpec struct {
	by     val
	values []shedValue
}

// shedValue is one named value: a partition (with its share) or a
// critical value, and where it was written.
type shedValue struct {
	name string
	v    val
}

// isShedding reports whether name is a priority-shedding row.
func isShedding(name string) bool {
	return name == "netflix-partitioned" || name == "stripe-fleet-shedder"
}

// shedOptions reads a shedding row's by, partitions, critical and reserve.
func (d *decoder) shedOptions(o *entryReader, e *AlgEntry, a *Algorithm, ci clusterInfo) bool {
	if !isShedding(a.Name) {
		return true
	}
	p := &a.Params
	spec := &shedSpec{}
	good := true
	where := o.m.val
	if ci.set {
		d.errAt(where.pos, where.path, "%s limits the requests in flight of one process: it is not modelled on a cluster (remove it or the cluster section)", a.Name)
		return false
	}
	if d.workers {
		d.errAt(where.pos, where.path, "%s counts requests in flight for a fixed service time: it takes a backend without workers (backend.service: a duration)", a.Name)
		return false
	}
	by, set := o.field("by", e.By.Value)
	if !set {
		d.errAt(where.pos, where.path, "%s needs by: the attribute whose value classes a request (one that a source sets in attributes)", a.Name)
		good = false
	} else if name, ok := d.str(by, true); ok {
		spec.by = by
		a.Set["by"] = name
	} else {
		good = false
	}
	switch a.Name {
	case "netflix-partitioned":
		v, set := o.field("partitions", attributesOf(e.Partitions))
		if !set {
			d.errAt(where.pos, where.path, "netflix-partitioned needs partitions: each value's percent of max, e.g. {live: 0.9, batch: 0.1}")
			return false
		}
		const want = "a mapping of the attribute's values to their percent of max, e.g. {live: 0.9, batch: 0.1}"
		m, ok := d.mapping(v, want, e.Partitions)
		if !ok {
			return false
		}
		if len(m.keys) == 0 {
			d.errAt(v.pos, v.path, "empty mapping (want %s)", want)
			return false
		}
		var text []string
		for _, pa := range e.Partitions {
			pv := m.get(pa.Name, pa.Value.Value)
			share, ok := d.number(pv, "a percent from 0.0 to 1.0, as Netflix's partition(name, percent)")
			if ok && !(share >= 0 && share <= 1) {
				d.errAt(pv.pos, pv.path, "%s: want a percent from 0.0 to 1.0, as Netflix's partition(name, percent)", pv.found())
				ok = false
			}
			good = good && ok
			p.Partitions = append(p.Partitions, algorithms.Class{Name: pa.Name, Value: algorithms.NoKey, Share: share})
			spec.values = append(spec.values, shedValue{pa.Name, pv})
			text = append(text, pa.Name+": "+pv.n.Text)
		}
		a.Set["partitions"] = "{" + strings.Join(text, ", ") + "}"
	case "stripe-fleet-shedder":
		v, set := o.field("critical", listOf(e.Critical))
		if !set {
			d.errAt(where.pos, where.path, "stripe-fleet-shedder needs critical: the values of its attribute that are critical, e.g. [create-charge]")
			return false
		}
		const want = "a list of the attribute's critical values, e.g. [create-charge]"
		items, ok := d.list(v, want, len(e.Critical), func(i int) Value { return e.Critical[i].Value })
		if !ok {
			return false
		}
		if len(items) == 0 {
			d.errAt(v.pos, v.path, "empty list (want %s)", want)
			return false
		}
		var names []string
		for _, it := range items {
			name, ok := d.str(it, true)
			if !ok {
				good = false
				continue
			}
			p.Critical = append(p.Critical, algorithms.Class{Name: name, Value: algorithms.NoKey})
			spec.values = append(spec.values, shedValue{name, it})
			names = append(names, name)
		}
		a.Set["critical"] = strings.Join(names, ", ")
		if rv, set := o.field("reserve", e.Reserve.Value); set {
			r, ok := d.fraction(rv)
			p.Reserve, good = r, good && ok
			a.Set["reserve"] = rv.n.Text
		}
	}
	a.shed = spec
	return good
}

// fraction reads a decimal fraction from 0 to below 1 with at most six
// decimals (0.2, 0.05) or a percent with at most four (20%), exactly, in
// millionths.
func (d *decoder) fraction(v val) (int64, bool) {
	const want = "a fraction from 0 to below 1 with at most 6 decimals, like 0.2, or a percent like 20%"
	if !v.ok() {
		return 0, false
	}
	text, percent := strings.CutSuffix(v.n.Text, "%")
	whole, frac, _ := strings.Cut(text, ".")
	digits := whole + frac + strings.Repeat("0", max(0, 6-len(frac)))
	bad := whole+frac == "" || len(frac) > 6 || len(whole) > 3 || strings.Trim(digits, "0123456789") != ""
	var n int64 // the number written, in millionths
	for _, c := range digits {
		n = n*10 + int64(c-'0')
	}
	if percent {
		bad = bad || n%100 != 0
		n /= 100
	}
	if bad || n >= 1_000_000 {
		d.errAt(v.pos, v.path, "%s: want %s", v.found(), want)
		return 0, false
	}
	return n, true
}

// resolveClasses sets each shedding row's attribute and the ids of the
// values it names, from the traffic's attributes and their values
// (traffic.Plan.AttributeValues). The values of an attribute that a
// replay reads from its lines (attribute-fields) are not known before the
// run: the row's values of it are named in the plan (traffic.Plan.Named),
// in the order written, so each has its id before the first line, and a
// line with another value, or none, falls in the row's default class (the
// unknown partition, the non-critical requests) as a source's would.
func (d *decoder) resolveClasses(sc *Scenario) {
	plan := &sc.Traffic
	names := plan.Attributes()
	for ai := range sc.Algorithms {
		a := &sc.Algorithms[ai]
		if a.shed == nil || !a.shed.by.set {
			continue
		}
		by := a.shed.by
		name, _ := d.str(by, true)
		j := slices.Index(names, name)
		if j < 0 {
			msg := fmt.Sprintf("%s: no source gives this attribute (want an attribute that a source sets in attributes or a replay reads in attribute-fields", quote(name))
			if len(names) > 0 {
				msg += ": " + orList(names)
			}
			msg += ")"
			if s := suggest(name, names); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			d.errAt(by.pos, by.path, "%s", msg)
			continue
		}
		a.Params.ClassBy = j + 1
		if readFromLines(*plan, name) {
			if plan.Named == nil {
				plan.Named = map[string][]string{}
			}
			for _, sv := range a.shed.values {
				if !slices.Contains(plan.Named[name], sv.name) {
					plan.Named[name] = append(plan.Named[name], sv.name)
				}
			}
		}
		values := plan.AttributeValues(name)
		classes := a.Params.Partitions
		if a.Name == "stripe-fleet-shedder" {
			classes = a.Params.Critical
		}
		for i, sv := range a.shed.values {
			id := slices.Index(values, sv.name)
			if id < 0 {
				msg := fmt.Sprintf("%s: no source gives %s this value (want %s)", quote(sv.name), name, orList(values))
				if s := suggest(sv.name, values); s != "" {
					msg += fmt.Sprintf("; did you mean %q?", s)
				}
				at := sv.v
				if kp, ok := d.at.key[sv.v.path]; ok {
					at.pos = kp // a partition: its name
				}
				d.errAt(at.pos, at.path, "%s", msg)
				continue
			}
			classes[i].Value = algorithms.Key(id)
		}
	}
}

// readFromLines reports whether a source of plan reads the attribute
// called name from its lines (a replay's attribute-fields).
func readFromLines(plan traffic.Plan, name string) bool {
	for _, s := range plan.Sources {
		if l, ok := s.(interface{ AttributeNames() []string }); ok && slices.Contains(l.AttributeNames(), name) {
			return true
		}
	}
	return false
}
