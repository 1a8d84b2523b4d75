package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
)

// doubleBurst is the built-in double burst: ten requests of alice at the
// end of one second and ten at the start of the next, 10/s with a burst
// of 10.
func doubleBurst(t *testing.T) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Builtin("double-burst")
	require.NoError(t, err)
	return sc
}

func row(t *testing.T, r *Report, label string) *sim.Result {
	t.Helper()
	for i := range r.Results {
		if r.Results[i].Label == label {
			return &r.Results[i]
		}
	}
	t.Fatalf("no row %s", label)
	return nil
}

func rowLabels(r *Report) []string {
	var out []string
	for _, res := range r.Results {
		out = append(out, res.Label)
	}
	return out
}

// TestRunFigures: the fixed window lets both bursts through (a 1s peak of
// 20, twice the limit); the sliding log rejects the second ten.
func TestRunFigures(t *testing.T) {
	r, err := Run(doubleBurst(t), Options{Algorithms: "sliding-log,fixed-window"})
	require.NoError(t, err)
	require.Equal(t, []string{"fixed-window", "sliding-log"}, rowLabels(r), "in the scenario's order")
	fw, sl := row(t, r, "fixed-window"), row(t, r, "sliding-log")
	require.Equal(t, int64(20), fw.Accepted)
	require.Equal(t, int64(0), fw.Rejected)
	require.Equal(t, int64(10), sl.Accepted)
	require.Equal(t, int64(10), sl.Rejected)
	require.Equal(t, int64(20), fw.Peaks[0].Count, "fixed-window's peak over %dns", fw.Peaks[0].WindowNs)
	require.Equal(t, int64(1), r.Keys)
	require.Equal(t, "double-burst", r.Scenario.Name)
	require.Nil(t, r.Decisions, "none kept unless asked")
}

// TestAlgorithms: a list keeps the rows it names, by label or name; a name
// the scenario lacks is an error naming what it has.
func TestAlgorithms(t *testing.T) {
	r, err := Run(doubleBurst(t), Options{Algorithms: " gcra , token-bucket"})
	require.NoError(t, err)
	require.Equal(t, []string{"token-bucket", "gcra"}, rowLabels(r))

	_, err = Run(doubleBurst(t), Options{Algorithms: "nope,gcra,zzz"})
	var oe *OptionError
	require.True(t, errors.As(err, &oe), "%v", err)
	require.Equal(t, "--algorithms", oe.Option)
	require.True(t, strings.HasPrefix(err.Error(), "--algorithms: nope, zzz not in scenario double-burst (it has fixed-window, sliding-log,"), err.Error())
}

// TestLeftOut: the double burst leaves out the concurrency limiter (no
// backend service) and says so; naming it brings it back in its place,
// without a note.
func TestLeftOut(t *testing.T) {
	var notes []string
	note := func(sk scenarios.Skipped) { notes = append(notes, sk.Name) }
	r, err := Run(doubleBurst(t), Options{Note: note})
	require.NoError(t, err)
	require.Equal(t, []string{"concurrency"}, notes)
	require.NotContains(t, rowLabels(r), "concurrency")

	notes = nil
	r, err = Run(doubleBurst(t), Options{Algorithms: "x-time-rate,concurrency,gcra", Note: note})
	require.NoError(t, err)
	require.Empty(t, notes)
	require.Equal(t, []string{"gcra", "concurrency", "x-time-rate"}, rowLabels(r), "in the default list's order")
}

// TestBaseline: every row is held against the baseline row; the fixed
// window admits the ten the sliding log rejects.
func TestBaseline(t *testing.T) {
	r, err := Run(doubleBurst(t), Options{Algorithms: "fixed-window,sliding-log", Baseline: "sliding-log"})
	require.NoError(t, err)
	b := row(t, r, "fixed-window").Baseline
	require.NotNil(t, b)
	require.Equal(t, "sliding-log", b.Label)
	require.Equal(t, int64(20), b.Compared)
	require.Equal(t, int64(10), b.Differs)
	require.Equal(t, int64(10), b.WronglyAllowed)
	require.Nil(t, row(t, r, "sliding-log").Baseline, "the baseline row itself")

	_, err = Run(doubleBurst(t), Options{Algorithms: "gcra,fixed-window", Baseline: "sliding-log"})
	require.EqualError(t, err, `--baseline: "sliding-log" is not a row of double-burst after --algorithms (it has fixed-window, gcra)`)

	label, err := Baseline(doubleBurst(t), " sliding-log")
	require.NoError(t, err)
	require.Equal(t, "sliding-log", label)
}

// TestSeed: the seed given replaces the scenario's, in the report.
func TestSeed(t *testing.T) {
	seed := uint64(7)
	r, err := Run(doubleBurst(t), Options{Algorithms: "gcra", Seed: &seed})
	require.NoError(t, err)
	require.Equal(t, uint64(7), r.Report.Seed)
}

// TestKeepDecisions: a small run keeps every decision of every row, in
// processing order; a run over the bound keeps none.
func TestKeepDecisions(t *testing.T) {
	r, err := Run(doubleBurst(t), Options{Algorithms: "fixed-window,sliding-log", KeepDecisions: 20})
	require.NoError(t, err)
	require.Len(t, r.Decisions, 2)
	require.Len(t, r.Decisions[1], 20)
	rejected := 0
	for _, d := range r.Decisions[1] {
		if d.Verdict == algorithms.Reject {
			rejected++
		}
	}
	require.Equal(t, 10, rejected)

	r, err = Run(doubleBurst(t), Options{Algorithms: "fixed-window", KeepDecisions: 19})
	require.NoError(t, err)
	require.Nil(t, r.Decisions)
}

// part is a row's part of the decisions, in memory.
type part struct{ bytes.Buffer }

func (p *part) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekStart {
		return 0, errors.New("part: seek to the start only")
	}
	return 0, nil
}

// lineWriter writes "label verdict" a decision, after a header when asked.
type lineWriter struct {
	w      io.Writer
	label  string
	header bool
	buf    bytes.Buffer
}

func (l *lineWriter) Observe(d *sim.Decision) error {
	if l.header {
		l.buf.WriteString("label verdict\n")
		l.header = false
	}
	fmt.Fprintf(&l.buf, "%s %v\n", l.label, d.Verdict == algorithms.Reject)
	return nil
}

func (l *lineWriter) Flush() error {
	_, err := l.w.Write(l.buf.Bytes())
	l.buf.Reset()
	return err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// TestDecisions: every decision is written, the rows' parts joined in the
// rows' order under one header, also while the decisions are kept.
func TestDecisions(t *testing.T) {
	var out bytes.Buffer
	d := &Decisions{
		Part: func() (io.ReadWriteSeeker, error) { return &part{}, nil },
		Writer: func(w io.Writer, row sim.Algorithm, cluster, header bool) DecisionWriter {
			require.False(t, cluster)
			return &lineWriter{w: w, label: row.Label, header: header}
		},
		Create: func() (io.WriteCloser, error) { return nopCloser{&out}, nil },
	}
	r, err := Run(doubleBurst(t), Options{Algorithms: "sliding-log,fixed-window", Decisions: d, KeepDecisions: 5})
	require.NoError(t, err)
	require.Nil(t, r.Decisions, "over the bound")
	want := "label verdict\n" + strings.Repeat("fixed-window false\n", 20) +
		strings.Repeat("sliding-log false\n", 10) + strings.Repeat("sliding-log true\n", 10)
	require.Equal(t, want, out.String())

	out.Reset()
	_, err = Run(doubleBurst(t), Options{Algorithms: "nope", Decisions: d})
	require.Error(t, err)
	require.Empty(t, out.String(), "nothing written for a run that failed")
}

// TestRunTogether: scenarios that differ in their limit only run as one,
// each row decided as when its scenario runs alone.
func TestRunTogether(t *testing.T) {
	file, data, err := scenarios.ResolveText("double-burst")
	require.NoError(t, err)
	point := func(burst int64) *scenarios.Scenario {
		text := strings.Replace(string(data), "burst: 10}", fmt.Sprintf("burst: %d}", burst), 1)
		sc, err := scenarios.Parse(file, []byte(text))
		require.NoError(t, err)
		require.NoError(t, selectAlgorithms(sc, "sliding-log,gcra"))
		return sc
	}
	bursts := []int64{10, 20}
	scs := []*scenarios.Scenario{point(bursts[0]), point(bursts[1])}
	require.True(t, Together(scs[0], scs[1]))
	reps, err := RunTogether(scs, Options{})
	require.NoError(t, err)
	require.Len(t, reps, 2)
	for i, burst := range bursts {
		one, err := Run(point(burst), Options{})
		require.NoError(t, err)
		require.Equal(t, rowLabels(one), rowLabels(reps[i]))
		for j := range one.Results {
			require.Equal(t, one.Results[j].Accepted, reps[i].Results[j].Accepted)
			require.Equal(t, one.Results[j].Rejected, reps[i].Results[j].Rejected)
		}
		require.Equal(t, one.Report.Limit, reps[i].Report.Limit)
	}
	require.Equal(t, int64(20), reps[1].Results[1].Accepted, "gcra with a burst of 20 admits both bursts")

	other := point(10)
	other.Duration *= 2
	require.False(t, Together(scs[0], other))
}

// TestImports: the runner builds without the sweep, the renderers, the
// command line, Redis or the charts, so that it builds small for a
// browser.
func TestImports(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	require.NoError(t, err)
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"/sweep", "/output", "cobra", "redis", "gonum"} {
			require.NotContains(t, dep, banned, "runner depends on %s", dep)
		}
	}
}

// TestInspect: a row that can show its state is sampled on the busiest
// key (ties to the first name), or on the key asked for; without Inspect
// nothing is sampled.
func TestInspect(t *testing.T) {
	const text = `name: keys
limit: 10/s
duration: 2s
algorithms: [token-bucket]
traffic:
  - {type: times, key: bob, at: [0ms, 10ms, 20ms]}
  - {type: times, key: alice, at: [0ms, 10ms, 30ms]}
`
	for _, c := range []struct{ key, want string }{{"", "alice"}, {"bob", "bob"}} {
		sc, err := scenarios.Parse("keys.yaml", []byte(text))
		require.NoError(t, err)
		r, err := Run(sc, Options{Inspect: true, InspectKey: c.key})
		require.NoError(t, err)
		st := r.Results[0].State
		require.NotNil(t, st)
		require.Equal(t, c.want, st.Key)
		require.Equal(t, int64(r.Config.Bucket/10), st.TimesNs[1]-st.TimesNs[0], "ten samples a bucket")
	}
	sc, err := scenarios.Parse("keys.yaml", []byte(text))
	require.NoError(t, err)
	r, err := Run(sc, Options{})
	require.NoError(t, err)
	require.Nil(t, r.Results[0].State)
}
