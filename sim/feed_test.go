package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
	"github.com/stretchr/testify/require"
)

// mixedConfig is traffic of every kind the engine treats differently: a
// range of zipf clients and named keys (one inside the range), a trace
// whose keys are interned while it is read, retries with jitter and
// retry-after, shaping delays, three windows, a watched key, all nine
// algorithms and one more.
func mixedConfig(t *testing.T) Config {
	t.Helper()
	// a trace of 3,000 requests over 400 keys, 100 of them new to the plan
	var sb strings.Builder
	sb.WriteString("ts_ms,key\n")
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 3000; i++ {
		key := fmt.Sprintf("user-%d", rng.IntN(300))
		if rng.IntN(4) == 0 {
			key = fmt.Sprintf("visitor-%d", rng.IntN(100))
		}
		fmt.Fprintf(&sb, "%d,%s\n", 200+i, key)
	}
	path := filepath.Join(t.TempDir(), "trace.csv")
	require.NoError(t, os.WriteFile(path, []byte(sb.String()), 0o644))

	policy := algorithms.Policy{Rate: 20, Per: time.Second, Burst: 30}
	plan := traffic.Plan{Seed: 9, Sources: []traffic.Source{
		&traffic.Poisson{Common: traffic.Common{Clients: traffic.Clients{N: 2000, Prefix: "user"}, Cost: 1},
			Rate: traffic.Rate{Count: 2500, Per: time.Second}, KeyDist: traffic.KeyZipf, ZipfS: 1.2},
		&traffic.Steady{Common: traffic.Common{Clients: traffic.Clients{Key: "user-7"}, Cost: 2},
			Rate: traffic.Rate{Count: 300, Per: time.Second}},
		&traffic.Burst{Common: traffic.Common{Clients: traffic.Clients{N: 50, Prefix: "cron"}, Cost: 1},
			At: 1500 * ms, Count: 40, Over: 20 * ms},
		&traffic.Replay{Path: path, KeyField: "key", TimeField: "ts_ms"},
	}}
	cfg := Config{
		Name: "mixed", Seed: 5, Duration: 3 * time.Second,
		Limit: policy, Traffic: plan,
		Windows: []time.Duration{time.Second, 100 * ms, 3 * ms},
		Bucket:  50 * ms,
		Retries: []traffic.RetryPolicy{
			{Policy: "backoff", Delay: 20 * ms, Factor: traffic.Fraction{Num: 2, Den: 1}, Jitter: "full", MaxAttempts: 4},
			{Policy: "retry-after", MaxAttempts: 3},
			{Policy: "backoff", Delay: 50 * ms, Factor: traffic.Fraction{Num: 3, Den: 2}, Jitter: "equal", MaxAttempts: 5},
		},
		Inspect: &Inspect{Key: "user-1", Every: 10 * ms},
	}
	cfg.Algorithms = mixedAlgorithms(policy)
	return cfg
}

func mixedAlgorithms(policy algorithms.Policy) []Algorithm {
	var algs []Algorithm
	for _, info := range algorithms.All() {
		p := algorithms.Params{Policy: policy, Service: 30 * ms}
		algs = append(algs, Algorithm{Name: info.Name, Label: info.Name, Params: p})
	}
	shaping := algorithms.Params{Policy: policy, MaxDelay: 400 * ms}
	return append(algs, Algorithm{Name: "token-bucket", Label: "shaping", Params: shaping})
}

// TestBatchesChangeNothing: however the traffic is cut into batches and
// however small the ring (so that the producer waits for the slowest run
// again and again), and however many runs decide at once, the report and
// every decision are the same.
func TestBatchesChangeNothing(t *testing.T) {
	t.Parallel()
	// the first run records its decisions; the others are held to them as
	// they are made (recording each run's would cost more than the runs)
	cfg := mixedConfig(t)
	recs := make([]*recorder, len(cfg.Algorithms))
	cfg.Observe = func(i int) Observer { recs[i] = &recorder{}; return recs[i] }
	want, err := runWith(cfg, feedShape{batchArrivals, ringBatches})
	require.NoError(t, err)
	require.Greater(t, want.Results[0].Attempts, want.Results[0].Offered, "clients retried")
	require.Positive(t, want.Results[len(want.Results)-1].Delayed, "the shaper delayed")
	require.Greater(t, want.Results[0].Offered, int64(10_000))
	require.Greater(t, want.Keys, int64(2000+50+50), "the trace brought keys of its own")
	require.NotNil(t, want.Results[0].State)
	for _, tc := range []struct{ size, slots, workers int }{
		{1, 1, 0}, {1, 2, 1}, {7, 2, 3}, {100, 3, 0}, {4096, 4, 2},
	} {
		cfg := mixedConfig(t)
		cfg.Workers = tc.workers
		checks := make([]*sameDecisions, len(cfg.Algorithms))
		cfg.Observe = func(i int) Observer { checks[i] = &sameDecisions{want: recs[i].got}; return checks[i] }
		got, err := runWith(cfg, feedShape{tc.size, tc.slots})
		require.NoError(t, err)
		require.Equal(t, want, got, "%+v", tc)
		for i, c := range checks {
			require.Empty(t, c.differ, "%+v: decisions of %d", tc, i)
			require.Len(t, c.want, c.n, "%+v: decisions of %d", tc, i)
		}
	}
}

// sameDecisions holds a run's decisions, as they are made, to those of
// another run: differ says where the first one differs.
type sameDecisions struct {
	want   []Decision
	n      int
	differ string
}

func (s *sameDecisions) Observe(d *Decision) error {
	switch {
	case s.differ != "":
	case s.n >= len(s.want):
		s.differ = fmt.Sprintf("decision %d is one too many: %+v", s.n, *d)
	case s.want[s.n] != *d:
		s.differ = fmt.Sprintf("decision %d: %+v, want %+v", s.n, *d, s.want[s.n])
	}
	s.n++
	return nil
}

// failing is a stream that fails after n arrivals at 1ms apart.
type failing struct{ n int }

func (f failing) Declare(k *traffic.Keys) { k.Intern("bob") }
func (f failing) End() time.Duration      { return 0 }
func (f failing) Open(k *traffic.Keys, index int, seed uint64) (traffic.Stream, error) {
	return &failingStream{left: f.n, key: k.Intern("bob")}, nil
}

type failingStream struct {
	left int
	at   time.Duration
	key  uint32
}

var errTrace = errors.New("line 7: malformed")

func (s *failingStream) Next(a *traffic.Arrival) bool {
	if s.left == 0 {
		return false
	}
	s.left--
	s.at += ms
	*a = traffic.Arrival{At: s.at, Key: s.key, Cost: 1}
	return true
}

func (s *failingStream) Err() error {
	if s.left == 0 {
		return errTrace
	}
	return nil
}

func TestStreamErrorStopsEveryRun(t *testing.T) {
	t.Parallel()
	// A strict replay that meets a malformed line: every run ends with the
	// stream's error, whichever batch it falls in.
	for _, n := range []int{0, 1, 5000} {
		plan := traffic.Plan{Sources: []traffic.Source{failing{n}}}
		cfg := baseConfig(plan, scriptedAlg("a", accepting), scriptedAlg("b", accepting), scriptedAlg("c", accepting))
		cfg.Duration = 0
		_, err := runWith(cfg, feedShape{64, 2})
		require.ErrorIs(t, err, errTrace, "%d arrivals", n)
	}
}

// failAfter is an observer that fails at its n-th decision.
type failAfter struct{ n int }

var errObserver = errors.New("disk full")

func (f *failAfter) Observe(*Decision) error {
	if f.n--; f.n == 0 {
		return errObserver
	}
	return nil
}

func TestRunErrorDoesNotHoldOthersUp(t *testing.T) {
	t.Parallel()
	// Run 1 fails early; the others read the rest of the traffic (far more
	// than the ring holds) and the run reports run 1's error.
	cfg := baseConfig(steadyPlan(100_000), scriptedAlg("a", accepting), scriptedAlg("b", accepting), scriptedAlg("c", accepting))
	cfg.Observe = func(i int) Observer {
		if i == 1 {
			return &failAfter{n: 10}
		}
		return nil
	}
	_, err := runWith(cfg, feedShape{16, 2})
	require.ErrorIs(t, err, errObserver)
}

// reserving records what the engine reserved.
type reserving struct {
	scripted
	reserved []int
}

func (r *reserving) Reserve(n int) { r.reserved = append(r.reserved, n) }

func TestReserveTheDeclaredKeys(t *testing.T) {
	t.Parallel()
	// 7 clients of a range and alice: 8 keys known before the first
	// decision, reserved once.
	lim := &reserving{scripted: scripted{rule: accepting}}
	plan := traffic.Plan{Sources: []traffic.Source{
		&traffic.Steady{Common: traffic.Common{Clients: traffic.Clients{N: 7, Prefix: "c"}, Cost: 1},
			Rate: traffic.Rate{Count: 100, Per: time.Second}},
		&traffic.Times{Common: traffic.Common{Clients: traffic.Clients{Key: "alice"}, Cost: 1}, At: []time.Duration{0}},
	}}
	cfg := baseConfig(plan, Algorithm{Name: "r", Label: "r", New: func() (algorithms.Limiter, error) { return lim, nil }})
	rep, err := Run(cfg)
	require.NoError(t, err)
	require.Equal(t, []int{8}, lim.reserved)
	require.Equal(t, int64(8), rep.Keys)
}

func TestPagedCounts(t *testing.T) {
	t.Parallel()
	var c pagedCounts
	c.reserve(10)
	for _, id := range []uint32{3, 3, 700, 5_000_000, 3} {
		c.inc(id)
	}
	require.Equal(t, int64(3), c.get(3))
	require.Equal(t, int64(1), c.get(5_000_000))
	require.Zero(t, c.get(4))
	require.Zero(t, c.get(1<<31))
	var ids []int
	for id := range c.nonZero() {
		ids = append(ids, id)
	}
	require.Equal(t, []int{3, 700, 5_000_000}, ids)
	require.Len(t, slices.DeleteFunc(c.pages, func(p *[countPage]int64) bool { return p == nil }), 3, "a page per key counted")
}
