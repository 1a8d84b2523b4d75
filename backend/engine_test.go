package backend

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// miniEngine drives a backend as the package documentation says: its own
// events (first attempts and retries) and the backend's in time order,
// the backend's first at one instant. A client retries after a shed, an
// error or a timeout, wait later, up to max attempts in all.
type miniEngine struct {
	b       *Backend
	retries []Request // by Arrived, then scheduling order
	wait    time.Duration
	max     int32
	log     []string
}

func (m *miniEngine) event(e Event) {
	l := fmt.Sprintf("%v %d/%d %v", e.At, e.Req.ID, e.Req.Attempt, e.Kind)
	if e.Client {
		l += " client"
		if e.Kind != Completed && e.Req.Attempt < m.max {
			r := e.Req
			r.Attempt++
			r.Arrived = e.At + m.wait
			i, _ := slices.BinarySearchFunc(m.retries, r.Arrived, func(x Request, t time.Duration) int {
				if x.Arrived <= t {
					return -1
				}
				return 1
			})
			m.retries = slices.Insert(m.retries, i, r)
		}
	}
	m.log = append(m.log, l)
}

func (m *miniEngine) run(t *testing.T, fresh []Request) {
	for {
		var next *Request
		var from *[]Request
		switch {
		case len(m.retries) > 0 && (len(fresh) == 0 || m.retries[0].Arrived < fresh[0].Arrived):
			next, from = &m.retries[0], &m.retries
		case len(fresh) > 0:
			next, from = &fresh[0], &fresh
		}
		if bt, ok := m.b.Next(); ok && (next == nil || bt <= next.Arrived) {
			m.b.Step() // may schedule a retry before next: look again
			continue
		}
		if next == nil {
			return // nothing left on either side
		}
		r := *next
		*from = (*from)[1:]
		r.Admitted = r.Arrived // this engine's limiter admits everything
		require.NoError(t, m.b.Submit(&r))
	}
}

// TestEngineLoop: one worker, 10ms each, no waiting room, retries 5ms
// after a shed, 3 attempts. 0 is served 0-10ms. 1 is shed at 2ms, its
// retry at 7ms is shed too (it comes before the completion at 10ms: the
// engine's loop reads the retry's instant again after each step), and its
// third attempt, at 12ms, finds the worker free.
func TestEngineLoop(t *testing.T) {
	cfg := cfgOf(1, 10*ms)
	cfg.Queue = 0
	cfg.Timeout = 15 * ms
	m := &miniEngine{wait: 5 * ms, max: 3}
	b, err := New(cfg, m.event)
	require.NoError(t, err)
	m.b = b
	m.run(t, []Request{at(0, 0), at(1, 2)})
	require.Equal(t, lines(`
0s 0/1 started
2ms 1/1 shed client
7ms 1/2 shed client
10ms 0/1 completed client
12ms 1/3 started
22ms 1/3 completed client`), m.log)
}

// TestEngineRetryOnTimeout: a retry after a timeout is a new attempt with
// its own draw; the server still serves the first (wasted). One worker,
// exponential service of mean 10ms, timeout 12ms, retries 1ms after a
// timeout: every attempt of request 0 is served; the run is the same
// twice over.
func TestEngineRetryOnTimeout(t *testing.T) {
	run := func() ([]string, Result) {
		cfg := cfgOf(1, 0)
		cfg.Service = Service{Dist: Exponential, Mean: 10 * ms}
		cfg.Timeout = 12 * ms
		m := &miniEngine{wait: ms, max: 4}
		b, err := New(cfg, m.event)
		require.NoError(t, err)
		m.b = b
		var fresh []Request
		for i := range 50 {
			fresh = append(fresh, at(uint64(i), float64(8*i)))
		}
		m.run(t, fresh)
		return m.log, b.Result(0, 400*ms)
	}
	log1, res1 := run()
	log2, res2 := run()
	require.Equal(t, log1, log2)
	require.Equal(t, res1, res2)
	require.Equal(t, res1.Submitted, res1.Served) // nothing dropped or shed
	require.Positive(t, res1.TimedOut)
	require.Positive(t, res1.WastedNs)
	require.Greater(t, res1.Submitted, int64(50)) // retries came
	require.Equal(t, res1.Goodput+res1.TimedOut, res1.Submitted)
}
