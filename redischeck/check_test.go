package redischeck

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/sim"
)

// The epoch is the traffic's start rounded down to a multiple of the
// window and of 1 ms, so that a fixed window's edges and nginx's
// milliseconds fall where they fall in the simulation.
func TestEpoch(t *testing.T) {
	p := func(per time.Duration) algorithms.Params {
		return algorithms.Params{Policy: algorithms.Policy{Rate: 1, Per: per, Burst: 1}}
	}
	rep := &sim.Report{StartNs: int64(90 * time.Minute), DurationNs: int64(time.Minute)}
	for _, tc := range []struct {
		per   time.Duration
		epoch time.Duration
	}{
		{time.Hour, time.Hour},                               // 1h30m down to 1h
		{7 * time.Minute, 84 * time.Minute},                  // 90m down to 12 x 7m
		{1500 * time.Microsecond, 90 * time.Minute},          // lcm(1.5ms, 1ms) = 3ms divides 90m
		{333 * time.Microsecond, 5399928 * time.Millisecond}, // lcm = 333ms: 16216 x 333ms
	} {
		epoch, span := Epoch(p(tc.per), rep, nil, 0, false)
		require.Equal(t, tc.epoch, epoch, "per %v", tc.per)
		// to the end of the traffic, plus a window
		require.Equal(t, 91*time.Minute+tc.per-tc.epoch, span, "per %v", tc.per)
	}
	// a cluster's store answers later: its timeout, rtt and jitter more
	cl := &cluster.Config{Store: cluster.Store{RTT: time.Millisecond, Jitter: time.Millisecond, Timeout: time.Second}}
	_, span := Epoch(p(time.Hour), rep, cl, 0, false)
	require.Equal(t, 31*time.Minute+time.Hour+time.Second+2*time.Millisecond, span)
	// before 0 (a node's clock skewed back) the epoch is negative
	epoch, span := Epoch(p(time.Second), &sim.Report{StartNs: -1}, nil, 0, false)
	require.Equal(t, 2*time.Second-1, span, "to the end of the traffic, plus a window")
	require.Equal(t, -time.Second, epoch)
	// absolute instants (2015 as a duration since 1970) count from the
	// first arrival, not from 0; a cluster's from the first arrival less
	// its nodes' most negative skew
	at := 398890*time.Hour + 5*time.Minute + 3500*time.Millisecond
	abs := &sim.Report{StartNs: 0, DurationNs: int64(at + time.Minute)}
	epoch, span = Epoch(p(time.Second), abs, nil, at, true)
	require.Equal(t, at-500*time.Millisecond, epoch)
	require.Equal(t, time.Minute+time.Second+500*time.Millisecond, span)
	epoch, _ = Epoch(p(time.Second), abs, cl, at, true)
	require.Equal(t, at-500*time.Millisecond, epoch, "no skew: as a plain row")
	cl.Skew = []time.Duration{0, 1200 * time.Millisecond, -1200 * time.Millisecond}
	epoch, span = Epoch(p(time.Second), abs, cl, at, true)
	// 3.5s - 1.2s = 2.3s past the minute, down to the second: 2s
	require.Equal(t, at-1500*time.Millisecond, epoch, "a node whose clock is 1.2s behind")
	require.Equal(t, time.Minute+time.Second+1500*time.Millisecond+time.Second+2*time.Millisecond, span,
		"to the end of the traffic, a window, and the store's timeout, rtt and jitter")
	// a report that starts after the first arrival less the skew keeps
	// its start
	late := &sim.Report{StartNs: int64(at), DurationNs: int64(time.Minute)}
	epoch, _ = Epoch(p(time.Second), late, cl, at, true)
	require.Equal(t, at-500*time.Millisecond, epoch)
	// a first arrival on a window's edge stays above 0 on Redis (uber's
	// 0 is a key never seen): the epoch is the window before it
	epoch, span = Epoch(p(time.Second), &sim.Report{DurationNs: int64(4 * time.Second)}, nil, time.Second, true)
	require.Equal(t, time.Duration(0), epoch)
	require.Equal(t, 5*time.Second, span)
	epoch, _ = Epoch(p(time.Second), &sim.Report{DurationNs: int64(4 * time.Second)}, nil, 3*time.Second, true)
	require.Equal(t, 2*time.Second, epoch)
}

// An all-of row's epoch is a multiple of every limit's window (and of 1
// ms), and its span runs the longest window past the traffic.
func TestEpochAllOf(t *testing.T) {
	m := func(per time.Duration) algorithms.Member {
		return algorithms.Member{Name: "fixed-window", Params: algorithms.Params{Policy: algorithms.Policy{Rate: 1, Per: per, Burst: 1}}}
	}
	p := algorithms.Params{Policy: algorithms.Policy{Rate: 1, Per: time.Hour, Burst: 1},
		Members: []algorithms.Member{m(time.Second), m(1500 * time.Millisecond), m(7 * time.Second)}}
	rep := &sim.Report{StartNs: int64(100 * time.Second), DurationNs: int64(time.Minute)}
	epoch, span := Epoch(p, rep, nil, 0, false)
	require.Equal(t, 84*time.Second, epoch, "lcm(1s, 1.5s, 7s) = 21s: 100s down to 4 x 21s; the row's own per is not a window")
	require.Equal(t, 160*time.Second+7*time.Second-epoch, span, "to the end of the traffic, plus the longest window")
}

func TestLCM(t *testing.T) {
	require.Equal(t, int64(6), lcm(2, 3))
	require.Equal(t, int64(1000000), lcm(1000, 1000000))
	require.Equal(t, int64(1<<61), lcm(1<<61, 1<<20), "a multiple already")
	require.Equal(t, int64(1<<61+1), lcm(1<<61+1, 1000000), "overflow keeps a")
}

// The p99 is nearest-rank over buckets 1/16 of a power of two wide, and
// reported as the bucket's upper edge: never below the true p99, at most
// 6.25% above it.
func TestLatencies(t *testing.T) {
	var l latencies
	require.Zero(t, l.p99())
	for i := 1; i <= 1000; i++ {
		l.add(time.Duration(i) * time.Microsecond)
	}
	p := l.p99()
	require.GreaterOrEqual(t, p, 990*time.Microsecond)
	require.LessOrEqual(t, p, 990*time.Microsecond*17/16)
	var m latencies
	for range 20 {
		m.add(time.Second)
	}
	l.merge(&m)
	require.Equal(t, int64(1020), l.n)
	require.GreaterOrEqual(t, l.p99(), time.Second, "the top 2% are the seconds")
	var one latencies
	one.add(0)
	require.Equal(t, time.Duration(1), one.p99(), "0 counts as 1ns")
}

func TestKeyPattern(t *testing.T) {
	require.Equal(t, `ratesim:{r}:a\*b\?\[c\]\\:*`, keyPattern(`ratesim:{r}:a*b?[c]\:`))
}

// Every key goes to one lane, and the lanes share the keys out.
func TestLane(t *testing.T) {
	seen := map[int]int{}
	for i := range 1000 {
		k := "user-" + string(rune('a'+i%26)) + string(rune('a'+i/26%26))
		l := lane(k, 2)
		require.Equal(t, l, lane(k, 2))
		seen[l]++
	}
	require.Len(t, seen, 2)
	require.Greater(t, seen[0], 300)
	require.Equal(t, 0, lane("anything", 1))
}
