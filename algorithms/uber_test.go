package algorithms

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// uberGoroutine is one goroutine of a go.uber.org/ratelimit test: it
// loops Take on its limiters (keys of a row each) in turn, then counts.
type uberGoroutine struct {
	start time.Duration
	takes []Limiter
}

// uberCount plays go.uber.org/ratelimit's test runner on the virtual
// clock: each goroutine calls Take on its limiters one after the other
// (each sleeping its delay) and counts a loop when it has taken them all;
// it returns the count at each instant of at (loops finished at or before
// it). Goroutines ready at the same instant go in the order given.
func uberCount(t *testing.T, gs []uberGoroutine, at []time.Duration) []int {
	t.Helper()
	type g struct {
		now  time.Duration
		step int
	}
	state := make([]g, len(gs))
	for i := range gs {
		state[i].now = gs[i].start
	}
	end := at[len(at)-1]
	var done []time.Duration
	for {
		i := -1
		for j := range state {
			if state[j].now <= end && (i < 0 || state[j].now < state[i].now) {
				i = j
			}
		}
		if i < 0 {
			break
		}
		d := gs[i].takes[state[i].step].Decide(state[i].now, 0, 1)
		require.NotEqual(t, Reject, d.Verdict)
		state[i].now += d.Delay
		state[i].step++
		if state[i].step == len(gs[i].takes) {
			state[i].step = 0
			done = append(done, state[i].now)
		}
	}
	counts := make([]int, len(at))
	for k, a := range at {
		for _, d := range done {
			if d <= a {
				counts[k]++
			}
		}
	}
	return counts
}

// start is a clock away from 0, as the library's tests set theirs.
const uberStart = time.Duration(1_700_000_000) * time.Second

// TestUberRatelimitTests transcribes go.uber.org/ratelimit's
// ratelimit_test.go: the counts its runner asserts, with goroutines
// taking in a loop on a mock clock. The runner counts a loop once Take
// has returned and checks the count when the mock clock reaches the
// instant, before the loops that finish at that instant: here, loops
// finished strictly before it (at - 1ns).
func TestUberRatelimitTests(t *testing.T) {
	row := func(rate int64, per time.Duration, slack int64, set bool) Limiter {
		return mustLimiter(t, "uber-ratelimit", Params{Policy: Policy{Rate: rate, Per: per, Burst: 1}, Slack: slack, SlackSet: set})
	}
	s := time.Second
	before := func(ds ...time.Duration) []time.Duration {
		for i := range ds {
			ds[i] += uberStart - 1
		}
		return ds
	}
	t.Run("TestRateLimiter", func(t *testing.T) {
		rl := row(100, s, 0, true)
		g := uberGoroutine{uberStart, []Limiter{rl}}
		require.Equal(t, []int{100, 200, 300}, uberCount(t, []uberGoroutine{g, g, g, g}, before(s, 2*s, 3*s)))
	})
	t.Run("TestPer", func(t *testing.T) {
		rl := row(7, time.Minute, 0, true)
		g := uberGoroutine{uberStart, []Limiter{rl}}
		require.Equal(t, []int{1, 8, 15}, uberCount(t, []uberGoroutine{g, g}, before(s, time.Minute, 2*time.Minute)))
	})
	t.Run("TestDelayedRateLimiter", func(t *testing.T) {
		slow, fast := row(10, s, 0, true), row(100, s, 0, true)
		gs := []uberGoroutine{{uberStart, []Limiter{slow, fast}}}
		for range 4 {
			gs = append(gs, uberGoroutine{uberStart + 20*s, []Limiter{fast}})
		}
		require.Equal(t, []int{1200}, uberCount(t, gs, before(30*s)))
	})
	// TestSlack: a slow limiter (10/s, without slack) paces one goroutine
	// that takes on both, so the fast one (100/s) gathers slack; two more
	// goroutines take on the fast one alone from 2s on.
	for _, c := range []struct {
		slack int64
		set   bool
		per   time.Duration
		want  int
	}{
		{10, false, s, 130}, {10, true, s, 130}, {20, true, s, 140}, {150, true, s, 270},
		{10, false, s / 2, 230}, {10, true, s / 2, 230}, {20, true, s / 2, 240}, {150, true, s / 2, 370},
	} {
		t.Run(fmt.Sprintf("TestSlack/slack-%d-set-%v-per-%v", c.slack, c.set, c.per), func(t *testing.T) {
			slow, fast := row(10, s, 0, true), row(100, c.per, c.slack, c.set)
			gs := []uberGoroutine{{uberStart, []Limiter{slow, fast}},
				{uberStart + 2*s, []Limiter{fast}}, {uberStart + 2*s, []Limiter{fast}}}
			require.Equal(t, []int{10, c.want}, uberCount(t, gs, before(s, 3*s)))
		})
	}
}

// TestUberHandComputed: the rule by hand at 10/s (perRequest 100ms).
func TestUberHandComputed(t *testing.T) {
	ms := time.Millisecond
	t0 := uberStart
	t.Run("slack-2", func(t *testing.T) {
		l := mustLimiter(t, "uber-ratelimit", Params{Policy: perSecond(10), Slack: 2, SlackSet: true})
		checkRows(t, l, []decideRow{
			// a first call: state = t, no wait; the bucket starts empty
			{at: t0, cost: 1, want: Accept},
			{at: t0, cost: 1, want: Delay, delay: 100 * ms},
			// 1s later: t - state (100ms) = 900ms > maxSlack + 100ms
			// = 300ms: state = t - 200ms, then +100ms, +100ms: 3 at once
			{at: t0 + s(1), cost: 3, want: Accept},
			{at: t0 + s(1), cost: 1, want: Delay, delay: 100 * ms},
			// a cost of 2 is two Takes: +100ms, +100ms
			{at: t0 + s(1), cost: 2, want: Delay, delay: 300 * ms},
		})
		requireLive(t, l.(stateHolder), t0+s(100), 1, 8) // never released
	})
	t.Run("without-slack", func(t *testing.T) {
		l := mustLimiter(t, "uber-ratelimit", Params{Policy: perSecond(10), SlackSet: true})
		checkRows(t, l, []decideRow{
			{at: t0, cost: 1, want: Accept},
			// 150ms later: 150ms > 100ms: state = t, no credit
			{at: t0 + 150*ms, cost: 2, want: Delay, delay: 100 * ms},
			// the state 250ms is ahead of t: +100ms, 350ms
			{at: t0 + 200*ms, cost: 1, want: Delay, delay: 150 * ms},
		})
		// the state is t0+350ms: released 100ms + 1ns after it
		requireLive(t, l.(stateHolder), t0+450*ms, 1, 8)
		requireLive(t, l.(stateHolder), t0+450*ms+1, 0, 0)
	})
	t.Run("epoch", func(t *testing.T) {
		// a state of 0 is a key never seen: Takes at the instant 0
		// all pass, as the library's would on a clock at the epoch
		l := mustLimiter(t, "uber-ratelimit", Params{Policy: perSecond(10)})
		checkRows(t, l, []decideRow{{at: 0, cost: 5, want: Accept}, {at: 0, cost: 1, want: Accept}})
	})
}

func s(n int64) time.Duration { return time.Duration(n) * time.Second }
