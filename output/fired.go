package output

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratesim/ratesim/sim"
)

// FiredLines are the lines of the section "Which limit fired": for each
// all-of row, how many requests each of its limits rejected and delayed
// (sim.Result.Fired; docs/commands.md), in the order of its limits; none
// when no row is an all-of.
func FiredLines(r *sim.Report) []string {
	width := 0
	for i := range r.Results {
		if r.Results[i].Fired != nil {
			width = max(width, len(r.Results[i].Label))
		}
	}
	var lines []string
	for i := range r.Results {
		res := &r.Results[i]
		if res.Fired == nil {
			continue
		}
		var parts []string
		for _, f := range res.Fired {
			s := fmt.Sprintf("%s %d rejected", f.Limit, f.Rejected)
			if f.Delayed > 0 {
				s += fmt.Sprintf(", %d delayed", f.Delayed)
			}
			parts = append(parts, s)
		}
		lines = append(lines, fmt.Sprintf("%-*s  %s", width, res.Label, strings.Join(parts, "; ")))
	}
	return lines
}

// LimitPeakLines are the lines of the section "Busiest key of each limit":
// for each all-of row whose limits count by different keys, each limit's
// busiest key in its own window and its ratio to that limit
// (sim.Result.LimitPeaks; docs/metrics.md); none when no row has them.
func LimitPeakLines(r *sim.Report) []string {
	width := 0
	for i := range r.Results {
		if r.Results[i].LimitPeaks != nil {
			width = max(width, len(r.Results[i].Label))
		}
	}
	var lines []string
	for i := range r.Results {
		res := &r.Results[i]
		if res.LimitPeaks == nil {
			continue
		}
		var parts []string
		for _, p := range res.LimitPeaks {
			if p.Count == 0 {
				parts = append(parts, p.Limit+": none admitted")
				continue
			}
			parts = append(parts, fmt.Sprintf("%s: %q %d in %s (%s)", p.Limit, p.Key, p.Count, FormatDuration(time.Duration(p.WindowNs)), FormatRatio(float64(p.Ratio))))
		}
		lines = append(lines, fmt.Sprintf("%-*s  %s", width, res.Label, strings.Join(parts, "; ")))
	}
	return lines
}
