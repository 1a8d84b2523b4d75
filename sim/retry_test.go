package sim

import (
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/traffic"
	"github.com/stretchr/testify/require"
)

func withRetry(cfg Config, p traffic.RetryPolicy) Config {
	cfg.Retries = make([]traffic.RetryPolicy, len(cfg.Traffic.Sources))
	for i := range cfg.Retries {
		cfg.Retries[i] = p
	}
	return cfg
}

func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	// The script rejects every attempt with retry_after 300ms. A client
	// honouring Retry-After with a 1s resolution comes back after 1s; with
	// max-attempts 3 it tries at 0, 1s and 2s, then gives up.
	reject := func(int, time.Duration) algorithms.Decision {
		return algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: 300 * ms}
	}
	rec := &recorder{}
	cfg := withRetry(baseConfig(timesPlan(0), scriptedAlg("s", reject)),
		traffic.RetryPolicy{Policy: "retry-after", Resolution: time.Second, MaxAttempts: 3})
	cfg.Duration = 10 * time.Second
	cfg.Observe = func(int) Observer { return rec }
	rep, err := Run(cfg)
	require.NoError(t, err)
	r := rep.Results[0]
	require.Equal(t, int64(1), r.Offered)
	require.Equal(t, int64(3), r.Attempts)
	require.Equal(t, int64(3), r.Rejected)
	require.Equal(t, int64(1), r.GaveUp)
	require.Len(t, rec.got, 3)
	for i, want := range []time.Duration{0, time.Second, 2 * time.Second} {
		require.Equal(t, want, rec.got[i].Time, "attempt %d", i+1)
		require.Equal(t, i+1, rec.got[i].Attempt)
		require.Equal(t, "alice", rec.got[i].Key)
	}
	require.Equal(t, int64(1), r.Keys.Limited)
	require.Equal(t, []KeyCount{{Key: "alice", Offered: 1, Rejected: 3}}, r.Keys.Top)
}

func TestRetryStopsAtTheEnd(t *testing.T) {
	t.Parallel()
	// Retries every 400ms from 0 in a 1s scenario: attempts at 0, 400ms,
	// 800ms; the one due at 1.2s is past the end, so the request gives up.
	reject := func(int, time.Duration) algorithms.Decision {
		return algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: 1}
	}
	cfg := withRetry(baseConfig(timesPlan(0), scriptedAlg("s", reject)),
		traffic.RetryPolicy{Policy: "fixed", Delay: 400 * ms})
	rep, err := Run(cfg)
	require.NoError(t, err)
	require.Equal(t, int64(3), rep.Results[0].Attempts)
	require.Equal(t, int64(1), rep.Results[0].GaveUp)
}

func TestFixedWindowRetryAfterReturnsAtWindowStart(t *testing.T) {
	t.Parallel()
	// Through the real fixed-window (1 per 1s): the request at 200ms is
	// rejected with retry_after 800ms, the start of the next window minus
	// now. With resolution 0 the client waits exactly that and is admitted
	// at 1s, the first instant of the next window.
	rec := &recorder{}
	cfg := baseConfig(timesPlan(100*ms, 200*ms), Algorithm{
		Name: "fixed-window", Label: "fixed-window",
		Params: algorithms.Params{Policy: algorithms.Policy{Rate: 1, Per: time.Second, Burst: 1}},
	})
	cfg = withRetry(cfg, traffic.RetryPolicy{Policy: "retry-after", Resolution: 0, MaxAttempts: 5})
	cfg.Duration = 3 * time.Second
	cfg.Observe = func(int) Observer { return rec }
	rep, err := Run(cfg)
	require.NoError(t, err)
	require.Len(t, rec.got, 3)
	require.Equal(t, algorithms.Reject, rec.got[1].Verdict)
	require.Equal(t, 800*ms, rec.got[1].RetryAfter)
	require.Equal(t, time.Second, rec.got[2].Time, "the retry comes exactly at the next window start")
	require.Equal(t, 2, rec.got[2].Attempt)
	require.Equal(t, algorithms.Accept, rec.got[2].Verdict)
	r := rep.Results[0]
	require.Equal(t, int64(2), r.Offered)
	require.Equal(t, int64(3), r.Attempts)
	require.Equal(t, int64(0), r.GaveUp)
	require.Equal(t, r.Attempts, r.Accepted+r.Delayed+r.Rejected)
}

func TestRetryComesAfterFreshArrivalsOfItsInstant(t *testing.T) {
	t.Parallel()
	// A request at 0 is rejected and retried 1s later; a fresh request
	// also arrives at 1s. At one instant first attempts come before
	// retries.
	first := true
	rule := func(int, time.Duration) algorithms.Decision {
		if first {
			first = false
			return algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: time.Second}
		}
		return algorithms.Decision{}
	}
	rec := &recorder{}
	cfg := withRetry(baseConfig(timesPlan(0, time.Second), scriptedAlg("s", rule)),
		traffic.RetryPolicy{Policy: "fixed", Delay: time.Second, MaxAttempts: 2})
	cfg.Duration = 2 * time.Second
	cfg.Observe = func(int) Observer { return rec }
	_, err := Run(cfg)
	require.NoError(t, err)
	require.Len(t, rec.got, 3)
	require.Equal(t, 1, rec.got[1].Attempt, "the fresh arrival at 1s")
	require.Equal(t, 2, rec.got[2].Attempt, "then the retry at 1s")
}

func TestRetriesDeterministicWithJitter(t *testing.T) {
	t.Parallel()
	plan := traffic.Plan{Sources: []traffic.Source{
		&traffic.Steady{Common: traffic.Common{Clients: traffic.Clients{N: 20, Prefix: "c"}, Cost: 1, End: 5 * time.Second},
			Rate: traffic.Rate{Count: 200, Per: time.Second}},
	}}
	var algs []Algorithm
	for _, name := range []string{"fixed-window", "sliding-window", "gcra", "leaky-bucket"} {
		algs = append(algs, Algorithm{Name: name, Label: name,
			Params: algorithms.Params{Policy: algorithms.Policy{Rate: 5, Per: time.Second, Burst: 5}}})
	}
	cfg := withRetry(baseConfig(plan, algs...), traffic.RetryPolicy{
		Policy: "backoff", Delay: 100 * ms, Factor: traffic.Fraction{Num: 2, Den: 1}, Cap: 2 * time.Second,
		Jitter: "full", MaxAttempts: 6})
	cfg.Duration = 5 * time.Second
	cfg.Workers = 1
	one, err := Run(cfg)
	require.NoError(t, err)
	cfg.Workers = 4
	four, err := Run(cfg)
	require.NoError(t, err)
	require.Equal(t, one, four)
	for _, r := range one.Results {
		require.Greater(t, r.Attempts, r.Offered, "%s: clients retried", r.Label)
		require.Equal(t, r.Attempts, r.Accepted+r.Delayed+r.Rejected, r.Label)
		require.LessOrEqual(t, r.GaveUp, r.Offered, r.Label)
		require.Equal(t, int64(20), r.Keys.Limited, "%s: every client was limited", r.Label)
		require.Len(t, r.Keys.Top, DefaultTopKeys)
		for i := 1; i < len(r.Keys.Top); i++ {
			require.GreaterOrEqual(t, r.Keys.Top[i-1].Rejected, r.Keys.Top[i].Rejected, "top keys by rejections")
		}
	}
}

// TestRetryAttemptTimes runs one request against a limiter that rejects
// everything (retry_after 300ms) under each policy and checks the instants
// of its attempts.
func TestRetryAttemptTimes(t *testing.T) {
	t.Parallel()
	reject := func(int, time.Duration) algorithms.Decision {
		return algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: 300 * ms}
	}
	two := traffic.Fraction{Num: 2, Den: 1}
	for _, tc := range []struct {
		name string
		p    traffic.RetryPolicy
		want []time.Duration // exact instants, or nil to check ranges
		lo   []time.Duration // with jitter: the bounds of each wait
		hi   []time.Duration
	}{
		{name: "none: one attempt", p: traffic.RetryPolicy{Policy: "none"}, want: []time.Duration{0}},
		{name: "immediate: all at 0", p: traffic.RetryPolicy{Policy: "immediate", MaxAttempts: 3}, want: []time.Duration{0, 0, 0}},
		{name: "fixed 250ms", p: traffic.RetryPolicy{Policy: "fixed", Delay: 250 * ms, MaxAttempts: 4},
			want: []time.Duration{0, 250 * ms, 500 * ms, 750 * ms}},
		{name: "backoff 100ms x2, cap 300ms", p: traffic.RetryPolicy{Policy: "backoff", Delay: 100 * ms, Factor: two, Cap: 300 * ms, MaxAttempts: 5},
			// waits 100, 200, 300 (400 capped), 300 (800 capped)
			want: []time.Duration{0, 100 * ms, 300 * ms, 600 * ms, 900 * ms}},
		{name: "retry-after exact", p: traffic.RetryPolicy{Policy: "retry-after", MaxAttempts: 3},
			want: []time.Duration{0, 300 * ms, 600 * ms}},
		{name: "retry-after 1s resolution", p: traffic.RetryPolicy{Policy: "retry-after", Resolution: time.Second, MaxAttempts: 3},
			want: []time.Duration{0, time.Second, 2 * time.Second}},
		{name: "backoff full jitter", p: traffic.RetryPolicy{Policy: "backoff", Delay: 100 * ms, Factor: two, Jitter: "full", MaxAttempts: 4},
			lo: []time.Duration{0, 0, 0}, hi: []time.Duration{100 * ms, 200 * ms, 400 * ms}},
		{name: "backoff equal jitter", p: traffic.RetryPolicy{Policy: "backoff", Delay: 100 * ms, Factor: two, Jitter: "equal", MaxAttempts: 4},
			lo: []time.Duration{50 * ms, 100 * ms, 200 * ms}, hi: []time.Duration{100 * ms, 200 * ms, 400 * ms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			cfg := withRetry(baseConfig(timesPlan(0), scriptedAlg("s", reject)), tc.p)
			cfg.Duration = 10 * time.Second
			cfg.Observe = func(int) Observer { return rec }
			rep, err := Run(cfg)
			require.NoError(t, err)
			var got []time.Duration
			for _, d := range rec.got {
				got = append(got, d.Time)
			}
			if tc.want != nil {
				require.Equal(t, tc.want, got)
			} else {
				require.Len(t, got, len(tc.lo)+1)
				for i := range tc.lo {
					wait := got[i+1] - got[i]
					require.GreaterOrEqual(t, wait, tc.lo[i], "wait %d", i+1)
					require.LessOrEqual(t, wait, tc.hi[i], "wait %d", i+1)
				}
			}
			require.Equal(t, int64(1), rep.Results[0].GaveUp, "every policy gives up in the end")
		})
	}
}

// TestRunUntilTracesEnd: with no duration (a recorded trace), the traffic
// runs until its sources end, the series starts at the first arrival's
// bucket (not at the epoch), the report spans the first to the last
// arrival, and retries stop one policy period after the last first attempt.
func TestRunUntilTracesEnd(t *testing.T) {
	t.Parallel()
	const at = 1431856800 * time.Second // 17 May 2015 10:00:00 UTC
	reject := func(int, time.Duration) algorithms.Decision {
		return algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: 1}
	}
	rec := &recorder{}
	cfg := withRetry(baseConfig(timesPlan(at+150*ms, at+2*time.Second), scriptedAlg("s", reject)),
		traffic.RetryPolicy{Policy: "fixed", Delay: 400 * ms})
	cfg.Duration = 0
	cfg.Observe = func(int) Observer { return rec }
	rep, err := Run(cfg)
	require.NoError(t, err)
	require.Equal(t, int64(at+150*ms), rep.StartNs)
	require.Equal(t, int64(2*time.Second-150*ms), rep.DurationNs)
	r := rep.Results[0]
	require.Equal(t, int64(at+100*ms), r.Series.StartNs, "the bucket of the first arrival")
	// Retries every 400ms until 1s (W) after the last first attempt at
	// 2s: the one at 150ms retries at 550, 950, ..., 2.55s and 2.95s; the
	// one at 2s at 2.4s and 2.8s; retries due at or after 3s are not made.
	var times []time.Duration
	for _, d := range rec.got {
		times = append(times, d.Time-at)
	}
	require.Equal(t, []time.Duration{150 * ms, 550 * ms, 950 * ms, 1350 * ms, 1750 * ms, 2 * time.Second,
		2150 * ms, 2400 * ms, 2550 * ms, 2800 * ms, 2950 * ms}, times)
	require.Equal(t, int64(2), r.GaveUp)
	require.Len(t, r.Series.Offered, 29, "buckets from 10:00:00.1 to the one of the last retry, [10:00:02.9, 10:00:03)")
}

// TestRetryBudget: gRPC's retry throttling with max-tokens 4 and
// token-ratio 1 (a client holds 4 tokens; a failure takes one, a success
// gives one back; retries only while more than 2 are left), fixed retries
// 1ms apart without a bound on attempts.
//   - One request, always rejected: its first rejection leaves 3 tokens
//     (more than 2: it retries at 1ms), the second leaves 2 (not more than
//     2: the retry is refused). Two attempts; it gives up, throttled.
//   - Two requests, at 0 and 100ms; the retry at 1ms is admitted, which
//     gives back the token the first rejection took: the second request
//     starts again from 4 and makes two attempts too (four in all). Had the
//     success not counted, its first rejection would have left 2 tokens
//     and no retry.
func TestRetryBudget(t *testing.T) {
	t.Parallel()
	budget := traffic.RetryPolicy{Policy: "fixed", Delay: ms, MaxAttempts: 0,
		Budget: traffic.RetryBudget{MaxTokens: 4, RatioMilli: 1000}}
	reject := func(int, time.Duration) algorithms.Decision {
		return algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: 1}
	}
	rep, err := Run(withRetry(baseConfig(timesPlan(0), scriptedAlg("s", reject)), budget))
	require.NoError(t, err)
	r := rep.Results[0]
	require.Equal(t, int64(2), r.Attempts)
	require.Equal(t, int64(1), r.GaveUp)
	require.Equal(t, int64(1), r.RetriesThrottled)

	second := func(i int, _ time.Duration) algorithms.Decision {
		if i == 1 {
			return algorithms.Decision{Verdict: algorithms.Accept}
		}
		return reject(i, 0)
	}
	rep, err = Run(withRetry(baseConfig(timesPlan(0, 100*ms), scriptedAlg("s", second)), budget))
	require.NoError(t, err)
	r = rep.Results[0]
	require.Equal(t, int64(4), r.Attempts)
	require.Equal(t, int64(1), r.Accepted)
	require.Equal(t, int64(1), r.GaveUp)
	require.Equal(t, int64(1), r.RetriesThrottled)

	// without a budget the same always-rejecting script retries to the end
	rep, err = Run(withRetry(baseConfig(timesPlan(0), scriptedAlg("s", reject)),
		traffic.RetryPolicy{Policy: "fixed", Delay: ms, MaxAttempts: 5}))
	require.NoError(t, err)
	require.Equal(t, int64(5), rep.Results[0].Attempts)
	require.Zero(t, rep.Results[0].RetriesThrottled)
}

// TestRetryTokenBucket: a token bucket of 3, a retry takes 1, a success
// gives back 0.5, up to 4 attempts, 1ms apart; requests at 0, 10ms, ...
// 90ms. The first is admitted (the bucket is full already), every other
// attempt rejected. The second request's three retries empty the bucket;
// the eight after it are not retried (throttled): 10 + 3 attempts.
func TestRetryTokenBucket(t *testing.T) {
	t.Parallel()
	tokens := traffic.RetryPolicy{Policy: "fixed", Delay: ms, MaxAttempts: 4,
		Tokens: traffic.RetryTokens{CapacityMilli: 3000, CostMilli: 1000, RefillMilli: 500}}
	first := func(i int, _ time.Duration) algorithms.Decision {
		if i == 0 {
			return algorithms.Decision{Verdict: algorithms.Accept}
		}
		return algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: 1}
	}
	var at []time.Duration
	for i := range 10 {
		at = append(at, time.Duration(i)*10*ms)
	}
	rep, err := Run(withRetry(baseConfig(timesPlan(at...), scriptedAlg("s", first)), tokens))
	require.NoError(t, err)
	r := rep.Results[0]
	require.Equal(t, int64(13), r.Attempts)
	require.Equal(t, int64(9), r.GaveUp)
	require.Equal(t, int64(8), r.RetriesThrottled)
}

// TestRetryBreaker: a breaker on a window of 2 at threshold 1 (both
// failed), open for 50ms; requests every 10ms from 0 to 190ms, every
// attempt rejected, retries 1ms later, up to 3 attempts. The first
// request's first two attempts open it at 1ms (its third attempt is not
// sent, throttled); it is half-open from 51ms, when the first attempt of
// the request at 60ms fails and opens it again, and so on: first attempts
// are always sent and probe it, so no retry after the one at 1ms is sent.
// 21 attempts; every request gives up, throttled.
func TestRetryBreaker(t *testing.T) {
	t.Parallel()
	breaker := traffic.RetryPolicy{Policy: "fixed", Delay: ms, MaxAttempts: 3,
		Breaker: traffic.RetryBreaker{Window: 2, ThresholdMilli: 1000, OpenFor: 50 * ms}}
	reject := func(int, time.Duration) algorithms.Decision {
		return algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: 1}
	}
	var at []time.Duration
	for i := range 20 {
		at = append(at, time.Duration(i)*10*ms)
	}
	var times []time.Duration
	cfg := withRetry(baseConfig(timesPlan(at...), scriptedAlg("s", func(_ int, now time.Duration) algorithms.Decision {
		times = append(times, now)
		return reject(0, now)
	})), breaker)
	rep, err := Run(cfg)
	require.NoError(t, err)
	r := rep.Results[0]
	require.Equal(t, int64(21), r.Attempts, "%v", times)
	require.Equal(t, int64(20), r.GaveUp)
	require.Equal(t, int64(20), r.RetriesThrottled)
}
