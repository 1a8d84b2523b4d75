package runner

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/traffic"
)

func parse(t *testing.T, text string) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Parse("t.yaml", []byte(text))
	require.NoError(t, err)
	return sc
}

// TestEstimateByHand holds estimates to figures worked out by hand.
func TestEstimateByHand(t *testing.T) {
	// double-burst: two bursts of 10 of alice, decided by the 8 rows of
	// the default list: 160 decisions; the 20 instants are all within
	// the 1s window (900ms..1090ms), an entry of 12 bytes each (two
	// sources: nothing grouped) in a ring that holds 2048 entries more and
	// may double: (20 + 2048) * 12 * 2
	e, err := EstimateOf(doubleBurst(t))
	require.NoError(t, err)
	require.Equal(t, int64(20), e.Requests)
	require.Equal(t, traffic.Exact, e.Accuracy)
	require.Equal(t, 8, e.Runs)
	require.Equal(t, int64(160), e.Work)
	require.Equal(t, int64(2), e.Keys, "alice twice: the sources may share keys")
	require.Equal(t, traffic.Bound, e.KeysAccuracy)
	require.Equal(t, time.Second, e.Window)
	require.Equal(t, int64(20), e.Instants)
	require.Equal(t, int64(20), e.Entries)
	require.Equal(t, int64((20+2048)*12*2), e.PeakBytes)

	// 10/s for 10s to 4 clients, with retries of at most 3 attempts: 100
	// first attempts, 200 retries at most, by 2 rows: 600 decisions. A 1s
	// window holds ceil(10) + 1 = 11 first attempts, and the retries of
	// the first attempts of 1.2s (the window and two waits of 100ms before
	// it): 2 x (ceil(12) + 1) = 26.
	e, err = EstimateOf(parse(t, `name: r
duration: 10s
limit: {rate: 5, per: 1s, burst: 5}
algorithms: [{name: gcra}, {name: fixed-window}]
clients: {retry: {policy: fixed, delay: 100ms, max-attempts: 3}}
traffic:
  - {type: steady, rate: 10/s, clients: 4, key-prefix: c}
`))
	require.NoError(t, err)
	require.Equal(t, int64(100), e.Requests)
	require.Equal(t, int64(200), e.Retries)
	require.Equal(t, "fixed: max-attempts 3", e.RetryBound)
	require.Equal(t, int64(600), e.Work)
	require.Equal(t, int64(4), e.Keys)
	require.Equal(t, traffic.Exact, e.KeysAccuracy)
	require.Equal(t, int64(37), e.Instants, "11 first attempts and 26 retries")
	// with retries, each of the 2 rows keeps its own peaks of attempts
	require.Equal(t, int64(37), e.Entries, "retries: nothing grouped")
	require.Equal(t, int64(2*(37+2048)*12*2), e.PeakBytes)
	// the retries waiting at once are those of the first attempts of the
	// 200ms the waits last, 2 x (ceil(2) + 1), 96 bytes each in each row
	require.Equal(t, int64(2*3*96*2), e.RetryBytes)

	// unlimited attempts of a fixed 1s wait over 10s: at most 10 + 1
	// attempts after the first of each request
	e, err = EstimateOf(parse(t, `name: r
duration: 10s
limit: {rate: 5, per: 1s, burst: 5}
algorithms: [{name: gcra}]
clients: {retry: {policy: fixed, delay: 1s, max-attempts: unlimited}}
traffic:
  - {type: steady, rate: 10/s, key: k}
`))
	require.NoError(t, err)
	require.Equal(t, int64(100*11), e.Retries)
	require.Equal(t, "fixed: unlimited attempts, one per 1s at most", e.RetryBound)

	// retry-after waits what the limiter says: a window may hold the
	// retries of every first attempt, 2 x 100, beside its own 11
	e, err = EstimateOf(parse(t, `name: r
duration: 10s
limit: {rate: 5, per: 1s, burst: 5}
algorithms: [{name: gcra}]
clients: {retry: {policy: retry-after, max-attempts: 3}}
traffic:
  - {type: steady, rate: 10/s, key: k}
`))
	require.NoError(t, err)
	require.Equal(t, int64(200), e.Retries)
	require.Equal(t, int64(211), e.Instants)

	// a cluster of 4 nodes: a central row sends one script per attempt,
	// a racy one a GET and a SET; each row also runs its reference: 4
	// runs of 100 requests and 300 store operations
	e, err = EstimateOf(parse(t, `name: c
duration: 10s
limit: {rate: 5, per: 1s, burst: 5}
algorithms: [{name: gcra, coordination: central}, {name: gcra, label: racy, coordination: racy}]
cluster: {nodes: 4}
traffic:
  - {type: steady, rate: 10/s, key: k}
`))
	require.NoError(t, err)
	require.Equal(t, 4, e.Runs)
	require.Equal(t, int64(300), e.StoreOps)
	require.Equal(t, int64(4*100+300), e.Work)
}

// TestEstimateMemory: the key state and the peaks, by hand. 1000 clients
// at 1000/s for 10s, one gcra row at 10/s burst 5: the keys take 64 bytes
// each and 32 in the one run (96,000); the 1s window holds at most 1001
// attempts, and gcra releases at most 5 + 10*(1+2) = 35 a key a window,
// more than the window's attempts over 1000 keys: 1001 releases of 16
// bytes; the peaks 1001 instants, 1ms apart: a run, in 3 entries of 12
// bytes at most. Each is held in a ring of 2048 entries more, whose
// blocks may double it.
func TestEstimateMemory(t *testing.T) {
	e, err := EstimateOf(parse(t, `name: m
duration: 10s
limit: {rate: 10, per: 1s, burst: 5}
algorithms: [{name: gcra}]
traffic:
  - {type: steady, rate: 1000/s, clients: 1000, key-prefix: c}
report: {windows: [1s]}
`))
	require.NoError(t, err)
	require.Equal(t, int64(96_000), e.KeyBytes)
	require.Equal(t, int64((1001+2048)*16*2), e.WindowBytes)
	require.Equal(t, int64(1001), e.Instants)
	require.Equal(t, int64(3), e.Entries)
	require.Equal(t, int64((3+2048)*12*2), e.PeakBytes)
	require.Equal(t, int64(32<<20+96_000+(1001+2048)*16*2+(3+2048)*12*2), e.Memory)

	// one key: gcra's 35 releases bound the window's, not the 1001
	// attempts
	e, err = EstimateOf(parse(t, `name: m
duration: 10s
limit: {rate: 10, per: 1s, burst: 5}
algorithms: [{name: gcra}]
traffic:
  - {type: steady, rate: 1000/s, key: k}
report: {windows: [1s]}
`))
	require.NoError(t, err)
	require.Equal(t, int64((35+2048)*16*2), e.WindowBytes)
}

// TestEstimateGroupsEvenlySpacedInstants: the peaks of offered traffic
// hold a run of evenly spaced instants of one source as one entry, so a
// source of a billion requests a second (one a nanosecond) for 1s fits
// the default budget: a billion instants in the 1s window, 3 entries.
// At 3e8/s its instants are 3 or 4 ns apart (3, 3, 4, again): a run of
// two gaps of 3, then a 4 alone, at most ceil(w/3) fours in the w =
// ceil(3e8) + 1 instants of a window, twice that and 4 entries. And two
// sources interleave, so theirs are not grouped.
func TestEstimateGroupsEvenlySpacedInstants(t *testing.T) {
	source := func(rate string) string {
		return "name: r\nduration: 1s\nlimit: {rate: 100, per: 1s}\nalgorithms: [{name: gcra}]\ntraffic:\n  - {type: steady, key: k, rate: " + rate + "}\n"
	}
	e, err := EstimateOf(parse(t, source("1000000000/s")))
	require.NoError(t, err)
	require.Equal(t, int64(1_000_000_000), e.Instants)
	require.Equal(t, int64(3), e.Entries)
	require.Equal(t, int64((3+2048)*12*2), e.PeakBytes)
	require.NoError(t, DefaultBudget().Check(e))
	require.Contains(t, e.Lines()[3], "1,000,000,000 distinct instants of the 1s window at most, in runs of evenly spaced ones: 3 entries, 48.1 KiB)")

	e, err = EstimateOf(parse(t, source("2000000000/s")))
	require.NoError(t, err)
	require.Equal(t, int64(3), e.Entries, "two a nanosecond: each instant's two add up to one release")

	e, err = EstimateOf(parse(t, source("300000000/s")))
	require.NoError(t, err)
	require.Equal(t, int64(2*100_000_001+4), e.Entries)

	e, err = EstimateOf(parse(t, "name: r\nduration: 1s\nlimit: {rate: 100, per: 1s}\nalgorithms: [{name: gcra}]\ntraffic:\n"+
		"  - {type: steady, key: k, rate: 1000/s}\n  - {type: steady, key: j, rate: 1000/s, start: 1us}\n"))
	require.NoError(t, err)
	require.Equal(t, int64(2000), e.Entries, "the 1000 instants of each source")
}

// TestBudgetRefusesBeforeRunning: a run over its budget returns the
// estimate in a *BudgetError and decides nothing; the zero budget checks
// nothing.
func TestBudgetRefusesBeforeRunning(t *testing.T) {
	_, err := Run(doubleBurst(t), Options{Budget: Budget{MaxRequests: 159}})
	var be *BudgetError
	require.True(t, errors.As(err, &be), "%v", err)
	require.Equal(t, int64(160), be.Estimate.Work)
	_, err = Run(doubleBurst(t), Options{Budget: Budget{MaxRequests: 160}})
	require.NoError(t, err)
	_, err = Run(doubleBurst(t), Options{Algorithms: "gcra", Budget: Budget{MaxRequests: 20}})
	require.NoError(t, err, "the rows kept count, not the file's")
}

// TestBuiltinsFitTheDefaultBudget: every built-in scenario (the lessons
// run built-ins) and the benchmark files the README and docs/big-runs.md
// tell a user to run run under the default budget.
func TestBuiltinsFitTheDefaultBudget(t *testing.T) {
	names := []string{}
	for _, b := range scenarios.Builtins() {
		names = append(names, b.Name)
	}
	bench, err := filepath.Glob("../scenarios/bench/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, bench)
	for _, name := range append(names, bench...) {
		sc, err := scenarios.Resolve(name)
		require.NoError(t, err)
		e, err := EstimateOf(sc)
		require.NoError(t, err)
		require.NoError(t, DefaultBudget().Check(e), name)
	}
}

func TestFigures(t *testing.T) {
	require.Equal(t, "1,000,000,000", Count(1e9))
	require.Equal(t, "999", Count(999))
	require.Equal(t, "9,223,372,036,854,775,807 or more", Count(traffic.Unbounded))
	require.Equal(t, "4.0 GiB", Bytes(4<<30))
	require.Equal(t, "7.5 GiB", Bytes(8e9), "7.45 rounded up")
	require.Equal(t, "808 B", Bytes(808))
	require.Equal(t, "8192.0 PiB or more", Bytes(traffic.Unbounded))
}
