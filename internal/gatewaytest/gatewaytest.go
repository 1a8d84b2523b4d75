// Package gatewaytest runs real gateways (nginx, HAProxy, ...) for the
// tests that hold ratesim's rows against them as oracles
// (docs/gateways.md): find the binary or skip, pick a loopback port, start the gateway in
// a temporary prefix and stop it, and send it bounded, seeded, bursty load
// from several clients. It never fakes a gateway: a test whose gateway is
// not installed skips with a message that says how to install it, or fails
// when the environment variable RATESIM_GATEWAYS is "require" (as CI sets
// it).
package gatewaytest

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary returns the path of a gateway's binary, found on PATH or in the
// extra places given (Debian installs nginx in /usr/sbin, which a user's
// PATH may lack). When it is missing the test skips, saying install (the
// package to install), or fails under RATESIM_GATEWAYS=require.
func Binary(t testing.TB, name, install string, extra ...string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, p := range extra {
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	msg := fmt.Sprintf("%s is not installed (on Debian or Ubuntu: apt-get install %s); set RATESIM_GATEWAYS=require to fail instead of skipping", name, install)
	if os.Getenv("RATESIM_GATEWAYS") == "require" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Port returns a loopback TCP port that was free a moment ago (the
// kernel's pick for port 0), for a gateway to listen on.
func Port(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// Process is a gateway running for one test.
type Process struct {
	cmd      *exec.Cmd
	out      bytes.Buffer // its stdout and stderr
	done     chan struct{}
	stopOnce sync.Once
	// Stop is the signal that stops it gracefully (nginx: SIGQUIT, which
	// lets it finish and write its logs; HAProxy: SIGUSR1).
	Stop os.Signal
}

// Start starts a gateway (argv[0] its binary) and waits, up to 10s, until
// addr accepts TCP connections. The gateway is stopped when the test ends
// if the test has not stopped it. logs names files whose content the
// test's failure message shows when the gateway does not come up (its
// error log).
func Start(t testing.TB, addr string, stop os.Signal, argv []string, logs ...string) *Process {
	t.Helper()
	p := &Process{cmd: exec.Command(argv[0], argv[1:]...), done: make(chan struct{}), Stop: stop}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", argv[0], err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.Kill() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited before listening on %s: %s%s", argv[0], addr, p.out.String(), showLogs(logs))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is not listening on %s after 10s: %s%s", argv[0], addr, p.out.String(), showLogs(logs))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func showLogs(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		fmt.Fprintf(&b, "\n%s:\n%s", p, data)
	}
	return b.String()
}

// Shutdown stops the gateway with its Stop signal and waits for it to exit
// (up to 10s, then kills it), so that its logs are complete.
func (p *Process) Shutdown(t testing.TB) {
	t.Helper()
	p.stopOnce.Do(func() {
		_ = p.cmd.Process.Signal(p.Stop)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
			t.Errorf("%s did not stop within 10s of %v: killed", p.cmd.Path, p.Stop)
		}
	})
}

// Output returns what the gateway wrote to its stdout and stderr (HAProxy
// logs there with log stdout); call it after Shutdown.
func (p *Process) Output() string {
	<-p.done
	return p.out.String()
}

// Kill stops the gateway at once, if it still runs.
func (p *Process) Kill() {
	p.stopOnce.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	})
}

// Load is bounded, seeded, bursty traffic from several clients: each
// client, on its own keep-alive connection, sends bursts of 1 to
// MaxBurst requests back to back to a path drawn from Paths, pausing a
// random 0 to MaxPause between bursts, until Duration has passed or it
// has sent MaxRequests. Its key is sent in the header Header
// ("client-0", "client-1", ..., numbered from FirstClient). Several loads
// may run at once (each Run blocks), e.g. a few heavy clients beside many
// light ones.
type Load struct {
	Base        string // http://127.0.0.1:PORT
	Paths       []string
	Header      string
	FirstClient int
	Clients     int
	Seed        uint64
	Duration    time.Duration
	MaxBurst    int
	MaxPause    time.Duration
	MaxRequests int // per client
	// Tenant, when set, is a second header each request carries:
	// tenant-N, N the client's number modulo Tenants (at least 1).
	Tenant  string
	Tenants int
	// Targets, when set, are drawn from instead of Paths: each burst
	// goes to one, with its method and Host header (and Base, when it
	// sets one).
	Targets []Target
}

// Target is a request of a Load: its method (GET when ""), its Host
// header (Base's when ""), its path, and the base URL it is sent to
// (the Load's when "").
type Target struct {
	Method, Host, Path, Base string
}

// Result is what a load sent: the requests by HTTP status.
type Result struct {
	Sent     int
	ByStatus map[int]int
}

// Run sends the load and returns what was sent; a request that fails
// (not an HTTP answer) fails the test.
func (l Load) Run(t testing.TB) Result {
	t.Helper()
	var mu sync.Mutex
	res := Result{ByStatus: map[int]int{}}
	var wg sync.WaitGroup
	errs := make(chan error, l.Clients)
	end := time.Now().Add(l.Duration)
	for c := range l.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(l.Seed, uint64(l.FirstClient+c)))
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}, Timeout: 10 * time.Second}
			defer client.CloseIdleConnections()
			sent := 0
			for time.Now().Before(end) && sent < l.MaxRequests {
				n := 1 + rng.IntN(l.MaxBurst)
				var tg Target
				if len(l.Targets) > 0 {
					tg = l.Targets[rng.IntN(len(l.Targets))]
				} else {
					tg.Path = l.Paths[rng.IntN(len(l.Paths))]
				}
				if tg.Method == "" {
					tg.Method = "GET"
				}
				if tg.Base == "" {
					tg.Base = l.Base
				}
				for range n {
					req, err := http.NewRequest(tg.Method, tg.Base+tg.Path, nil)
					if err != nil {
						errs <- err
						return
					}
					if tg.Host != "" {
						req.Host = tg.Host
					}
					req.Header.Set(l.Header, fmt.Sprintf("client-%d", l.FirstClient+c))
					if l.Tenant != "" {
						req.Header.Set(l.Tenant, fmt.Sprintf("tenant-%d", (l.FirstClient+c)%max(l.Tenants, 1)))
					}
					resp, err := client.Do(req)
					if err != nil {
						errs <- err
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					mu.Lock()
					res.Sent++
					res.ByStatus[resp.StatusCode]++
					mu.Unlock()
					sent++
				}
				if l.MaxPause > 0 {
					time.Sleep(time.Duration(rng.Int64N(int64(l.MaxPause))))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("load: %v", err)
	}
	return res
}
