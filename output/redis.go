package output

import (
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/sim"
)

// What the outputs show of a replay on Redis (docs/redis.md,
// compare --redis): a line per row under the table (Markdown: a bullet),
// and the CSV's redis columns.

// onRedis reports whether any result was replayed on Redis.
func onRedis(r *sim.Report) bool {
	for i := range r.Results {
		if r.Results[i].Redis != nil {
			return true
		}
	}
	return false
}

// RedisLines returns a line per result replayed on Redis: "gcra  1,000
// decisions, 0 mismatched; MEMORY USAGE max 72 B, 88 B used per key (10
// keys); 180,000 ops/s, p99 1.2ms" ("used memory per key not measured"
// when it is 0: with --redis-keep, or no difference to measure), or the
// first mismatch in full, or why the row was not replayed.
func RedisLines(r *sim.Report) []string {
	if !onRedis(r) {
		return nil
	}
	width := 0
	for i := range r.Results {
		width = max(width, len(r.Results[i].Label))
	}
	var out []string
	for i := range r.Results {
		res := &r.Results[i]
		x := res.Redis
		if x == nil {
			continue
		}
		line := res.Label + strings.Repeat(" ", width-len(res.Label)) + "  "
		if x.Skipped != "" {
			out = append(out, line+"not replayed: "+x.Skipped)
			continue
		}
		line += plural(x.Decisions, "decision") + ", " + strconv.FormatInt(x.Mismatches, 10) + " mismatched"
		if m := x.FirstMismatch; m != nil {
			line += " (the first: " + FormatDuration(time.Duration(m.TimeNs)) + " key " + oneLine(m.Key) +
				" attempt " + strconv.Itoa(m.Attempt) + ": simulation " + redisDecisionText(m.Simulation) +
				", redis " + redisDecisionText(m.Redis) + ")"
		}
		used := "used memory per key not measured"
		if x.UsedMemoryPerKey > 0 {
			used = strconv.FormatInt(x.UsedMemoryPerKey, 10) + " B used per key"
		}
		line += "; MEMORY USAGE max " + strconv.FormatInt(x.MemoryUsageMax, 10) + " B, " +
			used + " (" + plural(x.Keys, "key") + "); " +
			strconv.FormatInt(x.OpsPerS, 10) + " ops/s, p99 " + FormatDuration(time.Duration(x.P99Ns))
		out = append(out, line)
	}
	return out
}

// redisDecisionText writes an answer: "accept", "delay 200ms", "reject
// (retry after 1s)", "reject (never)", and for an all-of row the limit
// that fired: "reject (retry after 1s) by limits[1]".
func redisDecisionText(d sim.RedisDecision) string {
	if d.Limit != "" {
		l := d.Limit
		d.Limit = ""
		return redisDecisionText(d) + " by " + l
	}
	switch d.Verdict {
	case "delay":
		return "delay " + FormatDuration(time.Duration(d.DelayNs))
	case "reject":
		if d.RetryAfterNs < 0 {
			return "reject (never)"
		}
		return "reject (retry after " + FormatDuration(time.Duration(d.RetryAfterNs)) + ")"
	}
	return d.Verdict
}

// redisCSVHeader is the CSV's redis columns, at the end of a row.
var redisCSVHeader = []string{"redis_decisions", "redis_mismatches", "redis_memory_usage_max",
	"redis_used_memory_per_key", "redis_ops_per_s", "redis_p99_ns", "redis_skipped"}

// redisCSV is a row's redis columns (empty for a row not replayed).
func redisCSV(x *sim.RedisResult) []string {
	if x == nil {
		return make([]string, len(redisCSVHeader))
	}
	if x.Skipped != "" {
		row := make([]string, len(redisCSVHeader))
		row[len(row)-1] = x.Skipped
		return row
	}
	i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
	used := "" // not measured
	if x.UsedMemoryPerKey > 0 {
		used = i64(x.UsedMemoryPerKey)
	}
	return []string{i64(x.Decisions), i64(x.Mismatches), i64(x.MemoryUsageMax), used,
		i64(x.OpsPerS), i64(x.P99Ns), ""}
}
