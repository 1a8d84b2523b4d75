package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/internal/didyoumean"
	"github.com/ratesim/ratesim/scenarios"
)

// restoreLeftOut puts back, in their places, the algorithms the default
// list left out only because they would decide nothing (Skipped.Kept) when
// list (Options.Algorithms) names them, and returns the others to note:
// every one left out without a list; with one, those it names (the note
// says why it cannot have them), since those it does not name are no news.
func restoreLeftOut(sc *scenarios.Scenario, list string) []scenarios.Skipped {
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	var notes, back []scenarios.Skipped
	for _, sk := range sc.Skipped {
		switch {
		case len(want) == 0:
			notes = append(notes, sk)
		case !want[sk.Name]:
		case sk.Kept != nil:
			back = append(back, sk)
		default:
			notes = append(notes, sk)
		}
	}
	// the last first, so that each place (an index of the list without
	// them) stays right
	for i := len(back) - 1; i >= 0; i-- {
		at := min(back[i].At, len(sc.Algorithms))
		sc.Algorithms = slices.Insert(sc.Algorithms, at, *back[i].Kept)
	}
	return notes
}

// selectAlgorithms keeps the algorithms named in list (labels or names),
// in the scenario's order.
func selectAlgorithms(sc *scenarios.Scenario, list string) error {
	if strings.TrimSpace(list) == "" {
		return nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = false
		}
	}
	var kept []scenarios.Algorithm
	for _, a := range sc.Algorithms {
		_, byLabel := want[a.Label]
		_, byName := want[a.Name]
		if byLabel || byName {
			kept = append(kept, a)
			if byLabel {
				want[a.Label] = true
			}
			if byName {
				want[a.Name] = true
			}
		}
	}
	var missing []string
	for n, found := range want {
		if !found {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return optionErrorf("--algorithms", "%s not in scenario %s (it has %s)%s",
			strings.Join(missing, ", "), sc.Name, strings.Join(labels(sc), ", "), didYouMean(missing, sc))
	}
	sc.Algorithms = kept
	return nil
}

// Baseline checks want against the scenario's rows and returns the
// baseline row's label (Options.Baseline): want itself when it is a
// label, else the label of the one row of that name; "" for "". The
// error is an *OptionError.
func Baseline(sc *scenarios.Scenario, want string) (string, error) {
	return baselineOf(sc, want, false)
}

// baselineOf is Baseline; selected says the rows are those Algorithms
// kept (the error then says so).
func baselineOf(sc *scenarios.Scenario, want string, selected bool) (string, error) {
	want = strings.TrimSpace(want)
	if want == "" {
		return "", nil
	}
	var byName []string
	for _, a := range sc.Algorithms {
		if a.Label == want {
			return want, nil
		}
		if a.Name == want {
			byName = append(byName, a.Label)
		}
	}
	if len(byName) == 1 {
		return byName[0], nil
	}
	if len(byName) > 1 {
		return "", optionErrorf("--baseline", "%q names %d rows of %s (%s): give one label", want, len(byName),
			sc.Name, strings.Join(byName, ", "))
	}
	hint := ""
	if selected {
		hint = " after --algorithms"
	}
	return "", optionErrorf("--baseline", "%q is not a row of %s%s (it has %s)", want, sc.Name, hint, strings.Join(labels(sc), ", "))
}

// labels are the labels of the scenario's rows, in order.
// didYouMean returns "; did you mean "gcra"?" for the one name of missing
// close to a row's label or name (didyoumean.Closest), "; did you mean
// "gcra" for GCRA, "leaky-bucket" for leaky_bucket?" for several, or "".
func didYouMean(missing []string, sc *scenarios.Scenario) string {
	var have []string
	for _, a := range sc.Algorithms {
		have = append(have, a.Label)
		if !slices.Contains(have, a.Name) {
			have = append(have, a.Name)
		}
	}
	var hints []string
	for _, m := range missing {
		if s := didyoumean.Closest(m, have); s != "" {
			hints = append(hints, fmt.Sprintf("%q for %s", s, m))
		}
	}
	switch {
	case len(hints) == 0:
		return ""
	case len(missing) == 1:
		return fmt.Sprintf("; did you mean %q?", didyoumean.Closest(missing[0], have))
	}
	return "; did you mean " + strings.Join(hints, ", ") + "?"
}

func labels(sc *scenarios.Scenario) []string {
	var have []string
	for _, a := range sc.Algorithms {
		have = append(have, a.Label)
	}
	return have
}
