package backend

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/internal/hist"
	"github.com/ratesim/ratesim/internal/portable"
	"github.com/ratesim/ratesim/internal/testenv"
)

// poisson drives b with n Poisson arrivals of rate lambda per second, from
// a PCG seeded with seed, as an engine would (the backend's events up to
// each arrival, then the arrival), drains it, and returns its result over
// the span of the arrivals. The gaps are drawn with the portable log, so
// the run is the same on every platform.
func poisson(t testing.TB, cfg Config, lambda float64, n int, seed uint64) Result {
	b, err := New(cfg, nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	gap := float64(time.Second) / lambda
	var at time.Duration
	for i := range n {
		u := float64(rng.Uint64()>>11+1) / (1 << 53)
		at += toDuration(float64(-portable.Log(u) * gap))
		b.Until(at)
		if err := b.Submit(&Request{ID: uint64(i), Attempt: 1, Arrived: at, Admitted: at}); err != nil {
			t.Fatalf("request %d: %v", i, err) // not require: it is slow in a loop
		}
	}
	b.Until(math.MaxInt64)
	return b.Result(0, at)
}

// erlangC is the probability that an arrival waits in an M/M/c queue of
// offered load a = lambda/mu Erlangs (a < c).
func erlangC(c int, a float64) float64 {
	sum, term := 0.0, 1.0 // a^k/k!
	for k := range c {
		if k > 0 {
			term *= a / float64(k)
		}
		sum += term
	}
	top := term * a / float64(c) / (1 - a/float64(c)) // a^c/c! / (1-rho)
	return top / (sum + top)
}

// within requires got within rel of want, and logs both.
func within(t *testing.T, what string, want, got, rel float64) {
	t.Helper()
	t.Logf("%s: formula %.6g, measured %.6g (%+.2f%%)", what, want, got, 100*(got-want)/want)
	require.InEpsilon(t, want, got, rel, what)
}

// TestMMcErlangC: M/M/4 at rho = 0.8 (mean service 10ms, 320 arrivals/s):
// the mean wait in queue is Wq = C(c, a) / (c*mu - lambda), C Erlang's C
// formula, a = lambda/mu = 3.2: C = 0.59645, Wq = 7.4556ms. Two million
// requests, within 2.5%; the share that waits against C too.
func TestMMcErlangC(t *testing.T) {
	if testing.Short() {
		t.Skip("two million requests")
	}
	const c, mean, rho = 4, 10 * time.Millisecond, 0.8
	mu := float64(time.Second) / float64(mean)
	lambda := rho * c * mu
	C := erlangC(c, lambda/mu)
	wq := C / (c*mu - lambda) * float64(time.Second)
	cfg := Config{Workers: c, Service: Service{Dist: Exponential, Mean: mean}, Queue: Unbounded,
		Bucket: time.Second, Seed: 7}
	res := poisson(t, cfg, lambda, 2_000_000, 1)
	within(t, "M/M/4 mean wait (ns)", wq, float64(res.QueueWaitNs.Mean), 0.025)
	within(t, "M/M/4 utilization", rho, res.Utilization, 0.01)
}

// TestMD1PollaczekKhinchine: M/D/1 at rho = 0.8 (10ms constant service):
// Wq = lambda*E[S^2] / (2(1-rho)) = rho*S / (2(1-rho)) = 20ms. One million
// requests, within 2.5%.
func TestMD1PollaczekKhinchine(t *testing.T) {
	if testing.Short() {
		t.Skip("a million requests")
	}
	const s, rho = 10 * time.Millisecond, 0.8
	lambda := rho * float64(time.Second) / float64(s)
	wq := rho * float64(s) / (2 * (1 - rho))
	cfg := Config{Workers: 1, Service: Service{Mean: s}, Queue: Unbounded, Bucket: time.Second, Seed: 7}
	res := poisson(t, cfg, lambda, 1_000_000, 2)
	within(t, "M/D/1 mean wait (ns)", wq, float64(res.QueueWaitNs.Mean), 0.025)
}

// TestMG1Lognormal: M/G/1 with lognormal service (mean 10ms, p99 60ms) at
// rho = 0.7: Pollaczek-Khinchine with E[S^2] = m^2 * exp(sigma^2), so Wq =
// lambda*m^2*exp(sigma^2) / (2(1-rho)). The heavy tail needs more
// requests: four million, within 3%.
func TestMG1Lognormal(t *testing.T) {
	if testing.Short() {
		t.Skip("four million requests")
	}
	testenv.Long(t, "the M/G/1 check of four million requests")
	const m, p99, rho = 10 * time.Millisecond, 60 * time.Millisecond, 0.7
	_, sigma, err := lognormalParams(m, p99)
	require.NoError(t, err)
	lambda := rho / float64(m) // per ns
	wq := lambda * float64(m) * float64(m) * math.Exp(sigma*sigma) / (2 * (1 - rho))
	cfg := Config{Workers: 1, Service: Service{Dist: Lognormal, Mean: m, P99: p99}, Queue: Unbounded,
		Bucket: time.Second, Seed: 7}
	res := poisson(t, cfg, lambda*float64(time.Second), 4_000_000, 3)
	within(t, "M/G/1 lognormal mean wait (ns)", wq, float64(res.QueueWaitNs.Mean), 0.03)
}

// TestMM1KLoss: M/M/1/K with K = 5 (one in service, four waiting) at rho
// = 0.9: the share of arrivals lost is P_K = (1-rho) rho^K / (1 -
// rho^(K+1)) = 0.12602 (arrivals see time averages: PASTA). One million
// requests, within 2%.
func TestMM1KLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("a million requests")
	}
	const mean, rho, k = 10 * time.Millisecond, 0.9, 5
	lambda := rho * float64(time.Second) / float64(mean)
	pk := (1 - rho) * math.Pow(rho, k) / (1 - math.Pow(rho, k+1))
	cfg := Config{Workers: 1, Service: Service{Dist: Exponential, Mean: mean}, Queue: k - 1,
		Bucket: time.Second, Seed: 7}
	res := poisson(t, cfg, lambda, 1_000_000, 4)
	within(t, "M/M/1/5 loss", pk, float64(res.Shed)/float64(res.Submitted), 0.02)
	require.Equal(t, res.Submitted, res.Served+res.Shed)
}

// TestServiceDraws: the draws have the distributions asked for: the
// exponential's mean, the lognormal's mean and p99 (nearest rank, over a
// million draws), within 1%.
func TestServiceDraws(t *testing.T) {
	const n = 1_000_000
	for _, svc := range []Service{{Dist: Exponential, Mean: 20 * ms}, {Dist: Lognormal, Mean: 20 * ms, P99: 120 * ms}} {
		s := newSampler(&Config{Service: svc, Seed: 42})
		var h hist.Hist
		for id := range uint64(n) {
			h.Add(int64(s.service(s.root(id), 1)))
		}
		p := h.Summary()
		within(t, string(svc.Dist)+" mean", float64(svc.Mean), float64(p.Mean), 0.01)
		if svc.Dist == Lognormal {
			within(t, "lognormal p99", float64(svc.P99), float64(p.P99), 0.01)
		}
	}
}
