package redislua

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// redisNow returns Redis's TIME.
func redisNow(t *testing.T, c *redis.Client) time.Time {
	t.Helper()
	now, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// TestClockRedis: the production variant against Redis's own TIME. A burst
// of 8 at once is admitted up to the burst, 5, then rejected; the key has a
// TTL no longer than its state takes to become fresh, and it vanishes.
func TestClockRedis(t *testing.T) {
	t.Parallel()
	_, c := startRedis(t)
	ctx := context.Background()
	per := 200 * time.Millisecond
	p := policy(5, per, 5)
	waits := map[string]time.Duration{}
	keys := map[string]string{}
	// Start just after a 200ms boundary of Redis's clock, so that the
	// windowed counters see the burst in one window.
	now := redisNow(t, c)
	time.Sleep(per - time.Duration(now.UnixNano())%per + 5*time.Millisecond)
	for _, name := range Names() {
		p := p
		fresh := per
		switch name {
		case "nginx":
			p = policy(20, time.Second, 5) // nginx takes a rate per second or minute only
			p.Nodelay = true
			fresh = 250 * time.Millisecond // the burst of 5 drains at 20 r/s in 250ms
		case "concurrency":
			p.Service = per
		case "sliding-window":
			fresh = 2 * per // until the window is no longer the previous one
		}
		k := newCaller(t, c, name, ClockRedis, p)
		admitted := 0
		for i := 0; i < 8; i++ {
			d := k.decide(0, 1)
			if d.Verdict != algorithms.Reject {
				admitted++
				if i >= 5 {
					t.Errorf("%s: request %d admitted after the burst: %+v", name, i+1, d)
				}
			} else if i < 5 {
				t.Errorf("%s: request %d of the burst rejected: %+v", name, i+1, d)
			} else if d.RetryAfter <= 0 || d.RetryAfter%time.Microsecond != 0 {
				t.Errorf("%s: retry_after %v: want > 0 and whole microseconds", name, d.RetryAfter)
			}
		}
		ttl, err := c.PTTL(ctx, k.key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 || ttl > fresh {
			t.Errorf("%s: PTTL %v after the burst, want in (0, %v]", name, ttl, fresh)
		}
		waits[name], keys[name] = fresh, k.key
		t.Logf("%s: %d admitted, PTTL %v", name, admitted, ttl)
	}
	time.Sleep(500 * time.Millisecond) // the longest fresh, sliding-window's 400ms, and a margin
	for name, key := range keys {
		if n, err := c.Exists(ctx, key).Result(); err != nil || n != 0 {
			t.Errorf("%s: key %s still exists %v after the burst (fresh after %v): %d %v", name, key, time.Second, waits[name], n, err)
		}
	}
}

// TestClockRedisMicroseconds: the production variant refuses a per that
// is not whole microseconds, with an error reply.
func TestClockRedisMicroseconds(t *testing.T) {
	_, c := startRedis(t)
	src, _ := Script("gcra", ClockRedis)
	err := c.Eval(context.Background(), src, []string{"k"}, 0, 1, 3, 1000000001, 1).Err()
	if err == nil || !strings.Contains(err.Error(), "ratesim: per: 1000000001 ns is not a whole number of microseconds") {
		t.Fatalf("got %v", err)
	}
}

// TestBadArguments: a bad call is an error reply that says what is wrong.
func TestBadArguments(t *testing.T) {
	_, c := startRedis(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		args []any
		want string
	}{
		{"gcra", []any{0, 1, 10, 1000000000, 10, "count-rejected", 1}, "unknown option count-rejected for gcra"},
		{"fixed-window", []any{0, 0, 10, 1000000000, 10}, "cost: want at least 1"},
		{"token-bucket", []any{"1.5", 1, 10, 1000000000, 10}, "now: want an integer"},
		{"nginx", []any{0, 1, 10, 2000000000, 10}, "per: nginx takes a rate per 1s (r/s) or per 1m (r/m) only"},
		{"sliding-log", []any{0, 1, 10, 1000000000, 10, "count-rejected"}, "count-rejected: missing value"},
		{"concurrency", []any{0, 1, 10, 1000000000, 10, "max", -1}, "max: want at least 0"},
	} {
		src, err := Script(tc.name, ClockArg)
		if err != nil {
			t.Fatal(err)
		}
		err = c.Eval(ctx, src, []string{"k"}, tc.args...).Err()
		if err == nil || !strings.Contains(err.Error(), "ratesim: "+tc.want) {
			t.Errorf("%s %v: got %v, want an error with %q", tc.name, tc.args, err, tc.want)
		}
	}
}

// crc16 is CRC16/XMODEM, Redis Cluster's key hash.
func crc16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc ^= uint16(c) << 8
		for i := 0; i < 8; i++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// keySlot is Redis Cluster's slot of a key: the CRC16 of its hash tag (the
// part between the first { and the next }, when not empty) mod 16384.
func keySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16([]byte(key)) % 16384)
}

// TestKeySlots: on a Redis Cluster (one node holding every slot, which
// checks that a script touches only keys of its node), every key a script
// writes for one limited key is the key it was given (no name is derived
// from it), and the names of one run share one hash slot, by Redis's
// CLUSTER KEYSLOT and by CRC16 here.
func TestKeySlots(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ctx := context.Background()
	run := "r42"
	for _, name := range Names() {
		p := policy(3, time.Second, 2)
		if name == "concurrency" {
			p.Service = time.Second
		}
		k := newCaller(t, c, name, ClockArg, p)
		for _, key := range []string{"alice", "bob", "x:y{z}"} {
			k.key = Key(run, name, key)
			for i := 0; i < 4; i++ {
				k.decide(ms(int64(i)), 2)
			}
		}
	}
	all, err := c.Keys(ctx, "ratesim:{"+run+"}:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3*len(Names()) {
		t.Fatalf("the scripts wrote %d keys, want one per limited key (%d): %v", len(all), 3*len(Names()), all)
	}
	want := keySlot(Key(run, "gcra", "alice"))
	if want != int(crc16([]byte(run))%16384) {
		t.Fatalf("the hash tag is not the run id")
	}
	for _, key := range all {
		slot, err := c.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if int(slot) != want || keySlot(key) != want {
			t.Errorf("key %q is in slot %d (CRC16 here: %d), want %d", key, slot, keySlot(key), want)
		}
	}
}

// startCluster returns a client of the one-node Redis Cluster, holding
// every slot (a script that touches a key of another slot is refused),
// that the tests share, once it takes writes: a new cluster node refuses
// them for its first 2 s (CLUSTER_WRITABLE_DELAY in Redis's cluster.c),
// which TestMain lets pass while the other tests run. Each test uses keys
// of its own run id.
func startCluster(t *testing.T) *redis.Client {
	t.Helper()
	redistest.Require(t)
	c, err := sharedCluster()
	if err != nil {
		t.Fatal(err)
	}
	client := c.srv.Client(t)
	ctx := context.Background()
	for i := 0; ; i++ {
		info, err := client.ClusterInfo(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(info, "cluster_state:ok") {
			return client
		}
		if i == 500 {
			t.Fatalf("the one-node cluster is not ok after 5s: %s", info)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cluster is the shared cluster's server and directory.
type cluster struct {
	srv *redistest.Server
	dir string
}

// sharedCluster starts the cluster once and gives it every slot. Its
// cluster bus listens on a free port (by default it is the port + 10000,
// 10000 for every server with --port 0, so that two such clusters at once
// would collide).
var sharedCluster = sync.OnceValues(func() (cluster, error) {
	dir, err := os.MkdirTemp("", "redislua-cluster")
	if err != nil {
		return cluster{}, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return cluster{dir: dir}, err
	}
	bus := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv, err := redistest.Launch(dir, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus))
	if err != nil {
		return cluster{dir: dir}, err
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Socket})
	defer c.Close()
	err = c.Do(context.Background(), "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err()
	return cluster{srv, dir}, err
})

func TestMain(m *testing.M) {
	started := redistest.Available()
	if started {
		go sharedCluster() // its 2 s pass while the first tests run
	}
	code := m.Run()
	if started {
		c, _ := sharedCluster()
		if c.srv != nil {
			c.srv.Stop()
		}
		os.RemoveAll(c.dir)
	}
	os.Exit(code)
}

// trace1 is a randomised trace as Requests, and the Go limiter's
// decisions on it.
func goDecisions(t *testing.T, name string, p algorithms.Params, trace []traceReq) []algorithms.Decision {
	lim, err := algorithms.New(name, p)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]algorithms.Decision, len(trace))
	for i, q := range trace {
		out[i] = lim.Decide(q.now, algorithms.Key(q.key), q.cost)
	}
	return out
}

func requests(trace []traceReq) func(func(Request) bool) {
	return func(yield func(Request) bool) {
		for _, q := range trace {
			if !yield(Request{Now: q.now, Key: fmt.Sprint("k", q.key), Cost: q.cost}) {
				return
			}
		}
	}
}

// TestScriptFlush: SCRIPT FLUSH in the middle of a run: between pipelines,
// within them (in the pipeline itself, after its 4th EVALSHA) and from
// another connection every 3ms: the runner
// loads the script again and every decision is still the Go limiter's.
func TestScriptFlush(t *testing.T) {
	t.Parallel()
	srv := startRedisServer(t)
	c := clientNoRetry(t, srv)
	other := srv.Client(t)
	ctx := context.Background()
	p := policy(7, time.Second, 4)
	p.MaxDelay = 200 * time.Millisecond
	trace := randomTrace(11, 20000, 5, p.Per, p.Rate)
	want := goDecisions(t, "gcra", p, trace)
	r, err := NewRunner(ctx, c, Config{Algorithm: "gcra", Params: p, Run: "flush", Label: "gcra", Depth: 8})
	if err != nil {
		t.Fatal(err)
	}
	pipelines := 0
	r.afterEval = func(pipe redis.Pipeliner, i int) {
		if i == 0 {
			pipelines++
		}
		if i == 3 && pipelines%50 == 0 {
			pipe.ScriptFlush(ctx) // decisions 5 to 8 of this pipeline find no script
		}
	}
	stop := make(chan struct{})
	var flushes, checked atomic.Int64
	go func() {
		// A flush every 3 ms at most, and only once the run has made a
		// decision since the last one: on a loaded machine a pipeline can
		// take longer than the tick, and flushing every script it loads
		// again would fail the run (the Runner gives up after ten reloads
		// in a row without a decision, as it should).
		tick := time.NewTicker(3 * time.Millisecond)
		defer tick.Stop()
		seen := int64(-1)
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if n := checked.Load(); n != seen && other.ScriptFlush(ctx).Err() == nil {
					seen = n
					flushes.Add(1)
				}
			}
		}
	}()
	i := 0
	done, err := r.Run(ctx, requests(trace), func(_ Request, got algorithms.Decision) error {
		defer checked.Add(1)
		if i%1000 == 0 {
			if err := other.ScriptFlush(ctx).Err(); err != nil {
				return err
			}
		}
		if got != want[i] {
			return fmt.Errorf("decision %d: Lua %+v, Go %+v", i+1, got, want[i])
		}
		i++
		return nil
	})
	close(stop)
	if err != nil {
		t.Fatal(err)
	}
	if r.resent == 0 {
		t.Fatal("no pipeline found the script missing midway")
	}
	if done != len(trace) || r.Loads() < 20 {
		t.Fatalf("%d decisions (want %d), %d loads (want one per flush between pipelines at least)", done, len(trace), r.Loads())
	}
	t.Logf("%d decisions identical through %d loads of the script (%d flushes from another connection; %d pipelines flushed midway)", done, r.Loads(), flushes.Load(), r.resent)
}

// TestServerKilled: a server killed mid-run stops the run with an error
// that says how many decisions were made and checked; no panic, no hang.
func TestServerKilled(t *testing.T) {
	srv := startRedisServer(t)
	c := clientNoRetry(t, srv)
	ctx := context.Background()
	p := policy(10, time.Second, 10)
	trace := randomTrace(5, 5000, 3, p.Per, p.Rate)
	r, err := NewRunner(ctx, c, Config{Algorithm: "sliding-log", Params: p, Run: "kill", Label: "sliding-log"})
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	start := time.Now()
	done, err := r.Run(ctx, requests(trace), func(Request, algorithms.Decision) error {
		i++
		if i == 1000 {
			srv.Kill()
		}
		return nil
	})
	var re *RunError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want a *RunError", err)
	}
	if done != re.Done || done < 1000 || done >= len(trace) {
		t.Fatalf("done %d, RunError.Done %d: want the decisions made before the kill, from 1000", done, re.Done)
	}
	if !strings.Contains(err.Error(), "stopped after "+strconv.Itoa(done)+" decisions") {
		t.Fatalf("message %q does not say how many decisions were checked", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v to notice", d)
	}
	t.Log(err)
}

// TestUnreachable: an address where no Redis listens is a clear error
// within the timeout; one that refuses the connection says so, as a
// *RefusedError.
func TestUnreachable(t *testing.T) {
	ctx := context.Background()
	for _, url := range []string{"unix://" + t.TempDir() + "/none.sock", "redis://127.0.0.1:1/0", "redis://10.255.255.1:6379/0"} {
		start := time.Now()
		_, err := Dial(ctx, url, time.Second)
		var refused *RefusedError
		switch {
		case errors.As(err, &refused):
			if want := url + ": the connection is refused: no Redis listens at 127.0.0.1:1 (want"; !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("%s: got %v, want %s...", url, err, want)
			}
		case err == nil || !strings.Contains(err.Error(), "does not answer within 1s"):
			t.Fatalf("%s: got %v", url, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("%s: took %v", url, d)
		}
		t.Log(err)
	}
	if _, err := Dial(ctx, "http://x", time.Second); err == nil || !strings.Contains(err.Error(), "want redis://host:port/db or unix:///path/redis.sock") {
		t.Fatalf("bad URL: got %v", err)
	}
}

// TestRunnerRefusesRetries: a client that retries could send a pipeline
// twice, making decisions twice.
func TestRunnerRefusesRetries(t *testing.T) {
	_, c := startRedis(t)
	_, err := NewRunner(context.Background(), c, Config{Algorithm: "gcra", Params: policy(1, time.Second, 1)})
	if err == nil || !strings.Contains(err.Error(), "MaxRetries: -1") {
		t.Fatalf("got %v", err)
	}
}
