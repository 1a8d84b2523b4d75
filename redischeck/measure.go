package redischeck

import (
	"context"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/internal/intmath"
	"github.com/ratesim/ratesim/sim"
)

// Epoch returns the instant a row's times are counted from on Redis, and
// the span they reach: the epoch is the start of the traffic rounded down
// to a multiple of the row's window and of 1 ms (nginx counts in
// milliseconds), so that windows fall where they fall in the simulation;
// the span runs to the end of the traffic plus a window and, on a cluster,
// the store's timeout (a store's instants come after the arrivals).
func Epoch(p algorithms.Params, rep *sim.Report, cl *cluster.Config) (epoch, span time.Duration) {
	m := lcm(int64(p.Per), int64(time.Millisecond))
	start := rep.StartNs
	epoch = time.Duration(intmath.FloorDiv(start, m) * m)
	end := time.Duration(rep.StartNs+rep.DurationNs) + p.Per
	if cl != nil {
		end += cl.Store.Timeout + cl.Store.RTT + cl.Store.Jitter
	}
	return epoch, end - epoch
}

// lcm returns the least common multiple of a and b > 0, or a when it
// would overflow.
func lcm(a, b int64) int64 {
	if a <= 0 {
		return b
	}
	g := intmath.GCD(a, b)
	hi, lo := bits.Mul64(uint64(a/g), uint64(b))
	if hi != 0 || lo > 1<<62 {
		return a
	}
	return int64(lo)
}

// usedMemory returns INFO memory's used_memory.
func usedMemory(ctx context.Context, c *redis.Client) (int64, error) {
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		return 0, fmt.Errorf("INFO memory: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO memory has no used_memory")
}

// keyPattern is the SCAN pattern of a row's keys: its prefix, with the
// glob's special characters escaped, then anything.
func keyPattern(prefix string) string {
	var b strings.Builder
	for _, r := range prefix {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('*')
	return b.String()
}

// measure counts the keys the row left, takes the largest MEMORY USAGE
// among them (beside those sampled during the run) and the used memory per
// key: INFO's used_memory with the keys against without them (they are
// deleted, and then put back by nothing: with keep, Redis keeps them and
// the figure is left out).
func measure(ctx context.Context, c *redis.Client, prefix string, res *sim.RedisResult, keep bool) error {
	with, err := usedMemory(ctx, c)
	if err != nil {
		return err
	}
	pattern := keyPattern(prefix)
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, pattern, 1000).Result()
		if err != nil {
			return fmt.Errorf("SCAN %s: %w", pattern, err)
		}
		if len(keys) > 0 {
			pipe := c.Pipeline()
			usage := make([]*redis.IntCmd, len(keys))
			for j, k := range keys {
				usage[j] = pipe.MemoryUsage(ctx, k, 0)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				return fmt.Errorf("MEMORY USAGE: %w", err)
			}
			for _, u := range usage {
				res.MemoryUsageMax = max(res.MemoryUsageMax, u.Val())
			}
			res.Keys += int64(len(keys))
			if !keep {
				if err := c.Unlink(ctx, keys...).Err(); err != nil {
					return fmt.Errorf("UNLINK: %w", err)
				}
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	if res.Keys > 0 && !keep {
		// UNLINK frees a large value in the background: wait until the
		// memory stops falling
		without, err := usedMemory(ctx, c)
		for tries := 0; err == nil && tries < 50; tries++ {
			time.Sleep(2 * time.Millisecond)
			var now int64
			if now, err = usedMemory(ctx, c); now == without {
				break
			}
			without = now
		}
		if err != nil {
			return err
		}
		res.UsedMemoryPerKey = max(with-without, 0) / res.Keys
	}
	return nil
}

// latencies keeps the latencies of a row's decisions in buckets of 1/16
// of a power of two (6% wide), so that the p99 costs no memory per
// decision.
type latencies struct {
	n      int64
	counts [64 * 16]int64
}

func (l *latencies) add(d time.Duration) {
	l.n++
	l.counts[latencyBucket(max(d, 1))]++
}

func latencyBucket(d time.Duration) int {
	v := uint64(d)
	e := bits.Len64(v) - 1 // 2^e <= v
	frac := 0
	if e >= 4 {
		frac = int(v>>(e-4)) & 15
	} else {
		frac = int(v<<(4-e)) & 15
	}
	return e*16 + frac
}

// merge adds m's latencies to l's.
func (l *latencies) merge(m *latencies) {
	l.n += m.n
	for b, c := range m.counts {
		l.counts[b] += c
	}
}

// p99 returns the upper edge of the bucket that holds the 99th
// percentile (nearest rank).
func (l *latencies) p99() time.Duration {
	if l.n == 0 {
		return 0
	}
	rank := (99*l.n + 99) / 100
	var seen int64
	for b, c := range l.counts {
		if seen += c; seen >= rank {
			e, frac := b/16, b%16
			return time.Duration((uint64(16+frac+1) << e) >> 4)
		}
	}
	return 0
}
