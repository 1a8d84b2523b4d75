package lessons

import (
	"strconv"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/sim"
)

// doubleBurst: a fixed window lets twice the limit through where two
// windows meet; the sliding log does not.
var doubleBurst = register(Lesson{
	order: 1,
	Name:  "double-burst",
	Title: "a fixed window lets twice the limit through at a window boundary",
	Runs:  []RunSpec{{Scenario: "double-burst", Algorithms: "fixed-window,sliding-log"}},
	explain: []string{
		"The limit is {limit} requests per {per}. A client sends a burst just before " +
			"the window boundary at {boundary} and a second burst just after it.",
		"fixed-window keeps one counter per window and starts again from zero at every " +
			"boundary, so it admits both bursts: each fits its own window, yet together they " +
			"arrive within much less than a {per}. sliding-log remembers every admitted " +
			"request of the last {per} wherever the boundaries fall, so it refuses the second burst.",
		"In the timeline, look at the boundary column: on the fixed-window line the marks " +
			"go on admitting across it; on the sliding-log line they turn into rejections.",
	},
	shows: []string{
		"fixed-window admitted {fw_peak} requests {fw_when}: {fw_ratio} the limit of {limit} per {per_word}.",
		"sliding-log admitted at most {sl_peak} in any {per_word} ({sl_ratio} the limit) and rejected {sl_rejected} of the {offered} requests.",
	},
	next:    "ratesim compare double-burst shows every algorithm on this traffic.",
	figures: doubleBurstFigures,
})

func doubleBurstFigures(runs []*Run) (map[string]string, error) {
	o := runs[0]
	v := policyFigures(o)
	w := time.Duration(o.Report.Limit.PerNs)
	fw, fwd, err := result(o, "fixed-window")
	if err != nil {
		return nil, err
	}
	sl, _, err := result(o, "sliding-log")
	if err != nil {
		return nil, err
	}
	fp, err := peakOver(fw, w, false)
	if err != nil {
		return nil, err
	}
	sp, err := peakOver(sl, w, false)
	if err != nil {
		return nil, err
	}
	start := time.Duration(fp.StartNs)
	v["fw_peak"] = strconv.FormatInt(fp.Count, 10)
	v["fw_ratio"] = ratio(fp)
	v["fw_when"] = "in the " + perWord(w) + " from " + seconds(start)
	if first, last, ok := releasesIn(fwd, start, start+w); ok {
		v["fw_when"] = "between " + seconds(first) + " and " + seconds(last)
	}
	// the boundary inside the fixed window's busiest interval
	v["boundary"] = seconds(start - start%w + w)
	v["sl_peak"] = strconv.FormatInt(sp.Count, 10)
	v["sl_ratio"] = ratio(sp)
	v["sl_rejected"] = strconv.FormatInt(sl.Rejected, 10)
	v["offered"] = strconv.FormatInt(sl.Offered, 10)
	return v, nil
}

// releasesIn is the first and last release to the backend of an admitted
// decision in [from, to).
func releasesIn(ds []sim.Decision, from, to time.Duration) (first, last time.Duration, ok bool) {
	for i := range ds {
		if ds[i].Verdict == algorithms.Reject {
			continue
		}
		at := ds[i].Time + ds[i].Delay
		if at < from || at >= to {
			continue
		}
		if !ok || at < first {
			first = at
		}
		if !ok || at > last {
			last = at
		}
		ok = true
	}
	return first, last, ok
}
