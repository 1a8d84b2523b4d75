// Package redistest starts a real redis-server for the tests that need one.
// It never fakes Redis: a test that needs Redis and finds no redis-server
// is skipped with a message that says how to install it, or fails when the
// environment variable RATESIM_REDIS is "require" (as CI sets it).
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server running for one test, in its own directory,
// listening on a unix socket only.
type Server struct {
	// Socket is the path of the server's unix socket.
	Socket string
	// Dir is the server's directory (its log is redis.log there).
	Dir string

	cmd      *exec.Cmd
	done     chan struct{}
	stopOnce sync.Once
	tmp      string // a directory of the socket's own, removed at the end
}

// Missing is what a test is told when redis-server is not installed.
const Missing = "redis-server is not installed (on Debian or Ubuntu: apt-get install redis-server redis-tools); " +
	"set RATESIM_REDIS=require to fail instead of skipping"

// Available reports whether redis-server is on PATH; when it is not, a test
// that needs it skips (or fails under RATESIM_REDIS=require): Require does
// that.
func Available() bool {
	_, err := exec.LookPath("redis-server")
	return err == nil
}

// Require skips t, or fails it under RATESIM_REDIS=require, when
// redis-server is not installed.
func Require(t testing.TB) {
	t.Helper()
	if Available() {
		return
	}
	if os.Getenv("RATESIM_REDIS") == "require" {
		t.Fatal(Missing)
	}
	t.Skip(Missing)
}

// Start starts redis-server in t.TempDir(), with no persistence and a unix
// socket only (--port 0), waits until it answers, and stops it when t
// ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t)
}

// StartWith is Start with more arguments for redis-server, such as
// "--cluster-enabled", "yes".
func StartWith(t testing.TB, extra ...string) *Server {
	t.Helper()
	Require(t)
	dir := t.TempDir()
	s, err := Launch(dir, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Launch starts redis-server in dir as Start does, for a server that
// outlives one test (a package's TestMain stops it): it waits until the
// server answers, and the caller stops it. A socket path too long for dir
// goes in a directory of its own, removed when the server stops.
func Launch(dir string, extra ...string) (*Server, error) {
	sock := filepath.Join(dir, "redis.sock")
	var tmp string
	if len(sock) > 100 { // a unix socket path is limited to 108 bytes
		d, err := os.MkdirTemp("", "redis")
		if err != nil {
			return nil, err
		}
		tmp, dir, sock = d, d, filepath.Join(d, "redis.sock")
	}
	s := &Server{Socket: sock, Dir: dir, done: make(chan struct{}), tmp: tmp}
	var log bytes.Buffer
	args := []string{"--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", dir,
		"--logfile", filepath.Join(dir, "redis.log")}
	s.cmd = exec.Command("redis-server", append(args, extra...)...)
	s.cmd.Stdout, s.cmd.Stderr = &log, &log
	if err := s.cmd.Start(); err != nil {
		s.removeTmp()
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return s, nil
		}
		select {
		case <-s.done:
			logText, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			s.removeTmp()
			return nil, fmt.Errorf("redis-server exited at start: %s%s", log.String(), logText)
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("redis-server did not open %s within 10s", sock)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// URL returns the server's address as a URL: unix:///path/redis.sock.
func (s *Server) URL() string { return "unix://" + s.Socket }

// Client returns a go-redis client of the server, closed when t ends.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.Socket, DialTimeout: 2 * time.Second})
	t.Cleanup(func() { c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("ping redis-server at %s: %v", s.Socket, err)
	}
	return c
}

// Kill stops the server at once (SIGKILL), as a crash does.
func (s *Server) Kill() {
	s.stopOnce.Do(func() {
		s.cmd.Process.Kill()
		<-s.done
		s.removeTmp()
	})
}

func (s *Server) removeTmp() {
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
}

// Stop stops the server and waits for it to exit.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
		s.removeTmp()
	})
}

// String names the server for messages.
func (s *Server) String() string { return fmt.Sprintf("redis-server at %s", s.Socket) }
