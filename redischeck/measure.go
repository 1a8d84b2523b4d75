package redischeck

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster"
	"github.com/ratesim/ratesim/internal/intmath"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

// Epoch returns the instant a row's times are counted from on Redis, and
// the span they reach: the epoch is the start of the traffic rounded down
// to a multiple of the row's window and of 1 ms (nginx counts in
// milliseconds), so that windows fall where they fall in the simulation;
// the span runs to the end of the traffic plus a window and, on a cluster,
// the store's timeout (a store's instants come after the arrivals).
//
// The start is the first arrival when there is one (first, ok) and it
// comes after the report's start (less 1ns: an arrival on a window's
// edge keeps an instant above 0): a scenario whose times are absolute
// instants (a Unix time of 2015 written as a duration) counts from its
// first request, as replay counts a trace from its first line; from 0,
// its instants would be past 2^53 ns, where a script's numbers stop being
// exact. A cluster's rows count from the first arrival less the most a
// node's clock is skewed back (a node may see time before it), or from
// the report's start when that comes later.
//
// An all-of row's epoch is a multiple of each of its limits' windows, and
// its span runs a window of the longest of them past the traffic.
func Epoch(p algorithms.Params, rep *sim.Report, cl *cluster.Config, first time.Duration, ok bool) (epoch, span time.Duration) {
	m := lcm(int64(p.Per), int64(time.Millisecond))
	window := p.Per
	if len(p.Members) > 0 {
		m, window = int64(time.Millisecond), 0
		for _, mb := range p.Members {
			m = lcm(int64(mb.Params.Per), m)
			window = max(window, mb.Params.Per)
		}
	}
	start := rep.StartNs
	if ok {
		from := first
		if cl != nil {
			for _, sk := range cl.Skew {
				from = min(from, first+sk)
			}
		}
		// just before the first arrival, so that it is not at 0 on
		// Redis: uber's state 0 is a key never seen (uber.go), and an
		// instant that is not 0 in the simulation must not become one
		start = max(start, int64(from)-1)
	}
	epoch = time.Duration(intmath.FloorDiv(start, m) * m)
	end := time.Duration(rep.StartNs+rep.DurationNs) + window
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
// key: what deleting them frees of INFO's used_memory, over the keys. Each
// batch of keys is deleted by a script that reads used_memory before and
// after its DEL (freeKeys): nothing else Redis does in the meantime
// (another client, its cron resizing a client's buffers, the replies of
// the readings themselves) is counted. With keep, Redis keeps the keys and
// the used memory per key is not measured (0); nor when nothing was freed.
func measure(ctx context.Context, c *redis.Client, prefix string, res *sim.RedisResult, keep bool) error {
	pattern := keyPattern(prefix)
	err := scanKeys(ctx, c, pattern, func(keys []string) error {
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
		return nil
	})
	if err != nil || keep || res.Keys == 0 {
		return err
	}
	var freed, deleted int64
	err = scanKeys(ctx, c, pattern, func(keys []string) error {
		for len(keys) > 0 {
			batch := keys[:min(len(keys), 500)]
			keys = keys[len(batch):]
			r, err := freeKeys.Run(ctx, c, batch).Int64Slice()
			if err != nil {
				return fmt.Errorf("DEL: %w", err)
			}
			if len(r) != 3 {
				return fmt.Errorf("DEL: want used_memory, the keys deleted and used_memory, got %v", r)
			}
			freed += r[0] - r[2]
			deleted += r[1]
		}
		return nil
	})
	if err != nil {
		return err
	}
	if deleted > 0 && freed > 0 {
		res.UsedMemoryPerKey = freed / deleted
	}
	return nil
}

// freeKeys deletes its KEYS and returns INFO's used_memory before, how
// many keys it deleted, and used_memory after. DEL, not UNLINK: it frees
// before the second reading.
var freeKeys = redis.NewScript(`
local function used()
  return tonumber(string.match(redis.call('INFO', 'memory'), 'used_memory:(%d+)'))
end
local before = used()
local n = redis.call('DEL', unpack(KEYS))
return {before, n, used()}
`)

// scanKeys calls f with each batch of the keys that match pattern.
func scanKeys(ctx context.Context, c *redis.Client, pattern string, f func(keys []string) error) error {
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, pattern, 1000).Result()
		if err != nil {
			return fmt.Errorf("SCAN %s: %w", pattern, err)
		}
		if len(keys) > 0 {
			if err := f(keys); err != nil {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
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

// FirstArrival returns the instant of the traffic's first arrival, false
// when it has none.
func FirstArrival(p traffic.Plan) (time.Duration, bool, error) {
	_, stream, err := p.Open()
	if err != nil {
		return 0, false, err
	}
	defer func() {
		if c, ok := stream.(io.Closer); ok {
			_ = c.Close()
		}
	}()
	var a traffic.Arrival
	if stream.Next(&a) {
		return a.At, true, nil
	}
	return 0, false, stream.Err()
}
