package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

var (
	acc = algorithms.Accept
	rej = algorithms.Reject
)

// scripted is a limiter whose verdicts are given by a function of the call
// index, so that the engine's bookkeeping can be checked by hand.
type scripted struct {
	n    int
	rule func(i int, now time.Duration) algorithms.Decision
	last time.Duration
}

func (s *scripted) Decide(now time.Duration, _ algorithms.Key, _ int64) algorithms.Decision {
	if now < s.last {
		panic(fmt.Sprintf("time went backwards: %v after %v", now, s.last))
	}
	s.last = now
	d := s.rule(s.n, now)
	s.n++
	return d
}

func (s *scripted) Memory() algorithms.Memory {
	return algorithms.Memory{BytesPerKeyMax: 8, KeysPeak: 1, BytesPeak: 8}
}

type recorder struct{ got []Decision }

func (r *recorder) Observe(d *Decision) error { r.got = append(r.got, *d); return nil }

func timesPlan(at ...time.Duration) traffic.Plan {
	return traffic.Plan{Sources: []traffic.Source{
		&traffic.Times{Common: traffic.Common{Clients: traffic.Clients{Key: "alice"}, Cost: 1}, At: at},
	}}
}

func baseConfig(plan traffic.Plan, algs ...Algorithm) Config {
	return Config{
		Name: "t", Seed: 1, Duration: time.Second,
		Limit:      algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10},
		Algorithms: algs,
		Traffic:    plan,
		Windows:    []time.Duration{time.Second, 100 * ms},
		Bucket:     100 * ms,
	}
}

func scriptedAlg(label string, rule func(int, time.Duration) algorithms.Decision) Algorithm {
	return Algorithm{
		Name: "scripted", Label: label,
		Params: algorithms.Params{Policy: algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}},
		New:    func() (algorithms.Limiter, error) { return &scripted{rule: rule}, nil },
	}
}

func TestRunCountsAndPeaks(t *testing.T) {
	t.Parallel()
	// Five requests at 0, 10, 20, 30, 40 ms. The script accepts the first,
	// delays the second by 500ms, rejects the third, delays the fourth by
	// 70ms (released at 100ms) and accepts the fifth.
	rule := func(i int, _ time.Duration) algorithms.Decision {
		switch i {
		case 1:
			return algorithms.Decision{Verdict: algorithms.Delay, Delay: 500 * ms}
		case 2:
			return algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: 90 * ms}
		case 3:
			return algorithms.Decision{Verdict: algorithms.Delay, Delay: 70 * ms}
		}
		return algorithms.Decision{Verdict: algorithms.Accept}
	}
	rec := &recorder{}
	cfg := baseConfig(timesPlan(0, 10*ms, 20*ms, 30*ms, 40*ms), scriptedAlg("s", rule))
	cfg.Observe = func(int) Observer { return rec }
	rep, err := Run(cfg)
	require.NoError(t, err)
	r := rep.Results[0]
	require.Equal(t, int64(5), r.Offered)
	require.Equal(t, int64(5), r.Attempts)
	require.Equal(t, int64(2), r.Accepted)
	require.Equal(t, int64(2), r.Delayed)
	require.Equal(t, int64(1), r.Rejected)
	require.Equal(t, int64(1), r.GaveUp, "no retries yet: a rejected request gives up")
	// Admitted delays 0, 500ms, 70ms, 0: nearest rank p50 = 2nd = 0,
	// p90 = 4th = 500ms.
	require.Equal(t, Percentiles{P50: 0, P90: 500 * 1e6, P99: 500 * 1e6, Max: 500 * 1e6, Exact: true}, r.DelayNs)
	// Releases at 0, 40, 100 (delayed 30+70), 510 ms: all four in 1s;
	// in 100ms the earliest densest start is 0 ([0,100) holds 0 and 40).
	require.Equal(t, []Peak{
		{WindowNs: 1e9, Count: 4, StartNs: 0, Ratio: 0.4},
		{WindowNs: 1e8, Count: 2, StartNs: 0, Ratio: 2},
	}, r.Peaks)
	require.Equal(t, []int64{5, 0, 0, 0, 0, 0, 0, 0, 0, 0}, r.Series.Offered)
	require.Equal(t, []int64{2, 1, 0, 0, 0, 1, 0, 0, 0, 0}, r.Series.Admitted, "by release time")
	require.Equal(t, []int64{2, 0, 0, 0, 0, 0, 0, 0, 0, 0}, r.Series.Delayed, "by arrival time")
	require.Len(t, rec.got, 5)
	require.Equal(t, "alice", rec.got[2].Key)
	require.Equal(t, algorithms.Reject, rec.got[2].Verdict)
	require.Equal(t, 20*ms, rec.got[2].Time)
	require.Equal(t, 1, rec.got[2].Attempt)
	require.Equal(t, Memory{BytesPerKeyMax: 8, KeysPeak: 1, BytesPeak: 8}, r.Memory)
}

func TestRunCutsAtDuration(t *testing.T) {
	t.Parallel()
	accept := func(int, time.Duration) algorithms.Decision { return algorithms.Decision{} }
	cfg := baseConfig(timesPlan(0, 999*ms, time.Second, 2*time.Second), scriptedAlg("s", accept))
	rep, err := Run(cfg)
	require.NoError(t, err)
	require.Equal(t, int64(2), rep.Results[0].Offered, "arrivals at or after the duration are not sent")
}

func TestRunDeterministicAcrossWorkers(t *testing.T) {
	t.Parallel()
	plan := traffic.Plan{Sources: []traffic.Source{
		&traffic.Steady{Common: traffic.Common{Clients: traffic.Clients{N: 7, Prefix: "c"}, Cost: 1, End: 3 * time.Second},
			Rate: traffic.Rate{Count: 1000, Per: time.Second}},
		&traffic.Burst{Common: traffic.Common{Clients: traffic.Clients{Key: "c-3"}, Cost: 2, End: 3 * time.Second},
			At: 900 * ms, Count: 50, Over: 200 * ms},
	}}
	var algs []Algorithm
	for i := 0; i < 6; i++ {
		mod := i + 2
		algs = append(algs, scriptedAlg(fmt.Sprint("s", i), func(n int, now time.Duration) algorithms.Decision {
			switch n % mod {
			case 0:
				return algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: 1}
			case 1:
				return algorithms.Decision{Verdict: algorithms.Delay, Delay: time.Duration(n%97) * ms}
			}
			return algorithms.Decision{}
		}))
	}
	cfg := baseConfig(plan, algs...)
	cfg.Duration = 3 * time.Second
	cfg.Workers = 1
	one, err := Run(cfg)
	require.NoError(t, err)
	cfg.Workers = 4
	four, err := Run(cfg)
	require.NoError(t, err)
	require.Equal(t, one, four)
	for i, r := range one.Results {
		require.Equal(t, r.Attempts, r.Accepted+r.Delayed+r.Rejected, "result %d", i)
		require.Equal(t, int64(3000+50), r.Offered)
		require.Equal(t, fmt.Sprint("s", i), r.Label, "results keep the algorithms' order")
	}
}

func TestRunReportsLimiterErrors(t *testing.T) {
	t.Parallel()
	bad := Algorithm{Name: "x", Label: "bad", New: func() (algorithms.Limiter, error) { return nil, fmt.Errorf("boom") }}
	_, err := Run(baseConfig(timesPlan(0), bad))
	require.EqualError(t, err, "bad: boom")
}

// inspected is a scripted limiter that shows the number of decisions so far
// as its state.
type inspected struct {
	scripted
	seen []time.Duration
}

func (s *inspected) Inspect(now time.Duration, key algorithms.Key) []algorithms.Gauge {
	s.seen = append(s.seen, now)
	return []algorithms.Gauge{{Name: "decisions", Value: float64(s.n)}}
}

func TestInspectSamplesBeforeEvents(t *testing.T) {
	t.Parallel()
	// Requests at 0, 150ms and 150ms; samples every 100ms from the series
	// start (0) to the end (1s). A sample at an instant is taken before
	// the events of that instant.
	lim := &inspected{scripted: scripted{rule: func(int, time.Duration) algorithms.Decision { return algorithms.Decision{} }}}
	cfg := baseConfig(timesPlan(0, 150*ms, 150*ms), Algorithm{Name: "i", Label: "i",
		Params: algorithms.Params{Policy: algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}},
		New:    func() (algorithms.Limiter, error) { return lim, nil }})
	cfg.Inspect = &Inspect{Key: "alice", Every: 100 * ms}
	rep, err := Run(cfg)
	require.NoError(t, err)
	st := rep.Results[0].State
	require.NotNil(t, st)
	require.Equal(t, "alice", st.Key)
	require.Equal(t, []string{"decisions"}, st.Names)
	require.Len(t, st.TimesNs, 11, "0, 100ms, ..., 1s")
	require.Equal(t, int64(0), st.TimesNs[0])
	require.Equal(t, []float64{0}, st.Values[0], "at 0, before the request at 0")
	require.Equal(t, []float64{1}, st.Values[1], "at 100ms")
	require.Equal(t, []float64{3}, st.Values[2], "at 200ms, after the two at 150ms")
	require.Equal(t, int64(1e9), st.TimesNs[10])
	require.Equal(t, []DelayCount{{0, 3}}, rep.Results[0].Delays)
}

// stopAfter observes n decisions, then stops observing.
type stopAfter struct{ n, seen int }

func (s *stopAfter) Observe(*Decision) error {
	if s.seen == s.n {
		return ErrStopObserving
	}
	s.seen++
	return nil
}

func TestObserverCanStop(t *testing.T) {
	t.Parallel()
	accept := func(int, time.Duration) algorithms.Decision { return algorithms.Decision{} }
	obs := &stopAfter{n: 2}
	cfg := baseConfig(timesPlan(0, 1, 2, 3, 4), scriptedAlg("s", accept))
	cfg.Observe = func(int) Observer { return obs }
	rep, err := Run(cfg)
	require.NoError(t, err, "stopping is not an error")
	require.Equal(t, 2, obs.seen)
	require.Equal(t, int64(5), rep.Results[0].Accepted, "the run went on")
}
