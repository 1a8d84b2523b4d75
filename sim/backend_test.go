package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/backend"
	"github.com/ratesim/ratesim/traffic"
)

// backendConfig is one worker, constant service 100ms, a queue of 2, and
// clients that wait 250ms.
func backendConfig() *backend.Config {
	return &backend.Config{Workers: 1, Service: backend.Service{Dist: backend.Constant, Mean: 100 * ms},
		Queue: 2, Timeout: 250 * ms, Seed: 1, Bucket: 100 * ms}
}

// Five requests at 0 through a token bucket of burst 10: all admitted at
// 0. The one worker serves the first (0-100ms); two wait (100-200ms,
// 200-300ms) and the last two find the queue full: shed at once. The third
// served ends at 300ms, after its client's deadline at 250ms: it timed out
// there, and the worker's 50ms after it are wasted. Served 3, completed 3,
// goodput 2, shed 2, timed out 1; busy 300ms of the 1s span.
func TestBackendRow(t *testing.T) {
	t.Parallel()
	cfg := baseConfig(timesPlan(0, 0, 0, 0, 0), Algorithm{Name: "token-bucket", Label: "tb",
		Params: algorithms.Params{Policy: algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}}})
	cfg.Backend = backendConfig()
	rep, err := Run(cfg)
	require.NoError(t, err)
	b := rep.Results[0].Backend
	require.NotNil(t, b)
	require.Equal(t, [6]int64{3, 3, 2, 2, 1, 0}, [6]int64{b.Served, b.CompletedOK, b.Goodput, b.Shed, b.TimedOut, b.Errors})
	require.Equal(t, int64(50*ms), b.WastedNs)
	require.Equal(t, int64(200*ms), b.QueueWaitNs.Max, "waits 0, 100ms, 200ms")
	require.Equal(t, int64(300*ms), b.ResponseNs.Max)
	require.Equal(t, 1.0, b.RetryAmplification)
	require.InDelta(t, 0.3, b.Utilization, 1e-9)

	// without workers nothing changes: no backend object
	cfg.Backend = nil
	rep, err = Run(cfg)
	require.NoError(t, err)
	require.Nil(t, rep.Results[0].Backend)
}

// A shaper's delay reaches the backend late: leaky-bucket at 10/s, burst
// 2, releases the second request at 100ms; the worker (constant 100ms)
// serves the first 0-100ms and the second 100-200ms, so the second waits
// nothing in the queue. Its response (admission to end) is 100ms.
func TestBackendShaped(t *testing.T) {
	t.Parallel()
	cfg := baseConfig(timesPlan(0, 0), Algorithm{Name: "leaky-bucket", Label: "lb",
		Params: algorithms.Params{Policy: algorithms.Policy{Rate: 10, Per: time.Second, Burst: 2}}})
	cfg.Backend = backendConfig()
	rep, err := Run(cfg)
	require.NoError(t, err)
	res := rep.Results[0]
	require.Equal(t, int64(1), res.Delayed)
	b := res.Backend
	require.Equal(t, [3]int64{2, 2, 0}, [3]int64{b.Served, b.Goodput, b.Shed})
	require.Equal(t, int64(0), b.QueueWaitNs.Max)
	require.Equal(t, int64(100*ms), b.ResponseNs.Max)
}

// Retries on sheds: the same five requests, clients retrying a shed once,
// 150ms later. The two shed at 0 come back at 150ms, when one request is
// served (100-200ms) and one waits: the first retry takes the last place
// in the queue, the second is shed again, its last attempt (gave up). The
// retry is served 300-400ms; its client's 250ms count from its own
// arrival, 150ms, so its answer at 400ms is in time. Served 4, goodput 3
// (the third request still times out at 250ms), shed 3, 7 attempts for 5
// requests.
func TestBackendRetryOnShed(t *testing.T) {
	t.Parallel()
	cfg := baseConfig(timesPlan(0, 0, 0, 0, 0), Algorithm{Name: "token-bucket", Label: "tb",
		Params: algorithms.Params{Policy: algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}}})
	cfg.Backend = backendConfig()
	cfg.Retries = []traffic.RetryPolicy{{Policy: "fixed", Delay: 150 * ms, MaxAttempts: 2,
		On: traffic.RetryOnOf(traffic.CauseShed)}}
	rep, err := Run(cfg)
	require.NoError(t, err)
	res := rep.Results[0]
	b := res.Backend
	require.Equal(t, [5]int64{4, 3, 3, 1, 0}, [5]int64{b.Served, b.Goodput, b.Shed, b.TimedOut, b.Errors})
	require.Equal(t, [3]int64{5, 7, 1}, [3]int64{res.Offered, res.Attempts, res.GaveUp})
	require.Equal(t, 1.4, b.RetryAmplification)

	// on: [shed] leaves a timeout alone, and a rejection too: a limiter of
	// burst 3 rejects two, which are not retried (gave up)
	cfg.Algorithms[0].Params.Burst = 3
	rep, err = Run(cfg)
	require.NoError(t, err)
	res = rep.Results[0]
	require.Equal(t, [4]int64{5, 5, 2, 2}, [4]int64{res.Offered, res.Attempts, res.Rejected, res.GaveUp})
	require.Zero(t, res.Backend.Shed, "three admitted: one served, two wait")
}

// The concurrency limiter in front of a backend model learns when each
// request is done: max 2 in flight, one worker at 100ms. At 0 two are
// admitted and the third rejected (retry_after the mean service, 100ms);
// the first is answered at 100ms, so at 150ms one more fits and the next
// does not; the second is answered at 200ms, the fourth at 300ms.
func TestBackendConcurrencyLearns(t *testing.T) {
	t.Parallel()
	cfg := baseConfig(timesPlan(0, 0, 0, 150*ms, 150*ms), Algorithm{Name: "concurrency", Label: "c",
		Params: algorithms.Params{Policy: algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}, Max: 2, Service: 100 * ms}})
	cfg.Backend = backendConfig()
	rec := &recorder{}
	cfg.Observe = func(int) Observer { return rec }
	rep, err := Run(cfg)
	require.NoError(t, err)
	var got []algorithms.Verdict
	for _, d := range rec.got {
		got = append(got, d.Verdict)
	}
	require.Equal(t, []algorithms.Verdict{acc, acc, rej, acc, rej}, got)
	require.Equal(t, 100*ms, rec.got[2].RetryAfter)
	b := rep.Results[0].Backend
	require.Equal(t, [3]int64{3, 3, 0}, [3]int64{b.Served, b.Goodput, b.TimedOut})
}

// An adaptive limit learns from the backend: aimd (Netflix's AIMDLimit,
// initial and least limit 20) admits 20 of 25 requests at 0. The one
// worker answers them 10ms apart, each sample with the requests in flight
// at its admission, 1 to 20: the limit grows by one for each sample with
// 2*inflight >= limit, the tenth to the twentieth, so 31 by 200ms. At
// 500ms 32 arrive at once: 31 are admitted.
func TestBackendAdaptiveLearns(t *testing.T) {
	t.Parallel()
	var at []time.Duration
	for range 25 {
		at = append(at, 0)
	}
	for range 32 {
		at = append(at, 500*ms)
	}
	cfg := baseConfig(timesPlan(at...), Algorithm{Name: "aimd", Label: "aimd",
		Params: algorithms.Params{Policy: algorithms.Policy{Rate: 10, Per: time.Second, Burst: 10}, Service: 10 * ms}})
	cfg.Backend = &backend.Config{Workers: 1, Service: backend.Service{Dist: backend.Constant, Mean: 10 * ms},
		Queue: backend.Unbounded, Seed: 1, Bucket: 100 * ms}
	rec := &recorder{}
	cfg.Observe = func(int) Observer { return rec }
	rep, err := Run(cfg)
	require.NoError(t, err)
	res := rep.Results[0]
	require.Equal(t, [2]int64{20 + 31, 5 + 1}, [2]int64{res.Accepted, res.Rejected})
	require.Equal(t, 10*ms, rec.got[20].RetryAfter, "the mean service, an estimate")
	require.Equal(t, int64(51), res.Backend.Goodput)

	// without workers an adaptive limit has nothing to learn from: the
	// loader refuses it, and the engine's limiter would never free a slot
	cfg.Backend = nil
	rep, err = Run(cfg)
	require.NoError(t, err)
	require.Equal(t, int64(20), rep.Results[0].Accepted, "20 in flight for ever")
}
