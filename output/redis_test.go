package output

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratesim/ratesim/sim"
)

// A report whose rows were replayed on Redis: one agrees everywhere, one
// has a mismatch (named in full: instant, key, attempt and both answers),
// one was not replayed and says why.
func redisReport() *sim.Report {
	r := doubleBurst()
	r.Results = r.Results[:3]
	r.Results[0].Redis = &sim.RedisResult{Decisions: 20, MemoryUsageMax: 72, UsedMemoryPerKey: 88, Keys: 1,
		OpsPerS: 180000, P99Ns: 1200000}
	r.Results[1].Redis = &sim.RedisResult{Decisions: 20, Mismatches: 2, MemoryUsageMax: 64, UsedMemoryPerKey: 80, Keys: 1,
		OpsPerS: 170000, P99Ns: 900000,
		FirstMismatch: &sim.RedisMismatch{TimeNs: 1500000000, Key: "client-1", Cost: 1, Attempt: 1,
			Simulation: sim.RedisDecision{Verdict: "accept", RetryAfterNs: 0},
			Redis:      sim.RedisDecision{Verdict: "reject", RetryAfterNs: 250000000}}}
	r.Results[2].Redis = &sim.RedisResult{Skipped: "x-time-rate has no script: it decides in floating point"}
	return r
}

func TestRedisLines(t *testing.T) {
	r := redisReport()
	l0, l1, l2 := r.Results[0].Label, r.Results[1].Label, r.Results[2].Label
	w := max(len(l0), len(l1), len(l2))
	pad := func(s string) string { return s + strings.Repeat(" ", w-len(s)) + "  " }
	require.Equal(t, []string{
		pad(l0) + "20 decisions, 0 mismatched; MEMORY USAGE max 72 B, 88 B used per key (1 key); 180000 ops/s, p99 1.2ms",
		pad(l1) + "20 decisions, 2 mismatched (the first: 1.5s key client-1 attempt 1: simulation accept, redis reject (retry after 250ms)); MEMORY USAGE max 64 B, 80 B used per key (1 key); 170000 ops/s, p99 900µs",
		pad(l2) + "not replayed: x-time-rate has no script: it decides in floating point",
	}, RedisLines(r))
	require.Nil(t, RedisLines(doubleBurst()), "no replay, no lines")

	var buf bytes.Buffer
	require.NoError(t, Table(&buf, r))
	require.Contains(t, buf.String(), "\nReplayed on Redis:\n  "+pad(l0)+"20 decisions")
	buf.Reset()
	require.NoError(t, Markdown(&buf, r))
	require.Contains(t, buf.String(), "\nReplayed on Redis:\n\n- "+l0+" 20 decisions")
}

// A used memory per key of 0 is one not measured (--redis-keep, or no
// difference to measure): the line says so, and the CSV leaves it empty,
// rather than report 0 B.
func TestRedisUsedMemoryNotMeasured(t *testing.T) {
	r := redisReport()
	r.Results[0].Redis.UsedMemoryPerKey = 0
	line := RedisLines(r)[0]
	require.Contains(t, line, "MEMORY USAGE max 72 B, used memory per key not measured (1 key);")
	require.NotContains(t, line, "0 B used")
	var buf bytes.Buffer
	require.NoError(t, CSV(&buf, r))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"20", "0", "72", "", "180000", "1200000", ""}, rows[1][len(rows[1])-len(redisCSVHeader):])
}

func TestRedisCSV(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, CSV(&buf, redisReport()))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	h := rows[0]
	require.Equal(t, redisCSVHeader, h[len(h)-len(redisCSVHeader):])
	tail := func(row []string) []string { return row[len(row)-len(redisCSVHeader):] }
	require.Equal(t, []string{"20", "0", "72", "88", "180000", "1200000", ""}, tail(rows[1]))
	require.Equal(t, []string{"20", "2", "64", "80", "170000", "900000", ""}, tail(rows[2]))
	require.Equal(t, []string{"", "", "", "", "", "", "x-time-rate has no script: it decides in floating point"}, tail(rows[3]))

	buf.Reset()
	require.NoError(t, CSV(&buf, doubleBurst()))
	require.NotContains(t, buf.String(), "redis_", "no replay, no redis columns")
}

// An all-of row's mismatch names the limit that fired on each side.
func TestRedisMismatchNamesLimit(t *testing.T) {
	r := redisReport()
	m := r.Results[1].Redis.FirstMismatch
	m.Simulation = sim.RedisDecision{Verdict: "reject", RetryAfterNs: 1000000000, Limit: "zone=perip (nginx.conf:5)"}
	m.Redis = sim.RedisDecision{Verdict: "reject", RetryAfterNs: 1000000000, Limit: "limits[1]"}
	require.Contains(t, RedisLines(r)[1], "(the first: 1.5s key client-1 attempt 1: simulation reject (retry after 1s) by zone=perip (nginx.conf:5), redis reject (retry after 1s) by limits[1])")
}
