package output

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/ratesim/ratesim/sim"
)

// Renderer writes a report in one format.
type Renderer func(w io.Writer, r *sim.Report) error

// formats are the renderers of `ratesim compare --format`, in the order the
// help lists them.
var formats = []struct {
	name string
	fn   Renderer
}{
	{"table", Table},
	{"json", JSON},
	{"csv", CSV},
	{"markdown", Markdown},
}

// Formats returns the names ForFormat accepts: table, json, csv, markdown.
func Formats() []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.name
	}
	return names
}

// ForFormat returns the renderer of a --format name, or false.
func ForFormat(name string) (Renderer, bool) {
	for _, f := range formats {
		if f.name == name {
			return f.fn, true
		}
	}
	return nil, false
}

var errNilReport = errors.New("output: nil report")

// windows returns the report windows (peak interval lengths) in order: those
// of the first result, then any other result has that it lacks.
func windows(r *sim.Report) []int64 {
	var ws []int64
	for i := range r.Results {
	peaks:
		for _, p := range r.Results[i].Peaks {
			for _, w := range ws {
				if w == p.WindowNs {
					continue peaks
				}
			}
			ws = append(ws, p.WindowNs)
		}
	}
	return ws
}

// shownWindows are the report windows that tables and charts show by
// default, in the report's order: each policy's own period (the
// scenario's, or a row's own limit's), held against its limit, and the
// windows the scenario named in report.windows (sim.Report.NamedWindowsNs)
// besides, which observed marks: observation windows, shown as counts
// and never as a breach, since no limit applies over them. A window
// neither, the default W/10, is in the JSON and CSV only. Whether a
// window was named is what the scenario wrote, not its value: a file
// that writes [W, W/10] shows its W/10.
func shownWindows(r *sim.Report) (ws []int64, observed map[int64]bool) {
	observed = map[int64]bool{}
	for _, v := range windows(r) {
		switch {
		case limitWindow(r, v):
			ws = append(ws, v)
		case slices.Contains(r.NamedWindowsNs, v):
			ws = append(ws, v)
			observed[v] = true
		}
	}
	return ws, observed
}

// limitWindows are the report windows that are a policy's own period, in
// the report's order: the peaks the findings hold against the limit.
func limitWindows(r *sim.Report) []int64 {
	var ws []int64
	for _, v := range windows(r) {
		if limitWindow(r, v) {
			ws = append(ws, v)
		}
	}
	return ws
}

// limitWindow reports whether v is the period of the scenario's policy
// or of a row's own.
func limitWindow(r *sim.Report, v int64) bool {
	if v == r.Limit.PerNs {
		return true
	}
	for i := range r.Results {
		if limitOf(r, &r.Results[i]).PerNs == v {
			return true
		}
	}
	return false
}

// peakFor returns res's peak over windows of v.
func peakFor(res *sim.Result, v int64) (sim.Peak, bool) {
	return findPeak(res.Peaks, v)
}

// retried reports whether any client retried in the report.
func retried(r *sim.Report) bool {
	for i := range r.Results {
		if r.Results[i].Attempts > r.Results[i].Offered {
			return true
		}
	}
	return false
}

// findPeak returns the peak over windows of v in ps.
func findPeak(ps []sim.Peak, v int64) (sim.Peak, bool) {
	for _, p := range ps {
		if p.WindowNs == v {
			return p, true
		}
	}
	return sim.Peak{}, false
}

// findKeyPeak returns the key peak over windows of v in ps.
func findKeyPeak(ps []sim.KeyPeak, v int64) (sim.KeyPeak, bool) {
	for _, p := range ps {
		if p.WindowNs == v {
			return p, true
		}
	}
	return sim.KeyPeak{}, false
}

// limitOf returns the policy res enforced: its own, or the scenario's when
// the result does not carry one.
func limitOf(r *sim.Report, res *sim.Result) sim.Limit {
	if res.Limit.Rate > 0 && res.Limit.PerNs > 0 {
		return res.Limit
	}
	return r.Limit
}

// heading is the line above the table: scenario, policy, duration, seed.
func heading(r *sim.Report) string {
	name := r.Scenario
	if name == "" {
		name = "(unnamed scenario)"
	}
	return fmt.Sprintf("%s: limit %s, duration %s, seed %d",
		name, policyString(r.Limit), FormatDuration(time.Duration(r.DurationNs)), r.Seed)
}
