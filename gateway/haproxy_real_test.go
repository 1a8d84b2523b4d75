package gateway

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/algorithms"
)

// TestHAProxyOracle runs the real HAProxy (the Debian package, 2.6) as an
// oracle: testdata/haproxy-oracle.cfg counts each client's requests
// (header X-Client) in http_req_rate(1s) and denies over 10 with 429.
// Seeded bursty load from ten clients for about three seconds; HAProxy
// logs each request (time in ms, client, status); the log's (time, key)
// are replayed through the haproxy algorithm, and its verdicts must match
// HAProxy's statuses on at least 99% of requests, each disagreement
// explained (see explainHAProxy).
//
// It is skipped when haproxy is not installed, unless RATESIM_GATEWAYS is
// "require" (as in .ci/run), when it fails.
func TestHAProxyOracle(t *testing.T) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("RATESIM_GATEWAYS") == "require" {
			t.Fatalf("haproxy is not installed and RATESIM_GATEWAYS=require: %v", err)
		}
		t.Skip("haproxy is not installed (apt-get install haproxy; RATESIM_GATEWAYS=require makes this a failure)")
	}
	const cfgPath = "testdata/haproxy-oracle.cfg"
	src, err := os.ReadFile(cfgPath)
	require.NoError(t, err)
	h, err := ReadHAProxy(cfgPath, src)
	require.NoError(t, err)
	require.Len(t, h.Limits, 1)
	lim := h.Limits[0]
	lf, err := lim.LogFormat()
	require.NoError(t, err)

	addr := freeLoopback(t)
	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	require.NoError(t, os.WriteFile(cfg, bytes.Replace(src, []byte("bind LISTEN"), []byte("bind "+addr), 1), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-db", "-f", cfg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var lines []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(os.Interrupt)
			<-done
			_ = cmd.Wait()
		}
	}
	defer stop()
	waitListening(t, addr, &stderr)

	sent := loadHAProxy(t, addr, 10, 3*time.Second)
	time.Sleep(100 * time.Millisecond) // the last lines
	stop()
	require.Equal(t, sent, len(lines), "one log line per request; stderr:\n%s", stderr.String())
	if p := os.Getenv("RATESIM_HAPROXY_LOG"); p != "" {
		require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	}

	// Replay the log through the haproxy algorithm.
	entries := make([]HAProxyLogEntry, len(lines))
	for i, line := range lines {
		entries[i], err = lf.Parse(line)
		require.NoError(t, err, "line %d: %q", i+1, line)
	}
	// One thread logs in processing order; times never go back.
	require.True(t, slices.IsSortedFunc(entries, func(a, b HAProxyLogEntry) int { return int(a.Time - b.Time) }))
	rep := replayHAProxy(t, lim, entries, 0, len(entries), "")
	agree := len(entries) - len(rep)
	ratio := float64(agree) / float64(len(entries))
	t.Logf("HAProxy oracle: %d requests, %d denied by HAProxy; ratesim agrees on %d (%.2f%%)",
		len(entries), countStatus(entries, lim.Status), agree, 100*ratio)
	require.GreaterOrEqual(t, ratio, 0.99)
	for _, i := range rep {
		lo, hi, ok := explainHAProxy(t, lim, entries, i)
		require.True(t, ok, "unexplained disagreement at line %d: %q", i+1, lines[i])
		t.Logf("line %d %q: with now_ms = the logged date plus an offset between %v and %v (some offsets in that range), ratesim gives every verdict and rate HAProxy logged for %s", i+1, lines[i], lo, hi, entries[i].Key)
	}
}

// replayHAProxy decides entries[:n] (of key only, unless key is "") with
// the haproxy algorithm, each at its logged time plus ofs, and returns the
// indexes where its verdict is not the logged one (denied iff the status
// is the limit's deny_status) or, when key is set, where the rate it
// reads after counting the request is not the rate HAProxy logged.
func replayHAProxy(t *testing.T, lim *HAProxyLimit, entries []HAProxyLogEntry, ofs time.Duration, n int, key string) []int {
	t.Helper()
	l, err := algorithms.New("haproxy", algorithms.Params{Policy: algorithms.Policy{
		Rate: lim.Limit, Per: lim.Track.Table.Period, Burst: lim.Limit}})
	require.NoError(t, err)
	ids := map[string]algorithms.Key{}
	var differ []int
	var last time.Duration
	for i, e := range entries[:n] {
		if key != "" && e.Key != key {
			continue
		}
		id, ok := ids[e.Key]
		if !ok {
			id = algorithms.Key(len(ids))
			ids[e.Key] = id
		}
		now := max(e.Time+ofs, last) // the limiter's time never goes back
		last = now
		d := l.Decide(now, id, 1)
		bad := (d.Verdict == algorithms.Reject) != lim.Denied(e)
		if key != "" {
			rate := l.(algorithms.Inspector).Inspect(now, id)[0].Value
			bad = bad || strconv.FormatFloat(rate, 'f', -1, 64) != e.Fields["[sc_http_req_rate(0)]"]
		}
		if bad {
			differ = append(differ, i)
		}
	}
	return differ
}

// explainHAProxy looks for why ratesim's verdict on entries[i] differs
// from HAProxy's. The log's time is HAProxy's date (the wall clock, read
// at each wake-up); the stick table counts on now_ms, HAProxy's monotonic
// clock, which is the date plus an offset that HAProxy's clock_update_date
// (src/clock.c) moves when a wake-up comes earlier than it expected. When
// the offset puts now_ms in the next ms while the date is still in this
// one, HAProxy counts and reads at a ms that the log does not show. It
// returns the least and greatest offsets, within one ms either way, at
// which ratesim replays every request of this key up to i with HAProxy's
// verdict and the rate HAProxy logged (after the rules), or false when
// there is none.
func explainHAProxy(t *testing.T, lim *HAProxyLimit, entries []HAProxyLogEntry, i int) (lo, hi time.Duration, ok bool) {
	t.Helper()
	for us := -999; us <= 999; us++ {
		ofs := time.Duration(us) * time.Microsecond
		if len(replayHAProxy(t, lim, entries, ofs, i+1, entries[i].Key)) == 0 {
			if !ok {
				lo, ok = ofs, true
			}
			hi = ofs
		}
	}
	return lo, hi, ok
}

func countStatus(entries []HAProxyLogEntry, status int) int {
	n := 0
	for _, e := range entries {
		if e.Status == status {
			n++
		}
	}
	return n
}

// freeLoopback returns a loopback address with a port free a moment ago.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// waitListening waits up to 5s for addr to accept connections.
func waitListening(t *testing.T, addr string, stderr *bytes.Buffer) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("haproxy does not listen on %s; stderr:\n%s", addr, stderr.String())
}

// loadHAProxy sends seeded bursty load to addr from clients goroutines,
// each its own X-Client, sequentially (a burst of 1 to 16 requests back
// to back, then a pause of 100ms to 1s), for about d; it returns how many
// requests got an answer, and requires each answer to be 200 or 429.
func loadHAProxy(t *testing.T, addr string, clients int, d time.Duration) int {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	var mu sync.Mutex
	sent := 0
	var wg sync.WaitGroup
	var failed error
	end := time.Now().Add(d)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c+1), 17))
			key := fmt.Sprintf("client-%d", c)
			for time.Now().Before(end) {
				for range 1 + r.IntN(16) {
					req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
					req.Header.Set("X-Client", key)
					resp, err := hc.Do(req)
					if err == nil {
						resp.Body.Close()
						if resp.StatusCode != 200 && resp.StatusCode != 429 {
							err = fmt.Errorf("status %d", resp.StatusCode)
						}
					}
					mu.Lock()
					if err != nil && failed == nil {
						failed = err
					}
					if err == nil {
						sent++
					}
					mu.Unlock()
					if err != nil {
						return
					}
				}
				time.Sleep(100*time.Millisecond + time.Duration(r.Int64N(int64(900*time.Millisecond))))
			}
		}()
	}
	wg.Wait()
	require.NoError(t, failed)
	return sent
}
