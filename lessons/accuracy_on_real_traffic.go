package lessons

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/sim"
)

// accuracyTrace is the bundled real trace the lesson replays (see
// scenarios/traces/README.md): a day of the 1995 NASA Kennedy Space
// Center web server, whole-second times, one key per client host.
const accuracyTrace = "nasa-19950801.tsv.gz"

// Cloudflare's published figure for its sliding window counter ("How we
// built rate limiting capable of scaling to millions of domains", 2017):
// "0.003% of requests were wrongly allowed or rate limited" over 400
// million requests. Quoted, not measured: the lesson sets this run's
// figures beside it.
const (
	cloudflareShare    = "0.003%"
	cloudflareRequests = "400 million"
	cloudflarePercent  = 0.003
)

// accuracyLimits are the lesson's runs: the trace under each limit per
// client, every request spread evenly within its whole second as replay
// does by default; the last run is the third limit per second again
// without spreading (suffix "!"), to show what timestamp granularity does.
var accuracyLimits = []string{"10/m", "20/m", "1/s", "2/s", "3/s", "3/s!"}

// accuracyOnRealTrafficLesson measures Cloudflare's claim for the sliding
// window counter on real traffic, against the exact sliding log.
var accuracyOnRealTraffic = register(Lesson{
	order: 10,
	Name:  "accuracy-on-real-traffic",
	Title: "how often the sliding window counter and the fixed window decide a real request unlike the exact log",
	Runs:  accuracyRuns(),
	explain: []string{
		"Cloudflare chose its two-counter sliding window after measuring it: {cf_share} of " +
			"{cf_requests} requests were wrongly allowed or rate limited. Every team that picks a " +
			"counter instead of an exact log trusts a number like that, measured on somebody " +
			"else's traffic. Here is the number on real traffic: {trace_requests} requests of " +
			"{trace_keys} clients to the NASA Kennedy Space Center web server on {trace_day}, " +
			"times in whole seconds, replayed under a limit per client through sliding-log " +
			"(exact), sliding-window (the counter) and fixed-window.",
		"Each request is matched with itself in the sliding-log run: a request the log rejected " +
			"and the row admitted was wrongly allowed, the reverse wrongly limited. A first " +
			"divergence is a difference on a client whose earlier requests both runs decided " +
			"alike (since the client was last idle long enough for both to forget it); after " +
			"one, the two states differ and later differences may only follow from it (a " +
			"cascade). Cloudflare counted both, and so does the total here.",
		"Why is it far above Cloudflare's figure? Three reasons, each measured below. A limiter can " +
			"only be wrong near the limit, and how many requests come near it depends on the " +
			"traffic and the limit. The log's times are whole seconds, spread evenly within " +
			"their second by the replay: the counter assumes requests spread evenly over the " +
			"whole window instead. And one difference changes what each side remembers, so " +
			"others follow it.",
	},
	shows: []string{
		"{table}",
		"At {first_limit}, sliding-window decided {sw_first_pct} of the requests unlike sliding-log ({sw_first_wa} wrongly allowed, {sw_first_wl} wrongly limited): {sw_first_times} Cloudflare's {cf_share}; fixed-window {fw_first_pct}.",
		"Near the limit: at {first_limit} sliding-log rejected only {sl_first_rej_pct} of the requests, from {sl_first_keys} of {trace_keys} clients; at {quiet_limit} it rejected {sl_quiet_rej} and the counter erred on {sw_quiet_pct}. Most requests are nowhere near a limit, and none of them can be decided wrongly.",
		"Granularity: at {gran_limit} with each second's requests spread, sliding-window erred on {sw_gran_pct} against fixed-window's {fw_gran_pct}; with every request at its whole second, fixed-window over a second decided {fw_whole} requests unlike the log, since the log then counts whole seconds too, and sliding-window erred on {sw_whole_pct}.",
		"Cascades: of sliding-window's {sw_first_differs} differences at {first_limit}, {sw_first_first} were first divergences and {sw_first_cascade} followed an earlier one on the same client.",
	},
	next: "ratesim replay your-access.log --limit 10/m --baseline sliding-log measures your own traffic; " +
		"with --charts DIR this lesson draws the disagreement against the limit (accuracy.png).",
	figures: accuracyOnRealFigures,
	picture: accuracyPicture,
	charts:  accuracyCharts,
	// every row against the exact log
	Baseline: "sliding-log",
})

// accuracyRuns are the lesson's runs, named for their limit (a directory
// name for --charts: "accuracy-10-per-m", "accuracy-3-per-s-whole-seconds").
func accuracyRuns() []RunSpec {
	var runs []RunSpec
	for _, l := range accuracyLimits {
		r := &Replay{Trace: accuracyTrace, Limit: strings.TrimSuffix(l, "!"), Name: accuracyTrace + " at " + l,
			Fields: map[string]string{"format": "tsv", "time-field": "time", "key-field": "host", "time-unit": "s"}}
		if strings.HasSuffix(l, "!") {
			r.Fields["spread"] = "none"
		}
		runs = append(runs, RunSpec{Scenario: accuracyRunName(l), Algorithms: "sliding-log,sliding-window,fixed-window", Replay: r})
	}
	return runs
}

func accuracyRunName(limit string) string {
	name := "accuracy-" + strings.ReplaceAll(strings.TrimSuffix(limit, "!"), "/", "-per-")
	if strings.HasSuffix(limit, "!") {
		name += "-whole-seconds"
	}
	return name
}

// accuracyRow is one run's figures for one row.
type accuracyRow struct {
	res *sim.Result
	b   *sim.BaselineResult
}

func accuracyRowOf(o *Run, label string) (accuracyRow, error) {
	res, _, err := result(o, label)
	if err != nil {
		return accuracyRow{}, err
	}
	if res.Baseline == nil {
		return accuracyRow{}, fmt.Errorf("%s was not held against the baseline", label)
	}
	return accuracyRow{res, res.Baseline}, nil
}

// accuracyOnRealFigures computes the lesson's figures from its runs.
func accuracyOnRealFigures(runs []*Run) (map[string]string, error) {
	if len(runs) != len(accuracyLimits) {
		return nil, fmt.Errorf("want %d runs, got %d", len(accuracyLimits), len(runs))
	}
	v := map[string]string{"cf_share": cloudflareShare, "cf_requests": cloudflareRequests}
	first := runs[0]
	v["trace_requests"] = strconv.FormatInt(first.Report.Results[0].Offered, 10)
	v["trace_keys"] = strconv.FormatInt(first.Report.Keys, 10)
	if len(first.Report.Traces) == 0 {
		return nil, fmt.Errorf("the first run replayed no trace")
	}
	v["trace_day"] = output.FormatInstant(first.Report.Traces[0].FirstNs, true)[:len("2006-01-02")]
	pct := func(n, d int64) string { return output.SmallPercent(n, d) }
	i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
	var table strings.Builder
	table.WriteString("How each row decided the trace's requests, against sliding-log:\n")
	table.WriteString(fmt.Sprintf("%-8s %-7s %14s %14s %14s %14s\n", "limit", "spread", "sl rejected", "sw differs", "sw first", "fw differs"))
	rows := make([][3]accuracyRow, len(runs))
	for i, o := range runs {
		sl, _, err := result(o, "sliding-log")
		if err != nil {
			return nil, err
		}
		sw, err := accuracyRowOf(o, "sliding-window")
		if err != nil {
			return nil, err
		}
		fw, err := accuracyRowOf(o, "fixed-window")
		if err != nil {
			return nil, err
		}
		rows[i] = [3]accuracyRow{{res: sl}, sw, fw}
		limit, spread := strings.TrimSuffix(accuracyLimits[i], "!"), "even"
		if strings.HasSuffix(accuracyLimits[i], "!") {
			spread = "none"
		}
		first := "-"
		if f := sw.b.FirstDivergences; f != nil {
			first = i64(*f)
		}
		table.WriteString(fmt.Sprintf("%-8s %-7s %14s %14s %14s %14s\n", limit, spread,
			i64(sl.Rejected)+" "+pct(sl.Rejected, sl.Offered),
			i64(sw.b.Differs)+" "+pct(sw.b.Differs, sw.b.Compared), first,
			i64(fw.b.Differs)+" "+pct(fw.b.Differs, fw.b.Compared)))
	}
	v["table"] = strings.TrimRight(table.String(), "\n")

	sl0, sw0, fw0 := rows[0][0].res, rows[0][1].b, rows[0][2].b
	v["first_limit"] = strings.TrimSuffix(accuracyLimits[0], "!")
	v["sw_first_pct"] = pct(sw0.Differs, sw0.Compared)
	v["sw_first_wa"] = i64(sw0.WronglyAllowed)
	v["sw_first_wl"] = i64(sw0.WronglyLimited)
	v["fw_first_pct"] = pct(fw0.Differs, fw0.Compared)
	// how many times Cloudflare's share: differs/compared / (0.003/100), to
	// a whole number
	times := (sw0.Differs*100000 + sw0.Compared*3/2) / (sw0.Compared * 3)
	v["sw_first_times"] = i64(times) + " times"
	v["sl_first_rej_pct"] = pct(sl0.Rejected, sl0.Offered)
	v["sl_first_keys"] = i64(sl0.Keys.Limited)
	// the quietest run: the one whose log rejected the fewest
	quiet := 0
	for i := range rows {
		if rows[i][0].res.Rejected < rows[quiet][0].res.Rejected {
			quiet = i
		}
	}
	v["quiet_limit"] = strings.TrimSuffix(accuracyLimits[quiet], "!")
	v["sl_quiet_rej"] = i64(rows[quiet][0].res.Rejected)
	v["sw_quiet_pct"] = pct(rows[quiet][1].b.Differs, rows[quiet][1].b.Compared)
	// granularity: the last two runs are one limit, spread and not
	g, w := rows[len(rows)-2], rows[len(rows)-1]
	v["gran_limit"] = strings.TrimSuffix(accuracyLimits[len(rows)-2], "!")
	v["sw_gran_pct"] = pct(g[1].b.Differs, g[1].b.Compared)
	v["fw_gran_pct"] = pct(g[2].b.Differs, g[2].b.Compared)
	v["fw_whole"] = i64(w[2].b.Differs)
	v["sw_whole_pct"] = pct(w[1].b.Differs, w[1].b.Compared)
	v["sw_first_differs"] = i64(sw0.Differs)
	if sw0.FirstDivergences == nil {
		return nil, fmt.Errorf("first divergences not defined for sliding-window")
	}
	v["sw_first_first"] = i64(*sw0.FirstDivergences)
	v["sw_first_cascade"] = i64(sw0.Differs - *sw0.FirstDivergences)
	return v, nil
}

// accuracyPicture says what was replayed instead of a timeline, which a
// day of traffic would not fit: the trace's span, as dates.
func accuracyPicture(w io.Writer, runs []*Run, _ output.TermOptions) error {
	for _, t := range runs[0].Report.Traces {
		if _, err := fmt.Fprintf(w, "Replayed: %s, %d requests of %d clients,\nfrom %s to %s.\n", accuracyTrace, t.Used, t.Keys,
			output.FormatInstant(t.FirstNs, true), output.FormatInstant(t.LastNs, true)); err != nil {
			return err
		}
	}
	return nil
}

// accuracyCharts is the disagreement against the limit, over the runs
// that spread each second's requests.
func accuracyCharts(runs []*Run) []output.Chart {
	var ar []output.AccuracyRun
	for i, o := range runs {
		if strings.HasSuffix(accuracyLimits[i], "!") {
			continue
		}
		ar = append(ar, output.AccuracyRun{Limit: accuracyLimits[i], Report: o.Report})
	}
	return []output.Chart{output.AccuracyChart(ar, accuracyTrace+", limit per client host, requests spread within their second",
		cloudflarePercent, "Cloudflare's published "+cloudflareShare)}
}
