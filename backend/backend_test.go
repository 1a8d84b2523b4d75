package backend

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// cfgOf is a backend of c workers serving every request in svc, with an
// unbounded FIFO queue, no timeout, and series buckets of 10ms.
func cfgOf(c int, svc time.Duration) Config {
	return Config{Workers: c, Service: Service{Mean: svc}, Queue: Unbounded, Bucket: 10 * ms, Seed: 1}
}

// at is a request, numbered id, that arrives at and is admitted at a ms.
func at(id uint64, a float64) Request {
	t := time.Duration(a * float64(ms))
	return Request{ID: id, Attempt: 1, Arrived: t, Admitted: t}
}

// play submits reqs, drains the backend, and returns its events, one line
// each ("10ms 3 completed client"), and its result over [0, to).
func play(t *testing.T, cfg Config, to time.Duration, reqs ...Request) ([]string, Result) {
	t.Helper()
	var lines []string
	b, err := New(cfg, func(e Event) {
		l := fmt.Sprintf("%v %d %v", e.At, e.Req.ID, e.Kind)
		if e.Client {
			l += " client"
		}
		lines = append(lines, l)
	})
	require.NoError(t, err)
	for _, r := range reqs {
		require.NoError(t, b.Submit(&r))
	}
	b.Until(math.MaxInt64)
	return lines, b.Result(0, to)
}

func lines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

// TestFIFOAndLIFO: one worker, 10ms each, four requests at 0, 1, 2 and
// 3ms. FIFO serves them in arrival order, back to back. LIFO serves 0 (it
// found the worker free), then at 10ms the last to join (3), then 2, then
// 1.
func TestFIFOAndLIFO(t *testing.T) {
	reqs := []Request{at(0, 0), at(1, 1), at(2, 2), at(3, 3)}
	ev, res := play(t, cfgOf(1, 10*ms), 40*ms, reqs...)
	require.Equal(t, lines(`
0s 0 started
10ms 0 completed client
10ms 1 started
20ms 1 completed client
20ms 2 started
30ms 2 completed client
30ms 3 started
40ms 3 completed client`), ev)
	// waits 0, 9, 18, 27ms; responses 10, 19, 28, 37ms
	require.Equal(t, Percentiles{Mean: int64(13500 * time.Microsecond), P50: int64(9 * ms), P90: int64(27 * ms),
		P99: int64(27 * ms), Max: int64(27 * ms), Exact: true}, res.QueueWaitNs)
	require.Equal(t, Percentiles{Mean: int64(23500 * time.Microsecond), P50: int64(19 * ms), P90: int64(37 * ms),
		P99: int64(37 * ms), Max: int64(37 * ms), Exact: true}, res.ResponseNs)
	// busy 40ms of one worker over a span of 40ms
	require.Equal(t, 1.0, res.Utilization)
	require.Equal(t, int64(4), res.Goodput)
	// the queue: 1 on [1,2), 2 on [2,3), 3 on [3,10) = 24 ms*requests in
	// bucket 0; 2 all through bucket 1 (from 10ms: the start at 10ms takes
	// one), 1 through bucket 2, 0 after
	require.Equal(t, []float64{2.4, 2, 1, 0, 0}, res.Series.Queue)
	require.Equal(t, []int64{3, 2, 1, 0, 0}, res.Series.QueueMax)
	// a completion at 10ms falls in bucket 1, [10ms, 20ms)
	require.Equal(t, []int64{0, 1, 1, 1, 1}, res.Series.Goodput)
	require.Equal(t, []int64{0, int64(10 * ms), int64(19 * ms), int64(28 * ms), int64(37 * ms)}, res.Series.ResponseP99Ns)

	lifo := cfgOf(1, 10*ms)
	lifo.Discipline = LIFO
	ev, _ = play(t, lifo, 40*ms, reqs...)
	require.Equal(t, lines(`
0s 0 started
10ms 0 completed client
10ms 3 started
20ms 3 completed client
20ms 2 started
30ms 2 completed client
30ms 1 started
40ms 1 completed client`), ev)
}

// TestShedOnFullQueue: one worker, a queue of one. 0 is served at once, 1
// waits, 2 finds the queue full at 2ms and is shed. At 10ms the completion
// of 0 comes first: 1 starts, and 3, admitted at that instant, finds the
// queue empty again and waits instead of being shed.
func TestShedOnFullQueue(t *testing.T) {
	cfg := cfgOf(1, 10*ms)
	cfg.Queue = 1
	ev, res := play(t, cfg, 30*ms, at(0, 0), at(1, 1), at(2, 2), at(3, 10))
	require.Equal(t, lines(`
0s 0 started
2ms 2 shed client
10ms 0 completed client
10ms 1 started
20ms 1 completed client
20ms 3 started
30ms 3 completed client`), ev)
	require.Equal(t, int64(1), res.Shed)
	require.Equal(t, int64(3), res.Served)
	require.Equal(t, int64(3), res.Goodput)
	require.Equal(t, []int64{0, 0, 0}, res.Series.Shed[1:])

	// a queue of 0: a loss system; 1 and 2 are shed, 3 finds the worker
	// free at 10ms (the completion comes first)
	cfg.Queue = 0
	ev, res = play(t, cfg, 30*ms, at(0, 0), at(1, 1), at(2, 2), at(3, 10))
	require.Equal(t, lines(`
0s 0 started
1ms 1 shed client
2ms 2 shed client
10ms 0 completed client
10ms 3 started
20ms 3 completed client`), ev)
	require.Equal(t, int64(2), res.Shed)
}

// TestTimeouts: one worker, 10ms each, a timeout of 15ms, requests at 0, 1
// and 2ms. 0 is in time. 1 starts at 10ms, its client gives up at 16ms,
// and it completes at 20ms: 4ms of work after the client left. 2's client
// gives up at 17ms while it waits; it is served 20-30ms, all 10ms wasted.
// With drop-expired, 1 still starts (its deadline, 16ms, is after 10ms)
// and wastes 4ms, but 2 reaches the worker at 20ms, after its deadline,
// and is dropped unserved.
func TestTimeouts(t *testing.T) {
	cfg := cfgOf(1, 10*ms)
	cfg.Timeout = 15 * ms
	reqs := []Request{at(0, 0), at(1, 1), at(2, 2)}
	ev, res := play(t, cfg, 30*ms, reqs...)
	require.Equal(t, lines(`
0s 0 started
10ms 0 completed client
10ms 1 started
16ms 1 timed-out client
17ms 2 timed-out client
20ms 1 completed
20ms 2 started
30ms 2 completed`), ev)
	require.Equal(t, int64(3), res.Served)
	require.Equal(t, int64(3), res.CompletedOK)
	require.Equal(t, int64(1), res.Goodput)
	require.Equal(t, int64(2), res.TimedOut)
	require.Equal(t, int64(14*ms), res.WastedNs)
	require.Equal(t, []int64{0, 2, 0, 0}, res.Series.TimedOut) // 16 and 17ms

	cfg.DropExpired = true
	ev, res = play(t, cfg, 30*ms, reqs...)
	require.Equal(t, lines(`
0s 0 started
10ms 0 completed client
10ms 1 started
16ms 1 timed-out client
17ms 2 timed-out client
20ms 1 completed
20ms 2 dropped`), ev)
	require.Equal(t, int64(2), res.Served)
	require.Equal(t, int64(1), res.Dropped)
	require.Equal(t, int64(4*ms), res.WastedNs)
	// busy 20ms over 30ms of one worker
	require.InDelta(t, 2.0/3, res.Utilization, 1e-15)
}

// TestDeadlineInstant: a response at the deadline itself is in time (the
// completion comes before the timeout at one instant). 1, admitted with 0
// at 0, reaches the worker at 10ms, its deadline: without drop-expired it
// starts, and its client gives up at that instant, after the start; with
// drop-expired its client's timeout is told first, then the drop.
func TestDeadlineInstant(t *testing.T) {
	cfg := cfgOf(1, 10*ms)
	cfg.Timeout = 10 * ms
	ev, res := play(t, cfg, 20*ms, at(0, 0), at(1, 0))
	require.Equal(t, lines(`
0s 0 started
10ms 0 completed client
10ms 1 started
10ms 1 timed-out client
20ms 1 completed`), ev)
	require.Equal(t, int64(1), res.Goodput)
	require.Equal(t, int64(10*ms), res.WastedNs)

	cfg.DropExpired = true
	ev, _ = play(t, cfg, 20*ms, at(0, 0), at(1, 0))
	require.Equal(t, lines(`
0s 0 started
10ms 0 completed client
10ms 1 timed-out client
10ms 1 dropped`), ev)
}

// TestTimeoutCountsFromArrival: a shaper held the request 20ms; its client,
// with a timeout of 15ms, gave up at 15ms, before the backend saw it. The
// backend still serves it from 20ms to 30ms: all wasted. Its sample has
// rtt 0 and is a drop.
func TestTimeoutCountsFromArrival(t *testing.T) {
	cfg := cfgOf(1, 10*ms)
	cfg.Timeout = 15 * ms
	r := at(0, 0)
	r.Admitted = 20 * ms
	var samples []string
	b, err := New(cfg, func(e Event) {
		if e.Client {
			rtt, drop := e.Sample()
			samples = append(samples, fmt.Sprintf("%v %v %v %v", e.At, e.Kind, rtt, drop))
		}
	})
	require.NoError(t, err)
	require.NoError(t, b.Submit(&r))
	b.Until(math.MaxInt64)
	require.Equal(t, []string{"15ms timed-out 0s true"}, samples)
	res := b.Result(0, 30*ms)
	require.Equal(t, int64(10*ms), res.WastedNs)
	require.Equal(t, int64(1), res.TimedOut)
	require.Equal(t, int64(0), res.Goodput)
}

// TestSamples: rtt = the client event's instant - admission, queueing
// included; a drop for a shed, an error or a timeout.
func TestSamples(t *testing.T) {
	cfg := cfgOf(1, 10*ms)
	cfg.Queue = 1
	var got []string
	b, err := New(cfg, func(e Event) {
		if e.Client {
			rtt, drop := e.Sample()
			got = append(got, fmt.Sprintf("%d %v %v", e.Req.ID, rtt, drop))
		}
	})
	require.NoError(t, err)
	for _, r := range []Request{at(0, 0), at(1, 4), at(2, 5)} {
		require.NoError(t, b.Submit(&r))
	}
	b.Until(math.MaxInt64)
	// 2 is shed at once; 1 waits 6ms and is served in 10
	require.Equal(t, []string{"2 0s true", "0 10ms false", "1 16ms false"}, got)
}

// TestErrors: with errors 1 every served request fails; its client gets
// the error at the end of its service; no goodput. With 0.3, about 30%
// fail, and the same requests fail in a backend that is given only some of
// them, with the same service times.
func TestErrors(t *testing.T) {
	cfg := cfgOf(1, 10*ms)
	cfg.Errors = 1
	ev, res := play(t, cfg, 20*ms, at(0, 0), at(1, 0))
	require.Equal(t, lines(`
0s 0 started
10ms 0 failed client
10ms 1 started
20ms 1 failed client`), ev)
	require.Equal(t, int64(2), res.Errors)
	require.Equal(t, int64(0), res.CompletedOK)
	require.Equal(t, int64(0), res.Goodput)

	draws := func(every uint64) map[uint64]string {
		c := cfgOf(4, 10*ms)
		c.Service = Service{Dist: Lognormal, Mean: 10 * ms, P99: 60 * ms}
		c.Errors = 0.3
		out := map[uint64]string{}
		b, err := New(c, func(e Event) {
			if e.Kind == Completed || e.Kind == Failed {
				out[e.Req.ID] = fmt.Sprintf("%v %v", e.Kind, e.Service)
			}
		})
		require.NoError(t, err)
		for id := uint64(0); id < 10000; id += every {
			require.NoError(t, b.Submit(&Request{ID: id, Attempt: 1, Arrived: time.Duration(id) * ms, Admitted: time.Duration(id) * ms}))
			b.Until(time.Duration(id) * ms)
		}
		b.Until(math.MaxInt64)
		return out
	}
	all, some := draws(1), draws(3)
	failed := 0
	for id, v := range all {
		if strings.HasPrefix(v, "failed") {
			failed++
		}
		if id%3 == 0 {
			require.Equal(t, v, some[id], "request %d", id)
		}
	}
	require.InDelta(t, 0.3, float64(failed)/float64(len(all)), 0.015)
}

// TestFaults: each fault type, by hand.
func TestFaults(t *testing.T) {
	// slow x3 on [5ms, 15ms): 0 starts at 0 (10ms), 1 at 10ms, in the
	// window (30ms), 2 at 40ms, after it (10ms)
	cfg := cfgOf(1, 10*ms)
	cfg.Faults = []Fault{{Type: Slow, At: 5 * ms, For: 10 * ms, Factor: 3}}
	ev, _ := play(t, cfg, 50*ms, at(0, 0), at(1, 1), at(2, 2))
	require.Equal(t, lines(`
0s 0 started
10ms 0 completed client
10ms 1 started
40ms 1 completed client
40ms 2 started
50ms 2 completed client`), ev)

	// pause on [5ms, 25ms), two workers: 0 starts at 0; 1 and 2 find a
	// worker free but wait for the pause to end; 0 completes at 10ms and
	// its worker starts nothing; at 25ms both start
	cfg = cfgOf(2, 10*ms)
	cfg.Faults = []Fault{{Type: Pause, At: 5 * ms, For: 20 * ms}}
	ev, res := play(t, cfg, 40*ms, at(0, 0), at(1, 6), at(2, 7))
	require.Equal(t, lines(`
0s 0 started
10ms 0 completed client
25ms 1 started
25ms 2 started
35ms 1 completed client
35ms 2 completed client`), ev)
	require.Equal(t, int64(19*ms), res.QueueWaitNs.P90) // waits 0, 19, 18ms

	// capacity cut to 1 worker of 2 on [5ms, 30ms): 0 and 1 started
	// before it and finish; 2 waits until both have (11ms: 1 in service
	// is not < 1 at 10ms); 3 waits for 2 (21ms); 4, at 22ms, waits for
	// the end of the cut at 30ms, when a second worker may start again
	cfg.Faults = []Fault{{Type: Workers, At: 5 * ms, For: 25 * ms, Count: 1}}
	ev, _ = play(t, cfg, 40*ms, at(0, 0), at(1, 1), at(2, 6), at(3, 12), at(4, 22))
	require.Equal(t, lines(`
0s 0 started
1ms 1 started
10ms 0 completed client
11ms 1 completed client
11ms 2 started
21ms 2 completed client
21ms 3 started
30ms 4 started
31ms 3 completed client
40ms 4 completed client`), ev)
}

// TestRecovery by hand: one worker, 5ms each, a request every 10ms, a
// client timeout of 100ms, buckets and the recovery window of 100ms, a
// pause on [1000ms, 1500ms). Before it, 10 responses in time per bucket:
// the level is 10. The 50 requests of the pause wait; from 1500ms the
// worker serves one every 5ms while one arrives every 10ms, so the request
// of instant a in [1000ms, 2000ms) starts at 1500 + (a-1000)/2 and
// responds 1005 - a/2 after it came: in time (<= 100ms) from a = 1810ms
// on, the first of which completes at 1910ms. Buckets 1500-1900ms have no
// goodput, bucket 1900ms 18 (a = 1810..1980): recovered 400ms after the
// pause.
func TestRecovery(t *testing.T) {
	cfg := cfgOf(1, 5*ms)
	cfg.Timeout = 100 * ms
	cfg.Bucket = 100 * ms
	cfg.RecoverWindow = 100 * ms
	cfg.Faults = []Fault{{Type: Pause, At: 1000 * ms, For: 500 * ms}}
	var reqs []Request
	for i := range 300 {
		reqs = append(reqs, at(uint64(i), float64(10*i)))
	}
	_, res := play(t, cfg, 3000*ms, reqs...)
	require.Equal(t, []int64{10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 18},
		res.Series.Goodput[:20])
	require.NotNil(t, res.RecoveredNs)
	require.Equal(t, int64(400*ms), *res.RecoveredNs)
	// the queue held 50 requests at 1500ms, its most
	require.Equal(t, int64(50), res.Series.QueueMax[14])

	cfg.Faults = nil
	_, res = play(t, cfg, 3000*ms, reqs...)
	require.Nil(t, res.RecoveredNs)
}

// TestRecovered: the recovery rule on hand-made goodput per bucket of
// 100ms: level 10 over the four buckets before a fault on [400ms, 500ms).
func TestRecovered(t *testing.T) {
	rows := func(g ...int64) []row {
		out := make([]row, len(g))
		for i, v := range g {
			out[i].goodput = v
		}
		return out
	}
	rs := rows(10, 10, 10, 10, 0, 3, 8, 9, 10, 10)
	b := 100 * ms
	// one bucket: the first >= 9 from 500ms is at 700ms
	require.Equal(t, int64(200*ms), *recovered(rs, 0, b, 1, 400*ms, 500*ms, time.Second))
	// two: (3+8)/2, (8+9)/2 fall short, (9+10)/2 does, from 700ms
	require.Equal(t, int64(200*ms), *recovered(rs, 0, b, 2, 400*ms, 500*ms, time.Second))
	// ... but not if the traffic ends at 800ms
	require.Nil(t, recovered(rs, 0, b, 2, 400*ms, 500*ms, 800*ms))
	// a fault ending mid-bucket: windows start at the next bucket
	require.Equal(t, int64(150*ms), *recovered(rs, 0, b, 1, 400*ms, 550*ms, time.Second))
	// no whole bucket before the fault, or no goodput in them: no level
	require.Nil(t, recovered(rs, 0, b, 1, 50*ms, 500*ms, time.Second))
	require.Nil(t, recovered(rows(0, 0, 0, 0, 0, 5), 0, b, 1, 400*ms, 500*ms, time.Second))
	// never back
	require.Nil(t, recovered(rows(10, 10, 10, 10, 0, 3, 8, 8, 8, 8), 0, b, 1, 400*ms, 500*ms, time.Second))
}

// TestLatency: one worker, 10ms each, latency 5ms; requests at 0, 0, 1
// and 20ms. The first two reach the queue at 5ms: one starts, one waits
// until 15ms; the third reaches it at 6ms and starts at 25ms; the fourth
// reaches it at 25ms and waits for the third. Responses count the latency
// (15, 25, 34 and 25ms), the queue waits do not (0, 10, 19 and 10ms). At
// 1ms the backend holds 3 requests, none served: the most it holds.
func TestLatency(t *testing.T) {
	cfg := cfgOf(1, 10*ms)
	cfg.Latency = 5 * ms
	ev, res := play(t, cfg, 60*ms, at(0, 0), at(1, 0), at(2, 1), at(3, 20))
	require.Equal(t, lines(`
5ms 0 started
15ms 0 completed client
15ms 1 started
25ms 1 completed client
25ms 2 started
35ms 2 completed client
35ms 3 started
45ms 3 completed client`), ev)
	// responses from the admission: 15, 25, 34, 25ms; waits 0, 10, 19, 10ms
	require.Equal(t, int64(34*ms), res.ResponseNs.Max)
	require.Equal(t, int64(25*ms), res.ResponseNs.P50)
	require.Equal(t, int64(19*ms), res.QueueWaitNs.Max)
	require.Equal(t, int64(3), res.HeldPeak)
	_, res = play(t, cfgOf(1, 10*ms), 60*ms, at(0, 0), at(1, 0), at(2, 1), at(3, 20))
	require.Equal(t, int64(3), res.HeldPeak, "without latency: 3 at 1ms; at 20ms one leaves as one comes")
}
