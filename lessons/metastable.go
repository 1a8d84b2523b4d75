package lessons

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/sim"
)

// metastableLesson is a retry-driven metastable failure (Huang et al.,
// OSDI 2022, after the happy-simulator example): a surge ends, the
// overload it caused does not, because the retries of the requests that
// time out keep the backend above its capacity; and what gets it out: a
// limiter in front of the backend, or a retry budget in the clients, where
// jittered backoff does not.
var metastable = register(Lesson{
	order: 8,
	lead:  "backend", // the goodput that does not come back
	Name:  "metastable",
	Title: "a retry-driven metastable failure: the surge ends, the overload does not; what a limiter, jitter and a retry budget do",
	Runs: []RunSpec{
		{Scenario: "metastable-retry", Algorithms: ""},
		{Scenario: "metastable-retry-jitter", Algorithms: "none"},
		{Scenario: "metastable-retry-budget", Algorithms: "none"},
	},
	explain: []string{
		"One worker serves {service} on average, {capacity} requests a second, and clients send " +
			"{load} a second at a constant rate: {load_pct} of its capacity, a state that holds. Clients " +
			"give up after {timeout} and retry at once, up to {retries} times. From {surge_from} to " +
			"{surge_to} a surge brings {surge_rate} a second, {surge_x} times what the worker can serve.",
		"The surge fills the queue, so requests wait longer than their clients' {timeout}: they " +
			"time out and are sent again, and the worker still serves the copies whose clients have " +
			"gone. When the surge ends the load should fall back to {load_pct}, but every request now " +
			"times out and comes back {attempts} times: the retries alone keep the worker overloaded. " +
			"That is a metastable failure: the trigger is gone, the failure sustains itself.",
		"The same traffic runs behind each limiter of the scenario, and twice more with no " +
			"limiter: once with clients that back off with full jitter, once with clients that keep " +
			"a retry budget (gRPC's retry throttling: {budget_tokens} tokens, a failure takes one, " +
			"a success gives back {budget_ratio}, no retry at half or less).",
	},
	shows: []string{
		"{none_sentence}",
		"{limiters_sentence}",
		"{stuck_sentence}",
		"{jitter_sentence}",
		"{budget_sentence}",
	},
	next: "ratesim compare metastable-retry --charts out/ draws each backend's queue, p99 and goodput over " +
		"time, the surge shaded; docs/backend.md explains why the service is lognormal.",
	figures: metastableFigures,
	picture: metastablePicture,
})

// metastableRows are the rows the lesson's picture and sentences follow:
// the run's result and the name it goes by.
type metastableRow struct {
	name string
	res  *sim.Result
}

// metastableRowsOf returns none, then the limiters of the first run, then
// none with jitter and none with a budget.
func metastableRowsOf(runs []*Run) ([]metastableRow, error) {
	if len(runs) != 3 {
		return nil, fmt.Errorf("want 3 runs, have %d", len(runs))
	}
	var rows []metastableRow
	for i := range runs[0].Report.Results {
		r := &runs[0].Report.Results[i]
		if r.Backend == nil {
			return nil, fmt.Errorf("%s has no backend", r.Label)
		}
		rows = append(rows, metastableRow{r.Label, r})
	}
	for i, name := range []string{"none + jitter", "none + budget"} {
		r, _, err := result(runs[i+1], "none")
		if err != nil {
			return nil, err
		}
		if r.Backend == nil {
			return nil, fmt.Errorf("%s: none has no backend", runs[i+1].Report.Scenario)
		}
		rows = append(rows, metastableRow{name, r})
	}
	return rows, nil
}

// surgeOf is the trigger's window of a result.
func surgeOf(r *sim.Result) (backend.FaultWindow, error) {
	for _, f := range r.Backend.FaultWindows {
		if f.Type == backend.Trigger {
			return f, nil
		}
	}
	return backend.FaultWindow{}, fmt.Errorf("%s: no trigger in its backend", r.Label)
}

// goodputIn sums a result's goodput over the buckets wholly in [from, to).
func goodputIn(r *sim.Result, from, to int64) int64 {
	s := &r.Backend.Series
	var n int64
	for i, g := range s.Goodput {
		start := s.StartNs + int64(i)*s.BucketNs
		if start >= from && start+s.BucketNs <= to {
			n += g
		}
	}
	return n
}

// cameBack says whether and when a result's goodput came back after the
// surge: "never came back", "came back at once", "came back after 2s".
func cameBack(r *sim.Result) string {
	if r.Backend.RecoveredNs == nil {
		return "never came back"
	}
	return "came back " + recoveredText(r)
}

// recoveredText is when a result's goodput came back after the surge.
func recoveredText(r *sim.Result) string {
	if r.Backend.RecoveredNs == nil {
		return "never"
	}
	if *r.Backend.RecoveredNs == 0 {
		return "at once"
	}
	return "after " + output.FormatDuration(time.Duration(*r.Backend.RecoveredNs))
}

// metastableFigures computes the lesson's figures from its three runs.
func metastableFigures(runs []*Run) (map[string]string, error) {
	o := runs[0]
	v := policyFigures(o)
	be := o.Scenario.Backend
	if be == nil || be.Service.Mean <= 0 {
		return nil, fmt.Errorf("%s has no backend with workers", o.Scenario.Name)
	}
	rows, err := metastableRowsOf(runs)
	if err != nil {
		return nil, err
	}
	none := rows[0].res
	if rows[0].name != "none" {
		return nil, fmt.Errorf("%s: the first row is %s, not none", o.Scenario.Name, rows[0].name)
	}
	surge, err := surgeOf(none)
	if err != nil {
		return nil, err
	}
	retry := o.Scenario.Retries[0]
	budget := runs[2].Scenario.Retries[0].Budget
	if budget.MaxTokens == 0 {
		return nil, fmt.Errorf("%s has no retry budget", runs[2].Scenario.Name)
	}
	end := o.Report.StartNs + o.Report.DurationNs
	v["service"] = output.FormatDuration(be.Service.Mean)
	v["capacity"] = strconv.FormatInt(int64(be.Workers)*int64(time.Second)/int64(be.Service.Mean), 10)
	v["timeout"] = output.FormatDuration(be.Timeout)
	v["retries"] = strconv.Itoa(retry.MaxAttempts - 1)
	v["attempts"] = strconv.Itoa(retry.MaxAttempts)
	v["surge_from"] = output.FormatDuration(time.Duration(surge.StartNs))
	v["surge_to"] = output.FormatDuration(time.Duration(surge.EndNs))
	v["budget_tokens"] = strconv.FormatInt(budget.MaxTokens, 10)
	v["budget_ratio"] = strconv.FormatFloat(float64(budget.RatioMilli)/1000, 'f', -1, 64)
	// the load before the surge and during it, from the offered series
	rate := func(from, to int64) string {
		var n int64
		s := &none.Series
		for i, c := range s.Offered {
			start := s.StartNs + int64(i)*s.BucketNs
			if start >= from && start < to {
				n += c
			}
		}
		return strconv.FormatInt(n*int64(time.Second)/(to-from), 10)
	}
	v["load"] = rate(o.Report.StartNs, surge.StartNs)
	v["surge_rate"] = rate(surge.StartNs, surge.EndNs)
	load, _ := strconv.ParseInt(v["load"], 10, 64)
	peak, _ := strconv.ParseInt(v["surge_rate"], 10, 64)
	capacity := int64(be.Workers) * int64(time.Second) / int64(be.Service.Mean)
	v["load_pct"] = strconv.FormatInt(100*load/capacity, 10) + "%"
	v["surge_x"] = strconv.FormatFloat(float64(peak)/float64(capacity), 'f', -1, 64)
	before, after := output.FormatDuration(time.Duration(surge.StartNs-o.Report.StartNs)), output.FormatDuration(time.Duration(end-surge.EndNs))
	v["none_sentence"] = fmt.Sprintf("With no limiter the backend answered %d requests in time in the %s before the surge and %d in the %s after it: "+
		"goodput %s. %d requests made %d attempts, and the worker spent %s on requests whose clients had gone.",
		goodputIn(none, o.Report.StartNs, surge.StartNs), before, goodputIn(none, surge.EndNs, end), after,
		cameBack(none), none.Offered, none.Attempts, output.FormatDuration(time.Duration(none.Backend.WastedNs)))
	var good, stuck []string
	for _, r := range rows[1 : len(rows)-2] {
		if r.res.Backend.RecoveredNs != nil {
			good = append(good, fmt.Sprintf("%s %s (%d answered in time after the surge)", r.name, recoveredText(r.res), goodputIn(r.res, surge.EndNs, end)))
			continue
		}
		s := r.name
		if l := r.res.Backend.Limit; l != nil {
			s += fmt.Sprintf(" (its limit never below %d in flight)", l.Min)
		}
		stuck = append(stuck, s)
	}
	v["limiters_sentence"] = "Behind a limiter that keeps the queue short, goodput came back: " + output.Join(good) + "."
	if len(good) == 0 {
		v["limiters_sentence"] = "No limiter of the run brought goodput back."
	}
	v["stuck_sentence"] = "Not every limiter does: goodput never came back behind " + output.Join(stuck) +
		". A concurrency limit protects only if it keeps the queue shorter than the clients' " + v["timeout"] +
		" of service: with one worker at " + v["service"] + ", about " +
		strconv.FormatInt(int64(be.Timeout/be.Service.Mean), 10) + " in flight."
	if len(stuck) == 0 {
		v["stuck_sentence"] = "Every limiter of the run brought goodput back."
	}
	jit, bud := rows[len(rows)-2].res, rows[len(rows)-1].res
	v["jitter_sentence"] = fmt.Sprintf("Jitter alone did not: with full-jitter backoff and no limiter, goodput %s "+
		"(%d answered in time after the surge, %d attempts). Jitter spreads the retries; it does not make fewer of them.",
		cameBack(jit), goodputIn(jit, surge.EndNs, end), jit.Attempts)
	v["budget_sentence"] = fmt.Sprintf("A retry budget did, with no limiter: the budget refused %d retries, the load fell back "+
		"to what the clients send, and goodput came back %s, once the backlog of the surge had drained "+
		"(%d answered in time after the surge, %d attempts).",
		bud.RetriesThrottled, strings.TrimPrefix(recoveredText(bud), "after "), goodputIn(bud, surge.EndNs, end), bud.Attempts)
	if bud.Backend.RecoveredNs == nil {
		v["budget_sentence"] = fmt.Sprintf("A retry budget alone did not bring goodput back within the run (%d retries refused).", bud.RetriesThrottled)
	} else if *bud.Backend.RecoveredNs > 0 {
		v["budget_sentence"] = strings.Replace(v["budget_sentence"], "came back "+strings.TrimPrefix(recoveredText(bud), "after "),
			"came back "+output.FormatDuration(time.Duration(*bud.Backend.RecoveredNs))+" after the surge", 1)
	}
	return v, nil
}

// metastablePicture prints the goodput of every row per step of the run,
// as a table: a number per 20 seconds, in answers per second, the surge
// marked.
func metastablePicture(w io.Writer, runs []*Run, _ output.TermOptions) error {
	rows, err := metastableRowsOf(runs)
	if err != nil {
		return err
	}
	surge, err := surgeOf(rows[0].res)
	if err != nil {
		return err
	}
	o := runs[0]
	step := int64(20 * time.Second)
	var b strings.Builder
	fmt.Fprintf(&b, "Goodput (answered in time, per second) every %s; * marks the surge:\n", output.FormatDuration(time.Duration(step)))
	head := fmt.Sprintf("%-14s", "")
	for t := o.Report.StartNs; t < o.Report.StartNs+o.Report.DurationNs; t += step {
		mark := " "
		if t < surge.EndNs && t+step > surge.StartNs {
			mark = "*"
		}
		head += fmt.Sprintf("%5s%s", output.FormatDuration(time.Duration(t-o.Report.StartNs)), mark)
	}
	b.WriteString(strings.TrimRight(head, " ") + "\n")
	for _, r := range rows {
		line := fmt.Sprintf("%-14s", r.name)
		for t := o.Report.StartNs; t < o.Report.StartNs+o.Report.DurationNs; t += step {
			g := goodputIn(r.res, t, t+step)
			line += fmt.Sprintf("%5s ", strconv.FormatFloat(float64(g)*float64(time.Second)/float64(step), 'f', 1, 64))
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}
