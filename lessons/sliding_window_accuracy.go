package lessons

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/sim"
)

// slidingWindowAccuracy: how close the two-counter approximation comes to
// the exact log.
var slidingWindowAccuracy = register(Lesson{
	order: 3,
	Name:  "sliding-window-accuracy",
	Title: "how close the two-counter sliding window comes to the exact sliding log",
	Runs:  []RunSpec{{Scenario: "sliding-window-accuracy", Algorithms: "fixed-window,sliding-window,sliding-log"}},
	explain: []string{
		"sliding-log is exact but keeps one entry per admitted request. sliding-window " +
			"(Cloudflare's approximation) keeps only two counters, this window's and the last " +
			"one's, and weighs the last one by how much of it still overlaps the sliding {per}.",
		"The traffic is a burst on each side of a boundary, then a steady stream above the " +
			"limit of {limit} per {per}. Look at the boundary: the approximation refuses most " +
			"of what fixed-window lets through. Then look at the steady part: it admits " +
			"almost what the log admits, sometimes a little less, sometimes a little more.",
	},
	shows: []string{
		"{side_by_side}",
		"{closeness}",
	},
	next:    "ratesim compare sliding-window-accuracy --decisions d.csv lists every decision.",
	figures: accuracyFigures,
})

func accuracyFigures(runs []*Run) (map[string]string, error) {
	o := runs[0]
	v := policyFigures(o)
	w := time.Duration(o.Report.Limit.PerNs)
	var rs []*sim.Result
	var peaks []sim.Peak
	for _, label := range []string{"fixed-window", "sliding-window", "sliding-log"} {
		res, _, err := result(o, label)
		if err != nil {
			return nil, err
		}
		p, err := peakOver(res, w, false)
		if err != nil {
			return nil, err
		}
		rs, peaks = append(rs, res), append(peaks, p)
	}
	table := [][]string{{"", "admitted", "rejected", "busiest " + perWord(w)}}
	for i, res := range rs {
		table = append(table, []string{res.Label, strconv.FormatInt(admitted(res), 10),
			strconv.FormatInt(res.Rejected, 10), fmt.Sprintf("%d (%s)", peaks[i].Count, ratio(peaks[i]))})
	}
	v["side_by_side"] = "Side by side:\n" + strings.Join(columns(table, "  "), "\n")
	sw, sl := rs[1], rs[2]
	diff := admitted(sw) - admitted(sl)
	switch {
	case diff == 0:
		v["closeness"] = fmt.Sprintf("sliding-window admitted exactly as many requests as the exact log: %d.", admitted(sl))
	default:
		word := "fewer"
		if diff > 0 {
			word = "more"
		}
		pct := new(big.Rat).SetFrac(big.NewInt(abs(diff)*100), big.NewInt(max(admitted(sl), 1)))
		v["closeness"] = fmt.Sprintf("sliding-window admitted %d requests, %d %s than the exact log's %d (%s%%); in its busiest %s it let %d through against the log's %d and fixed-window's %d.",
			admitted(sw), abs(diff), word, admitted(sl), pct.FloatString(1), perWord(w), peaks[1].Count, peaks[2].Count, peaks[0].Count)
	}
	return v, nil
}
