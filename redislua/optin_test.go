package redislua

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
)

// optInCases are the parameters the opt-in rows' scripts are run with:
// Guava's two kinds with and without a timeout (max-delay), a longer
// burst, a cold factor of 10; uber's default slack, none, and 3.
func optInCases() map[string][]algorithms.Params {
	pol := func(rate int64, per time.Duration, burst int64) algorithms.Policy {
		return algorithms.Policy{Rate: rate, Per: per, Burst: burst}
	}
	policies := []algorithms.Policy{pol(10, time.Second, 10), pol(3, time.Second, 1), pol(7, time.Minute, 5), pol(4, 250*time.Millisecond, 9)}
	out := map[string][]algorithms.Params{}
	for _, p := range policies {
		out["guava-bursty"] = append(out["guava-bursty"],
			algorithms.Params{Policy: p},
			algorithms.Params{Policy: p, MaxDelay: p.Per/2 + 7_777},
			algorithms.Params{Policy: p, MaxDelay: 3 * p.Per, MaxBurst: 2500 * time.Millisecond})
		out["guava-warming-up"] = append(out["guava-warming-up"],
			algorithms.Params{Policy: p, Warmup: 2 * p.Per},
			algorithms.Params{Policy: p, Warmup: p.Per + 333, MaxDelay: p.Per},
			algorithms.Params{Policy: p, Warmup: 4 * p.Per, ColdFactor: 10, MaxDelay: 2 * p.Per})
		out["uber-ratelimit"] = append(out["uber-ratelimit"],
			algorithms.Params{Policy: p},
			algorithms.Params{Policy: p, SlackSet: true},
			algorithms.Params{Policy: p, Slack: 3, SlackSet: true})
	}
	return out
}

// TestDifferentialOptIn runs randomised multi-key traces through the Go
// rows of Guava and go.uber.org/ratelimit and through their scripts on a
// real redis-server, and requires every verdict, delay and retry_after to
// be identical: Guava's doubles included, which Lua computes in the same
// IEEE operations.
func TestDifferentialOptIn(t *testing.T) {
	srv := startRedisServer(t)
	c := clientNoRetry(t, srv)
	ctx := context.Background()
	run := 0
	verdicts := map[string]map[algorithms.Verdict]int{}
	cases := optInCases()
	for _, name := range OptInNames() {
		for _, p := range cases[name] {
			run++
			label := fmt.Sprintf("%s %+v", name, p)
			trace := randomTrace(uint64(run), 400, 4, p.Per, p.Rate)
			if verdicts[name] == nil {
				verdicts[name] = map[algorithms.Verdict]int{}
			}
			sameOnRedis(t, ctx, c, name, p, fmt.Sprint("optin", run), label, trace, verdicts[name])
		}
	}
	for _, name := range OptInNames() {
		seen := verdicts[name]
		if seen[algorithms.Accept] == 0 || seen[algorithms.Delay] == 0 {
			t.Errorf("%s: %v: the traces test too little", name, seen)
		}
		if name != "uber-ratelimit" && seen[algorithms.Reject] == 0 {
			t.Errorf("%s: no reject", name)
		}
		t.Logf("%s: %d accept, %d delay, %d reject", name, seen[algorithms.Accept], seen[algorithms.Delay], seen[algorithms.Reject])
	}
}

// TestClockRedisOptIn runs the opt-in scripts on Redis's own clock: a
// Guava limiter admits its first request and refuses the next (tryAcquire,
// 5 per second), with a retry_after of whole microseconds; a warming-up
// key gets a PEXPIRE for when it is cold again, a bursty one none; uber's
// second Take waits a whole number of microseconds, and without slack its
// key expires.
func TestClockRedisOptIn(t *testing.T) {
	_, c := startRedis(t)
	ctx := context.Background()
	p := policy(5, time.Second, 5)
	for _, tc := range []struct {
		name   string
		p      algorithms.Params
		second algorithms.Verdict
		ttl    bool
	}{
		{"guava-bursty", p, algorithms.Reject, false},
		{"guava-warming-up", algorithms.Params{Policy: p.Policy, Warmup: time.Second}, algorithms.Reject, true},
		{"uber-ratelimit", algorithms.Params{Policy: p.Policy, SlackSet: true}, algorithms.Delay, true},
	} {
		k := newCaller(t, c, tc.name, ClockRedis, tc.p)
		if d := k.decide(0, 1); d.Verdict != algorithms.Accept {
			t.Errorf("%s: first request %+v", tc.name, d)
		}
		d := k.decide(0, 1)
		if d.Verdict != tc.second || (d.RetryAfter+d.Delay)%time.Microsecond != 0 || d.RetryAfter+d.Delay <= 0 {
			t.Errorf("%s: second request %+v, want %v after whole microseconds", tc.name, d, tc.second)
		}
		ttl, err := c.PTTL(ctx, k.key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if (ttl > 0) != tc.ttl {
			t.Errorf("%s: PTTL %v, want one: %v", tc.name, ttl, tc.ttl)
		}
	}
}
