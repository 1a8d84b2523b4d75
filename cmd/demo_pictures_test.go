package cmd

import (
	"io"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/lessons"
	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/scenarios"
)

// firstPicture is the first chart `ratesim demo NAME --charts DIR` writes:
// the lesson's own when it has one, else its first run's first.
func firstPicture(t *testing.T, name string) output.Chart {
	t.Helper()
	l, ok := lessons.Named(name)
	require.True(t, ok, name)
	// A lesson's own charts are drawn from its runs' figures, which
	// --charts does not change (it adds the series of each run's own
	// charts): they are drawn from runs without it, as quick as the
	// lesson's text. TestAccuracyLessonAgreesWithReplay holds the file
	// that demo --charts writes to this picture.
	if own := l.Charts(lessonRuns(t, l, chartFlags{})); len(own) > 0 {
		return own[0]
	}
	runs := lessonRuns(t, l, chartFlags{dir: t.TempDir()})
	charts := output.Charts(runs[0].Report, runs[0].Decisions)
	require.NotEmpty(t, charts, name)
	for _, c := range charts {
		if c.Name == l.Lead() {
			return c
		}
	}
	require.Empty(t, l.Lead(), "%s: no %s chart", name, l.Lead())
	return charts[0]
}

// lessonRuns are the runs of `demo NAME` with the charts' options f.
func lessonRuns(t *testing.T, l *lessons.Lesson, f chartFlags) []*lessons.Run {
	t.Helper()
	var runs []*lessons.Run
	for i, lr := range l.Runs {
		var sc *scenarios.Scenario
		var err error
		if lr.Replay != nil {
			sc, _, err = lessonReplay(lr.Replay)
		} else {
			sc, err = scenarios.Builtin(lr.Scenario)
		}
		require.NoError(t, err)
		run, err := l.Run(i, sc, runOptions(io.Discard, lessonCharts(l, lr, f), false))
		require.NoError(t, err)
		runs = append(runs, run)
	}
	return runs
}

// seriesOf is the series labelled label (up to its first " (" or ",")
// in panel.
func seriesOf(t *testing.T, c output.Chart, panel, label string) output.Series {
	t.Helper()
	for _, s := range c.Series() {
		l := s.Label
		for i, r := range l {
			if r == ' ' && i+1 < len(l) && l[i+1] == '(' || r == ',' {
				l = l[:i]
				break
			}
		}
		if s.Panel == panel && (l == label || label == "" && s.Label == "") {
			return s
		}
	}
	t.Fatalf("%s: no series %q in panel %q", c.Name, label, panel)
	return output.Series{}
}

// TestLessonPictures: the first picture of every lesson draws what its
// sentence says, checked on the series it draws, not only on the file.
func TestLessonPictures(t *testing.T) {
	t.Parallel()
	top := func(s output.Series) float64 { return slices.Max(s.Y) }
	first := func(s output.Series, v float64) float64 { // where s first reaches v
		i := slices.IndexFunc(s.Y, func(y float64) bool { return y >= v })
		require.GreaterOrEqual(t, i, 0, "%s never reaches %v", s.Label, v)
		return s.X[i]
	}
	checks := map[string]func(t *testing.T, c output.Chart){
		"double-burst": func(t *testing.T, c output.Chart) {
			require.Equal(t, "window", c.Name)
			require.Equal(t, 20.0, top(seriesOf(t, c, "every request", "fixed-window")), "20 in a second")
			require.Equal(t, 10.0, top(seriesOf(t, c, "every request", "sliding-log")))
			require.Equal(t, []float64{10}, seriesOf(t, c, "every request", "limit 10 per 1s").Y)
		},
		"token-vs-leaky": func(t *testing.T, c output.Chart) {
			require.Equal(t, "window", c.Name)
			tb, lb := seriesOf(t, c, "every request", "token-bucket"), seriesOf(t, c, "every request", "leaky-bucket")
			require.Equal(t, 5.0, top(tb))
			require.Equal(t, 5.0, top(lb))
			require.Less(t, first(tb, 5)+0.5, first(lb, 5), "the burst passes at once, the leaky bucket spaces it")
		},
		"sliding-window-accuracy": func(t *testing.T, c output.Chart) {
			require.Equal(t, "window", c.Name)
			fw := top(seriesOf(t, c, "every request", "fixed-window"))
			sw := top(seriesOf(t, c, "every request", "sliding-window"))
			sl := top(seriesOf(t, c, "every request", "sliding-log"))
			require.Equal(t, 10.0, sl)
			require.Greater(t, fw, sw+5, "the two counters block most of the double burst")
			require.GreaterOrEqual(t, sw, sl)
		},
		"retry-storm": func(t *testing.T, c output.Chart) {
			require.Equal(t, "multiples", c.Name)
			rej := seriesOf(t, c, "fixed-window", "rejected")
			// buckets of 100ms: each wave at a whole second, bigger than the last
			require.Less(t, rej.Y[0], rej.Y[10])
			require.Less(t, rej.Y[10], rej.Y[20])
			require.Less(t, rej.Y[20], rej.Y[30])
			require.Less(t, rej.Y[5], rej.Y[10]/10, "between the waves, next to nothing")
		},
		"nginx-burst": func(t *testing.T, c output.Chart) {
			require.Equal(t, "window", c.Name)
			a := top(seriesOf(t, c, "every request", "nginx-burst5"))
			require.Equal(t, a, top(seriesOf(t, c, "every request", "nginx-burst5-nodelay")), "the same admissions")
			require.Equal(t, a, top(seriesOf(t, c, "every request", "nginx-burst5-delay2")))
		},
		"flexible-consistency": func(t *testing.T, c output.Chart) {
			require.Equal(t, "window", c.Name)
			require.Greater(t, top(seriesOf(t, c, "every request", "per-node")), 10.0, "a few more than the limit")
			require.Greater(t, top(seriesOf(t, c, "every request", "script")), 10.0)
		},
		"protect-the-backend": func(t *testing.T, c output.Chart) {
			require.Equal(t, "backend", c.Name)
			tb := top(seriesOf(t, c, "token-bucket: queue", ""))
			lb := top(seriesOf(t, c, "leaky-bucket: queue", ""))
			require.Less(t, 2*lb, tb, "the bursts queue, the cadence does not")
		},
		"metastable": func(t *testing.T, c output.Chart) {
			require.Equal(t, "backend", c.Name)
			none := seriesOf(t, c, "none: goodput", "goodput")
			tb := seriesOf(t, c, "token-bucket: goodput", "goodput")
			half := len(none.Y) / 2
			require.Zero(t, slices.Max(none.Y[half:]), "no limiter: goodput never comes back")
			require.Greater(t, slices.Max(tb.Y[len(tb.Y)/2:]), 8.0, "behind a limiter it does")
		},
		"choose-parameters": func(t *testing.T, c output.Chart) {
			require.Equal(t, "reject_pct-key-user", c.Name)
			row := seriesOf(t, c, "gcra", "limit.rate=10")
			require.Len(t, row.Y, 6) // bursts 1 to 6
			require.Greater(t, row.Y[2], 1.0, "burst 3: over 1%")
			require.LessOrEqual(t, row.Y[3], 1.0, "burst 4: the smallest under 1%")
		},
		"accuracy-on-real-traffic": func(t *testing.T, c output.Chart) {
			require.Equal(t, "accuracy", c.Name)
			fw := seriesOf(t, c, "", "fixed-window: differs")
			require.Len(t, fw.Y, 5)
			require.Greater(t, slices.Max(fw.Y), 5.0, "a tight limit: many decisions unlike the log")
		},
	}
	for _, l := range lessons.All() {
		t.Run(l.Name, func(t *testing.T) {
			t.Parallel()
			check, ok := checks[l.Name]
			require.True(t, ok, "lesson %s: no check of its first picture", l.Name)
			check(t, firstPicture(t, l.Name))
		})
	}
}
