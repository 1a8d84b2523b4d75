package output

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/sim"
)

// TableWidth is the most columns of text the default table takes: it
// leaves out its least telling columns until it fits (DefaultColumns).
const TableWidth = 120

// column is one column of the results table: what --columns calls it, its
// heading, what its figures count (the heading's second line), and its
// cell of a result.
type column struct {
	name string
	head string
	unit string
	// rank orders the columns the default table leaves out to fit in
	// TableWidth: the highest first; 0 is never left out.
	rank int
	left bool
	// hidden columns are in a table only when --columns names them (or
	// all): a report window that is neither a policy's own nor named in
	// report.windows (shownWindows).
	hidden bool
	cell   func(res *sim.Result) string
}

// Units of the columns' second heading line.
const (
	unitRequests = "requests"
	unitAttempts = "attempts"
)

// countUnit is what the peaks of r count: requests, or the traffic's cost
// unit ("tokens") when a request may cost more than 1.
func countUnit(r *sim.Report) string {
	if r.CostUnit != "" {
		return r.CostUnit
	}
	return unitRequests
}

// columns are every column of r's table, in order. markdown escapes the
// labels for a Markdown cell.
func columns(r *sim.Report, markdown bool) []column {
	ws := windows(r)
	perKey := r.Keys > 1
	herd := retried(r)
	rejectUnit := unitRequests
	if herd {
		rejectUnit = unitAttempts // a request refused, retried and refused again counts twice
	}
	cols := []column{{name: "algorithm", head: "algorithm", left: true, cell: func(res *sim.Result) string {
		if markdown {
			return markdownCell(res.Label)
		}
		return oneLine(res.Label)
	}}}
	cl := clustered(r)
	if cl {
		cols = append(cols, column{name: "mode", head: "mode", left: true, cell: func(res *sim.Result) string { return modeCell(res.Cluster) }})
	}
	cols = append(cols,
		column{name: "accepted", head: "accepted", unit: unitRequests, cell: func(res *sim.Result) string { return strconv.FormatInt(res.Accepted, 10) }},
		column{name: "delayed", head: "delayed", unit: unitRequests, rank: 4, cell: func(res *sim.Result) string { return strconv.FormatInt(res.Delayed, 10) }},
		column{name: "rejected", head: "rejected", unit: rejectUnit, cell: func(res *sim.Result) string { return strconv.FormatInt(res.Rejected, 10) }},
		column{name: "accept%", head: "accept %", rank: 7, cell: func(res *sim.Result) string {
			return formatPercent(res.Accepted+res.Delayed, res.Attempts)
		}},
	)
	if vs := baselineLabel(r); vs != "" {
		heads := baselineHeader(vs)
		for j, name := range []string{"vs", "wrongly-allowed", "wrongly-limited"} {
			cols = append(cols, column{name: name, head: heads[j], unit: unitRequests, rank: 2, cell: func(res *sim.Result) string {
				return baselineCells(res, vs)[j]
			}})
		}
	}
	if chk := checkField(r); chk != "" {
		cols = append(cols, column{name: "agrees", head: checkHeader(chk), unit: unitAttempts, rank: 1, cell: func(res *sim.Result) string { return checkCell(res.Check) }})
	}
	cols = append(cols, column{name: "p99-delay", head: "p99 delay", rank: 6, cell: func(res *sim.Result) string {
		return FormatDuration(time.Duration(res.DelayNs.P99))
	}})
	unit := countUnit(r)
	shownWs, observed := shownWindows(r)
	for _, v := range ws {
		w := FormatDuration(time.Duration(v))
		// a policy's window against its limit; any other, an observation
		// window: a count, no ratio (docs/metrics.md)
		obs := !limitWindow(r, v)
		c := column{name: "peak/" + w, head: "peak/" + w, unit: unit, rank: 1, hidden: !slices.Contains(shownWs, v)}
		if observed[v] {
			c.rank = 8
		}
		if perKey {
			c.head = "key peak/" + w
		}
		if obs {
			c.head = "obs. " + c.head
		}
		c.cell = func(res *sim.Result) string {
			p, ok := peakFor(res, v)
			if perKey {
				var kp sim.KeyPeak
				kp, ok = findKeyPeak(res.KeyPeaks, v)
				p.Count, p.Ratio = kp.Count, kp.Ratio
			}
			switch {
			case !ok:
				return "-"
			case obs:
				return strconv.FormatInt(p.Count, 10)
			}
			return countRatio(p.Count, p.Ratio)
		}
		cols = append(cols, c)
	}
	if perKey && len(ws) > 0 {
		all := ws[0] // the first policy window, or the first window
		if lw := limitWindows(r); len(lw) > 0 {
			all = lw[0]
		}
		w := FormatDuration(time.Duration(all))
		cols = append(cols, column{name: "all-keys/" + w, head: "all keys/" + w, unit: unit, rank: 9, cell: func(res *sim.Result) string {
			if p, ok := peakFor(res, all); ok {
				return strconv.FormatInt(p.Count, 10)
			}
			return "-"
		}})
	}
	if herd {
		// the busiest shortest window of attempts, first tries and retries
		v := ws[len(ws)-1]
		w := FormatDuration(time.Duration(v))
		attemptUnit := unitAttempts
		if r.CostUnit != "" {
			attemptUnit = r.CostUnit
		}
		cols = append(cols,
			column{name: "gave-up", head: "gave up", unit: unitRequests, rank: 10, cell: func(res *sim.Result) string { return strconv.FormatInt(res.GaveUp, 10) }},
			column{name: "attempts/" + w, head: "attempts/" + w, unit: attemptUnit, rank: 2, cell: func(res *sim.Result) string {
				if p, ok := findPeak(res.AttemptPeaks, v); ok {
					if perKey {
						return strconv.FormatInt(p.Count, 10)
					}
					return countRatio(p.Count, p.Ratio)
				}
				return "-"
			}},
		)
	}
	if cl {
		cols = append(cols,
			column{name: "extra", head: "extra", unit: unitRequests, rank: 2, cell: func(res *sim.Result) string { return clusterCells(res.Cluster)[0] }},
			column{name: "store-ops", head: "store ops/req", rank: 11, cell: func(res *sim.Result) string { return clusterCells(res.Cluster)[1] }},
			column{name: "p99-added", head: "p99 added", rank: 11, cell: func(res *sim.Result) string { return clusterCells(res.Cluster)[2] }},
		)
	}
	if withBackend(r) {
		for j, c := range []column{
			{name: "util", head: "util", rank: 12},
			{name: "p99-response", head: "p99 response", rank: 3},
			{name: "goodput", head: "goodput", unit: unitRequests, rank: 2},
			{name: "shed", head: "shed/timed out", unit: unitRequests, rank: 5},
			{name: "wasted", head: "wasted", rank: 13},
			{name: "recovered", head: "recovered", rank: 3},
		} {
			c.cell = func(res *sim.Result) string { return backendCells(res.Backend)[j] }
			cols = append(cols, c)
		}
	}
	cols = append(cols, column{name: "bytes/key", head: "bytes/key", rank: 14, cell: func(res *sim.Result) string {
		return strconv.FormatInt(res.Memory.BytesPerKeyMax, 10)
	}})
	return cols
}

// columnNames are the names --columns takes, besides peak/W, all-keys/W
// and attempts/W for a window W: every column a table may have.
var columnNames = []string{"algorithm", "mode", "accepted", "delayed", "rejected", "accept%",
	"vs", "wrongly-allowed", "wrongly-limited", "agrees", "p99-delay", "extra", "store-ops",
	"p99-added", "util", "p99-response", "goodput", "shed", "wasted", "recovered", "bytes/key"}

// windowColumns are the columns named after a window: peak/1s.
var windowColumns = []string{"peak/", "all-keys/", "attempts/"}

// ColumnNames returns the names of --columns: every column a table may
// have, the windowed ones as peak/W, all-keys/W and attempts/W, and all.
func ColumnNames() []string {
	names := slices.Clone(columnNames)
	for _, w := range windowColumns {
		names = append(names, w+"W")
	}
	return append(names, "all")
}

// ParseColumns reads a --columns list: comma-separated names of
// ColumnNames, "all" for every column of the run. It checks the names
// alone, before any run; a run that has no such column leaves it out
// (MissingColumns says which).
func ParseColumns(s string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !knownColumn(name) {
			return nil, fmt.Errorf("%q is not a column (want %s)", name, strings.Join(ColumnNames(), ", "))
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return nil, errors.New("no column named")
	}
	return out, nil
}

// knownColumn reports whether name is one of ColumnNames, a window given
// as a duration.
func knownColumn(name string) bool {
	if name == "all" || slices.Contains(columnNames, name) {
		return true
	}
	for _, w := range windowColumns {
		if d, ok := strings.CutPrefix(name, w); ok {
			v, err := time.ParseDuration(d)
			return err == nil && v > 0
		}
	}
	return false
}

// MissingColumns returns the names of the list that r's table has no
// column of (goodput without a backend, peak/5s without that window).
func MissingColumns(r *sim.Report, names []string) []string {
	cols := columns(r, false)
	var out []string
	for _, name := range names {
		if name == "all" || slices.ContainsFunc(cols, func(c column) bool { return sameColumn(c.name, name) }) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// sameColumn reports whether a column's name is the name asked for; a
// window may be written as Go writes durations (peak/1m0s).
func sameColumn(have, want string) bool {
	if have == want {
		return true
	}
	for _, w := range windowColumns {
		h, ok1 := strings.CutPrefix(have, w)
		x, ok2 := strings.CutPrefix(want, w)
		if ok1 && ok2 {
			hd, err1 := time.ParseDuration(h)
			xd, err2 := time.ParseDuration(x)
			return err1 == nil && err2 == nil && hd == xd
		}
	}
	return false
}

// pick returns the columns of cols the names ask for, in the table's
// order, the algorithm always first; nil names: every column but the
// hidden ones.
func pick(cols []column, names []string) []column {
	if names == nil {
		return slices.DeleteFunc(slices.Clone(cols), func(c column) bool { return c.hidden })
	}
	if slices.Contains(names, "all") {
		return cols
	}
	out := cols[:1:1]
	for _, c := range cols[1:] {
		if slices.ContainsFunc(names, func(n string) bool { return sameColumn(c.name, n) }) {
			out = append(out, c)
		}
	}
	return out
}
