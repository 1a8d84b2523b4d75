package output

import (
	"fmt"

	"github.com/ratesim/ratesim/sim"
)

// zoned reports whether some result is an nginx row with a zone.
func zoned(r *sim.Report) bool {
	for i := range r.Results {
		if r.Results[i].ZoneEvictions != nil {
			return true
		}
	}
	return false
}

// ZoneLines returns one line per nginx row with a zone (`zone: SIZE`): the
// zone, the nodes it evicted by force when it was full, the requests it
// refused (nginx's 503) because no node could be allocated, and the most
// nodes it held; nil when no row has a zone, so that other output is
// unchanged.
func ZoneLines(r *sim.Report) []string {
	if !zoned(r) {
		return nil
	}
	width := 0
	for i := range r.Results {
		if r.Results[i].ZoneEvictions != nil {
			width = max(width, len(r.Results[i].Label))
		}
	}
	var lines []string
	for i := range r.Results {
		res := &r.Results[i]
		if res.ZoneEvictions == nil {
			continue
		}
		lines = append(lines, fmt.Sprintf("%-*s  zone %v: %s evicted, %s refused (503), at most %s at once",
			width, res.Label, res.Params["zone"], plural(*res.ZoneEvictions, "node"),
			plural(*res.ZoneRefusals, "request"), plural(res.Memory.KeysPeak, "node")))
	}
	return lines
}
