package sim

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
	"github.com/stretchr/testify/require"
)

// steadyPlan sends n requests per second, evenly spaced, over 1,000 keys:
// the tests that use it watch the runs' progress, not the keys, and a
// single key admitted 100,000 times a second would spend most of the run
// on its key peaks.
func steadyPlan(n int64) traffic.Plan {
	return traffic.Plan{Sources: []traffic.Source{
		&traffic.Steady{Common: traffic.Common{Clients: traffic.Clients{N: 1000, Prefix: "user"}, Cost: 1},
			Rate: traffic.Rate{Count: n, Per: time.Second}},
	}}
}

func accepting(int, time.Duration) algorithms.Decision {
	return algorithms.Decision{Verdict: algorithms.Accept}
}

func TestProgress(t *testing.T) {
	// 400,000 arrivals over 4s, two runs: each reports every ProgressEvery
	// events, and Progress is told the virtual time both have reached,
	// growing, within the duration.
	cfg := baseConfig(steadyPlan(100_000), scriptedAlg("a", accepting), scriptedAlg("b", accepting))
	cfg.Duration = 4 * time.Second
	var mu sync.Mutex
	var done []time.Duration
	cfg.Progress = func(d, total time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, 4*time.Second, total)
		done = append(done, d)
	}
	rep, err := Run(cfg)
	require.NoError(t, err)
	require.NotEmpty(t, done)
	require.LessOrEqual(t, len(done), int(rep.Results[0].Attempts/ProgressEvery), "at most one call per ProgressEvery events of a run")
	for i := 1; i < len(done); i++ {
		require.Greater(t, done[i], done[i-1])
	}
	require.LessOrEqual(t, done[len(done)-1], 4*time.Second)
	// every report comes before event k*ProgressEvery of a run, 10µs apart
	for _, d := range done {
		require.Zero(t, (d+10*time.Microsecond)%(time.Duration(ProgressEvery)*10*time.Microsecond), d)
	}

	// The hook does not change the report.
	cfg.Progress = nil
	again, err := Run(cfg)
	require.NoError(t, err)
	require.Equal(t, again, rep)
}

// TestProgressFollowsTheSlowestRun: a run that stalls holds the progress
// back, however far the others have got: the bar shows the whole run,
// not its first row. Run "slow" stops for 300ms at 2s of
// virtual time, while "fast" fills the ring of batches ahead of it.
func TestProgressFollowsTheSlowestRun(t *testing.T) {
	var slowAt atomic.Int64 // the latest instant "slow" has decided
	slow := func(i int, at time.Duration) algorithms.Decision {
		if at == 2*time.Second {
			time.Sleep(300 * time.Millisecond)
		}
		slowAt.Store(int64(at))
		return algorithms.Decision{Verdict: algorithms.Accept}
	}
	cfg := baseConfig(steadyPlan(100_000), scriptedAlg("fast", accepting), scriptedAlg("slow", slow))
	cfg.Duration = 4 * time.Second
	var done, ahead []time.Duration
	cfg.Progress = func(d, total time.Duration) {
		// "slow" has decided everything before d, its next event
		if s := time.Duration(slowAt.Load()); d > s+10*time.Microsecond {
			ahead = append(ahead, d, s)
		}
		done = append(done, d)
	}
	_, err := Run(cfg)
	require.NoError(t, err)
	require.NotEmpty(t, done)
	require.Empty(t, ahead, "reported done (then where the slow run was)")
}

// TestProgressBoard: the time every running run has reached, passed on
// when it grows; nothing before every run has reported; a finished run no
// longer counts.
func TestProgressBoard(t *testing.T) {
	var got []time.Duration
	b := newProgressBoard(func(d, total time.Duration) {
		require.Equal(t, 9*time.Second, total)
		got = append(got, d)
	}, 3, 9*time.Second)
	b.finished(2) // never ran
	b.report(0, 5*time.Second)
	require.Empty(t, got, "run 1 has not reported")
	b.report(1, 2*time.Second)
	b.report(1, 3*time.Second)
	b.report(0, 6*time.Second) // run 1 still at 3s
	b.report(1, 1*time.Second) // never back
	b.finished(1)
	b.report(0, 7*time.Second)
	b.finished(0)
	require.Equal(t, []time.Duration{2 * time.Second, 3 * time.Second, 6 * time.Second, 7 * time.Second}, got)

	var none *progressBoard
	require.Nil(t, none.reporter(0))
	none.finished(0)
}

func TestProgressWithoutDuration(t *testing.T) {
	// Traffic that ends by itself (a trace): total is 0 and done counts
	// from the first arrival.
	at := make([]time.Duration, 3*ProgressEvery)
	for i := range at {
		at[i] = time.Hour + time.Duration(i)*time.Millisecond
	}
	cfg := baseConfig(timesPlan(at...), scriptedAlg("a", accepting))
	cfg.Duration = 0
	var done []time.Duration
	cfg.Progress = func(d, total time.Duration) {
		require.Zero(t, total)
		done = append(done, d)
	}
	_, err := Run(cfg)
	require.NoError(t, err)
	require.Equal(t, []time.Duration{
		(ProgressEvery - 1) * time.Millisecond,
		(2*ProgressEvery - 1) * time.Millisecond,
		(3*ProgressEvery - 1) * time.Millisecond,
	}, done)
}
