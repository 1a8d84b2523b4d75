package cmd

import (
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runaway is a scenario of one steady source of one key at rate for
// duration.
func runaway(t *testing.T, rate, duration string) string {
	return writeFile(t, "runaway.yaml", "name: runaway\nduration: "+duration+
		"\nlimit: {rate: 100, per: 1s}\ntraffic:\n  - type: steady\n    key: k\n    rate: "+rate+"\n")
}

// TestRunawayRefused: the runaway scenarios stop before they start, exit
// 2, with the estimate and the flags that raise the budget, each in well
// under a second; validate says they are valid and prints the estimate.
func TestRunawayRefused(t *testing.T) {
	for _, c := range []struct {
		name, rate, duration string
		args                 []string
		over                 []string // what the refusal says
	}{
		// 3.6e15 requests (1e9 a second for 3.6e6 s), over
		// --max-requests; the peaks of the 1s window hold its 1e9
		// instants, one a nanosecond, as a run: memory is no reason
		{"1e9/s for 1000h", "1000000000/s", "1000h", []string{"--algorithms", "gcra"}, []string{
			"the run is too big to start: 3,600,000,000,000,000 requests to decide, over --max-requests 1,000,000,000; its estimate:",
			"  requests: exactly 3,600,000,000,000,000\n",
			"1,000,000,000 distinct instants of the 1s window at most, in runs of evenly spaced ones: 3 entries",
		}},
		// 6.6e8 a second are 1 or 2 ns apart (1.52 on average), the 1s
		// window's 660,000,001 instants 320,000,001 gaps of 2 at most,
		// never two in a row: 640,000,006 entries at most, 12 bytes
		// each, over --max-memory
		{"6.6e8/s for 10s", "660000000/s", "10s", []string{"--algorithms", "gcra", "--max-requests", "unlimited"}, []string{
			"the run is too big to start: 7.2 GiB of memory, over --max-memory 4.0 GiB: the exact peaks of offered traffic hold the 660,000,001 distinct instants of the 1s window in runs of evenly spaced ones, up to 640,000,006 entries (7.2 GiB)",
		}},
		// the largest rate: more requests in 1s than an int64 holds
		{"the largest rate", "9223372036854775807/s", "1s", nil, []string{
			"9,223,372,036,854,775,807 or more requests to decide, over --max-requests 1,000,000,000",
			"  requests: 9,223,372,036,854,775,807 or more\n",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := runaway(t, c.rate, c.duration)
			start := time.Now()
			status, out, errOut := run(t, append([]string{"compare", path}, c.args...)...)
			require.Less(t, time.Since(start), time.Second)
			require.Equal(t, 2, status, errOut)
			require.Empty(t, out)
			for _, s := range c.over {
				require.Contains(t, errOut, s)
			}
			require.Contains(t, errOut, "raise --max-requests or --max-memory (2e9, 8GiB, unlimited) to run it anyway\n")
			if slices.Contains(c.args, "unlimited") {
				return // validate checks the default budget
			}

			status, out, errOut = run(t, "validate", path)
			require.Equal(t, 0, status, errOut)
			require.Contains(t, out, ": ok: scenario \"runaway\"")
			require.Contains(t, out, "\n  over the default budget (1,000,000,000 requests, 4.0 GiB): a run needs --max-requests or --max-memory\n")
		})
	}
}

// TestBudgetFlags: double-burst makes 20 requests, each decided by its 8
// rows: 160 decisions. A budget of 159 refuses it, 160 runs it; the
// figures take units, and a bad one is a usage error.
func TestBudgetFlags(t *testing.T) {
	status, _, errOut := run(t, "compare", "--max-requests", "159")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "ratesim: the run is too big to start: 160 requests to decide, over --max-requests 159; its estimate:\n"+
		"  requests: exactly 20\n  decisions: 160 (every attempt by 8 limiters)\n  keys: at most 2\n")
	for _, ok := range [][]string{
		{"--max-requests", "160"},
		{"--max-requests", "1.6e2"},
		{"--max-requests", "unlimited", "--max-memory", "unlimited"},
		{"--max-memory", "64MiB"},
	} {
		status, _, errOut = run(t, append([]string{"compare", "--format", "csv"}, ok...)...)
		require.Equal(t, 0, status, "%v: %s", ok, errOut)
	}
	// the base of a run is 32 MiB: 32MiB is just under its estimate
	status, _, errOut = run(t, "compare", "--max-memory", "32MiB")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "of memory, over --max-memory 32.0 MiB; its estimate:")
	for _, bad := range [][]string{
		{"--max-requests", "lots", `invalid argument "lots" for "--max-requests" flag: "lots": want a count (2000000, 2e6) or unlimited`},
		{"--max-memory", "4GiBs", `"4GiBs": want bytes with a unit (4GiB, 512MiB, 8GB, 2e9) or unlimited`},
		{"--max-memory", "0", `"0": want more than 0 (or unlimited)`},
	} {
		status, _, errOut = run(t, "compare", bad[0], bad[1])
		require.Equal(t, 2, status)
		require.Contains(t, errOut, bad[2])
	}
}

func TestParseBudget(t *testing.T) {
	for _, c := range []struct {
		in    string
		bytes bool
		want  int64
	}{
		{"2e9", false, 2_000_000_000},
		{"1_000_000", false, 1_000_000},
		{"4GiB", true, 4 << 30},
		{"1.5GiB", true, 3 << 29},
		{"8GB", true, 8_000_000_000},
		{"512 MiB", true, 512 << 20},
		{"2e9", true, 2_000_000_000},
		{"unlimited", true, 0},
		{"1e30", false, math.MaxInt64},
	} {
		got, err := parseBudget(c.in, c.bytes)
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
	}
	for _, bad := range []string{"", "GiB", "1/2", "-3", "x"} {
		_, err := parseBudget(bad, true)
		require.Error(t, err, bad)
	}
	require.True(t, strings.HasPrefix(budgetValue{n: new(int64), bytes: true}.String(), "unlimited"))
}

// TestSweepBudget: double-burst's 4 points of limit.burst each decide
// 160 requests (20 by 8 rows): a point over --max-requests stops the
// sweep before any point runs, and so do the 640 of all four over
// --max-total-requests.
func TestSweepBudget(t *testing.T) {
	args := []string{"sweep", "double-burst", "--vary", "limit.burst=5..20:5"}
	status, out, errOut := run(t, append(args, "--max-requests", "159")...)
	require.Equal(t, 2, status)
	require.Empty(t, out)
	require.Contains(t, errOut, "ratesim: point limit.burst=5 is too big to start: 160 requests to decide, over --max-requests 159; its estimate:\n")
	status, out, errOut = run(t, append(args, "--max-total-requests", "639")...)
	require.Equal(t, 2, status)
	require.Empty(t, out)
	require.Contains(t, errOut, "ratesim: the sweep of 4 points is too big to start: 640 requests to decide, over --max-total-requests 639; its estimate:\n"+
		"  requests: exactly 80\n")
	require.Contains(t, errOut, "\nraise --max-total-requests (2e10, unlimited) to run it anyway\n")
	status, _, errOut = run(t, append(args, "--max-requests", "160", "--max-total-requests", "640")...)
	require.Equal(t, 0, status, errOut)
}

// TestBillionASecondFits: a steady source of a billion requests a second
// for 1s, decided by gcra, is within the default budget: its peaks of
// offered traffic hold the 1s window's billion instants, one a
// nanosecond, as a run of them. Run for 2ms (two million requests), its
// offered peaks are exact: all of them in the 1s window, a million in
// any 1ms.
func TestBillionASecondFits(t *testing.T) {
	billion := func(duration string) string {
		return writeFile(t, "billion.yaml", "name: billion\nduration: "+duration+"\nlimit: {rate: 100, per: 1s}\n"+
			"algorithms: [{name: gcra}]\ntraffic:\n  - {type: steady, key: k, rate: 1000000000/s}\nreport: {windows: [1s, 1ms]}\n")
	}
	status, out, errOut := run(t, "validate", billion("1s"))
	require.Equal(t, 0, status, errOut)
	require.Contains(t, out, "  requests: exactly 1,000,000,000\n  decisions: 1,000,000,000 (every attempt by 1 limiter)\n  keys: exactly 1\n"+
		"  memory: about 32.2 MiB (peaks of offered traffic: 1,000,000,000 distinct instants of the 1s window at most, in runs of evenly spaced ones: 3 entries, 48.1 KiB)\n")
	require.NotContains(t, out, "over the default budget")

	status, out, errOut = run(t, "compare", billion("2ms"), "--format", "json")
	require.Equal(t, 0, status, errOut)
	var res struct {
		Results []struct {
			AttemptPeaks []struct {
				WindowNs int64 `json:"window_ns"`
				Count    int64 `json:"count"`
				StartNs  int64 `json:"start_ns"`
			} `json:"attempt_peaks"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res.Results, 1)
	peaks := res.Results[0].AttemptPeaks
	require.Len(t, peaks, 2)
	require.Equal(t, [2]int64{2_000_000, 0}, [2]int64{peaks[0].Count, peaks[0].StartNs}, "1s")
	require.Equal(t, [2]int64{1_000_000, 0}, [2]int64{peaks[1].Count, peaks[1].StartNs}, "1ms")
}

// TestTrafficBudget: ratesim traffic has the budget of a run: the
// requests it writes and the memory of its keys' names, refused before a
// line is written (no output file is made), exit 2, with the estimate.
func TestTrafficBudget(t *testing.T) {
	out := filepath.Join(t.TempDir(), "runaway.csv")
	status, stdout, errOut := run(t, "traffic", runaway(t, "1000000000/s", "1000h"), "--output", out)
	require.Equal(t, 2, status)
	require.Empty(t, stdout)
	require.NoFileExists(t, out)
	require.Equal(t, "ratesim: the traffic is too big to start: 3,600,000,000,000,000 requests to write, over --max-requests 1,000,000,000; its estimate:\n"+
		"  requests: exactly 3,600,000,000,000,000\n  keys: exactly 1\n  memory: about 32.1 MiB (the keys' names, 64 B)\n"+
		"raise --max-requests or --max-memory (2e9, 8GiB, unlimited) to run it anyway\n", errOut)

	// double-burst sends 20 requests to alice
	status, _, errOut = run(t, "traffic", "double-burst", "--max-requests", "19")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "20 requests to write, over --max-requests 19")
	status, stdout, errOut = run(t, "traffic", "double-burst", "--max-requests", "20")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, 21, strings.Count(stdout, "\n"), "a header and 20 arrivals")
	status, _, errOut = run(t, "traffic", "double-burst", "--max-memory", "32MiB")
	require.Equal(t, 2, status)
	require.Contains(t, errOut, "of memory, over --max-memory 32.0 MiB")
}
