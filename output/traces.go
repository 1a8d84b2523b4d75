package output

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratesim/ratesim/sim"
)

// TraceLines describes each recorded trace of the report in a few lines:
// what was read and used, its span, keys and busiest second, the malformed
// lines by reason and the first bad ones with their line numbers.
func TraceLines(r *sim.Report) []string {
	var out []string
	for _, t := range r.Traces {
		out = append(out, fmt.Sprintf("trace %s (%s): %s read, %d used, %d malformed, %d later than the reorder window, %d outside the slice",
			t.Path, t.Format, plural(t.Lines, "line"), t.Used, t.Malformed, t.Late, t.Sliced))
		if t.Used > 0 {
			out = append(out, fmt.Sprintf("  from %s to %s (%s), %s, at most %s in one second",
				FormatInstant(t.FirstNs, true), FormatInstant(t.LastNs, true), FormatDuration(time.Duration(t.LastNs-t.FirstNs)),
				plural(t.Keys, "key"), plural(t.PeakPerSecond, "request")))
		}
		if g := t.Routing; g != nil && routingLine(g) != "" {
			out = append(out, routingLine(g))
		}
		if g := t.Routing; g != nil {
			out = append(out, sharedRouteLines(g)...)
		}
		if len(t.ByReason) > 0 {
			reasons := make([]string, 0, len(t.ByReason))
			for reason := range t.ByReason {
				reasons = append(reasons, reason)
			}
			slices.Sort(reasons)
			for i, reason := range reasons {
				reasons[i] = fmt.Sprintf("%s %d", reason, t.ByReason[reason])
			}
			out = append(out, "  malformed: "+strings.Join(reasons, ", "))
		}
		var names, classed []string // a shedding row classes by the latter
		for name := range t.NoValue {
			if slices.Contains(t.Classed, name) {
				classed = append(classed, name)
			} else {
				names = append(names, name)
			}
		}
		counts := func(names []string) string {
			slices.Sort(names)
			for i, name := range names {
				names[i] = fmt.Sprintf("%s %d", name, t.NoValue[name])
			}
			return strings.Join(names, ", ")
		}
		if len(names) > 0 {
			out = append(out, "  lines without a value (a limit by it did not look at them): "+counts(names))
		}
		if len(classed) > 0 {
			out = append(out, "  lines without a value (a shedding row by it put them in its default class): "+counts(classed))
		}
		for _, b := range t.FirstBad {
			out = append(out, "  "+oneLine(b))
		}
	}
	return out
}

// routingLine says which of a trace's requests the gateway's routes sent
// to no row (replay --gateway): those of routes without a limit (or not
// picked with --scope), by route, and those no route took; "" when every
// request went to a row. Routes whose requests charge a row's limit in
// the gateway are sharedRouteLines'.
func routingLine(g *sim.TraceRouting) string {
	var parts []string
	var other int64
	for _, rc := range g.Routes {
		if !rc.Limited && rc.Shares == "" && rc.Requests > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", rc.Route, rc.Requests))
			other += rc.Requests
		}
	}
	if other == 0 && g.Unrouted == 0 {
		return ""
	}
	line := fmt.Sprintf("  not limited: %s to no route", plural(g.Unrouted, "request"))
	if other > 0 {
		line = fmt.Sprintf("  not limited: %s to routes without a row (%s), %d to no route", plural(other, "request"), strings.Join(parts, ", "), g.Unrouted)
	}
	return line
}

// sharedRouteLines say, for each route that --scope left out whose
// requests charge the limit of a row in the gateway (an nginx zone that
// several locations name), how many requests the row did not see.
func sharedRouteLines(g *sim.TraceRouting) []string {
	var out []string
	for _, rc := range g.Routes {
		if !rc.Limited && rc.Shares != "" && rc.Requests > 0 {
			out = append(out, fmt.Sprintf("  left out by --scope: %s to %s, which charge %s in the gateway; the row did not see them",
				plural(rc.Requests, "request"), rc.Route, rc.Shares))
		}
	}
	return out
}
