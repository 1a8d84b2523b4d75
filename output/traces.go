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
		for _, b := range t.FirstBad {
			out = append(out, "  "+oneLine(b))
		}
	}
	return out
}
