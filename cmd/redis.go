package cmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/redischeck"
	"github.com/ratesim/ratesim/redislua"
	"github.com/ratesim/ratesim/sim"
)

// redisFlags are compare's --redis flags (docs/redis.md).
type redisFlags struct {
	url     string
	keep    bool
	depth   int
	timeout time.Duration
}

func addRedisFlags(fl *pflag.FlagSet, f *redisFlags) {
	fl.StringVar(&f.url, "redis", "", "replay every row's decisions on this Redis (redis://host:port/db or unix:///path/redis.sock) with its Lua script, and compare")
	fl.BoolVar(&f.keep, "redis-keep", false, "leave the replay's keys in Redis")
	fl.IntVar(&f.depth, "redis-depth", redislua.DefaultDepth, "EVALSHA per pipeline in the replay on Redis")
	fl.DurationVar(&f.timeout, "redis-timeout", 2*time.Second, "how long to wait for Redis to answer when connecting")
}

// checkOnRedis replays cfg's rows on Redis when --redis is given and puts
// what it found in rep.
func checkOnRedis(stderr io.Writer, cfg sim.Config, rep *sim.Report, f redisFlags) error {
	if f.url == "" {
		return nil
	}
	if f.depth < 1 {
		return usagef("--redis-depth: %d: want at least 1", f.depth)
	}
	ctx := context.Background()
	c, err := redislua.Dial(ctx, f.url, f.timeout)
	var refused *redislua.RefusedError
	if errors.As(err, &refused) {
		return usageError{fmt.Errorf("--redis %w", err)}
	}
	if err != nil {
		return err
	}
	defer c.Close()
	var id [6]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	o := redischeck.Options{Run: hex.EncodeToString(id[:]), Keep: f.keep, Depth: f.depth}
	bar := newProgress(stderr) // nil unless stderr is a terminal
	if bar != nil {
		o.Progress = func(i int, done, total time.Duration) {
			bar.redis(cfg.Algorithms[i].Label, i, len(cfg.Algorithms), done, total)
		}
	}
	res, err := redischeck.Check(ctx, c, cfg, rep, o)
	bar.done()
	var re redischeck.RangeError
	if errors.As(err, &re) {
		return usageError{fmt.Errorf("--redis: %w", err)}
	}
	if err != nil {
		return fmt.Errorf("--redis: %w", err)
	}
	for i := range res {
		rep.Results[i].Redis = res[i]
	}
	return nil
}
