package sim

import (
	"sync"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
	"github.com/stretchr/testify/require"
)

// steadyPlan sends n requests per second to one key.
func steadyPlan(n int64) traffic.Plan {
	return traffic.Plan{Sources: []traffic.Source{
		&traffic.Steady{Common: traffic.Common{Clients: traffic.Clients{Key: "alice"}, Cost: 1},
			Rate: traffic.Rate{Count: n, Per: time.Second}},
	}}
}

func accepting(int, time.Duration) algorithms.Decision {
	return algorithms.Decision{Verdict: algorithms.Accept}
}

func TestProgress(t *testing.T) {
	// 400,000 arrivals over 4s: run 0 reports every ProgressEvery events,
	// with the virtual time reached, never decreasing, within the duration;
	// run 1 does not report.
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
	require.Len(t, done, int(rep.Results[0].Attempts/ProgressEvery), "one call per ProgressEvery events of run 0 only")
	for i := 1; i < len(done); i++ {
		require.Greater(t, done[i], done[i-1])
	}
	require.LessOrEqual(t, done[len(done)-1], 4*time.Second)
	// the k-th call comes before event k*ProgressEvery, at 10µs apart
	require.Equal(t, time.Duration(ProgressEvery-1)*10*time.Microsecond, done[0])

	// The hook does not change the report.
	cfg.Progress = nil
	again, err := Run(cfg)
	require.NoError(t, err)
	require.Equal(t, again, rep)
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
