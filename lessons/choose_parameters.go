package lessons

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sweep"
)

// chooseLesson reads a sweep's heatmap with a class: which rate and burst
// keep the real clients of choose-burst under 1% rejected.
var chooseParameters = register(Lesson{
	order: 9,
	Name:  "choose-parameters",
	Title: "read a sweep's heatmap: the smallest burst that keeps real clients unaware of the limiter",
	Runs:  []RunSpec{{Scenario: "choose-burst", Algorithms: "gcra"}},
	explain: []string{
		"{clients} clients share an API whose limit is per client; their traffic follows a Zipf law, " +
			"so a few of them send most of it, in random clumps. Two abusers send far more. The question " +
			"is not what one burst does but which rate and burst to pick: the smallest burst that keeps " +
			"the real clients (user-*) under {target}% rejected.",
		"ratesim sweep runs gcra once per point of the grid: every rate of {rates} per second, times " +
			"every burst of {bursts}. The heatmap below is the share of the real clients' requests that " +
			"gcra rejected at each point, one row per rate and one column per burst. Read it from the " +
			"left: the first cell under {target}% in each row is the smallest burst that rate needs.",
	},
	shows: []string{
		"The best point: rate {best_rate} and burst {best_burst}, where {best_pct}% of the real clients' " +
			"requests were rejected. One burst less ({worse_burst}) rejects {worse_pct}%.",
		"At rate {low_rate}, {low_word}.",
		"The abusers are still held at the best point: {abuse_pct}% of their requests rejected, " +
			"because the burst is spent once and the rate does the rest.",
	},
	next: "ratesim sweep choose-burst with --vary limit.rate and --vary limit.burst, and --charts DIR, " +
		"draws this heatmap for every algorithm of the scenario; docs/sweep.md has the goal language.",
	figures: chooseFigures,
	picture: choosePicture,
	charts:  chooseCharts,
})

// chooseCharts draws the heatmap the lesson reads: the real clients'
// reject % at every rate and burst of the sweep, the best point ringed.
func chooseCharts(runs []*Run) []output.Chart {
	s, err := chooseSweep()
	if err != nil {
		return nil
	}
	goal, err := sweep.ParseGoal(chooseGoal, s.Fields)
	if err != nil {
		return nil
	}
	bests, err := goal.Rank(s)
	if err != nil {
		return nil
	}
	charts, err := sweep.Charts(s, goal, bests)
	if err != nil {
		return nil
	}
	for _, c := range charts {
		if strings.HasPrefix(c.Title, "reject_pct(key=user-*)") {
			return []output.Chart{c}
		}
	}
	return nil
}

// The lesson's grid and goal.
var (
	chooseRates  = "8,10,12"
	chooseBursts = "1..6:1"
	chooseTarget = "1"
	chooseGoal   = "minimize burst subject to reject_pct(key=user-*) <= " + chooseTarget

	chooseOnce  sync.Mutex
	chooseSwept *sweep.Sweep
)

// chooseSweep runs the lesson's sweep (once a process: it is the same
// every time).
func chooseSweep() (*sweep.Sweep, error) {
	chooseOnce.Lock()
	defer chooseOnce.Unlock()
	if chooseSwept != nil {
		return chooseSwept, nil
	}
	file, data, err := scenarios.ResolveText("choose-burst")
	if err != nil {
		return nil, err
	}
	f, err := scenarios.Decode(file, data)
	if err != nil {
		return nil, err
	}
	// the lesson reads gcra's figures only: each point runs gcra alone
	var gcra []scenarios.AlgEntry
	for _, a := range f.Algorithms {
		if a.LabelText() == "gcra" {
			gcra = append(gcra, a)
		}
	}
	if len(gcra) == 0 {
		return nil, fmt.Errorf("%s has no algorithm labelled gcra", file)
	}
	f.Algorithms = gcra
	base, err := sweep.BaseOf(f)
	if err != nil {
		return nil, err
	}
	var fields []sweep.Field
	for _, v := range []string{"limit.rate=" + chooseRates, "limit.burst=" + chooseBursts} {
		f, err := sweep.ParseVary(v)
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	goal, err := sweep.ParseGoal(chooseGoal, fields)
	if err != nil {
		return nil, err
	}
	s, err := sweep.Run(sweep.Options{Base: base, Fields: fields, KeyGlobs: append(goal.Globs(), "abuser-*")})
	if err != nil {
		return nil, err
	}
	chooseSwept = s
	return s, nil
}

// chooseFigures computes the lesson's figures from the sweep.
func chooseFigures(runs []*Run) (map[string]string, error) {
	s, err := chooseSweep()
	if err != nil {
		return nil, err
	}
	goal, err := sweep.ParseGoal(chooseGoal, s.Fields)
	if err != nil {
		return nil, err
	}
	bests, err := goal.Rank(s)
	if err != nil {
		return nil, err
	}
	var best *sweep.Choice
	for _, b := range bests {
		if b.Label == "gcra" {
			best = b.Best
		}
	}
	if best == nil {
		return nil, fmt.Errorf("no point keeps the real clients under %s%%", chooseTarget)
	}
	pct := func(i int, keys string) (string, error) {
		v, ok, err := sweep.Figure(s, "reject_pct(key="+keys+")", i, "gcra")
		if err != nil || !ok {
			return "", fmt.Errorf("point %d has no reject_pct for %s", i, keys)
		}
		return strconv.FormatFloat(v, 'f', 2, 64), nil
	}
	v := map[string]string{
		"clients":    strconv.FormatInt(runs[0].Report.Keys-2, 10),
		"target":     chooseTarget,
		"rates":      strings.Join(texts(s.Fields[0].Values), ", "),
		"bursts":     strings.Join(texts(s.Fields[1].Values), ", "),
		"best_rate":  best.Values[0].Text,
		"best_burst": best.Values[1].Text,
	}
	if v["best_pct"], err = pct(best.Index, "user-*"); err != nil {
		return nil, err
	}
	if v["abuse_pct"], err = pct(best.Index, "abuser-*"); err != nil {
		return nil, err
	}
	v["worse_burst"], v["worse_pct"] = "none", "-"
	if best.Index%len(s.Fields[1].Values) > 0 {
		v["worse_burst"] = s.Points[best.Index-1].Values[1].Text
		if v["worse_pct"], err = pct(best.Index-1, "user-*"); err != nil {
			return nil, err
		}
	}
	// the lowest rate: the smallest burst that meets the target, if any
	nb := len(s.Fields[1].Values)
	v["low_rate"] = s.Fields[0].Values[0].Text
	v["low_word"] = "no burst of the grid gets the real clients under " + chooseTarget + "%: the rate itself is too low for them"
	for i := range nb {
		f, ok, err := sweep.Figure(s, "reject_pct(key=user-*)", i, "gcra")
		if err == nil && ok && goalMet(f) {
			v["low_word"] = "burst " + s.Points[i].Values[1].Text + " is the smallest that does it"
			break
		}
	}
	return v, nil
}

func goalMet(pct float64) bool {
	t, _ := strconv.ParseFloat(chooseTarget, 64)
	return pct <= t
}

func texts(vs []sweep.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Text
	}
	return out
}

// choosePicture draws the heatmap as text: a row per rate, a column per
// burst, each cell the real clients' reject %, the best point in brackets.
func choosePicture(w io.Writer, runs []*Run, opt output.TermOptions) error {
	s, err := chooseSweep()
	if err != nil {
		return err
	}
	goal, err := sweep.ParseGoal(chooseGoal, s.Fields)
	if err != nil {
		return err
	}
	bests, err := goal.Rank(s)
	if err != nil {
		return err
	}
	best := -1
	for _, b := range bests {
		if b.Label == "gcra" && b.Best != nil {
			best = b.Best.Index
		}
	}
	nb := len(s.Fields[1].Values)
	var b strings.Builder
	b.WriteString("gcra: % of the real clients' requests rejected\n")
	fmt.Fprintf(&b, "%-12s", "rate\\burst")
	for _, v := range s.Fields[1].Values {
		fmt.Fprintf(&b, "%9s", v.Text)
	}
	b.WriteByte('\n')
	for r, rv := range s.Fields[0].Values {
		fmt.Fprintf(&b, "%-12s", rv.Text+"/s")
		for c := range nb {
			i := r*nb + c
			cell := "-"
			if f, ok, err := sweep.Figure(s, "reject_pct(key=user-*)", i, "gcra"); err == nil && ok {
				cell = strconv.FormatFloat(f, 'f', 2, 64)
			}
			if i == best {
				cell = "[" + cell + "]"
			}
			fmt.Fprintf(&b, "%9s", cell)
		}
		b.WriteByte('\n')
	}
	_, err = io.WriteString(w, b.String())
	return err
}
