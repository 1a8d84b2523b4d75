package redislua

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// doc:begin
// allow asks the gcra script (ratesim lua gcra --clock redis) whether a
// request of cost 1 for user may pass: 100 per minute, bursts of 20.
func allow(ctx context.Context, rdb *redis.Client, script *redis.Script, user string) (bool, time.Duration, error) {
	per := int64(time.Minute) // ns
	// Run sends EVALSHA, and EVAL (which loads the script) on NOSCRIPT.
	res, err := script.Run(ctx, rdb, []string{"rl:{" + user + "}"},
		0, 1, 100, per, 20).Int64Slice() // now (ignored: Redis TIME), cost, rate, per, burst
	if err != nil {
		return false, 0, err
	}
	verdict, retryAfter := res[0], time.Duration(res[2])
	return verdict != 2, retryAfter, nil
}

// doc:end

// TestGoRedisExample runs the go-redis example of docs/redis.md (the code
// between doc:begin and doc:end above, which the docs test requires the
// page to show): a burst of 20 passes, the 21st must wait for the next
// token, at most 600ms (60s/100) away.
func TestGoRedisExample(t *testing.T) {
	_, rdb := startRedis(t)
	ctx := context.Background()
	src, err := Script("gcra", ClockRedis)
	if err != nil {
		t.Fatal(err)
	}
	script := redis.NewScript(src)
	for i := 0; i < 20; i++ {
		ok, _, err := allow(ctx, rdb, script, "alice")
		if err != nil || !ok {
			t.Fatalf("request %d: %v %v", i+1, ok, err)
		}
	}
	ok, retry, err := allow(ctx, rdb, script, "alice")
	if err != nil || ok || retry <= 0 || retry > 600*time.Millisecond {
		t.Fatalf("request 21: allowed %v, retry after %v (want a wait up to 600ms), %v", ok, retry, err)
	}
}
