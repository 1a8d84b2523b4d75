package adaptive

import (
	"container/heap"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// server is the closed-loop model of the convergence tests: c workers with
// a fixed service time S, a FIFO queue of at most q waiting requests, and a
// shed (a drop) after shedRTT when the queue is full. Requests arrive every
// gap, more than the c/S it can serve; a limit admits a request iff fewer
// than Limit(now) are in flight (queued or served), and learns from every
// completion. With n requests in flight and n > c, a request waits for the
// n-c ahead of it to leave: rtt = S * n/c. So the limit that keeps the
// workers busy without a queue is c, and a limit of c+q fills the queue.
type server struct {
	c, q       int
	service    time.Duration
	shedRTT    time.Duration
	busy       int
	queue      []job
	inflight   int
	events     eventHeap
	seq        uint64
	shed, done int
}

type job struct {
	admitted time.Duration
	inflight int
}

type event struct {
	at      time.Duration
	seq     uint64
	job     job
	dropped bool
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func (s *server) schedule(at time.Duration, j job, dropped bool) {
	s.seq++
	heap.Push(&s.events, event{at: at, seq: s.seq, job: j, dropped: dropped})
}

// completeUntil reports to l every completion at or before t.
func (s *server) completeUntil(t time.Duration, l Limit) {
	for len(s.events) > 0 && s.events[0].at <= t {
		e := heap.Pop(&s.events).(event)
		s.inflight--
		l.OnSample(e.at, e.at-e.job.admitted, e.job.inflight, e.dropped)
		if e.dropped {
			s.shed++
			continue
		}
		s.done++
		s.busy--
		if len(s.queue) > 0 {
			next := s.queue[0]
			s.queue = s.queue[1:]
			s.busy++
			s.schedule(e.at+s.service, next, false)
		}
	}
}

func (s *server) admit(t time.Duration) {
	s.inflight++
	j := job{admitted: t, inflight: s.inflight}
	switch {
	case s.busy < s.c:
		s.busy++
		s.schedule(t+s.service, j, false)
	case len(s.queue) < s.q:
		s.queue = append(s.queue, j)
	default:
		s.schedule(t+s.shedRTT, j, true)
	}
}

// limitStats are the limit's figures over the second half of a run,
// sampled at every arrival.
type limitStats struct {
	min, max, median int
	mean             float64
	sheds            int
}

// runOverload runs l against the server under twice its capacity for d.
func runOverload(l Limit, c, q int, d time.Duration) limitStats {
	s := &server{c: c, q: q, service: 10 * ms, shedRTT: 1 * ms}
	gap := s.service / time.Duration(2*c) // 2x the c/S the server serves
	st := limitStats{min: 1 << 30}
	var sum, n float64
	var seen []int
	for t := time.Duration(0); t < d; t += gap {
		s.completeUntil(t, l)
		lim := l.Limit(t)
		if t >= d/2 {
			st.min, st.max = min(st.min, lim), max(st.max, lim)
			sum += float64(lim)
			n++
			seen = append(seen, lim)
		}
		if s.inflight < lim {
			s.admit(t)
		}
	}
	st.mean = sum / n
	slices.Sort(seen)
	st.median = seen[len(seen)/2]
	st.sheds = s.shed
	return st
}

// TestConvergence runs each limit against the server model under twice its
// capacity (40 workers of 10ms, 4000 requests/s, arrivals at 8000/s) and
// requires the median of its limit over the second half of the run to lie
// in a band derived from its rule. q is the queue bound: 40 (sheds beyond
// c+q = 80 in flight), or 1000 (no sheds: latency is the only signal).
func TestConvergence(t *testing.T) {
	const c = 40
	d := 60 * time.Second
	windowed := func(l Limit) Limit {
		w, err := NewWindowed(DefaultWindowConfig(), l)
		require.NoError(t, err)
		return w
	}
	aimd := func() Limit { return newAIMD(t, nil) }
	vegas := func() Limit { return newVegas(t, nil) }
	gradient2 := func() Limit { return newGradient2(t, nil) }
	envoy := func() Limit {
		cfg := DefaultEnvoyConfig()
		cfg.Interval, cfg.MinRTTCalcInterval = 100*ms, 5*time.Second
		e, err := NewEnvoy(cfg, seeded(5), 0)
		require.NoError(t, err)
		return e
	}
	for _, tc := range []struct {
		name   string
		make   func() Limit
		q      int
		d      time.Duration
		lo, hi int // the band for the median limit
		why    string
	}{
		{"aimd", aimd, 40, d, 72, 81,
			"AIMD learns only from drops: +1 per sample until the queue overflows at c+q = 80 in flight, " +
				"then 0.9x: a saw-tooth from 0.9(c+q) = 72 to c+q+1"},
		{"aimd windowed", func() Limit { return windowed(aimd()) }, 40, 5 * d, 71, 81,
			"the same saw-tooth, one step per 1s window (so a longer run: 20 to 80 takes a minute)"},
		{"vegas windowed", func() Limit { return windowed(vegas()) }, 40, 5 * d, c + 3, c + 6,
			"a window's queue estimate is L*(1 - S/rtt) = L - c; Vegas holds L where it is in " +
				"[alpha, beta] = [3, 6] (log10 = 1 for L < 100)"},
		{"vegas", vegas, 40, d, c / 2, c + 10,
			"per sample, Vegas swings around c (a few to 2c): a probe sets the no-load rtt to a " +
				"queued one, so the limit jumps by beta 6 per sample until the queue shows 10ms later; " +
				"then a shed's 1ms rtt becomes the no-load rtt and every sample looks queued"},
		{"gradient2 windowed", func() Limit { return windowed(gradient2()) }, 1000, 2 * d, 3 * c / 2, 2 * c,
			"Gradient2 holds L where the window's rtt S*L/c is about rtt-tolerance 1.5 times the " +
				"long-term rtt: L = 1.5c*long/S + queue-size 4, 64 while long is the unloaded 10ms, " +
				"drifting up as the 600-window average absorbs the queueing"},
		{"gradient2 climbs without drops", gradient2, 1000, d, 200, 200,
			"per sample, the 600-sample long rtt (a fraction of a second here) follows the slowly " +
				"growing rtt, so the gradient stays 1 and the limit climbs to max-concurrency: " +
				"Gradient2 ignores drops and sees only latency changes (hence the window)"},
		{"envoy", envoy, 40, d, c, 60,
			"minRTT is measured at min-concurrency 3: 10ms samples give circllhist's 10.5ms, " +
				"buffered 13.125ms; for L > c the sampled rtt is 10ms*L/c, so L*gradient = 52.5 " +
				"and the new limit is 52.5 + sqrt(52.5) = 59.7 -> 59"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := runOverload(tc.make(), c, tc.q, tc.d)
			t.Logf("%s: limit min %d mean %.1f median %d max %d, %d sheds", tc.name, st.min, st.mean, st.median, st.max, st.sheds)
			require.GreaterOrEqual(t, st.median, tc.lo, tc.why)
			require.LessOrEqual(t, st.median, tc.hi, tc.why)
		})
	}
}

// TestThrottleConvergence: one client sends 10 times what a backend of 40
// workers (10ms each, no queue) accepts; the backend rejects what finds no
// free worker. The book's throttle lets through about K = 2 times what the
// backend accepts: with requests R and accepts A over the window, the
// client sends R(1-p) = R - (R - 2A) = 2A once p > 0.
func TestThrottleConvergence(t *testing.T) {
	th := newThrottle(t)
	rng := seeded(11)
	const c = 40
	service := 10 * ms
	gap := service / (10 * c)
	var ends []time.Duration // completion instants of the requests being served
	var sent, accepted int
	d := 6 * time.Minute
	for now := time.Duration(0); now < d; now += gap {
		for len(ends) > 0 && ends[0] <= now {
			th.OnResult(ends[0], 0, true)
			ends = ends[1:]
		}
		if !th.Admit(now, 0, rng.Float64()) {
			continue
		}
		if now >= d-2*time.Minute {
			sent++
		}
		if len(ends) < c {
			ends = append(ends, now+service)
			if now >= d-2*time.Minute {
				accepted++
			}
		} else {
			th.OnResult(now, 0, false)
		}
	}
	ratio := float64(sent) / float64(accepted)
	t.Logf("last 2 minutes: %d sent, %d accepted (capacity %d), ratio %.3f", sent, accepted, 120*4000, ratio)
	require.InDelta(t, 2.0, ratio, 0.05, "the client sends K = 2 times what is accepted")
	require.InDelta(t, 120*4000, accepted, 120*4000*0.02, "the backend stays busy")
}
