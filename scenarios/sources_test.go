package scenarios

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/traffic"
)

// validSources are snippets of the poisson, aligned, onoff and ramp sources
// and the source Parse makes of each (file "s.yaml", limit 10/s unless the
// snippet sets one). FuzzParse is seeded with them too.
var validSources = []struct {
	name, src string
	want      traffic.Source
	duration  time.Duration
}{
	{
		// one key: no key distribution
		"poisson, one key", base + "duration: 2s\ntraffic: [{type: poisson, rate: 100/s}]\n",
		&traffic.Poisson{Common: traffic.Common{Clients: traffic.Clients{Key: "global"}, Cost: 1, End: 2 * time.Second},
			Rate: traffic.Rate{Count: 100, Per: time.Second}},
		2 * time.Second,
	},
	{
		// clients: uniform by default
		"poisson, clients", base + "duration: 2s\ntraffic: [{type: poisson, rate: 600/m, clients: 1000}]\n",
		&traffic.Poisson{Common: traffic.Common{Clients: traffic.Clients{N: 1000, Prefix: "client"}, Cost: 1, End: 2 * time.Second},
			Rate: traffic.Rate{Count: 600, Per: time.Minute}, KeyDist: traffic.KeyUniform},
		2 * time.Second,
	},
	{
		// zipf: exponent 1.1 by default
		"poisson, zipf", base + "duration: 2s\ntraffic: [{type: poisson, rate: 100/s, clients: 1000000, key-dist: zipf}]\n",
		&traffic.Poisson{Common: traffic.Common{Clients: traffic.Clients{N: 1000000, Prefix: "client"}, Cost: 1, End: 2 * time.Second},
			Rate: traffic.Rate{Count: 100, Per: time.Second}, KeyDist: traffic.KeyZipf, ZipfS: 1.1},
		2 * time.Second,
	},
	{
		// every common field; an integer exponent; the end cut to the duration
		"poisson, everything", base + "duration: 2s\ntraffic:\n  - type: poisson\n    rate: 5/100ms\n    clients: 20\n    key-prefix: user\n" +
			"    key-dist: zipf\n    zipf-s: 2\n    cost: 3\n    start: 500ms\n    end: 1h\n",
		&traffic.Poisson{Common: traffic.Common{Clients: traffic.Clients{N: 20, Prefix: "user"}, Cost: 3, Start: 500 * time.Millisecond, End: 2 * time.Second},
			Rate: traffic.Rate{Count: 5, Per: 100 * time.Millisecond}, KeyDist: traffic.KeyZipf, ZipfS: 2},
		2 * time.Second,
	},
	{
		// a poisson source with an end needs no duration: 2.5s rounds up to 3s
		"poisson with an end", base + "traffic: [{type: poisson, rate: 10/s, clients: 3, key-dist: uniform, end: 2500ms}]\n",
		&traffic.Poisson{Common: traffic.Common{Clients: traffic.Clients{N: 3, Prefix: "client"}, Cost: 1, End: 2500 * time.Millisecond},
			Rate: traffic.Rate{Count: 10, Per: time.Second}, KeyDist: traffic.KeyUniform},
		3 * time.Second,
	},
	{
		// every defaults to the policy's per (100ms), offset 0, count 1, over 0
		"aligned defaults", "name: t\nlimit: 5/100ms\nduration: 1s\ntraffic: [{type: aligned}]\n",
		&traffic.Aligned{Common: traffic.Common{Clients: traffic.Clients{Key: "global"}, Cost: 1, End: time.Second},
			Every: 100 * time.Millisecond, Count: 1},
		time.Second,
	},
	{
		// retry at reset, straddling the boundary from 100ms before it
		"aligned", base + "duration: 5s\ntraffic:\n  - type: aligned\n    clients: 50\n    every: 1s\n    offset: -100ms\n    count: 3\n    over: 200ms\n",
		&traffic.Aligned{Common: traffic.Common{Clients: traffic.Clients{N: 50, Prefix: "client"}, Cost: 1, End: 5 * time.Second},
			Every: time.Second, Offset: -100 * time.Millisecond, Count: 3, Over: 200 * time.Millisecond},
		5 * time.Second,
	},
	{
		// the largest offsets and over: just below every
		"aligned limits", base + "duration: 5s\ntraffic:\n  - {type: aligned, every: 1m, offset: -59.999999999s, over: 59999999999ns}\n" +
			"  - {type: aligned, every: 1m, offset: +59.999999999s}\n  - {type: aligned, offset: -0s}\n",
		nil, 5 * time.Second,
	},
	{
		"onoff", base + "duration: 10s\ntraffic: [{type: onoff, rate: 20/s, on: 250ms, off: 750ms, clients: 4}]\n",
		&traffic.OnOff{Common: traffic.Common{Clients: traffic.Clients{N: 4, Prefix: "client"}, Cost: 1, End: 10 * time.Second},
			Rate: traffic.Rate{Count: 20, Per: time.Second}, On: 250 * time.Millisecond, Off: 750 * time.Millisecond},
		10 * time.Second,
	},
	{
		// the duration is the ramp's end: it reaches 10/s at 2s
		"ramp to the duration", base + "duration: 2s\ntraffic: [{type: ramp, from: 0/s, to: 10/s}]\n",
		&traffic.Ramp{Common: traffic.Common{Clients: traffic.Clients{Key: "global"}, Cost: 1, End: 2 * time.Second},
			From: traffic.Rate{Count: 0, Per: time.Second}, To: traffic.Rate{Count: 10, Per: time.Second}, Until: 2 * time.Second},
		2 * time.Second,
	},
	{
		// an end past the duration: the ramp keeps its slope (10/s at 10s)
		// and the duration cuts it at 5s
		"ramp cut by the duration", base + "duration: 5s\ntraffic: [{type: ramp, from: 0/100ms, to: 10/s, start: 1s, end: 10s}]\n",
		&traffic.Ramp{Common: traffic.Common{Clients: traffic.Clients{Key: "global"}, Cost: 1, Start: time.Second, End: 5 * time.Second},
			From: traffic.Rate{Count: 0, Per: 100 * time.Millisecond}, To: traffic.Rate{Count: 10, Per: time.Second}, Until: 10 * time.Second},
		5 * time.Second,
	},
	{
		// falling, with an end and no duration: 2.5s rounds up to 3s
		"falling ramp with an end", base + "traffic: [{type: ramp, from: 100/s, to: 1/s, end: 2500ms, clients: 2}]\n",
		&traffic.Ramp{Common: traffic.Common{Clients: traffic.Clients{N: 2, Prefix: "client"}, Cost: 1, End: 2500 * time.Millisecond},
			From: traffic.Rate{Count: 100, Per: time.Second}, To: traffic.Rate{Count: 1, Per: time.Second}, Until: 2500 * time.Millisecond},
		3 * time.Second,
	},
}

func TestParseSources(t *testing.T) {
	for _, tc := range validSources {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse("s.yaml", []byte(tc.src))
			require.NoError(t, err)
			checkInvariants(t, sc)
			require.Equal(t, tc.duration, sc.Duration)
			if tc.want != nil {
				require.Equal(t, []traffic.Source{tc.want}, sc.Traffic.Sources)
			}
			// and it streams
			_, s, err := sc.Traffic.Open()
			require.NoError(t, err)
			var a traffic.Arrival
			require.True(t, s.Next(&a))
		})
	}
}

func TestParseAlignedLimits(t *testing.T) {
	var src string
	for _, tc := range validSources {
		if tc.name == "aligned limits" {
			src = tc.src
		}
	}
	sc, err := Parse("s.yaml", []byte(src))
	require.NoError(t, err)
	aligned := func(i int) *traffic.Aligned { return sc.Traffic.Sources[i].(*traffic.Aligned) }
	require.Equal(t, -(time.Minute - 1), aligned(0).Offset)
	require.Equal(t, time.Minute-1, aligned(0).Over)
	require.Equal(t, time.Minute-1, aligned(1).Offset)
	require.Equal(t, time.Duration(0), aligned(2).Offset)
}

// TestParseSourcesStream runs a parsed scenario of every new type and
// checks the arrivals of the deterministic ones against hand-computed
// instants.
func TestParseSourcesStream(t *testing.T) {
	src := base + "duration: 2s\ntraffic:\n" +
		"  - {type: aligned, key: a, offset: -100ms, count: 3, over: 200ms}\n" +
		"  - {type: onoff, key: o, rate: 4/s, on: 500ms, off: 500ms}\n" +
		"  - {type: ramp, key: r, from: 0/s, to: 10/s}\n" +
		"  - {type: poisson, key: p, rate: 10/s}\n"
	sc, err := Parse("s.yaml", []byte(src))
	require.NoError(t, err)
	keys, s, err := sc.Traffic.Open()
	require.NoError(t, err)
	at := map[string][]time.Duration{}
	var prev time.Duration
	var a traffic.Arrival
	for s.Next(&a) {
		require.GreaterOrEqual(t, a.At, prev)
		require.Less(t, a.At, 2*time.Second)
		prev = a.At
		at[keys.Name(a.Key)] = append(at[keys.Name(a.Key)], a.At)
	}
	// 900ms + i*200ms/3 floored, and again from 1900ms (2033333333 is past 2s)
	require.Equal(t, []time.Duration{900 * time.Millisecond, 966666666, 1033333333, 1900 * time.Millisecond, 1966666666}, at["a"])
	// 4/s: every 250ms while in [0, 500ms) and [1s, 1.5s)
	require.Equal(t, []time.Duration{0, 250 * time.Millisecond, time.Second, 1250 * time.Millisecond}, at["o"])
	// ceil(sqrt(4e17*i)) ns, see traffic.TestRamp
	require.Equal(t, []time.Duration{0, 632455533, 894427191, 1095445116, 1264911065,
		1414213563, 1549193339, 1673320054, 1788854382, 1897366597}, at["r"])
	require.NotEmpty(t, at["p"])
}

func TestParseRetries(t *testing.T) {
	t.Run("scenario and source policies", func(t *testing.T) {
		sc, err := Parse("s.yaml", []byte(base+"duration: 1s\nclients:\n  retry: {policy: fixed, delay: 100ms}\ntraffic:\n"+
			"  - {type: times, at: [0s]}\n"+
			"  - {type: poisson, rate: 10/s, retry: {policy: retry-after}}\n"+
			"  - {type: steady, rate: 1/s}\n"+
			"  - {type: ramp, from: 0/s, to: 5/s, retry: {policy: none}}\n"))
		require.NoError(t, err)
		fixed := traffic.RetryPolicy{Policy: "fixed", Delay: 100 * time.Millisecond, MaxAttempts: 3}
		require.Equal(t, fixed, sc.Retry)
		require.Equal(t, []traffic.RetryPolicy{
			fixed, // the scenario's
			{Policy: "retry-after", Resolution: time.Second, MaxAttempts: 3}, // its own, with defaults
			fixed,
			{Policy: "none"},
		}, sc.Retries)
	})
	t.Run("no policy", func(t *testing.T) {
		sc, err := Parse("s.yaml", []byte(base+"traffic: [{type: times, at: [0s]}, {type: burst, at: 0s, count: 2}]\n"))
		require.NoError(t, err)
		require.Equal(t, []traffic.RetryPolicy{{Policy: "none"}, {Policy: "none"}}, sc.Retries)
	})
}

func TestParseSignedDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"0", 0},
		{"-0s", 0},
		{"-100ms", -100 * time.Millisecond},
		{"+100ms", 100 * time.Millisecond},
		{"-1m30s", -90 * time.Second}, // the sign applies to every part, as in Go
		{"-1.5s", -1500 * time.Millisecond},
		{"-2562047h47m16.854775807s", -maxDuration},
		{"2562047h47m16.854775807s", maxDuration},
	} {
		got, err := ParseSignedDuration(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
		again, err := ParseSignedDuration(got.String())
		require.NoError(t, err, got.String())
		require.Equal(t, got, again)
	}
	for _, tc := range []struct{ in, want string }{
		{"-", `"-": want a duration like 900ms, 1.5s or 1m30s`},
		{"--1s", `"--1s": want a duration like 900ms, 1.5s or 1m30s`},
		{"-5", `"-5": no unit (add one: ns, us, ms, s, m or h, e.g. 5s)`},
		{"-0.5ns", `"-0.5ns": not a whole number of nanoseconds`},
		{"-2562048h", `"-2562048h": out of range (at most 2562047h47m16.854775807s)`},
		{"1s-1s", `"1s-1s": unknown unit "s-" (want ns, us, ms, s, m or h)`},
	} {
		_, err := ParseSignedDuration(tc.in)
		require.EqualError(t, err, tc.want, tc.in)
	}
	// ParseDuration still refuses a sign
	_, err := ParseDuration("-100ms")
	require.EqualError(t, err, `"-100ms": want a duration >= 0`)
}

const maxDuration = time.Duration(1<<63 - 1)

// TestSeedNamesStable: adding a source before a poisson source, or after
// it, leaves the poisson source's arrivals alone (one seed drives
// everything, each source from its own stream: docs/metrics.md).
func TestSeedNamesStable(t *testing.T) {
	const base = `name: s
duration: 5s
limit: 10/s
traffic:
%s  - {type: poisson, rate: 50/s, clients: 30, key-dist: zipf}
%s`
	arrivals := func(before, after string) []string {
		sc, err := Parse("s.yaml", []byte(fmt.Sprintf(base, before, after)))
		require.NoError(t, err)
		keys, st, err := sc.Traffic.Open()
		require.NoError(t, err)
		idx := int32(0)
		if before != "" {
			idx = 1
		}
		var out []string
		var a traffic.Arrival
		for st.Next(&a) {
			if a.Source == idx {
				out = append(out, fmt.Sprint(a.At, keys.Name(a.Key)))
			}
		}
		require.NoError(t, st.Err())
		return out
	}
	alone := arrivals("", "")
	require.Greater(t, len(alone), 200)
	require.Equal(t, alone, arrivals("  - {type: poisson, rate: 20/s, key: other}\n", ""), "a source added before")
	require.Equal(t, alone, arrivals("", "  - {type: poisson, rate: 20/s, clients: 30, key-dist: zipf}\n"), "a twin added after")
}
