package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/require"
)

// checkScenario is a double burst against 10/s: the fixed window admits
// both bursts (20 in [900ms, 1.9s)), the sliding log the first only.
const checkScenario = `name: double
limit: 10/s
algorithms: [fixed-window, sliding-log]
traffic:
  - {type: burst, at: 900ms, count: 10}
  - {type: burst, at: 1s, count: 10}
expect:
`

func writeScenario(t *testing.T, dir, name, expect string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(checkScenario+expect), 0o644))
	return path
}

func TestCheckExitStatus(t *testing.T) {
	dir := t.TempDir()
	holds := writeScenario(t, dir, "holds.yaml", "  fixed-window: peak(1s) == 20\n  sliding-log: [peak(1s) == 10, verdict(at=1s) == reject]\n")
	fails := writeScenario(t, dir, "fails.yaml", "  fixed-window: peak(1s) <= 10\n  all: rejected == 10\n")
	typo := writeScenario(t, dir, "typo.yaml", "  fixed-window: peek(1s) <= 10\n")
	row := writeScenario(t, dir, "row.yaml", "  fixed-windw: peak(1s) <= 10\n")
	none := filepath.Join(dir, "none.yaml")
	require.NoError(t, os.WriteFile(none, []byte(strings.TrimSuffix(checkScenario, "expect:\n")), 0o644))

	status, out, errOut := run(t, "check", holds)
	require.Equal(t, 0, status, errOut)
	require.Equal(t, holds+` (double): 3 hold, 0 fail
      row           figure          expected   measured  where
  ok  fixed-window  peak(1s)        == 20      20        8:17
  ok  sliding-log   peak(1s)        == 10      10        9:17
  ok  sliding-log   verdict(at=1s)  == reject  reject    9:33
`, out)
	require.Empty(t, errOut)

	status, out, errOut = run(t, "check", fails)
	require.Equal(t, 1, status)
	require.Equal(t, fails+` (double): 1 hold, 2 fail
        row           figure    expected  measured  where
  FAIL  fixed-window  peak(1s)  <= 10     20        8:17
  FAIL  fixed-window  rejected  == 10     0         9:8
  ok    sliding-log   rejected  == 10     10        9:8
`, out)
	require.Equal(t, "ratesim: 2 expectations failed\n", errOut)

	// the run goes on past a failing file; bad input wins over a failure
	status, out, errOut = run(t, "check", holds, fails)
	require.Equal(t, 1, status)
	require.Contains(t, out, "\n2 files: 4 hold, 2 fail\n")
	status, _, errOut = run(t, "check", holds, typo, fails)
	require.Equal(t, 2, status)
	require.Equal(t, typo+`:8:17: expect.fixed-window: "peek" is not a figure; did you mean "peak"?`+"\n", errOut)

	status, _, errOut = run(t, "check", row)
	require.Equal(t, 2, status)
	require.Equal(t, row+`:8:3: expect.fixed-windw: "fixed-windw" is no row of the scenario (want all or a label: fixed-window or sliding-log); did you mean "fixed-window"?`+"\n", errOut)

	status, _, errOut = run(t, "check", none)
	require.Equal(t, 2, status)
	require.Equal(t, "ratesim: "+none+": no expect: section, nothing to check (docs/expect.md)\n", errOut)

	status, _, errOut = run(t, "check", filepath.Join(dir, "missing.yaml"))
	require.Equal(t, 2, status, errOut)

	// validate refuses what check refuses, at the same place
	status, _, errOut = run(t, "validate", typo)
	require.Equal(t, 2, status)
	require.Contains(t, errOut, typo+`:8:17: expect.fixed-window: "peek" is not a figure`)
}

func TestCheckJSON(t *testing.T) {
	dir := t.TempDir()
	path := writeScenario(t, dir, "s.yaml", "  sliding-log: [retry_after(at=1s) == 900ms, p99_delay <= 1ms, accepted == 11]\n")
	status, out, errOut := run(t, "check", path, "--format", "json")
	require.Equal(t, 1, status, errOut)
	var got struct {
		Files []struct {
			File          string
			Holds, Fails  int
			NotApplicable int `json:"not_applicable"`
			Outcomes      []map[string]any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got.Files, 1)
	f := got.Files[0]
	require.Equal(t, []int{2, 1, 0}, []int{f.Holds, f.Fails, f.NotApplicable})
	require.Equal(t, map[string]any{"row": "sliding-log", "assertion": "retry_after(at=1s) == 900ms", "figure": "retry_after(at=1s)",
		"expected": "== 900ms", "measured": "900ms", "value": 9e8, "status": "holds", "line": 8.0, "col": 17.0}, f.Outcomes[0])
	require.Equal(t, "fails", f.Outcomes[2]["status"])
	require.Equal(t, 10.0, f.Outcomes[2]["value"])
}

// TestCheckJUnit: --junit writes a report that validates, with xmllint
// (Debian's libxml2-utils), against the JUnit schema CI systems read
// (testdata/junit.xsd): a testsuite per file, a testcase per outcome, a
// failure saying what was expected and measured.
func TestCheckJUnit(t *testing.T) {
	dir := t.TempDir()
	a := writeScenario(t, dir, "a.yaml", "  fixed-window: peak(1s) <= 10\n  all: [extra_pct <= 5, accepted >= 10]\n")
	b := writeScenario(t, dir, "b.yaml", "  sliding-log: reject_pct == 50\n")
	report := filepath.Join(dir, "report.xml")
	status, _, errOut := run(t, "check", a, b, "--junit", report)
	require.Equal(t, 1, status, errOut)
	data, err := os.ReadFile(report)
	require.NoError(t, err)
	x := string(data)
	require.Contains(t, x, `<testsuites name="ratesim check" tests="6" failures="1" errors="0">`)
	require.Contains(t, x, `<testsuite name="`+a+`" tests="5" failures="1" errors="0" skipped="2" time="0" file="`+a+`">`)
	require.Contains(t, x, `<testcase name="fixed-window: peak(1s) &lt;= 10" classname="`+a+`" time="0">
      <failure message="expected peak(1s) &lt;= 10, measured 20" type="expectation">`+a+`:8:17: fixed-window: peak(1s) &lt;= 10
expected: &lt;= 10
measured: 20
</failure>`)
	require.Contains(t, x, `<skipped message="the row has no extra_pct"></skipped>`)
	require.Contains(t, x, `<testsuite name="`+b+`" tests="1" failures="0" errors="0" skipped="0" time="0" file="`+b+`">`)

	// a file that does not read is an error of its suite
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("name: [\n"), 0o644))
	badReport := filepath.Join(dir, "bad.xml")
	status, _, _ = run(t, "check", b, bad, "--junit", badReport)
	require.Equal(t, 2, status)
	bx, err := os.ReadFile(badReport)
	require.NoError(t, err)
	require.Contains(t, string(bx), `tests="1" failures="0" errors="1"`)

	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint is not installed (Debian: apt-get install libxml2-utils): the reports are not validated against testdata/junit.xsd")
	}
	for _, r := range []string{report, badReport} {
		out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), r).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "validates")
	}
}

func TestCheckFlags(t *testing.T) {
	dir := t.TempDir()
	path := writeScenario(t, dir, "s.yaml", "  all: accepted >= 10\n")
	status, _, errOut := run(t, "check", path, "--format", "csv")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, `--format: "csv" is not a format (want table, json)`)
	status, _, errOut = run(t, "check")
	require.Equal(t, 2, status, errOut)
	status, _, errOut = run(t, "check", path, "--junit", filepath.Join(dir, "no", "such", "dir", "r.xml"))
	require.Equal(t, 2, status, errOut)
	require.Contains(t, errOut, "--junit")
}

// compare prints the outcomes under the table, and in its JSON, CSV and
// Markdown, and exits as before: 0, though a claim fails (ratesim check is
// the command that fails).
func TestCompareShowsExpectations(t *testing.T) {
	path := writeScenario(t, t.TempDir(), "s.yaml", "  sliding-log: [rejected == 10, verdict(at=1s) == accept]\n")
	status, out, errOut := run(t, "compare", path)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, `
Expectations: 1 hold, 1 fail
        row          figure          expected   measured  where
  ok    sliding-log  rejected        == 10      10        8:17
  FAIL  sliding-log  verdict(at=1s)  == accept  reject    8:33
`)

	// JSON: an "expectations" object after the report's fields, as check
	// writes a file's outcomes
	status, out, errOut = run(t, "compare", path, "--format", "json")
	require.Equal(t, 0, status, errOut)
	var rep struct {
		Results      []struct{ Label string }
		Expectations struct {
			Holds, Fails  int
			NotApplicable int `json:"not_applicable"`
			Outcomes      []map[string]any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, 2)
	require.Equal(t, []int{1, 1, 0}, []int{rep.Expectations.Holds, rep.Expectations.Fails, rep.Expectations.NotApplicable})
	require.Equal(t, map[string]any{"row": "sliding-log", "assertion": "verdict(at=1s) == accept", "figure": "verdict(at=1s)",
		"expected": "== accept", "measured": "reject", "value": 2.0, "status": "fails", "line": 8.0, "col": 33.0}, rep.Expectations.Outcomes[1])

	// CSV: each row ends with its claims' counts and the ones that fail
	status, out, errOut = run(t, "compare", path, "--format", "csv")
	require.Equal(t, 0, status, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3)
	require.True(t, strings.HasSuffix(lines[0], ",expect_holds,expect_fails,expect_not_applicable,expect_failing"), lines[0])
	require.True(t, strings.HasSuffix(lines[1], ",0,0,0,"), "fixed-window has no claim: %s", lines[1])
	require.True(t, strings.HasSuffix(lines[2], ",1,1,0,verdict(at=1s) == accept (measured reject)"), lines[2])

	// Markdown: the counts and a table under the findings
	status, out, errOut = run(t, "compare", path, "--format", "markdown")
	require.Equal(t, 0, status, errOut)
	require.True(t, strings.HasSuffix(out, `
**Expectations: 1 hold, 1 fail**

| | row | figure | expected | measured | where |
|---|---|---|---|---|---|
| ok | sliding-log | `+"`rejected` | `== 10` | `10`"+` | 8:17 |
| **FAIL** | sliding-log | `+"`verdict(at=1s)` | `== accept` | `reject`"+` | 8:33 |
`), out)

	// without an expect section, every format is as it was
	for _, format := range []string{"json", "csv", "markdown"} {
		_, plain, _ := run(t, "compare", "double-burst", "--format", format)
		require.NotContains(t, plain, "xpect", format)
	}
}

// A sweep holds the claims at every point, a line per point; so does
// sweep merge, from the claims its shards' JSON keep, with a key filter's
// totals: what the unsharded sweep prints, byte for byte.
func TestSweepExpectations(t *testing.T) {
	dir := t.TempDir()
	path := writeScenario(t, dir, "s.yaml", "  all: reject_pct <= 30\n  sliding-log: [verdict(at=1s) == reject, rejected(key=*) == 10]\n")
	vary := []string{"sweep", path, "--vary", "limit.rate=10,20"}
	status, out, errOut := run(t, vary...)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, `
Expectations per point:
  point 0 (limit.rate=10): 2 hold, 1 fail, 1 n/a; fails: sliding-log reject_pct <= 30 (measured 50)
  point 1 (limit.rate=20): 2 hold, 1 fail, 1 n/a; fails: sliding-log rejected(key=*) == 10 (measured 0)
`)
	var shards []string
	for k := range 2 {
		status, shard, errOut := run(t, append(vary, "--shard", strconv.Itoa(k)+"/2")...)
		require.Equal(t, 0, status, errOut)
		require.Contains(t, shard, `"expect": [`)
		shards = append(shards, filepath.Join(dir, "shard-"+strconv.Itoa(k)+".json"))
		require.NoError(t, os.WriteFile(shards[k], []byte(shard), 0o644))
	}
	status, merged, errOut := run(t, append([]string{"sweep", "merge"}, shards...)...)
	require.Equal(t, 0, status, errOut)
	require.Equal(t, out, merged)

	// shards of other claims are not one sweep
	other := writeScenario(t, dir, "other.yaml", "  all: [reject_pct <= 40, rejected(key=*) >= 0]\n")
	status, shard, errOut := run(t, "sweep", other, "--vary", "limit.rate=10,20", "--shard", "1/2")
	require.Equal(t, 0, status, errOut)
	require.NoError(t, os.WriteFile(shards[1], []byte(strings.ReplaceAll(shard, "other.yaml", "s.yaml")), 0o644))
	status, _, errOut = run(t, append([]string{"sweep", "merge"}, shards...)...)
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "shard 2 was run with another expect section than shard 0/2")
}

// TestExpectDocsCI runs the ratesim commands of docs/expect.md's GitHub
// Actions step and GitLab CI job, from the repository's root as CI would:
// each must exit 0 and write a JUnit report that validates. Each YAML
// block must read as YAML.
func TestExpectDocsCI(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "expect.md"))
	require.NoError(t, err)
	var blocks []string
	in, cur := false, ""
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case l == "```yaml":
			in, cur = true, ""
		case in && l == "```":
			in = false
			blocks = append(blocks, cur)
		case in:
			cur += l + "\n"
		}
	}
	dir := t.TempDir()
	t.Chdir("..")
	commands := 0
	for _, b := range blocks {
		var doc any
		require.NoError(t, yaml.Unmarshal([]byte(b), &doc), b)
		for _, l := range strings.Split(b, "\n") {
			l = strings.TrimPrefix(strings.TrimSpace(l), "- ")
			if !strings.HasPrefix(l, "ratesim check ") {
				continue
			}
			commands++
			args := shellFields(l)[1:]
			report := ""
			for i := range args {
				if i > 0 && args[i-1] == "--junit" {
					report = filepath.Join(dir, args[i])
					args[i] = report
				}
			}
			status, _, errOut := run(t, args...)
			require.Equal(t, 0, status, "%s: %s", l, errOut)
			require.NotEmpty(t, report, "%s: writes a JUnit report", l)
			if xmllint, err := exec.LookPath("xmllint"); err == nil {
				out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("cmd", "testdata", "junit.xsd"), report).CombinedOutput()
				require.NoError(t, err, "%s", out)
			}
		}
	}
	require.Equal(t, 2, commands, "a GitHub Actions step and a GitLab CI job")
}

// replay takes its claims from --expect and prints them as compare does;
// a mistake names the flag.
func TestReplayExpect(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "t.csv")
	require.NoError(t, os.WriteFile(trace, []byte("time,key\n1.0,a\n1.1,a\n1.2,a\n2.5,b\n"), 0o644))
	args := []string{"replay", trace, "--limit", "1/s", "--time-field", "time", "--key-field", "key", "--time-unit", "s",
		"--algorithms", "gcra,fixed-window", "--no-timeline"}
	// a's 3 requests in 200ms against 1 a second: the first passes
	status, out, errOut := run(t, append(args, "--expect", "all: rejected == 2", "--expect", "gcra: verdict(n=2) == accept")...)
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, `
Expectations: 2 hold, 1 fail
        row           figure        expected   measured  where
  ok    fixed-window  rejected      == 2       2         expect.all[0]
  ok    gcra          rejected      == 2       2         expect.all[0]
  FAIL  gcra          verdict(n=2)  == accept  reject    expect.gcra[0]
`)
	status, _, errOut = run(t, append(args, "--expect", "gcra: peek <= 3")...)
	require.Equal(t, 2, status)
	require.Equal(t, "ratesim: --expect: \"peek\" is not a figure; did you mean \"peak\"?\n", errOut)
	status, _, errOut = run(t, append(args, "--expect", "reject_pct <= 3")...)
	require.Equal(t, 2, status)
	require.Contains(t, errOut, `--expect: "reject_pct <= 3": want ROW: ASSERTION`)
}

// TestReproductions: every built-in's claims hold (ratesim check
// --builtins), and docs/reproductions.md's table shows what the runs
// measure: each row's figure is the one ratesim check measures for its
// built-in, and every built-in with claims has a row.
func TestReproductions(t *testing.T) {
	t.Parallel()
	status, out, errOut := run(t, "check", "--builtins")
	require.Equal(t, 0, status, "%s%s", out, errOut)
	names := builtinsWithExpectations()
	require.Contains(t, out, fmt.Sprintf("\n%d files: ", len(names)))

	data, err := os.ReadFile(filepath.Join("..", "docs", "reproductions.md"))
	require.NoError(t, err)
	shown := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		cells := strings.Split(l, " | ")
		if !strings.HasPrefix(l, "| `") || len(cells) != 7 {
			continue
		}
		name, row := strings.Trim(strings.TrimPrefix(cells[0], "| "), "`"), cells[1]
		figure, measured, ok := strings.Cut(strings.TrimPrefix(cells[5], "`"), "` ")
		require.True(t, ok, l)
		shown[name] = true
		status, out, errOut := run(t, "check", name, "--format", "json")
		require.Equal(t, 0, status, errOut)
		var got struct {
			Files []struct{ Outcomes []map[string]any }
		}
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		found := false
		for _, o := range got.Files[0].Outcomes {
			if o["figure"] == figure && o["row"] == row {
				found = true
				require.Equal(t, measured, o["measured"], "%s: %s: %s", name, row, figure)
			}
		}
		require.True(t, found, "%s claims nothing of %s on %s", name, figure, row)
	}
	for _, n := range names {
		require.True(t, shown[n], "docs/reproductions.md has no row for %s", n)
	}
}
