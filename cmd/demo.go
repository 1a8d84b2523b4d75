package cmd

import (
	"bytes"
	"fmt"
	"io"
	"math/big"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
	"github.com/spf13/cobra"
)

// demoFlags are the options of `ratesim demo`.
type demoFlags struct {
	charts   chartFlags
	timeline timelineFlags
}

func newDemoCmd() *cobra.Command {
	var f demoFlags
	c := &cobra.Command{
		Use:   "demo [LESSON]",
		Short: "Guided lessons for a class: what to look for, the timeline, the numbers",
		Long: `Without an argument, lists the lessons. With one, runs the lesson's built-in
scenario and prints what to look for in plain words, the timeline of the run
and the numbers that prove the point, computed from the run. With --charts
DIR it also writes the run's charts there (a lesson of two runs writes each
run's charts into a directory named after its scenario).`,
		Example: `  ratesim demo
  ratesim demo double-burst
  ratesim demo double-burst --charts out/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return listLessons(c.OutOrStdout())
			}
			l, ok := lessonNamed(args[0])
			if !ok {
				return usagef("no lesson %q (lessons: %s)", args[0], strings.Join(lessonNames(), ", "))
			}
			return runLesson(c.OutOrStdout(), c.ErrOrStderr(), l, scenarios.Builtin, f)
		},
	}
	fl := c.Flags()
	addChartFlags(fl, &f.charts)
	addTimelineFlags(fl, &f.timeline)
	return c
}

// lesson is one guided lesson. Its words live here; every number it
// prints comes from the run, through the {placeholders} its figures fill.
type lesson struct {
	name  string
	title string // the one line of the list
	runs  []lessonRun
	// explain is what to look for, one paragraph per string.
	explain []string
	// shows are the sentences that prove the point, one a line.
	shows []string
	// next suggests what to run after.
	next string
	// figures computes the placeholders from the runs, in the order of
	// runs.
	figures func(runs []*outcome) (map[string]string, error)
	// picture draws the runs; nil draws the timeline of the first.
	picture func(w io.Writer, runs []*outcome, opt output.TermOptions) error
	// load finds the runs' scenarios by name; nil: the built-in ones.
	load func(name string) (*scenarios.Scenario, error)
	// baseline, when set, holds every row of each run against this row
	// (--baseline).
	baseline string
	// charts draws the lesson's own charts of its runs, written with
	// --charts into its directory beside the runs' charts; nil: none.
	charts func(runs []*outcome) []output.Chart
}

// lessonRun is one built-in scenario a lesson runs, with the algorithms
// it shows (comma-separated labels; "" for all).
type lessonRun struct {
	scenario, algorithms string
}

// lessons are the lessons in the order `ratesim demo` lists them.
var lessons = []lesson{
	{
		name:  "double-burst",
		title: "a fixed window lets twice the limit through at a window boundary",
		runs:  []lessonRun{{"double-burst", "fixed-window,sliding-log"}},
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
	},
	{
		name:  "token-vs-leaky",
		title: "burst versus smoothing: the token bucket lets a burst through, the leaky bucket spaces it out",
		runs:  []lessonRun{{"token-vs-leaky", "token-bucket,leaky-bucket"}},
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
	},
	{
		name:  "sliding-window-accuracy",
		title: "how close the two-counter sliding window comes to the exact sliding log",
		runs:  []lessonRun{{"sliding-window-accuracy", "fixed-window,sliding-window,sliding-log"}},
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
	},
	{
		name:  "retry-storm",
		title: "the herd: clients that honour Retry-After return together; jitter spreads them",
		runs:  []lessonRun{{"retry-storm", "fixed-window"}, {"retry-storm-jitter", "fixed-window"}},
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
	},
	{
		name:  "nginx-burst",
		title: "nginx limit_req with and without nodelay: the same admissions, different delays",
		runs:  []lessonRun{{"nginx-burst", "nginx-burst5,nginx-burst5-nodelay,nginx-burst5-delay2"}},
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
	},
	flexibleLesson,
	protectLesson,
	metastableLesson,
	accuracyOnRealTrafficLesson,
}

func lessonNamed(name string) (*lesson, bool) {
	for i := range lessons {
		if lessons[i].name == name {
			return &lessons[i], true
		}
	}
	return nil, false
}

func lessonNames() []string {
	var names []string
	for _, l := range lessons {
		names = append(names, l.name)
	}
	return names
}

func listLessons(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, l := range lessons {
		fmt.Fprintf(tw, "%s\t%s\n", l.name, l.title)
	}
	return tw.Flush()
}

// runLesson runs the lesson's scenarios (load finds them by name) and
// prints it.
func runLesson(stdout, stderr io.Writer, l *lesson, load func(string) (*scenarios.Scenario, error), f demoFlags) error {
	var runs []*outcome
	if l.load != nil {
		load = l.load
	}
	for _, lr := range l.runs {
		sc, err := load(lr.scenario)
		if err != nil {
			return err
		}
		cf := compareFlags{format: "table", algorithms: lr.algorithms, top: sim.DefaultTopKeys, charts: f.charts,
			baseline: l.baseline}
		if len(l.runs) > 1 && f.charts.dir != "" {
			cf.charts.dir = filepath.Join(f.charts.dir, lr.scenario)
		}
		o, err := runScenario(stderr, sc, cf)
		if err != nil {
			return err
		}
		runs = append(runs, o)
	}
	text, err := lessonText(l, runs)
	if err != nil {
		return err
	}
	width := min(termWidth(stdout), 80)
	var buf bytes.Buffer
	buf.WriteString(wrap(text.head, width))
	if !f.timeline.off {
		buf.WriteByte('\n')
		opt := termOptions(stdout, f.timeline)
		draw := l.picture
		if draw == nil {
			draw = func(w io.Writer, runs []*outcome, opt output.TermOptions) error {
				if runs[0].decisions == nil {
					return nil
				}
				return output.TermTimeline(w, runs[0].rep, runs[0].decisions, opt)
			}
		}
		if err := draw(&buf, runs, opt); err != nil {
			return err
		}
	}
	buf.WriteString("\nWhat the run shows:\n")
	for _, s := range text.shows {
		lines := strings.Split(s, "\n")
		buf.WriteString(wrapIndent(lines[0], width, "- ", "  "))
		for _, l := range lines[1:] { // a table, as laid out
			buf.WriteString("  " + l + "\n")
		}
	}
	buf.WriteString("\n" + wrap(l.next, width))
	if _, err := stdout.Write(buf.Bytes()); err != nil {
		return err
	}
	for i, lr := range l.runs {
		cf := f.charts
		if len(l.runs) > 1 && cf.dir != "" {
			cf.dir = filepath.Join(cf.dir, lr.scenario)
		}
		if err := writeCharts(stderr, runs[i], cf); err != nil {
			return err
		}
	}
	if l.charts != nil && f.charts.dir != "" {
		format := f.charts.format
		if format == "" {
			format = "png"
		}
		for _, c := range l.charts(runs) {
			path := filepath.Join(f.charts.dir, c.Name+"."+format)
			if err := writeChart(path, c, format); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "wrote %s\n", path)
		}
	}
	return nil
}

// lessonOutput is a lesson's words with its figures filled in.
type lessonOutput struct {
	head  string   // the title line and the paragraphs
	shows []string // the sentences with the numbers (a table after a sentence's first line)
}

// lessonText fills the lesson's placeholders with the figures of its runs.
func lessonText(l *lesson, runs []*outcome) (lessonOutput, error) {
	vals, err := l.figures(runs)
	if err != nil {
		return lessonOutput{}, fmt.Errorf("lesson %s: %w", l.name, err)
	}
	var out lessonOutput
	paras := []string{"Lesson " + l.name + ": " + l.title + "."}
	for _, p := range l.explain {
		s, err := fill(p, vals)
		if err != nil {
			return out, fmt.Errorf("lesson %s: %w", l.name, err)
		}
		paras = append(paras, s)
	}
	out.head = strings.Join(paras, "\n\n")
	for _, p := range l.shows {
		s, err := fill(p, vals)
		if err != nil {
			return out, fmt.Errorf("lesson %s: %w", l.name, err)
		}
		out.shows = append(out.shows, s)
	}
	return out, nil
}

var placeholder = regexp.MustCompile(`\{[a-z0-9_]+\}`)

// fill replaces every {name} in s with vals[name]; a name without a value
// is an error.
func fill(s string, vals map[string]string) (string, error) {
	var missing []string
	out := placeholder.ReplaceAllStringFunc(s, func(m string) string {
		v, ok := vals[m[1:len(m)-1]]
		if !ok {
			missing = append(missing, m)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("no figure for %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// wrap folds each paragraph of s (separated by blank lines) to width
// columns and ends it with a newline; lines of a paragraph that start
// with two spaces are kept as they are (tables).
func wrap(s string, width int) string {
	var b strings.Builder
	for i, p := range strings.Split(s, "\n\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(wrapIndent(p, width, "", ""))
	}
	return b.String()
}

// wrapIndent folds one paragraph to width, the first line after first and
// the others after rest.
func wrapIndent(p string, width int, first, rest string) string {
	if strings.HasPrefix(p, "  ") {
		return first + p + "\n" // preformatted
	}
	var b strings.Builder
	line := first
	n := len([]rune(first))
	empty := true
	for _, word := range strings.Fields(p) {
		wl := len([]rune(word))
		if !empty && n+1+wl > width {
			b.WriteString(line + "\n")
			line, n, empty = rest, len([]rune(rest)), true
		}
		if !empty {
			line += " "
			n++
		}
		line += word
		n += wl
		empty = false
	}
	b.WriteString(line + "\n")
	return b.String()
}

// The figures of each lesson.

// result finds the result labelled label, and its decisions (nil when the
// run was too large to keep them).
func result(o *outcome, label string) (*sim.Result, []sim.Decision, error) {
	for i := range o.rep.Results {
		if o.rep.Results[i].Label == label {
			var ds []sim.Decision
			if o.decisions != nil {
				ds = o.decisions[i]
			}
			return &o.rep.Results[i], ds, nil
		}
	}
	return nil, nil, fmt.Errorf("scenario %s has no algorithm labelled %s", o.rep.Scenario, label)
}

// peakOver is res's peak of releases over windows of v (attempts when
// attempts is set).
func peakOver(res *sim.Result, v time.Duration, attempts bool) (sim.Peak, error) {
	ps := res.Peaks
	if attempts {
		ps = res.AttemptPeaks
	}
	for _, p := range ps {
		if p.WindowNs == int64(v) {
			return p, nil
		}
	}
	return sim.Peak{}, fmt.Errorf("%s: no peak over %s (report windows must include it)", res.Label, output.FormatDuration(v))
}

// shortWindow is the shortest report window of a run.
func shortWindow(o *outcome) time.Duration {
	var v int64
	for _, p := range o.rep.Results[0].Peaks {
		if v == 0 || p.WindowNs < v {
			v = p.WindowNs
		}
	}
	return time.Duration(v)
}

// policyFigures are the placeholders every lesson may use: limit, per,
// per_word, burst, spacing (W/L), short (the shortest report window),
// limit_short (the limit over it).
func policyFigures(o *outcome) map[string]string {
	l := o.rep.Limit
	w := time.Duration(l.PerNs)
	short := shortWindow(o)
	return map[string]string{
		"limit":       strconv.FormatInt(l.Rate, 10),
		"per":         perWord(w),
		"per_word":    perWord(w),
		"burst":       strconv.FormatInt(l.Burst, 10),
		"spacing":     exactDuration(big.NewRat(l.PerNs, l.Rate)),
		"short":       output.FormatDuration(short),
		"limit_short": ratString(new(big.Rat).SetFrac(big.NewInt(l.Rate*int64(short)), big.NewInt(l.PerNs))),
	}
}

// perWord names a window for a sentence: "second", "minute", "hour", else
// the duration ("100ms").
func perWord(w time.Duration) string {
	switch w {
	case time.Second:
		return "second"
	case time.Minute:
		return "minute"
	case time.Hour:
		return "hour"
	}
	return output.FormatDuration(w)
}

// exactDuration writes a rational number of nanoseconds, rounded up to a
// whole one.
func exactDuration(ns *big.Rat) string {
	q := new(big.Int).Quo(ns.Num(), ns.Denom())
	if new(big.Rat).SetInt(q).Cmp(ns) < 0 {
		q.Add(q, big.NewInt(1))
	}
	return output.FormatDuration(time.Duration(q.Int64()))
}

// ratString writes q exactly when it is whole, else with up to two
// decimals.
func ratString(q *big.Rat) string {
	if q.IsInt() {
		return q.Num().String()
	}
	return strings.TrimRight(strings.TrimRight(q.FloatString(2), "0"), ".")
}

// seconds writes an instant as seconds: with two decimals when it is a
// whole number of 10ms ("0.90 s", "1.09 s"), else rounded to the
// millisecond ("17.954 s").
func seconds(t time.Duration) string {
	sign := ""
	if t < 0 {
		sign, t = "-", -t
	}
	if t%(10*time.Millisecond) == 0 {
		return fmt.Sprintf("%s%d.%02d s", sign, t/time.Second, t%time.Second/(10*time.Millisecond))
	}
	ms := (t + time.Millisecond/2) / time.Millisecond
	return fmt.Sprintf("%s%d.%03d s", sign, ms/1000, ms%1000)
}

func ratio(p sim.Peak) string { return output.FormatRatio(float64(p.Ratio)) }

func admitted(res *sim.Result) int64 { return res.Accepted + res.Delayed }

// sameAdmissions says whether the results admitted the same requests:
// "Both admitted 16 of the 19 attempts and rejected 3: the same requests."
// (the last words only when their decisions show it attempt by attempt),
// or each one's figures.
func sameAdmissions(o *outcome, rs []*sim.Result) string {
	same := true
	for _, r := range rs[1:] {
		same = same && admitted(r) == admitted(rs[0]) && r.Rejected == rs[0].Rejected && r.Attempts == rs[0].Attempts
	}
	if !same {
		var parts []string
		for _, r := range rs {
			parts = append(parts, fmt.Sprintf("%s admitted %d of %d attempts and rejected %d", r.Label, admitted(r), r.Attempts, r.Rejected))
		}
		return strings.Join(parts, "; ") + "."
	}
	all := "All " + countWord(len(rs))
	if len(rs) == 2 {
		all = "Both"
	}
	s := fmt.Sprintf("%s admitted %d of the %d attempts and rejected %d", all, admitted(rs[0]), rs[0].Attempts, rs[0].Rejected)
	if sameRequests(o, rs) {
		s += ": the same requests"
	}
	return s + "."
}

// sameRequests says whether the decisions of rs admit and reject the same
// attempts, one by one (false when the decisions were not kept).
func sameRequests(o *outcome, rs []*sim.Result) bool {
	var first []sim.Decision
	for i, r := range rs {
		_, ds, err := result(o, r.Label)
		if err != nil || ds == nil {
			return false
		}
		if i == 0 {
			first = ds
			continue
		}
		if len(ds) != len(first) {
			return false
		}
		for j := range ds {
			a, b := ds[j], first[j]
			if a.Time != b.Time || a.Key != b.Key || (a.Verdict == algorithms.Reject) != (b.Verdict == algorithms.Reject) {
				return false
			}
		}
	}
	return true
}

// countWord writes small counts in words.
func countWord(n int) string {
	if n >= 2 && n <= 9 {
		return []string{"two", "three", "four", "five", "six", "seven", "eight", "nine"}[n-2]
	}
	return strconv.Itoa(n)
}

func doubleBurstFigures(runs []*outcome) (map[string]string, error) {
	o := runs[0]
	v := policyFigures(o)
	w := time.Duration(o.rep.Limit.PerNs)
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

func tokenVsLeakyFigures(runs []*outcome) (map[string]string, error) {
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

func accuracyFigures(runs []*outcome) (map[string]string, error) {
	o := runs[0]
	v := policyFigures(o)
	w := time.Duration(o.rep.Limit.PerNs)
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

// columns lays out a table: the first column left-aligned, the others
// right-aligned, three spaces apart, each line after indent.
func columns(rows [][]string, indent string) []string {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	out := make([]string, len(rows))
	for j, r := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			gap := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i == 0 {
				b.WriteString(c + gap)
				continue
			}
			b.WriteString("   " + gap + c)
		}
		out[j] = b.String()
	}
	return out
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func retryStormFigures(runs []*outcome) (map[string]string, error) {
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
func retryStormPicture(w io.Writer, runs []*outcome, opt output.TermOptions) error {
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

func nginxFigures(runs []*outcome) (map[string]string, error) {
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
	if o.rep.Limit.PerNs == int64(time.Minute) {
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

// plural writes "1 request", "2 requests".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}

// paramString writes an algorithm option as the scenario set it.
func paramString(p any) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprint(p)
}
