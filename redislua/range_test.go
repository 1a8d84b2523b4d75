package redislua

import (
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
)

// TestCheckRangeRefusals: policies whose scripts would form an
// intermediate of 2^53 or more are refused with the product that
// overflows, the power of two it needs and what would fit.
func TestCheckRangeRefusals(t *testing.T) {
	nb := policy(10, time.Second, 10)
	nb.NginxBurst, nb.NginxBurstSet = 10_000_000_000, true
	tbd := policy(1000, time.Second, 10)
	tbd.MaxDelay = 10000 * time.Hour
	svc := policy(10, time.Second, 10)
	svc.Service = 3000 * time.Hour
	for _, tc := range []struct {
		name  string
		clock Clock
		p     algorithms.Params
		span  time.Duration
		want  string
	}{
		{"sliding-window", ClockArg, policy(10000, time.Hour, 10), time.Hour,
			"sliding-window with per 1h0m0s, rate 10000 and burst 10 needs rate*per = 36000000000000000, 2^55, above 2^53, where Lua's numbers stop being exact integers; use per <= 15m0s or rate <= 2501"},
		{"gcra", ClockArg, policy(7, 24*time.Hour, 20000), time.Hour,
			"gcra with per 24h0m0s, rate 7 and burst 20000 needs burst*per/gcd(rate, per) = 1728000000000000000, 2^61, above 2^53, where Lua's numbers stop being exact integers; use per <= 7m30s or burst <= 104"},
		{"leaky-bucket", ClockArg, policy(7, 24*time.Hour, 20000), time.Hour,
			"needs burst*per/gcd(rate, per) = 1728000000000000000, 2^61"},
		{"token-bucket", ClockArg, tbd, time.Hour,
			"token-bucket with per 1s, rate 1000 and burst 10 needs (burst*per + (max-delay+1)*rate)/gcd(rate, per) = 36000000010000001, 2^55, above 2^53, where Lua's numbers stop being exact integers; use max-delay <= 2500h0m0s"},
		{"fixed-window", ClockArg, policy(10, time.Second, 10), 105 * 24 * time.Hour,
			"fixed-window with per 1s, rate 10 and burst 10 needs now + per = 9072001000000000, 2^54, above 2^53, where Lua's numbers stop being exact integers; use span <= 2501h"},
		{"sliding-log", ClockArg, policy(10, 200*24*time.Hour, 10), time.Hour,
			"needs now + per = 17283600000000000, 2^54"},
		{"nginx", ClockArg, nb, time.Hour,
			"nginx with per 1s, rate 10 and nginx-burst 10000000000 needs (nginx-burst+1)*10^6 = 10000000001000000, 2^54, above 2^53, where Lua's numbers stop being exact integers; use nginx-burst <= 90035991"},
		{"concurrency", ClockArg, svc, time.Hour,
			"concurrency with per 1s, rate 10 and burst 10 needs now + service = 10803600000000000, 2^54, above 2^53, where Lua's numbers stop being exact integers; use service <= 2500h0m0s"},
		{"gcra", ClockRedis, policy(10, time.Second+1, 10), 0,
			"per 1.000000001s is not a whole number of microseconds, the resolution of --clock redis"},
		{"x-time-rate", ClockArg, policy(10, time.Second, 10), 0,
			"x-time-rate has no Lua script: it is the golang.org/x/time/rate library, which decides in floating point"},
		{"nginx", ClockArg, policy(10, 2*time.Second, 10), 0,
			"nginx takes a rate per 1s (r/s) or per 1m (r/m) only"},
	} {
		err := CheckRange(tc.name, tc.clock, tc.p, 1, tc.span)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: got %v\nwant %s", tc.name, tc.p.Policy, err, tc.want)
		}
	}
}

// TestCheckRangeAccepts: the policies of the differential tests and
// common production ones fit, with either clock; the redis clock's
// microseconds take policies 1000 times larger.
func TestCheckRangeAccepts(t *testing.T) {
	for name, ps := range differentialCases() {
		for _, p := range ps {
			if _, err := algorithms.New(name, p); err != nil {
				continue
			}
			if err := CheckRange(name, ClockArg, p, 3, 24*time.Hour); err != nil {
				t.Errorf("%s %s: %v", name, describe(p), err)
			}
		}
	}
	p := policy(10000, time.Hour, 10)
	if err := CheckRange("sliding-window", ClockRedis, p, 1, 0); err != nil {
		t.Errorf("10000/h in microseconds: %v", err)
	}
}

// TestCheckRangeSuggestionsFit: what a refusal suggests is accepted.
func TestCheckRangeSuggestionsFit(t *testing.T) {
	if err := CheckRange("sliding-window", ClockArg, policy(2501, time.Hour, 10), 1, time.Hour); err != nil {
		t.Error(err)
	}
	if err := CheckRange("sliding-window", ClockArg, policy(10000, 15*time.Minute, 10), 1, time.Hour); err != nil {
		t.Error(err)
	}
	if err := CheckRange("gcra", ClockArg, policy(7, 24*time.Hour, 104), 1, time.Hour); err != nil {
		t.Error(err)
	}
	if err := CheckRange("gcra", ClockArg, policy(7, 24*time.Hour, 105), 1, time.Hour); err == nil {
		t.Error("burst 105 accepted: the suggestion was not the largest")
	}
}
