package output

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/sim"
)

// What the outputs show of a comparison against a baseline row
// (docs/accuracy.md, --baseline): the table's "vs LABEL" columns, the CSV's, and
// the findings' sentence on the row that strays furthest.

// baselineLabel is the label of the report's baseline row, or "" when
// the rows were not held against one.
func baselineLabel(r *sim.Report) string {
	for i := range r.Results {
		if b := r.Results[i].Baseline; b != nil {
			return b.Label
		}
	}
	return ""
}

// baselineHeader is the table's baseline columns, after accept %.
func baselineHeader(label string) []string {
	return []string{"vs " + label, "wrongly allowed", "wrongly limited"}
}

// baselineCells are a row's baseline cells: "451 (1.46%)", "300", "151";
// "baseline" for the baseline row itself.
func baselineCells(res *sim.Result, label string) []string {
	b := res.Baseline
	if b == nil {
		if res.Label == label {
			return []string{"baseline", "-", "-"}
		}
		return []string{"-", "-", "-"}
	}
	return []string{strconv.FormatInt(b.Differs, 10) + " (" + SmallPercent(b.Differs, b.Compared) + ")",
		strconv.FormatInt(b.WronglyAllowed, 10), strconv.FormatInt(b.WronglyLimited, 10)}
}

// baselineCSVHeader is the CSV's baseline columns, at the end of a row.
var baselineCSVHeader = []string{"baseline_label", "baseline_compared", "baseline_differs",
	"baseline_wrongly_allowed", "baseline_wrongly_limited", "baseline_first_divergences"}

// baselineCSV is a row's baseline columns: empty for the baseline row,
// and first_divergences empty where it is not defined.
func baselineCSV(b *sim.BaselineResult) []string {
	if b == nil {
		return []string{"", "", "", "", "", ""}
	}
	i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
	first := ""
	if b.FirstDivergences != nil {
		first = i64(*b.FirstDivergences)
	}
	return []string{b.Label, i64(b.Compared), i64(b.Differs), i64(b.WronglyAllowed), i64(b.WronglyLimited), first}
}

// SmallPercent writes num/den as a percentage, exactly rounded half away
// from zero, with two decimals, or as many more as it takes
// for a nonzero share not to read 0: "1.46%", "0.003%", "0%"; "-" when den
// is 0.
func SmallPercent(num, den int64) string {
	if den == 0 {
		return "-"
	}
	q := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(num), big.NewInt(100)), big.NewInt(den))
	for prec := 2; ; prec++ {
		s := q.FloatString(prec)
		if num == 0 || prec == 20 || strings.Trim(s, "0.") != "" {
			s = strings.TrimRight(s, "0")
			return strings.TrimSuffix(s, ".") + "%"
		}
	}
}

// baselineFindings says which row strays furthest from the baseline, in
// which direction, and how many of its differences were first
// divergences; or that every row decided as the baseline did.
func baselineFindings(r *sim.Report) []string {
	label := baselineLabel(r)
	if label == "" {
		return nil
	}
	var worst []*sim.Result
	var most int64
	for i := range r.Results {
		res := &r.Results[i]
		b := res.Baseline
		if b == nil {
			continue
		}
		switch {
		case b.Differs > most:
			worst, most = []*sim.Result{res}, b.Differs
		case b.Differs == most && most > 0:
			worst = append(worst, res)
		}
	}
	if most == 0 {
		return []string{fmt.Sprintf("Every row decided every request as %s did.", label)}
	}
	// rows that strayed alike share a sentence
	type group struct {
		labels []string
		b      *sim.BaselineResult
	}
	var groups []*group
	for _, res := range worst {
		b := res.Baseline
		var g *group
		for _, h := range groups {
			if h.b.Differs == b.Differs && h.b.Compared == b.Compared && h.b.WronglyAllowed == b.WronglyAllowed &&
				h.b.WronglyLimited == b.WronglyLimited && sameFirst(h.b.FirstDivergences, b.FirstDivergences) {
				g = h
				break
			}
		}
		if g == nil {
			g = &group{b: b}
			groups = append(groups, g)
		}
		g.labels = append(g.labels, res.Label)
	}
	var out []string
	for _, g := range groups {
		b := g.b
		dir := "as often too permissive as too strict"
		switch {
		case b.WronglyAllowed > b.WronglyLimited:
			dir = "mostly too permissive"
		case b.WronglyAllowed < b.WronglyLimited:
			dir = "mostly too strict"
		}
		verb, it := "strays", "it"
		if len(g.labels) > 1 {
			verb, it = "stray", "each"
		}
		s := fmt.Sprintf("%s %s furthest from %s, %s: %s decided %d of %s differently (%s), %d wrongly allowed and %d wrongly limited",
			Join(g.labels), verb, label, dir, it, b.Differs, plural(b.Compared, "request"), SmallPercent(b.Differs, b.Compared),
			b.WronglyAllowed, b.WronglyLimited)
		if f := b.FirstDivergences; f != nil {
			what := "first divergences"
			if *f == 1 {
				what = "a first divergence"
			}
			s += fmt.Sprintf("; %d of them %s, the other %d after an earlier difference on the same key", *f, what, b.Differs-*f)
		}
		out = append(out, s+".")
	}
	return out
}

// sameFirst reports whether two first-divergence counts are equal (both
// undefined, or the same number).
func sameFirst(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
