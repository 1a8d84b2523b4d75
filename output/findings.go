package output

import (
	"fmt"
	"time"

	"github.com/ratesim/ratesim/sim"
)

// Findings returns the notable facts of a report, one plain sentence each,
// computed from its figures, in this order:
//
//   - over the first policy window (the policy's W; a window that is no
//     policy's period is an observation, held to no limit: limitWindows),
//     the algorithm(s) with the highest peak ratio, when it is above 1.0:
//     how many requests they let through, when, and how many times the
//     limit;
//   - which algorithms held every interval of the first policy window to
//     the limit (ratio <= 1.0), and which of them also held the other
//     policy windows (a row's own period);
//   - the rows whose limit is over a period longer than the first window,
//     which the two above leave out (see longPeriod);
//   - the algorithm that delayed the most requests, and the longest delay,
//     when any delayed;
//   - the algorithms that rejected the most and the fewest, when they differ;
//   - with a baseline row (docs/accuracy.md), the row(s) that decided the
//     most requests differently from it, in which direction, and how many
//     of those differences were first divergences;
//   - with a check against a gateway's log (docs/replay.md), each row that
//     decided some request otherwise than the gateway logged, with its
//     first disagreements, or that every row agreed.
//
// With several keys the limit is per key, and no sentence holds a figure of
// every key together against it: the first two are about the key peaks
// (the most one key released, which key, its ratio to its limit), and what
// every key together sent to the backend follows as plain counts (the
// algorithms that let the most and the fewest through in an interval of
// the first window), as does the retry herd of attempts.
//
// On a cluster, after the peaks: the row(s) that admitted the most beyond
// one exact limiter, those that refused the most it would admit, those that
// admitted exactly as it, and what each row's store failures did.
//
// Ties name every algorithm tied, in the report's order. Peak counts are
// cost: requests when every request costs 1, else in the traffic's cost
// unit ("179786 tokens"), never called requests (docs/metrics.md). The table, Markdown and any later front end show
// the same sentences.
func Findings(r *sim.Report) []string {
	if r == nil || len(r.Results) == 0 {
		return nil
	}
	var out []string
	// the peaks held against a limit are those of a policy's own window:
	// any other window is an observation, held to no limit
	if ws := limitWindows(r); len(ws) > 0 {
		src := aggregatePeaks
		if r.Keys > 1 {
			src = keyPeaks
		}
		out = append(out, peakFindings(r, ws[0], src)...)
		out = append(out, heldFindings(r, ws, src)...)
		if s := longPeriodFinding(r, ws[0], src); s != "" {
			out = append(out, s)
		}
		if r.Keys > 1 {
			out = append(out, backendFindings(r, ws[0])...)
		}
	}
	out = append(out, clusterFindings(r)...)
	out = append(out, healthFindings(r)...)
	out = append(out, herdFindings(r, windows(r))...)
	if s := delayFinding(r); s != "" {
		out = append(out, s)
	}
	if s := rejectFinding(r); s != "" {
		out = append(out, s)
	}
	out = append(out, baselineFindings(r)...)
	return append(out, gatewayCheckFindings(r)...)
}

// peakSource gives a result's peak over windows of v that the findings
// hold against the limit, and the key it is of ("" for every key
// together).
type peakSource func(res *sim.Result, v int64) (p sim.Peak, key string, ok bool)

// aggregatePeaks are the peaks of every key together: with one key, that
// key's.
func aggregatePeaks(res *sim.Result, v int64) (sim.Peak, string, bool) {
	p, ok := peakFor(res, v)
	return p, "", ok
}

// keyPeaks are the key peaks: the most one key released. An all-of row
// whose limits count by different keys has none to hold against the
// scenario's limit: the request's key is not what each of its limits
// counts by, and the section "Busiest key of each limit" holds each
// limit's busiest key against that limit (LimitPeakLines).
func keyPeaks(res *sim.Result, v int64) (sim.Peak, string, bool) {
	if res.LimitPeaks != nil {
		return sim.Peak{}, "", false
	}
	kp, ok := findKeyPeak(res.KeyPeaks, v)
	return sim.Peak{WindowNs: kp.WindowNs, Count: kp.Count, StartNs: kp.StartNs, Ratio: kp.Ratio}, kp.Key, ok
}

// peakFindings names the algorithm(s) whose peak over windows of v has the
// highest ratio, when that ratio is above 1.0. Algorithms tied on the ratio
// share a sentence when they also share count, start, key and limit.
func peakFindings(r *sim.Report, v int64, src peakSource) []string {
	best := 1.0
	for i := range r.Results {
		if longPeriod(r, &r.Results[i], v) {
			continue
		}
		if p, _, ok := src(&r.Results[i], v); ok && float64(p.Ratio) > best {
			best = float64(p.Ratio)
		}
	}
	if best <= 1.0 {
		return nil
	}
	type group struct {
		labels []string
		count  int64
		start  int64
		key    string
		limit  string
	}
	var groups []*group
	for i := range r.Results {
		res := &r.Results[i]
		p, key, ok := src(res, v)
		if !ok || float64(p.Ratio) != best || longPeriod(r, res, v) {
			continue
		}
		limit := limitPer(limitOf(r, res), v)
		var g *group
		for _, h := range groups {
			if h.count == p.Count && h.start == p.StartNs && h.key == key && h.limit == limit {
				g = h
				break
			}
		}
		if g == nil {
			g = &group{count: p.Count, start: p.StartNs, key: key, limit: limit}
			groups = append(groups, g)
		}
		g.labels = append(g.labels, res.Label)
	}
	window := FormatDuration(time.Duration(v))
	out := make([]string, 0, len(groups))
	for _, g := range groups {
		if r.Keys > 1 {
			out = append(out, fmt.Sprintf("%s let one key through at %s its limit of %s per %s: %s, %s in %s starting at %s.",
				Join(g.labels), FormatRatio(best), g.limit, window, oneLine(g.key), costCount(r, g.count, "request"),
				window, reportInstant(r, g.start)))
			continue
		}
		out = append(out, fmt.Sprintf("%s let %s through in %s starting at %s: %s the limit of %s per %s.",
			Join(g.labels), costCount(r, g.count, "request"), window, reportInstant(r, g.start),
			FormatRatio(best), g.limit, window))
	}
	return out
}

// heldFindings names the algorithms that kept every interval of the first
// window within the limit, and those that also kept the other windows
// within theirs (with several keys, every interval of every key).
func heldFindings(r *sim.Report, ws []int64, src peakSource) []string {
	var first, all []*sim.Result // held the first window; held every window
	withPeaks, left := 0, 0      // left: the rows of longer periods (longPeriod)
	for i := range r.Results {
		res := &r.Results[i]
		if _, _, ok := src(res, ws[0]); !ok {
			continue
		}
		if longPeriod(r, res, ws[0]) {
			left++
			continue
		}
		withPeaks++
		heldAll := true
		for j, v := range ws {
			p, _, ok := src(res, v)
			held := ok && float64(p.Ratio) <= 1.0
			if j == 0 && held {
				first = append(first, res)
			}
			heldAll = heldAll && held
		}
		if heldAll {
			all = append(all, res)
		}
	}
	if withPeaks == 0 {
		return nil
	}
	subject := func(rs []*sim.Result) string {
		if len(rs) == withPeaks && len(rs) > 1 && left == 0 {
			return "Every algorithm"
		}
		labels := make([]string, len(rs))
		for i, res := range rs {
			labels[i] = res.Label
		}
		return Join(labels)
	}
	every := func(vs []int64) string {
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = "every " + FormatDuration(time.Duration(v))
		}
		return Join(parts)
	}
	ofKeys := "" // whose intervals
	if r.Keys > 1 {
		ofKeys = " of every key"
	}
	v0 := ws[0]
	if len(first) == 0 {
		return []string{fmt.Sprintf("No algorithm held %s interval%s to the limit of %s.",
			every(ws[:1]), ofKeys, limitPer(r.Limit, v0))}
	}
	if len(ws) > 1 && len(all) == len(first) {
		return []string{fmt.Sprintf("%s held %s interval%s to the limit.", subject(all), every(ws), ofKeys)}
	}
	out := []string{fmt.Sprintf("%s held %s interval%s%s.", subject(first), every(ws[:1]), ofKeys, limitPhrase(r, first, v0))}
	if len(ws) > 1 && len(all) > 0 {
		rest := ws[1:]
		phrase := " to the limit"
		if len(rest) == 1 {
			phrase = limitPhrase(r, all, rest[0])
		}
		out = append(out, fmt.Sprintf("%s also held %s interval%s%s.", subject(all), every(rest), ofKeys, phrase))
	}
	return out
}

// longPeriod reports whether res has a limit of its own over a period
// longer than v, the first report window, and than the scenario's limit:
// such a limit promises nothing of an interval of v (a limit of 1000 a day
// lets 1000 through in a second), so the peak and held sentences leave the
// row out rather than hold its peak against the limit scaled down to v
// (longPeriodFinding says so). Rows of the scenario's own limit are held
// against it over any window the scenario asks for, as before.
func longPeriod(r *sim.Report, res *sim.Result, v int64) bool {
	per := limitOf(r, res).PerNs
	return per > v && per > r.Limit.PerNs
}

// longPeriodFinding names the rows whose limit is over a period longer
// than v, the first report window, which the peak sentences, reading src,
// leave out.
func longPeriodFinding(r *sim.Report, v int64, src peakSource) string {
	var parts []string
	for i := range r.Results {
		res := &r.Results[i]
		if _, _, ok := src(res, v); !ok || !longPeriod(r, res, v) {
			continue
		}
		l := limitOf(r, res)
		per := FormatDuration(time.Duration(l.PerNs))
		if l.Calendar != "" {
			per = l.Calendar
		}
		if len(parts) == 0 {
			parts = append(parts, fmt.Sprintf("%s's limit is per %s", res.Label, per))
		} else {
			parts = append(parts, fmt.Sprintf("%s's per %s", res.Label, per))
		}
	}
	window := FormatDuration(time.Duration(v))
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("%s, longer than %s: its %s peak is not held against it above (report.windows can add its period).",
			parts[0], window, window)
	}
	return fmt.Sprintf("%s, longer than %s: their %s peaks are not held against them above (report.windows can add their periods).",
		Join(parts), window, window)
}

// limitPhrase writes " to the limit of 10" when the results share the limit
// over windows of v, and " to its limit" or " to their limits" otherwise.
func limitPhrase(r *sim.Report, rs []*sim.Result, v int64) string {
	limit := limitPer(limitOf(r, rs[0]), v)
	for _, res := range rs[1:] {
		if limitPer(limitOf(r, res), v) != limit {
			return " to their limits"
		}
	}
	return " to the limit of " + limit
}

// delayFinding names the algorithm(s) that delayed the most requests.
func delayFinding(r *sim.Report) string {
	var most int64
	delaying := 0
	for i := range r.Results {
		if d := r.Results[i].Delayed; d > 0 {
			delaying++
			most = max(most, d)
		}
	}
	if most == 0 {
		return ""
	}
	var labels []string
	var longest int64
	for i := range r.Results {
		res := &r.Results[i]
		if res.Delayed == most {
			labels = append(labels, res.Label)
			longest = max(longest, res.DelayNs.Max)
		}
	}
	if delaying == 1 && len(r.Results) > 1 {
		return fmt.Sprintf("Only %s delayed requests: %d, by up to %s.",
			labels[0], most, FormatDuration(time.Duration(longest)))
	}
	each := ""
	if len(labels) > 1 {
		each = " each"
	}
	return fmt.Sprintf("%s delayed the most requests: %d%s, by up to %s.",
		Join(labels), most, each, FormatDuration(time.Duration(longest)))
}

// rejectFinding names the algorithms that rejected the most and the fewest
// requests, when they differ.
func rejectFinding(r *sim.Report) string {
	most, fewest := r.Results[0].Rejected, r.Results[0].Rejected
	for i := range r.Results {
		most = max(most, r.Results[i].Rejected)
		fewest = min(fewest, r.Results[i].Rejected)
	}
	if most == fewest {
		return ""
	}
	var mostLabels, fewestLabels []string
	for i := range r.Results {
		switch r.Results[i].Rejected {
		case most:
			mostLabels = append(mostLabels, r.Results[i].Label)
		case fewest:
			fewestLabels = append(fewestLabels, r.Results[i].Label)
		}
	}
	what := "requests"
	if retried(r) {
		what = "attempts" // rejected counts every refused attempt
	}
	return fmt.Sprintf("%s rejected the most %s (%d), %s the fewest (%d).",
		Join(mostLabels), what, most, Join(fewestLabels), fewest)
}

// herdFindings, when clients retried, names the algorithm whose attempts
// (first tries and retries) were most concentrated over the shortest report
// window, and the one whose were least, with how many requests gave up:
// by their ratio to the limit with one key, by their count (every key
// together, held against no limit) with several.
func herdFindings(r *sim.Report, ws []int64) []string {
	if !retried(r) || len(ws) == 0 {
		return nil
	}
	v := ws[len(ws)-1]
	// with several keys the attempts of every key together are held
	// against no limit: compared by count, not by ratio
	size := func(p sim.Peak) float64 { return float64(p.Ratio) }
	if r.Keys > 1 {
		size = func(p sim.Peak) float64 { return float64(p.Count) }
	}
	hi, lo := -1, -1
	var hiP, loP sim.Peak
	for i := range r.Results {
		p, ok := findPeak(r.Results[i].AttemptPeaks, v)
		if !ok || r.Results[i].Attempts == r.Results[i].Offered {
			continue // only the algorithms whose clients retried
		}
		if hi < 0 || size(p) > size(hiP) {
			hi, hiP = i, p
		}
		if lo < 0 || size(p) < size(loP) {
			lo, loP = i, p
		}
	}
	if hi < 0 {
		return nil
	}
	window := FormatDuration(time.Duration(v))
	say := func(verb string, res *sim.Result, p sim.Peak) string {
		ratio := "" // with several keys the ratio to one key's limit says little
		if r.Keys <= 1 {
			ratio = fmt.Sprintf(" (%s the limit of %s per %s)", FormatRatio(float64(p.Ratio)), limitPer(limitOf(r, res), v), window)
		}
		return fmt.Sprintf("%s %s: %s in %s starting at %s%s, %d retries, %s gave up.",
			res.Label, verb, costCount(r, p.Count, "attempt"), window, reportInstant(r, p.StartNs), ratio,
			res.Attempts-res.Offered, plural(res.GaveUp, "request"))
	}
	out := []string{say("drew the largest herd of attempts", &r.Results[hi], hiP)}
	if lo != hi && size(loP) < size(hiP) {
		out = append(out, say("drew the smallest", &r.Results[lo], loP))
	}
	return out
}

// backendFindings, for traffic of several keys, names the algorithms that
// let the most and the fewest requests reach the backend, every key
// together, in an interval of the first window. The limit is per key while
// these count every key, so they are plain counts, held against no limit.
func backendFindings(r *sim.Report, v int64) []string {
	hi, lo := -1, -1
	var hiP, loP sim.Peak
	for i := range r.Results {
		p, ok := peakFor(&r.Results[i], v)
		if !ok {
			continue
		}
		if hi < 0 || p.Count > hiP.Count {
			hi, hiP = i, p
		}
		if lo < 0 || p.Count < loP.Count {
			lo, loP = i, p
		}
	}
	if hi < 0 {
		return nil
	}
	window := FormatDuration(time.Duration(v))
	out := []string{fmt.Sprintf("%s let the most reach the backend, all %d keys together: %s in %s starting at %s.",
		r.Results[hi].Label, r.Keys, costCount(r, hiP.Count, "request"), window, reportInstant(r, hiP.StartNs))}
	if loP.Count < hiP.Count {
		out = append(out, fmt.Sprintf("%s the fewest: %s in %s starting at %s.",
			r.Results[lo].Label, costCount(r, loP.Count, "request"), window, reportInstant(r, loP.StartNs)))
	}
	return out
}
