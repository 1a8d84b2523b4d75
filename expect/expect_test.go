package expect_test

import (
	"os"
	"strings"
	"testing"

	"github.com/ratesim/ratesim/expect"
	"github.com/ratesim/ratesim/runner"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/stretchr/testify/require"
)

// check runs the scenario in text with the options and returns each
// outcome as "status row figure measured".
func check(t *testing.T, text string, o runner.Options) []string {
	t.Helper()
	sc, err := scenarios.Parse("t.yaml", []byte(text))
	require.NoError(t, err)
	claims, err := expect.Compile(sc)
	require.NoError(t, err)
	plan := expect.Prepare(claims, sc, &o)
	rep, err := runner.Run(sc, o)
	require.NoError(t, err)
	outs, err := plan.Evaluate(rep)
	require.NoError(t, err)
	var got []string
	for _, out := range outs {
		line := out.Status.String() + " " + out.Row + " " + out.Claim.Term.Text + " " + out.MeasuredText()
		if out.Note != "" {
			line += " (" + out.Note + ")"
		}
		got = append(got, line)
	}
	return got
}

// The double burst: user-1 sends 10 requests at 900ms and 10 at 1s, bot 5
// at 1.5s, against 10/s per key. The fixed window admits all 25 (user-1's
// at 900ms in [0, 1s), its next 10 in [1s, 2s)): 25 reach the backend in
// [900ms, 1.9s), 20 of them user-1's, and 10 in any 100ms (900ms and 1s
// are 100ms apart, and a window is [a, a+100ms)). The sliding log rejects
// user-1's second 10, whose last second holds 10 already, and says to
// retry when the first of them leaves, at 1.9s: 900ms after 1s.
const doubleBurst = `name: double
limit: 10/s
algorithms: [fixed-window, sliding-log]
traffic:
  - {type: burst, at: 900ms, count: 10, key: user-1}
  - {type: burst, at: 1s, count: 10, key: user-1}
  - {type: burst, at: 1500ms, count: 5, key: bot}
`

func TestHandComputed(t *testing.T) {
	got := check(t, doubleBurst+`expect:
  fixed-window:
    - peak(1s) == 25
    - peak(100ms) == 10
    - key_peak(1s) == 20
    - accepted == 25
    - peak == 24
  sliding-log:
    - peak(1s) == 15
    - rejected == 10
    - reject_pct(key=user-*) == 50
    - reject_pct(key=b*) == 0
    - reject_pct == 40
    - rejected(key=user-1) >= 11
    - key_peak(1s) == 10
    - verdict(at=1s) == reject
    - verdict(at=900ms, n=10) == accept
    - retry_after(at=1s) == 900ms
    - verdict(at=1s, key=bot) == accept
  all:
    - p99_delay <= 0s
    - extra <= 0
`, runner.Options{})
	require.Equal(t, []string{
		"holds fixed-window peak(1s) 25",
		"holds fixed-window peak(100ms) 10",
		"holds fixed-window key_peak(1s) 20",
		"holds fixed-window accepted 25",
		"fails fixed-window peak 25",
		"holds sliding-log peak(1s) 15",
		"holds sliding-log rejected 10",
		"holds sliding-log reject_pct(key=user-*) 50",
		"holds sliding-log reject_pct(key=b*) 0",
		"holds sliding-log reject_pct 40",
		"fails sliding-log rejected(key=user-1) 10",
		"holds sliding-log key_peak(1s) 10",
		"holds sliding-log verdict(at=1s) reject",
		"holds sliding-log verdict(at=900ms, n=10) accept",
		"holds sliding-log retry_after(at=1s) 900ms",
		"fails sliding-log verdict(at=1s, key=bot) none (no decision at 1s)",
		"holds fixed-window p99_delay 0",
		"holds sliding-log p99_delay 0",
		"n/a fixed-window extra none (the row has no extra)",
		"n/a sliding-log extra none (the row has no extra)",
	}, got)
}

// Tolerances, around the fixed window's 25: within 5% of 24 (1.2) and of
// 26 (1.3), not within 3% of 26 (0.78); <= 24 within 1 holds, < 24
// within 1 does not.
func TestTolerance(t *testing.T) {
	got := check(t, doubleBurst+`expect:
  fixed-window:
    - peak(1s) == 24 within 5%
    - peak(1s) == 26 within 5%
    - peak(1s) == 26 within 3%
    - peak(1s) <= 24 within 1
    - peak(1s) < 24 within 1
    - peak(1s) != 25 within 0
    - peak(1s) != 26 within 0.5
    - peak(1s) >= 26 within 5%
    - retry_after(at=1s) == 1ms within 1ms
`, runner.Options{})
	require.Equal(t, []string{
		"holds fixed-window peak(1s) 25",
		"holds fixed-window peak(1s) 25",
		"fails fixed-window peak(1s) 25",
		"holds fixed-window peak(1s) 25",
		"fails fixed-window peak(1s) 25",
		"fails fixed-window peak(1s) 25",
		"holds fixed-window peak(1s) 25",
		"holds fixed-window peak(1s) 25",
		"holds fixed-window retry_after(at=1s) 0",
	}, got)
}

// Cloudflare's two counters: 42 admitted in the minute [0, 1m), then 18
// asked at 1m5s, where the estimate is 42 × 55/60 = 38.5: 11 of them fit
// under 50 (38.5 + 11 = 49.5, the 12th would make 50.5). At 1m15s the
// request meets 42 × 45/60 + 11 = 42.5 and is admitted. The sliding log
// admits 8 of the 18 (the 42 are still in its last minute at 1m5s).
func TestEstimate(t *testing.T) {
	got := check(t, `name: cloudflare
limit: 50/m
algorithms: [sliding-window, fixed-window, sliding-log]
traffic:
  - {type: burst, at: 10s, count: 42}
  - {type: burst, at: 1m5s, count: 18}
  - {type: times, at: [1m15s]}
expect:
  sliding-window:
    - estimate(at=1m15s) == 42.5
    - state(at=1m15s, gauge=previous) == 42
    - state(at=1m15s, gauge=current) == 11
    - estimate(at=1m5s) == 38.5
    - verdict(at=1m15s) == accept
    - accepted == 54
    - accepted == 61
  fixed-window:
    - estimate(at=1m15s) == 0
    - state(at=1m15s, gauge=tokens) == 0
    - state(at=1m15s, gauge=count) == 18
  sliding-log:
    - state(at=1m15s, gauge=in_window) == 8
`, runner.Options{})
	require.Equal(t, "holds sliding-window estimate(at=1m15s) 42.5", got[0])
	require.Equal(t, "holds sliding-window state(at=1m15s, gauge=previous) 42", got[1])
	require.Equal(t, "holds sliding-window state(at=1m15s, gauge=current) 11", got[2])
	require.Equal(t, "holds sliding-window estimate(at=1m5s) 38.5", got[3])
	require.Equal(t, "holds sliding-window verdict(at=1m15s) accept", got[4])
	require.Equal(t, "holds sliding-window accepted 54", got[5])
	require.Equal(t, "fails sliding-window accepted 54", got[6])
	require.True(t, strings.HasPrefix(got[7], "fails fixed-window estimate(at=1m15s) none (the algorithm's state has no estimate (it has "), got[7])
	require.Equal(t, "fails fixed-window state(at=1m15s, gauge=tokens) none (the algorithm's state has no tokens (it has count or limit))", got[8])
	// the fixed window [1m, 2m) admitted all 18; the sliding log's last
	// minute at 1m15s holds the 8 of them it admitted (the 42 at 10s have
	// left it), a gauge whose name has a space ("in window")
	require.Equal(t, "holds fixed-window state(at=1m15s, gauge=count) 18", got[9])
	require.Equal(t, "holds sliding-log state(at=1m15s, gauge=in_window) 8", got[10])
}

// A claim on a row the run left out does not apply.
func TestRowNotRun(t *testing.T) {
	got := check(t, doubleBurst+`expect:
  fixed-window: peak(1s) == 25
  sliding-log: peak(1s) == 1
`, runner.Options{Algorithms: "fixed-window"})
	require.Equal(t, []string{"holds fixed-window peak(1s) 25", "n/a sliding-log peak(1s) none (the row was not run)"}, got)
}

// Mistakes are named at file:line:col: the column of the mistake inside
// the assertion, wherever the assertion stands in the file.
func TestCompileErrors(t *testing.T) {
	for _, c := range []struct{ expect, want string }{
		{"  gcra: peek(1s) == 20", `t.yaml:6:9: expect.gcra: "peek" is not a figure; did you mean "peak"?`},
		{"  gcra:\n    - accepted == 20\n    - reject_pcnt <= 1", `t.yaml:8:7: expect.gcra[1]: "reject_pcnt" is not a figure; did you mean "reject_pct"?`},
		{`  gcra: "p99_delay <= 300"`, `t.yaml:6:23: expect.gcra: "300", want a duration such as 300ms: p99_delay is one`},
		{"  all: [accepted => 3]", `t.yaml:6:18: expect.all[0]: "=", want an operator`},
		{"  gcra: verdict(at=1s) <= reject", `t.yaml:6:24: expect.gcra: "<=": a verdict is equal to another or not, want == or !=`},
		{"  gcra: verdict == reject", `t.yaml:6:17: expect.gcra: verdict reads one decision, want verdict(at=TIME) or verdict(n=N)`},
		{"  gcra: state == 3", `t.yaml:6:15: expect.gcra: state reads one decision, want state(at=TIME, gauge=NAME)`},
		{"  gcra: estimate(n=2, at=1s, gauge=x) == 3", `t.yaml:6:30: expect.gcra: "gauge", want at=TIME, n=N or key=GLOB (only state takes gauge=)`},
		{"  gcra: peak(key=a) == 3", `t.yaml:6:14: expect.gcra: peak takes no key filter, want a window: peak(1s)`},
		{"  gcra: accepted == 3 within lots", `t.yaml:6:30: expect.gcra: "lots", want a tolerance >= 0`},
		{"  gcra: accepted == 3 or more", `t.yaml:6:23: expect.gcra: "or", want "within"`},
		{"  gcra: verdict(at=1s, kye=a) == reject", `t.yaml:6:24: expect.gcra: "kye", want at=TIME, n=N or key=GLOB; did you mean "key"?`},
		{"  gcrra: accepted == 3", `t.yaml:6:3: expect.gcrra: "gcrra" is no row of the scenario (want all or a label: gcra); did you mean "gcra"?`},
		{"  gcra: 3", `t.yaml:6:9: expect.gcra: found integer 3, want an assertion`},
		{"  gcra: []", `t.yaml:6:9: expect.gcra: an empty list, want at least one assertion`},
		{"  - accepted == 3", `t.yaml:6:3: expect: found a list, want a mapping of row labels (or all) to assertions`},
	} {
		text := "name: t\nlimit: 5/s\nalgorithms: [gcra]\ntraffic: [{type: burst, at: 0, count: 3}]\nexpect:\n" + c.expect + "\n"
		sc, err := scenarios.Parse("t.yaml", []byte(text))
		if err == nil {
			_, err = expect.Compile(sc)
		}
		require.Error(t, err, c.expect)
		require.Contains(t, err.Error(), c.want, c.expect)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"peak(1s) == 20", "reject_pct(key=user-*) <= 1", "p99_delay <= 300ms within 5%", "extra_pct <= 5",
		"verdict(at=1m15s, key=a, n=2) == reject", "estimate(at=1m15s) == 49.5 within 0.1", "state(at=0, gauge=tokens) >= 1",
		"retry_after(n=3) == -1ns", "peak(window=1s) != 3", "accepted == 3 within", "verdict(at=1s",
		"reject_pct(key=[) <= 1", "peak() == 1", "(", "== 3", "accepted === 3", "accepted ! 3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := expect.Parse(s)
		if err != nil {
			var se *expect.SyntaxError
			require.ErrorAs(t, err, &se)
			require.GreaterOrEqual(t, se.Col, 1)
			require.LessOrEqual(t, se.Col, len(s)+1)
			return
		}
		// what it writes reads back the same
		b, err := expect.Parse(a.String())
		require.NoError(t, err, a.String())
		require.Equal(t, a.String(), b.String())
	})
}

// docs/expect.md names every figure.
func TestDocsListEveryFigure(t *testing.T) {
	data, err := os.ReadFile("../docs/expect.md")
	require.NoError(t, err)
	for _, name := range expect.Names() {
		require.Contains(t, string(data), "`"+name+"`", "docs/expect.md does not name %s", name)
	}
}
