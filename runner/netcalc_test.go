package runner

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/scenarios"
)

// TestNetworkCalculusBounds: a token bucket (b, r) in front of a
// rate-latency server (R, T) bounds every request's delay through the
// server by T + b/R and the backlog by b + rT, for r <= R (Le Boudec and
// Thiran, "Network Calculus", 2001, chapter 1: the backlog and delay bounds and the
// rate-latency server; one request a unit). Over generated scenarios
// (bursts and Poisson traffic against the bucket, the server a worker of
// constant service S = 1/R behind a latency T, docs/backend.md), every
// measured worst case is within its bound, compared exactly in integers;
// and the greedy source that fills the bucket at once meets the delay
// bound exactly.
//
// The backlog bound is the fluid one: the server has served part of the
// request in service. Counted in whole requests (held_peak: a request is
// held until its service ends), the backlog can pass b + rT by less than
// one request's worth of service, and the bound of whole requests is
// b + r(T + S) (the packetized server's latency is T + S); the test holds
// that one, and counts the runs past the fluid one.
func TestNetworkCalculusBounds(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(41, 1))
	met, past := 0, 0
	const n = 150
	for i := range n {
		b := 1 + rng.Int64N(20)
		svc := time.Duration(1+rng.Int64N(20)) * time.Millisecond // S = 1/R
		maxRate := int64(time.Second / svc)
		rate := 1 + rng.Int64N(maxRate) // r <= R, per second
		lat := time.Duration(rng.Int64N(50)) * time.Millisecond
		var src strings.Builder
		fmt.Fprintf(&src, "  - {type: burst, key: a, at: 0s, count: %d}\n", b+rng.Int64N(3*b))
		for range 1 + rng.IntN(3) {
			fmt.Fprintf(&src, "  - {type: burst, key: a, at: %dms, count: %d, over: %dms}\n",
				rng.Int64N(2000), 1+rng.Int64N(4*b), rng.Int64N(200))
		}
		fmt.Fprintf(&src, "  - {type: poisson, key: a, rate: %d/s}\n", 1+rng.Int64N(3*maxRate))
		file := fmt.Sprintf(`name: nc%d
seed: %d
duration: 3s
limit: {rate: %d, per: 1s, burst: %d}
algorithms: [token-bucket]
backend: {workers: 1, service: %v, queue: unbounded, latency: %v}
traffic:
%s`, i, i, rate, b, svc, lat, src.String())
		sc, err := scenarios.Parse("nc.yaml", []byte(file))
		require.NoError(t, err, file)
		rep, err := Run(sc, Options{})
		require.NoError(t, err, file)
		be := rep.Results[0].Backend
		require.NotNil(t, be, file)
		delayBound := lat + time.Duration(b)*svc
		delay := time.Duration(be.ResponseNs.Max)
		require.LessOrEqual(t, delay, delayBound, "delay over T + b/R:\n%s", file)
		// held <= b + r*(T+S), in units of 1ns/1s: held*1s <= b*1s + rate*(T+S)
		require.LessOrEqual(t, be.HeldPeak*int64(time.Second), b*int64(time.Second)+rate*int64(lat+svc),
			"backlog %d over b + r(T+S) = %d + %d/s * %v:\n%s", be.HeldPeak, b, rate, lat+svc, file)
		if be.HeldPeak*int64(time.Second) > b*int64(time.Second)+rate*int64(lat) {
			past++
		}
		if delay == delayBound {
			met++
		}
	}
	// a burst of at least b at 0 fills the server: its b-th request waits
	// T and b services
	require.Equal(t, n, met, "every run meets the delay bound exactly")
	t.Logf("%d of %d runs held more whole requests than the fluid bound b + rT", past, n)
}
