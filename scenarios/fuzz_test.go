package scenarios

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/internal/testenv"
	"github.com/ratesim/ratesim/traffic"
)

func FuzzParse(f *testing.F) {
	files, err := fs.Glob(builtinFS, "builtin/*.yaml")
	require.NoError(f, err)
	for _, file := range files {
		data, err := builtinFS.ReadFile(file)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, tc := range invalid {
		f.Add([]byte(tc.src))
	}
	// limits that count by attributes: by global, by one a source gives
	f.Add([]byte(`name: a
limit: {rate: 2}
duration: 1s
traffic: [{type: steady, rate: 5/s, clients: 2, attributes: {server: api}}]
algorithms: [{name: all-of, limits: [{name: fixed-window}, {name: nginx, by: global}, {name: token-bucket, by: server}]}]
`))
	// an expect section: rows, a lone assertion and lists, and mistakes
	f.Add([]byte(`name: e
limit: 10/s
algorithms: [fixed-window, gcra]
traffic: [{type: burst, at: 900ms, count: 10}]
expect:
  fixed-window: peak(1s) == 20
  gcra: [verdict(at=1s) == reject, "p99_delay <= 300ms within 5%"]
  all:
    - reject_pct(key=user-*) <= 1
  gcrra: 3
  sliding-log: {a: b}
`))
	for _, tc := range validSources {
		f.Add([]byte(tc.src))
	}
	for _, tc := range validReplays {
		f.Add([]byte(tc.src))
	}
	for _, tc := range invalidReplays {
		f.Add([]byte(tc.src))
	}
	for _, tc := range validClusters {
		f.Add([]byte(tc.src))
	}
	for _, tc := range invalidClusters {
		f.Add([]byte(tc.src))
	}
	for _, tc := range validBackends {
		f.Add([]byte(tc.src))
	}
	for _, tc := range invalidBackends {
		f.Add([]byte(tc.src))
	}
	for _, tc := range validAllOf {
		f.Add([]byte(tc.src))
	}
	for _, tc := range invalidAllOf {
		f.Add([]byte(tc.src))
	}
	for _, tc := range validGatewayAlgs {
		f.Add([]byte(tc.src))
	}
	for _, tc := range invalidGatewayAlgs {
		f.Add([]byte(tc.src))
	}
	// a replay of a small trace that exists, to stream
	f.Add([]byte(replayHead + "  - {type: replay, path: ../traffic/testdata/replay/combined.log, speed: 2}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse("f.yaml", data)
		if err != nil {
			require.Nil(t, sc)
			list, ok := err.(Errors)
			require.True(t, ok, "%T", err)
			require.NotEmpty(t, list)
			require.LessOrEqual(t, len(list), maxErrors+1)
			for _, e := range list {
				require.Equal(t, "f.yaml", e.File)
				require.GreaterOrEqual(t, e.Line, 1)
				require.GreaterOrEqual(t, e.Col, 1)
				require.NotEmpty(t, e.Msg)
			}
			return
		}
		checkInvariants(t, sc)
		// its File, written back, reads as the same scenario
		file, err := Decode("f.yaml", data)
		require.NoError(t, err)
		out, err := Marshal(file)
		require.NoError(t, err)
		again, err := Parse("f.yaml", out)
		require.NoError(t, err, "%s", out)
		require.Equal(t, withoutPositions(sc), withoutPositions(again), "%s", out)
		// whatever Parse accepts opens and streams in time order; a replay
		// source's file may be missing or unreadable, which Open says
		_, stream, err := sc.Traffic.Open()
		if len(sc.replays) > 0 && err != nil {
			var re *traffic.ReplayError
			require.ErrorAs(t, err, &re)
			return
		}
		require.NoError(t, err)
		var a traffic.Arrival
		prev := time.Duration(-1)
		for i := 0; i < 5 && stream.Next(&a); i++ {
			if sc.Duration > 0 && len(sc.replays) == 0 {
				require.Less(t, a.At, sc.Duration)
			}
			require.GreaterOrEqual(t, a.At, prev)
			prev = a.At
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"0", "1ns", "1.5s", "900ms", "1m30s", "1h0m0s", "2562047h47m16.854775807s",
		"0.5ns", "-1s", "5", "5x", "1.00000000000000000001s", "0.0000000000025h", ".5µs", "+0", "1..5s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			require.Zero(t, d)
			return
		}
		require.GreaterOrEqual(t, d, time.Duration(0))
		// an accepted duration re-formats and re-parses to itself, and Go
		// agrees with it
		again, err := ParseDuration(d.String())
		require.NoError(t, err, d.String())
		require.Equal(t, d, again)
		goes, err := time.ParseDuration(s)
		if err == nil && d < 1<<53 {
			// below 2^53 ns, Go's float path is exact too
			require.Equal(t, d, goes, s)
		}
	})
}

func FuzzParseSignedDuration(f *testing.F) {
	for _, s := range []string{"0", "-0", "-0s", "-100ms", "+100ms", "-1m30s", "-1.5s", "-2562047h47m16.854775807s",
		"-2562047h47m16.854775808s", "-", "--1s", "-5", "-0.5ns", "1s-1s", "-.5us", "-1h-1h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseSignedDuration(s)
		if err != nil {
			require.Zero(t, d)
			return
		}
		// an accepted duration re-formats and re-parses to itself, its
		// magnitude is what ParseDuration reads without the sign, and Go
		// agrees with it
		again, err := ParseSignedDuration(d.String())
		require.NoError(t, err, d.String())
		require.Equal(t, d, again)
		abs, err := ParseDuration(strings.TrimLeft(s, "+-"))
		require.NoError(t, err)
		require.Equal(t, abs, max(d, -d))
		if d >= 0 && !strings.HasPrefix(s, "-") {
			plain, err := ParseDuration(s)
			require.NoError(t, err)
			require.Equal(t, d, plain)
		}
		goes, err := time.ParseDuration(s)
		if err == nil && d < 1<<53 && d > -(1<<53) {
			require.Equal(t, d, goes, s)
		}
	})
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"10/s", "600/m", "5/100ms", "3600/h", "10/2s", "7/m", "10/x", "0/s", "1/0s", "/", "9223372036854775807/1ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			require.Zero(t, r)
			return
		}
		require.GreaterOrEqual(t, r.Count, int64(1))
		require.Greater(t, r.Per, time.Duration(0))
	})
}

// extremeStride is the share of product that the extreme-value tests
// parse without RATESIM_LONG: one combination in 11, from a start that
// moves with the template. 11 is prime to the length of every list and
// of every two lists side by side (their factors are 2, 3, 5 and 7), so
// the sample still takes every value of every list, every pair of values
// of the last two lists and every pair of the first two.
const extremeStride = 11

// extremeArgs returns product(lists...) with RATESIM_LONG=1 (as CI runs
// it), otherwise one combination in extremeStride of it, starting at the
// template's index; long says which.
func extremeArgs(t *testing.T, template int, lists ...[]string) (args [][]any, long bool) {
	all := product(lists...)
	if testenv.LongEnabled() {
		return all, true
	}
	if template == 0 {
		t.Logf("one combination in %d of each template: set %s=1 to parse them all (a long check; .ci/run runs it)", extremeStride, testenv.Variable)
	}
	for i := template % extremeStride; i < len(all); i += extremeStride {
		args = append(args, all[i])
	}
	return args, false
}

// product returns every way of taking one value from each list, in order,
// as the arguments of a template.
func product(lists ...[]string) [][]any {
	out := [][]any{nil}
	for _, list := range lists {
		var next [][]any
		for _, prefix := range out {
			for _, v := range list {
				next = append(next, append(slices.Clip(prefix), v))
			}
		}
		out = next
	}
	return out
}

// TestExtremeValues puts extreme values in every numeric field of valid
// scenarios: whatever Parse accepts satisfies the invariants and its traffic
// opens and streams without a panic.
func TestExtremeValues(t *testing.T) {
	durations := []string{"0", "1ns", "999ms", "1h", "2562047h", "2562047h47m16.854775806s", "2562047h47m16.854775807s"}
	rates := []string{"1/ns", "9223372036854775807/1ns", "1/2562047h", "7/m", "3/s"}
	ints := []string{"1", "2", "1000000", "9223372036854775807"}
	templates := []string{
		"name: t\nlimit: {rate: %[3]s, per: %[1]s, burst: %[3]s}\ntraffic: [{type: times, at: [%[1]s, %[2]s]}]\n",
		"name: t\nlimit: %[4]s\ntraffic: [{type: burst, at: %[1]s, count: %[3]s, over: %[2]s}]\n",
		"name: t\nlimit: %[4]s\nduration: %[1]s\ntraffic: [{type: steady, rate: %[4]s, start: %[2]s, clients: %[3]s}]\n",
		"name: t\nlimit: 10/s\ntraffic: [{type: steady, rate: %[4]s, start: %[2]s, end: %[1]s}]\n",
		"name: t\nlimit: %[4]s\ntraffic: [{type: times, at: [%[1]s], cost: %[3]s}]\nreport: {windows: [%[1]s], bucket: %[2]s}\n",
		"name: t\nlimit: %[4]s\nduration: %[1]s\ntraffic: [{type: poisson, rate: %[4]s, start: %[2]s, clients: %[3]s, key-dist: zipf}]\n",
		"name: t\nlimit: 10/s\ntraffic: [{type: poisson, rate: %[4]s, start: %[2]s, end: %[1]s, clients: %[3]s}]\n",
		"name: t\nlimit: %[4]s\nduration: %[1]s\ntraffic: [{type: aligned, start: %[2]s, clients: %[3]s, count: %[3]s}]\n",
		"name: t\nlimit: 10/s\nduration: %[1]s\ntraffic: [{type: aligned, every: %[1]s, offset: -%[2]s, over: %[2]s, count: %[3]s}]\n",
		"name: t\nlimit: 10/s\nduration: %[1]s\ntraffic: [{type: onoff, rate: %[4]s, on: %[1]s, off: %[2]s, cost: %[3]s}]\n",
		"name: t\nlimit: 10/s\ntraffic: [{type: onoff, rate: %[4]s, on: %[2]s, off: %[1]s, end: %[1]s}]\n",
		"name: t\nlimit: %[4]s\nduration: %[1]s\ntraffic: [{type: ramp, from: %[4]s, to: 1/ns, start: %[2]s, clients: %[3]s}]\n",
		"name: t\nlimit: 10/s\nduration: %[2]s\ntraffic: [{type: ramp, from: 0/s, to: %[4]s, end: %[1]s}]\n",
	}
	accepted, long := 0, false
	for i, tmpl := range templates {
		var combos [][]any
		combos, long = extremeArgs(t, i, durations, durations, ints, rates)
		for _, args := range combos {
			src := fmt.Sprintf(tmpl, args...)
			sc, err := Parse("x.yaml", []byte(src))
			if err != nil {
				continue
			}
			accepted++
			checkInvariants(t, sc)
			_, stream, err := sc.Traffic.Open()
			require.NoError(t, err)
			var a traffic.Arrival
			for i := 0; i < 3 && stream.Next(&a); i++ {
				require.Less(t, a.At, sc.Duration, src)
			}
		}
	}
	t.Logf("%d scenarios accepted", accepted)
	if long {
		require.Greater(t, accepted, 1000)
	} else {
		require.Greater(t, accepted, 1000/extremeStride)
	}
}

// withoutPositions is sc without where its parts were written, which a
// File written back moves.
func withoutPositions(sc *Scenario) *Scenario {
	c := *sc
	c.replays = slices.Clone(sc.replays)
	for i := range c.replays {
		c.replays[i].pos = position{}
	}
	c.Algorithms = slices.Clone(sc.Algorithms)
	for i := range c.Algorithms {
		// where by: and a shedding row's values are written; what they
		// say is in Params (ClassBy, Partitions, Critical)
		c.Algorithms[i].by, c.Algorithms[i].shed = nil, nil
	}
	c.Expect = slices.Clone(sc.Expect)
	for i := range c.Expect {
		c.Expect[i].Line, c.Expect[i].Col = 0, 0
	}
	return &c
}
