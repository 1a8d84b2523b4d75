package lessons

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/sim"
)

// protectTheBackend measures the notes' comparison of the two buckets by what
// they let reach the backend: bursts on one side, a steady cadence "for
// systems that do not tolerate sudden variations of load" on the other.
var protectTheBackend = register(Lesson{
	order: 7,
	lead:  "backend", // the queue and the p99 the bursts make
	Name:  "protect-the-backend",
	Title: "what the limiter does to the backend: the token bucket's bursts queue, the leaky bucket's cadence does not",
	Runs:  []RunSpec{{Scenario: "protect-the-backend", Algorithms: ""}},
	explain: []string{
		"A limiter exists to protect a backend. Here the backend has {workers} workers serving " +
			"{service} on average, about {capacity} requests a second, with room for {queue} more " +
			"waiting; its clients give up after {timeout}. The traffic comes in bursts, behind a " +
			"limit of {limit} per {per} with bursts of {burst}.",
		"The token bucket lets a burst through at once while it has tokens, so the backend " +
			"receives the burst as it came: the queue fills, responses wait, and what finds the " +
			"queue full is shed (Service Unavailable). The leaky bucket makes the same requests wait their turn " +
			"in front of the backend instead, releasing one every {spacing}: the backend serves " +
			"them as they come. none is no limiter at all, for reference.",
		"Run it with --charts to see each backend's queue, its slowest responses and its goodput over time.",
	},
	shows: []string{
		"{p99_sentence}",
		"{shed_sentence}",
		"{cost_sentence}",
	},
	next:    "ratesim compare protect-the-backend --charts out/ draws the backend's health over time.",
	figures: protectFigures,
})

// protectFigures computes the protect-the-backend lesson's figures.
func protectFigures(runs []*Run) (map[string]string, error) {
	o := runs[0]
	v := policyFigures(o)
	be := o.Scenario.Backend
	if be == nil {
		return nil, fmt.Errorf("%s has no backend with workers", o.Scenario.Name)
	}
	v["workers"] = strconv.Itoa(be.Workers)
	v["service"] = output.FormatDuration(be.Service.Mean)
	v["capacity"] = strconv.FormatInt(int64(be.Workers)*int64(time.Second)/int64(be.Service.Mean), 10)
	v["queue"] = strconv.Itoa(be.Queue)
	v["timeout"] = output.FormatDuration(be.Timeout)
	get := func(label string) (*sim.Result, error) {
		res, _, err := result(o, label)
		if err == nil && res.Backend == nil {
			err = fmt.Errorf("%s has no backend", label)
		}
		return res, err
	}
	none, err := get("none")
	if err != nil {
		return nil, err
	}
	tb, err := get("token-bucket")
	if err != nil {
		return nil, err
	}
	lb, err := get("leaky-bucket")
	if err != nil {
		return nil, err
	}
	// to the millisecond, for a sentence (the table has them exact)
	p99 := func(r *sim.Result) string {
		return output.FormatDuration(time.Duration(r.Backend.ResponseNs.P99).Round(time.Millisecond))
	}
	v["p99_sentence"] = "The backend's p99 response time was " + p99(tb) + " behind token-bucket (" + p99(none) +
		" with no limiter) and " + p99(lb) + " behind leaky-bucket."
	v["shed_sentence"] = "Behind token-bucket its full queue shed " + strconv.FormatInt(tb.Backend.Shed, 10) +
		" requests (" + strconv.FormatInt(none.Backend.Shed, 10) + " with no limiter); behind leaky-bucket " +
		strconv.FormatInt(lb.Backend.Shed, 10) + ". Goodput, the requests answered without error in time, was " +
		strconv.FormatInt(tb.Backend.Goodput, 10) + " behind token-bucket and " + strconv.FormatInt(lb.Backend.Goodput, 10) +
		" behind leaky-bucket."
	v["cost_sentence"] = "The leaky bucket's price is the wait in front of the backend: it delayed " +
		strconv.FormatInt(lb.Delayed, 10) + " requests, by up to " + output.FormatDuration(time.Duration(lb.DelayNs.Max)) +
		", and " + strconv.FormatInt(lb.Backend.TimedOut, 10) + " of its clients gave up before their answer came, " +
		"since the wait counts against their " + v["timeout"] + "."
	return v, nil
}
