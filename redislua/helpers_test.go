package redislua

import (
	"context"
	"testing"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// caller calls one script on a real server with the calling convention.
type caller struct {
	t      *testing.T
	c      *redis.Client
	name   string
	params algorithms.Params
	sha    string
	key    string
}

func newCaller(t *testing.T, c *redis.Client, name string, clock Clock, p algorithms.Params) *caller {
	t.Helper()
	src, err := Script(name, clock)
	if err != nil {
		t.Fatal(err)
	}
	sha, err := c.ScriptLoad(context.Background(), src).Result()
	if err != nil {
		t.Fatalf("SCRIPT LOAD %s: %v", name, err)
	}
	return &caller{t: t, c: c, name: name, params: p, sha: sha, key: Key("test", name, t.Name())}
}

// decide sends one decision for the caller's key.
func (k *caller) decide(now time.Duration, cost int64) algorithms.Decision {
	k.t.Helper()
	return k.decideKey(k.key, now, cost)
}

func (k *caller) decideKey(key string, now time.Duration, cost int64) algorithms.Decision {
	k.t.Helper()
	res, err := k.c.EvalSha(context.Background(), k.sha, []string{key}, Args(k.name, k.params, now, cost)...).Result()
	if err != nil {
		k.t.Fatalf("EVALSHA %s at %v cost %d: %v", k.name, now, cost, err)
	}
	d, err := decision(res)
	if err != nil {
		k.t.Fatal(err)
	}
	return d
}

// startRedis starts a server for the test and returns a client of it.
func startRedis(t *testing.T) (*redistest.Server, *redis.Client) {
	t.Helper()
	s := redistest.Start(t)
	return s, s.Client(t)
}

// startRedisServer starts a server for the test.
func startRedisServer(t *testing.T) *redistest.Server {
	t.Helper()
	return redistest.Start(t)
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func acc() algorithms.Decision { return algorithms.Decision{Verdict: algorithms.Accept} }
func del(d time.Duration) algorithms.Decision {
	return algorithms.Decision{Verdict: algorithms.Delay, Delay: d}
}
func rej(r time.Duration) algorithms.Decision {
	return algorithms.Decision{Verdict: algorithms.Reject, RetryAfter: r}
}

// clientNoRetry returns a client of srv that does not retry commands, as a
// Runner requires.
func clientNoRetry(t *testing.T, srv *redistest.Server) *redis.Client {
	t.Helper()
	c, err := Dial(context.Background(), srv.URL(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
