package lessons

import (
	"strconv"
	"time"

	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/sim"
)

// nginxBurst: nginx's limit_req by default, with nodelay and with delay=N.
var nginxBurst = register(Lesson{
	order: 5,
	Name:  "nginx-burst",
	Title: "nginx limit_req with and without nodelay: the same admissions, different delays",
	Runs:  []RunSpec{{Scenario: "nginx-burst", Algorithms: "nginx-burst5,nginx-burst5-nodelay,nginx-burst5-delay2"}},
	explain: []string{
		"nginx's limit_req with rate={nginx_rate} and burst={nginx_burst}, as nginx runs it. Its burst " +
			"is a queue: by default nginx admits a burst but delays it, releasing one request " +
			"every {spacing}, the rate's pace. With nodelay it passes the same requests at once. " +
			"With delay=N it passes the first N at once and delays the rest.",
		"In the timeline, the three lines admit and reject exactly the same requests; only " +
			"the released lines differ, where the delayed requests reach the backend.",
	},
	shows: []string{
		"{admitted_sentence}",
		"By default nginx delayed {d_delayed} requests, by up to {d_max_delay}; with nodelay {n_waited}, so {n_peak} reached the backend within {short} against {d_peak} by default.",
		"With delay={delay2}, {d2_now} passed at once and {d2_delayed} waited, by up to {d2_max_delay}.",
	},
	next:    "ratesim compare nginx-burst adds a token bucket that admits the same requests as nodelay.",
	figures: nginxFigures,
})

func nginxFigures(runs []*Run) (map[string]string, error) {
	o := runs[0]
	v := policyFigures(o)
	short := shortWindow(o)
	var rs []*sim.Result
	for _, label := range []string{"nginx-burst5", "nginx-burst5-nodelay", "nginx-burst5-delay2"} {
		res, _, err := result(o, label)
		if err != nil {
			return nil, err
		}
		rs = append(rs, res)
	}
	d, n, d2 := rs[0], rs[1], rs[2]
	dp, err := peakOver(d, short, false)
	if err != nil {
		return nil, err
	}
	np, err := peakOver(n, short, false)
	if err != nil {
		return nil, err
	}
	v["admitted_sentence"] = sameAdmissions(o, rs)
	v["nginx_burst"] = paramString(d.Params["burst"])
	v["delay2"] = paramString(d2.Params["delay"])
	v["nginx_rate"] = v["limit"] + "r/s"
	if o.Report.Limit.PerNs == int64(time.Minute) {
		v["nginx_rate"] = v["limit"] + "r/m"
	}
	v["n_waited"] = "none waited"
	if n.Delayed > 0 {
		v["n_waited"] = plural(n.Delayed, "request") + " waited"
	}
	v["d_delayed"] = strconv.FormatInt(d.Delayed, 10)
	v["d_max_delay"] = output.FormatDuration(time.Duration(d.DelayNs.Max))
	v["n_peak"] = strconv.FormatInt(np.Count, 10)
	v["d_peak"] = strconv.FormatInt(dp.Count, 10)
	v["d2_now"] = strconv.FormatInt(d2.Accepted, 10)
	v["d2_delayed"] = strconv.FormatInt(d2.Delayed, 10)
	v["d2_max_delay"] = output.FormatDuration(time.Duration(d2.DelayNs.Max))
	return v, nil
}
