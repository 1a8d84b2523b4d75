package output

import (
	"time"

	"github.com/ratesim/ratesim/sim"
)

// The reports below are built by hand from the worked examples of docs/algorithms.md so
// that the renderers can be tested without the engine.

const (
	ms = int64(time.Millisecond)
	s  = int64(time.Second)
)

// peak builds a Peak with the ratio count / (rate*v/per), as docs/metrics.md
// defines it.
func peak(l sim.Limit, v, count, start int64) sim.Peak {
	return sim.Peak{WindowNs: v, Count: count, StartNs: start,
		Ratio: sim.Ratio(float64(count) * float64(l.PerNs) / (float64(l.Rate) * float64(v)))}
}

// keyPeak builds a KeyPeak of key with the ratio count / (rate*v/per).
func keyPeak(l sim.Limit, v, count int64, key string, start int64) sim.KeyPeak {
	p := peak(l, v, count, start)
	return sim.KeyPeak{WindowNs: v, Count: count, Key: key, StartNs: start, Ratio: p.Ratio}
}

// doubleBurst is the built-in double-burst scenario (docs/algorithms.md,
// worked example 1) run through the nine algorithms with the policy 10/1s burst 10: ten
// requests at 900..990ms and ten at 1000..1090ms, one key, no retries, no
// backend service time.
func doubleBurst() *sim.Report {
	l := sim.Limit{Rate: 10, PerNs: s, Burst: 10}
	res := func(algorithm string, accepted, delayed, rejected int64, d sim.Percentiles,
		p1s, p100ms [2]int64, bytes int64) sim.Result {
		return sim.Result{
			Algorithm: algorithm, Label: algorithm, Params: map[string]any{}, Limit: l,
			Offered: 20, Attempts: 20, Accepted: accepted, Delayed: delayed, Rejected: rejected,
			GaveUp: rejected, DelayNs: d,
			Peaks: []sim.Peak{peak(l, s, p1s[0], p1s[1]), peak(l, 100*ms, p100ms[0], p100ms[1])},
			// one key: its peaks are every key's
			KeyPeaks: []sim.KeyPeak{keyPeak(l, s, p1s[0], "alice", p1s[1]), keyPeak(l, 100*ms, p100ms[0], "alice", p100ms[1])},
			Memory:   sim.Memory{BytesPerKeyMax: bytes, KeysPeak: 1, BytesPeak: bytes},
		}
	}
	none := sim.Percentiles{Exact: true}
	// leaky-bucket and nginx (burst 9, delay 0) release request i of the
	// first burst at 900ms + i*100ms (delay i*90ms), admit the first of the
	// second burst with delay 900ms and reject the other nine.
	shaped := sim.Percentiles{P50: 450 * ms, P90: 810 * ms, P99: 900 * ms, Max: 900 * ms, Exact: true}
	r := &sim.Report{
		Scenario:    "double-burst",
		Description: "Fixed window lets twice the limit through at a boundary.",
		Seed:        1,
		DurationNs:  3 * s,
		Limit:       l,
		Keys:        1,
		Results: []sim.Result{
			res("fixed-window", 20, 0, 0, none, [2]int64{20, 900 * ms}, [2]int64{10, 900 * ms}, 16),
			res("sliding-log", 10, 0, 10, none, [2]int64{10, 900 * ms}, [2]int64{10, 900 * ms}, 184),
			res("sliding-window", 10, 0, 10, none, [2]int64{10, 900 * ms}, [2]int64{10, 900 * ms}, 24),
			res("token-bucket", 11, 0, 9, none, [2]int64{11, 900 * ms}, [2]int64{10, 900 * ms}, 16),
			res("gcra", 11, 0, 9, none, [2]int64{11, 900 * ms}, [2]int64{10, 900 * ms}, 8),
			res("leaky-bucket", 1, 10, 9, shaped, [2]int64{10, 900 * ms}, [2]int64{1, 900 * ms}, 8),
			res("nginx", 1, 10, 9, shaped, [2]int64{10, 900 * ms}, [2]int64{1, 900 * ms}, 16),
			res("concurrency", 20, 0, 0, none, [2]int64{20, 900 * ms}, [2]int64{10, 900 * ms}, 8),
			res("x-time-rate", 11, 0, 9, none, [2]int64{11, 900 * ms}, [2]int64{10, 900 * ms}, 72),
		},
	}
	// Series per 100ms bucket from 900ms for two of the rows.
	fw := &r.Results[0]
	fw.Series = sim.Series{BucketNs: 100 * ms, StartNs: 900 * ms,
		Offered:  []int64{10, 10},
		Attempts: []int64{10, 10},
		Admitted: []int64{10, 10},
		Delayed:  []int64{0, 0},
		Rejected: []int64{0, 0},
	}
	lb := &r.Results[5]
	lb.Series = sim.Series{BucketNs: 100 * ms, StartNs: 900 * ms,
		Offered:  []int64{10, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		Attempts: []int64{10, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		Admitted: []int64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
		Delayed:  []int64{9, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		Rejected: []int64{0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	}
	r.Results[6].Params = map[string]any{"burst": 9, "delay": 0, "nodelay": false}
	return r
}

// retryStorm is a heavier scenario: clients that retry at the window reset,
// per-algorithm overrides, minute windows, an uneven ratio (1.33x) and
// delays that need every unit of the duration formatter.
func retryStorm() *sim.Report {
	l := sim.Limit{Rate: 100, PerNs: 60 * s, Burst: 100}
	b200 := sim.Limit{Rate: 100, PerNs: 60 * s, Burst: 200}
	windows := func(lim sim.Limit, c1m, s1m, c6s, s6s int64) []sim.Peak {
		return []sim.Peak{peak(lim, 60*s, c1m, s1m), peak(lim, 6*s, c6s, s6s)}
	}
	// one key's: none past its 100 per minute, some past its 10 per 6s
	keys := func(lim sim.Limit, key string, c1m, s1m, c6s, s6s int64) []sim.KeyPeak {
		return []sim.KeyPeak{keyPeak(lim, 60*s, c1m, key, s1m), keyPeak(lim, 6*s, c6s, key, s6s)}
	}
	return &sim.Report{
		Scenario:   "retry-storm",
		Keys:       40,
		Seed:       42,
		DurationNs: 5 * 60 * s,
		Limit:      l,
		Results: []sim.Result{
			{
				Algorithm: "fixed-window", Label: "fixed-window", Limit: l,
				Offered: 600, Attempts: 1400, Accepted: 500, Rejected: 900, GaveUp: 100,
				DelayNs:      sim.Percentiles{Exact: true},
				Peaks:        windows(l, 200, 59*s+500*ms, 120, 60*s),
				KeyPeaks:     keys(l, "client-7", 30, 59*s+500*ms, 12, 60*s),
				AttemptPeaks: windows(l, 700, 59*s+500*ms, 400, 60*s),
				Keys:         sim.KeyReport{Limited: 40, Top: []sim.KeyCount{{Key: "client-7", Offered: 15, Rejected: 30}, {Key: "client-3", Offered: 15, Rejected: 28}}},
				Memory:       sim.Memory{BytesPerKeyMax: 16, KeysPeak: 50, BytesPeak: 800},
			},
			{
				Algorithm: "sliding-log", Label: "sliding-log-strict", Limit: l,
				Params:  map[string]any{"count-rejected": true},
				Offered: 600, Attempts: 1650, Accepted: 300, Rejected: 1350, GaveUp: 300,
				DelayNs:      sim.Percentiles{Exact: true},
				Peaks:        windows(l, 100, 0, 40, 120*s),
				KeyPeaks:     keys(l, "client-1", 25, 0, 8, 120*s),
				AttemptPeaks: windows(l, 800, 0, 420, 60*s),
				Keys:         sim.KeyReport{Limited: 40, Top: []sim.KeyCount{{Key: "client-1", Offered: 15, Rejected: 40}}},
				Memory:       sim.Memory{BytesPerKeyMax: 1624, KeysPeak: 50, BytesPeak: 81200},
			},
			{
				Algorithm: "token-bucket", Label: "token-bucket-b200", Limit: b200,
				Params:  map[string]any{"burst": 200},
				Offered: 600, Attempts: 1100, Accepted: 600, Rejected: 500, GaveUp: 0,
				DelayNs:      sim.Percentiles{Exact: true},
				Peaks:        windows(b200, 250, 60*s+500*ms, 200, 60*s+500*ms),
				KeyPeaks:     keys(b200, "client-3", 30, 60*s+500*ms, 15, 60*s+500*ms),
				AttemptPeaks: windows(b200, 400, 60*s+500*ms, 300, 60*s+500*ms),
				Keys:         sim.KeyReport{Limited: 12},
				Memory:       sim.Memory{BytesPerKeyMax: 16, KeysPeak: 50, BytesPeak: 800},
			},
			{
				Algorithm: "gcra", Label: "gcra-shaping", Limit: l,
				Params:  map[string]any{"max-delay": "2s"},
				Offered: 600, Attempts: 900, Accepted: 200, Delayed: 350, Rejected: 350, GaveUp: 50,
				DelayNs:      sim.Percentiles{P50: 1090 * ms, P90: 1500 * ms, P99: 1999999999, Max: 2 * s, Exact: true},
				Peaks:        windows(l, 133, 150*s+1500, 13, 150*s+333333333),
				KeyPeaks:     keys(l, "client-7", 14, 150*s+1500, 3, 150*s+333333333),
				AttemptPeaks: windows(l, 300, 150*s, 60, 150*s),
				Keys:         sim.KeyReport{Limited: 5},
				Memory:       sim.Memory{BytesPerKeyMax: 8, KeysPeak: 48, BytesPeak: 384},
			},
			{
				// Float rounding in x/time/rate makes delays of a few µs.
				Algorithm: "x-time-rate", Label: "x-time-rate-shaping", Limit: l,
				Params:  map[string]any{"max-delay": "10ms"},
				Offered: 600, Attempts: 1000, Accepted: 488, Delayed: 12, Rejected: 500, GaveUp: 100,
				DelayNs:      sim.Percentiles{P50: 0, P90: 0, P99: 1500, Max: 9999 * int64(time.Microsecond), Exact: true},
				Peaks:        windows(l, 112, 60*s, 100, 60*s),
				KeyPeaks:     keys(l, "client-2", 12, 60*s, 10, 60*s),
				AttemptPeaks: windows(l, 350, 60*s, 200, 60*s),
				Keys:         sim.KeyReport{Limited: 0},
				Memory:       sim.Memory{BytesPerKeyMax: 72, KeysPeak: 50, BytesPeak: 3600},
			},
		},
	}
}

// replayed is a replayed access log: absolute timestamps, one algorithm,
// whose counter approximation lets 3% over the limit through.
func replayed() *sim.Report {
	l := sim.Limit{Rate: 100, PerNs: s, Burst: 200}
	start := int64(1714564800) * s // 2024-05-01T12:00:00Z
	return &sim.Report{
		Scenario:   "access-log",
		Keys:       1753,
		Seed:       1,
		StartNs:    start,
		DurationNs: 2*3600*s + 30*s,
		Limit:      l,
		Traces: []sim.TraceSummary{{
			Path: "access.log.gz", Format: "combined", Lines: 123500, Used: 123456, Malformed: 40, Late: 3, Sliced: 4,
			ByReason: map[string]int64{"bad month": 1, "missing field": 39},
			FirstBad: []string{"access.log.gz:17: bad month: \"Mai\" is not a month"},
			FirstNs:  start, LastNs: start + 2*3600*s + 30*s, Keys: 1753, PeakPerSecond: 104,
		}},
		Results: []sim.Result{{
			Algorithm: "sliding-window", Label: "sliding-window", Params: map[string]any{}, Limit: l,
			Offered: 123456, Attempts: 123456, Accepted: 123400, Rejected: 56, GaveUp: 56,
			Keys: sim.KeyReport{Limited: 2, Top: []sim.KeyCount{
				{Key: "203.0.113.7", Offered: 9000, Rejected: 50}, {Key: "198.51.100.23", Offered: 3000, Rejected: 6}}},
			DelayNs: sim.Percentiles{Exact: true},
			Peaks:   []sim.Peak{peak(l, s, 103, start+250*ms)},
			// the heavy client sent all of the busiest second
			KeyPeaks: []sim.KeyPeak{keyPeak(l, s, 103, "203.0.113.7", start+250*ms)},
			Memory:   sim.Memory{BytesPerKeyMax: 24, KeysPeak: 1873, BytesPeak: 44952},
		}},
	}
}
