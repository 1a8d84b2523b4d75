package lessons

import (
	"slices"
	"strconv"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/sim"
)

// tokenVsLeaky: the meter and the queue admit the same requests; they
// differ in when those reach the backend.
var tokenVsLeaky = register(Lesson{
	order: 2,
	Name:  "token-vs-leaky",
	Title: "burst versus smoothing: the token bucket lets a burst through, the leaky bucket spaces it out",
	Runs:  []RunSpec{{Scenario: "token-vs-leaky", Algorithms: "token-bucket,leaky-bucket"}},
	explain: []string{
		"Both buckets enforce {limit} requests per {per} with a burst of {burst}, and they " +
			"admit the same requests. What differs is when those requests reach the backend.",
		"The token bucket is a meter: while it has tokens, requests pass at once, so a burst " +
			"reaches the backend as a burst. The leaky bucket is a queue: it lets one request " +
			"out every {spacing} and makes the others wait their turn.",
		"In the timeline, compare the two lines at each burst, and the released line under " +
			"leaky-bucket: the requests it delayed leave one by one, evenly spaced.",
	},
	shows: []string{
		"{admitted_sentence}",
		"token-bucket sent {tb_peak} requests to the backend within {short} (starting at {tb_peak_at}): {tb_ratio} the pace of {limit_short} per {short}.",
		"leaky-bucket never sent more than {lb_peak} within {short}{lb_gap}: it delayed {lb_delayed} requests, by up to {lb_max_delay}.",
	},
	next:    "ratesim compare token-vs-leaky adds gcra, the token bucket's twin.",
	figures: tokenVsLeakyFigures,
})

func tokenVsLeakyFigures(runs []*Run) (map[string]string, error) {
	o := runs[0]
	v := policyFigures(o)
	short := shortWindow(o)
	tb, _, err := result(o, "token-bucket")
	if err != nil {
		return nil, err
	}
	lb, lbd, err := result(o, "leaky-bucket")
	if err != nil {
		return nil, err
	}
	tp, err := peakOver(tb, short, false)
	if err != nil {
		return nil, err
	}
	lp, err := peakOver(lb, short, false)
	if err != nil {
		return nil, err
	}
	v["admitted_sentence"] = sameAdmissions(o, []*sim.Result{tb, lb})
	v["tb_peak"] = strconv.FormatInt(tp.Count, 10)
	v["tb_peak_at"] = seconds(time.Duration(tp.StartNs))
	v["tb_ratio"] = ratio(tp)
	v["lb_peak"] = strconv.FormatInt(lp.Count, 10)
	v["lb_ratio"] = ratio(lp)
	v["lb_gap"] = ""
	if gap, ok := minGap(lbd); ok {
		v["lb_gap"] = ", and never two less than " + output.FormatDuration(gap) + " apart"
	}
	v["lb_delayed"] = strconv.FormatInt(lb.Delayed, 10)
	v["lb_max_delay"] = output.FormatDuration(time.Duration(lb.DelayNs.Max))
	return v, nil
}

// minGap is the shortest time between two releases to the backend of
// admitted decisions; false with fewer than two.
func minGap(ds []sim.Decision) (time.Duration, bool) {
	var at []time.Duration
	for i := range ds {
		if ds[i].Verdict != algorithms.Reject {
			at = append(at, ds[i].Time+ds[i].Delay)
		}
	}
	if len(at) < 2 {
		return 0, false
	}
	slices.Sort(at)
	gap := at[1] - at[0]
	for i := 2; i < len(at); i++ {
		gap = min(gap, at[i]-at[i-1])
	}
	return gap, true
}
