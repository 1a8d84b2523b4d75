package lessons

import (
	"fmt"
	"io"
	"math/big"
	"strconv"
	"time"

	"github.com/ratesim/ratesim/output"
)

// retryStorm: the herd of clients that honour Retry-After, against the
// same clients with full jitter (two runs).
var retryStorm = register(Lesson{
	order: 4,
	lead:  "multiples", // the rejections of each wave come back with the next
	Name:  "retry-storm",
	Title: "the herd: clients that honour Retry-After return together; jitter spreads them",
	Runs:  []RunSpec{{Scenario: "retry-storm", Algorithms: "fixed-window"}, {Scenario: "retry-storm-jitter", Algorithms: "fixed-window"}},
	explain: []string{
		"A cron job on many hosts calls one API at the start of every {per}, more often than " +
			"the limit of {limit} per {per} allows. The refused clients retry.",
		"In the first run they honour Retry-After, rounded to whole seconds as the header " +
			"carries them: they all come back at the same instant, the next boundary, together " +
			"with the next round of the cron job, so the crowd at each boundary grows. In the " +
			"second run the same clients back off exponentially with full jitter instead: " +
			"each waits a random time, and the retries spread across the window.",
		"Below, each line shows the attempts reaching the limiter. Both runs spike at every " +
			"boundary, where the cron job fires; with Retry-After the spikes grow as the " +
			"retries pile onto them, with jitter they stay low because the retries spread in between.",
	},
	shows: []string{
		"With Retry-After, the busiest {short} brought {ra_peak} attempts to the limiter (at {ra_peak_at}): {ra_ratio} the limit of {limit_short} per {short}.",
		"With full jitter, the busiest {short} brought {j_peak} ({j_ratio}): {herd_factor}.",
		"{admitted_sentence}",
		"{retries_sentence}",
	},
	next:    "ratesim compare retry-storm and ratesim compare retry-storm-jitter show every algorithm.",
	figures: retryStormFigures,
	picture: retryStormPicture,
})

func retryStormFigures(runs []*Run) (map[string]string, error) {
	if len(runs) != 2 {
		return nil, fmt.Errorf("want two runs, have %d", len(runs))
	}
	v := policyFigures(runs[0])
	short := shortWindow(runs[0])
	ra, _, err := result(runs[0], "fixed-window")
	if err != nil {
		return nil, err
	}
	j, _, err := result(runs[1], "fixed-window")
	if err != nil {
		return nil, err
	}
	rp, err := peakOver(ra, short, true)
	if err != nil {
		return nil, err
	}
	jp, err := peakOver(j, short, true)
	if err != nil {
		return nil, err
	}
	v["ra_peak"] = strconv.FormatInt(rp.Count, 10)
	v["ra_peak_at"] = seconds(time.Duration(rp.StartNs))
	v["ra_ratio"] = ratio(rp)
	v["j_peak"] = strconv.FormatInt(jp.Count, 10)
	v["j_ratio"] = ratio(jp)
	switch {
	case jp.Count < rp.Count:
		f := new(big.Rat).SetFrac(big.NewInt(rp.Count), big.NewInt(max(jp.Count, 1)))
		v["herd_factor"] = f.FloatString(1) + " times fewer"
	case jp.Count == rp.Count:
		v["herd_factor"] = "as many"
	default:
		v["herd_factor"] = "more, not fewer"
	}
	if admitted(ra) == admitted(j) {
		v["admitted_sentence"] = fmt.Sprintf("Both runs admitted %d requests: the limit decides how much gets through, the clients only how hard they knock.", admitted(ra))
	} else {
		v["admitted_sentence"] = fmt.Sprintf("The limiter admitted %d requests with Retry-After and %d with jitter.", admitted(ra), admitted(j))
	}
	gaveUp := fmt.Sprintf("%d and %d requests gave up", ra.GaveUp, j.GaveUp)
	if ra.GaveUp == j.GaveUp {
		gaveUp = fmt.Sprintf("%d requests gave up in each", ra.GaveUp)
	}
	v["retries_sentence"] = fmt.Sprintf("The clients made %d retries with Retry-After and %d with jitter; %s.",
		ra.Attempts-ra.Offered, j.Attempts-j.Offered, gaveUp)
	return v, nil
}

// retryStormPicture draws the attempts per short window of both runs.
func retryStormPicture(w io.Writer, runs []*Run, opt output.TermOptions) error {
	var rows []output.StripRow
	var from, to time.Duration
	for i, o := range runs {
		res, _, err := result(o, "fixed-window")
		if err != nil {
			return err
		}
		s := res.Series
		label := "Retry-After"
		if i == 1 {
			label = "full jitter"
		}
		rows = append(rows, output.StripRow{Label: label, StartNs: s.StartNs, BucketNs: s.BucketNs, Counts: s.Attempts})
		end := time.Duration(s.StartNs + int64(len(s.Attempts))*s.BucketNs)
		if i == 0 || time.Duration(s.StartNs) < from {
			from = time.Duration(s.StartNs)
		}
		to = max(to, end)
	}
	return output.TermStrip(w, rows, from, to, "attempts", opt)
}
