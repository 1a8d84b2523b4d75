package cmd

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The errors a new user meets in the first hour, each in ratesim's words:
// what is wrong, where (the flag, the file), what is wanted, exit 2, and
// nothing of Go's own text (strconv, os, go-redis's log).
func TestFirstHourErrors(t *testing.T) {
	dir := t.TempDir()
	// a port where nothing listens: take a free one and close it
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := ln.Addr().String()
	require.NoError(t, ln.Close())
	garbage := writeFile(t, "garbage.log", "garbage\nmore garbage\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"negative seed", []string{"compare", "--seed", "-3"},
			`ratesim: --seed: "-3": want a whole number from 0 to 18446744073709551615 (see 'ratesim compare --help')`},
		{"seed of a replay", []string{"replay", garbage, "--limit", "1/s", "--seed", "1e3"},
			`ratesim: --seed: "1e3": want a whole number from 0 to 18446744073709551615 (see 'ratesim replay --help')`},
		{"top that is no number", []string{"compare", "--top", "many"},
			`ratesim: --top: "many": want a whole number (see 'ratesim compare --help')`},
		{"timeout without a unit", []string{"compare", "--redis-timeout", "5"},
			`ratesim: --redis-timeout: "5": want a duration such as 2s, 500ms or 1m30s (see 'ratesim compare --help')`},
		{"Redis refuses the connection", []string{"compare", "--redis", "redis://" + refused},
			"ratesim: --redis redis://" + refused + ": the connection is refused: no Redis listens at " + refused +
				" (want the address of a running redis-server, redis://host:port/db or unix:///path/redis.sock)"},
		{"import of a directory", []string{"import", dir},
			"ratesim: " + dir + ": is a directory, want a gateway's config file: an nginx.conf, a Kong declarative config, an envoy config, a Traefik dynamic config or an haproxy.cfg"},
		{"import of a missing file", []string{"import", filepath.Join(dir, "nginx.conf")},
			"ratesim: " + filepath.Join(dir, "nginx.conf") + ": no such file, want a gateway's config file: an nginx.conf, a Kong declarative config, an envoy config, a Traefik dynamic config or an haproxy.cfg"},
		{"a log of no known format", []string{"replay", garbage, "--limit", "1/s"},
			"ratesim: " + garbage + ": cannot recognise the format from the first lines (want combined, common, csv, tsv or jsonl; set --trace-format, or format in a scenario file)"},
		{"an algorithm in another case", []string{"compare", "--algorithms", "GCRA"},
			`ratesim: --algorithms: GCRA not in scenario double-burst (it has fixed-window, sliding-log, sliding-window, token-bucket, gcra, leaky-bucket, nginx, x-time-rate); did you mean "gcra"?`},
		{"algorithms with _ and case", []string{"compare", "--algorithms", "leaky_bucket,Token-Bucket"},
			`ratesim: --algorithms: Token-Bucket, leaky_bucket not in scenario double-burst (it has fixed-window, sliding-log, sliding-window, token-bucket, gcra, leaky-bucket, nginx, x-time-rate); did you mean "token-bucket" for Token-Bucket, "leaky-bucket" for leaky_bucket?`},
		{"a built-in with letters swapped", []string{"compare", "duoble-burst"}, `; did you mean "double-burst"?`},
		{"a lesson in capitals", []string{"demo", "RETRY-STORM"}, `; did you mean "retry-storm"?`},
		{"a script in capitals", []string{"lua", "GCRA"}, `; did you mean "gcra"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, errOut := run(t, tc.args...)
			require.Equal(t, 2, status, errOut)
			require.Empty(t, out)
			errOut = strings.TrimPrefix(errOut, "note: concurrency left out: backend.service is 0, so no request is ever in flight and it could refuse none; name it in algorithms to keep it\n")
			if strings.HasPrefix(tc.want, "ratesim: ") {
				require.Equal(t, tc.want+"\n", errOut)
			} else {
				require.Contains(t, errOut, tc.want)
				require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			}
			for _, internal := range []string{"strconv", "pool.go", "redis: 20", "dial tcp", "open ", "read ", "goroutine"} {
				require.NotContains(t, errOut, internal)
			}
		})
	}
}
