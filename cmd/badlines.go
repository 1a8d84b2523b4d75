package cmd

import (
	"fmt"
	"io"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/sim"
)

// warnBadShare is the share of malformed lines above which a run with a
// trace warns, in percent (docs/replay.md, Malformed lines).
const warnBadShare = 10

// maxBad is --max-bad: the most malformed lines a trace may have, as a
// count, or as a percentage of its lines (num/den percent, exactly as
// written: 2.5% is 25/10).
type maxBad struct {
	text     string
	set, pct bool
	count    int64
	num, den int64
}

// parseMaxBad reads --max-bad: N (a count) or P% (a percentage from 0 to
// 100, with at most three decimals).
func parseMaxBad(s string) (maxBad, error) {
	m := maxBad{text: s, set: s != ""}
	if !m.set {
		return m, nil
	}
	want := func() error {
		return usagef("--max-bad: %q: want a count of lines (10) or a percentage of them from 0%% to 100%% (2.5%%)", s)
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		m.pct = true
		whole, frac, _ := strings.Cut(p, ".")
		if whole == "" || len(frac) > 3 || !digits(whole) || !digits(frac) || len(whole) > 3 {
			return m, want()
		}
		m.num, _ = strconv.ParseInt(whole+frac, 10, 64)
		m.den = 1
		for range frac {
			m.den *= 10
		}
		if m.num > 100*m.den {
			return m, want()
		}
		return m, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || !digits(s) {
		return m, want()
	}
	m.count = n
	return m, nil
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// over reports whether bad malformed lines of lines are more than m allows.
func (m maxBad) over(bad, lines int64) bool {
	if !m.pct {
		return bad > m.count
	}
	// bad/lines > num/(100*den), in integers of any size
	l := new(big.Int).Mul(big.NewInt(bad), big.NewInt(100*m.den))
	r := new(big.Int).Mul(big.NewInt(m.num), big.NewInt(lines))
	return l.Cmp(r) > 0
}

// share writes bad of lines as a percentage to one decimal, rounded to
// the nearest: "62.5%".
func share(bad, lines int64) string {
	tenths := new(big.Int).Mul(big.NewInt(bad), big.NewInt(2000))
	tenths.Add(tenths, big.NewInt(lines))
	tenths.Quo(tenths, big.NewInt(2*lines))
	t := tenths.Int64()
	return fmt.Sprintf("%d.%d%%", t/10, t%10)
}

// checkBadLines holds each trace of a run to --max-bad: more malformed
// lines than it allows is bad input (exit 2), before anything is printed.
// Without --max-bad, a trace of which more than warnBadShare percent of
// the lines are malformed gets a warning on stderr with the share: the
// figures rest on the lines that are left.
func checkBadLines(stderr io.Writer, traces []sim.TraceSummary, m maxBad) error {
	for _, t := range traces {
		if t.Lines == 0 || t.Malformed == 0 {
			continue
		}
		what := fmt.Sprintf("%s: %d of %d lines malformed (%s)", t.Path, t.Malformed, t.Lines, share(t.Malformed, t.Lines))
		if m.set {
			if m.over(t.Malformed, t.Lines) {
				return usagef("%s, more than --max-bad %s allows", what, m.text)
			}
			continue
		}
		if t.Malformed*100 > warnBadShare*t.Lines {
			fmt.Fprintf(stderr, "ratesim: warning: %s: the figures rest on the %d lines used (--max-bad N or P%% makes this an error)\n", what, t.Used)
		}
	}
	return nil
}

// warnNoValue warns of an attribute that no line used of a trace has a
// value for, where a limit counts by it: that limit counted none of the
// trace's requests, which is most often a field named otherwise in the
// log (a CSV without the column is an error, but a JSON line without a
// field is one whose value is null). A row that names the attribute's
// values (a shedding row) put them all in its default class instead, as
// the trace's summary says.
func warnNoValue(stderr io.Writer, traces []sim.TraceSummary) {
	for _, t := range traces {
		var names []string
		for name, n := range t.NoValue {
			if t.Used > 0 && n == t.Used && !slices.Contains(t.Classed, name) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			fmt.Fprintf(stderr, "ratesim: warning: %s: no line used has a value for %s: a limit by it counted none of its %d requests (is the field named otherwise in the log?)\n", t.Path, name, t.Used)
		}
	}
}
