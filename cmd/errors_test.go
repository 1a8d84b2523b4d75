package cmd

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
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

// A trace of which more than 10% of the lines are malformed warns with the
// share, and the run goes on; --max-bad, a count or a percentage, makes
// more than it allows exit 2 with nothing on stdout.
func TestMaxBad(t *testing.T) {
	good := func(s int) string {
		return fmt.Sprintf("1.2.3.4 - - [10/Oct/2000:13:55:%02d -0700] \"GET / HTTP/1.0\" 200 2326\n", s)
	}
	// 5 of 8 lines malformed
	path := writeFile(t, "m.log", good(36)+"bad\nbad\n"+good(37)+"bad\nbad\nbad\n"+good(38))
	// 1 of 10: not above 10%
	fine := writeFile(t, "f.log", good(30)+good(31)+good(32)+good(33)+"bad\n"+good(34)+good(35)+good(36)+good(37)+good(38))
	warning := "ratesim: warning: " + path + ": 5 of 8 lines malformed (62.5%): the figures rest on the 3 lines used (--max-bad N or P% makes this an error)\n"
	for _, tc := range []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{path}, 0, warning},
		{[]string{fine}, 0, ""},
		{[]string{path, "--max-bad", "60%"}, 2, "ratesim: " + path + ": 5 of 8 lines malformed (62.5%), more than --max-bad 60% allows\n"},
		{[]string{path, "--max-bad", "62.5%"}, 0, ""},
		{[]string{path, "--max-bad", "62.499%"}, 2, "ratesim: " + path + ": 5 of 8 lines malformed (62.5%), more than --max-bad 62.499% allows\n"},
		{[]string{path, "--max-bad", "4"}, 2, "ratesim: " + path + ": 5 of 8 lines malformed (62.5%), more than --max-bad 4 allows\n"},
		{[]string{path, "--max-bad", "5"}, 0, ""},
		{[]string{fine, "--max-bad", "0"}, 2, "ratesim: " + fine + ": 1 of 10 lines malformed (10.0%), more than --max-bad 0 allows\n"},
		{[]string{path, "--max-bad", "ten"}, 2, `ratesim: --max-bad: "ten": want a count of lines (10) or a percentage of them from 0% to 100% (2.5%)` + "\n"},
		{[]string{path, "--max-bad", "101%"}, 2, `ratesim: --max-bad: "101%": want a count of lines (10) or a percentage of them from 0% to 100% (2.5%)` + "\n"},
	} {
		args := append([]string{"replay", "--limit", "1/s", "--format", "csv", "--algorithms", "gcra"}, tc.args...)
		status, out, errOut := run(t, args...)
		require.Equal(t, tc.status, status, "%v: %s", tc.args, errOut)
		require.Equal(t, tc.stderr, errOut, "%v", tc.args)
		if tc.status == 0 {
			require.Contains(t, out, "gcra")
		} else {
			require.Empty(t, out)
		}
	}
	// a scenario that replays the trace warns the same
	sc := writeFile(t, "s.yaml", "name: s\nlimit: 1/s\nalgorithms: [gcra]\ntraffic:\n  - {type: replay, path: "+path+"}\n")
	status, _, errOut := run(t, "compare", sc)
	require.Equal(t, 0, status, errOut)
	require.Equal(t, warning, errOut)
}

// go-redis logs a failed dial on the process's stderr (its own logger,
// not the command's writer): Dial silences it, so a refused connection
// prints only ratesim's error. The test runs ratesim in a process of its
// own (this test binary again) to see that process's stderr whole.
func TestRedisRefusedLogsNothing(t *testing.T) {
	if addr := os.Getenv("RATESIM_TEST_REFUSED"); addr != "" {
		os.Exit(Run([]string{"compare", "--redis", "redis://" + addr, "--algorithms", "gcra"}, strings.NewReader(""), io.Discard, os.Stderr))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	c := exec.Command(os.Args[0], "-test.run=^TestRedisRefusedLogsNothing$")
	c.Env = append(os.Environ(), "RATESIM_TEST_REFUSED="+addr)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	err = c.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, stderr.String())
	require.Equal(t, 2, exit.ExitCode(), stderr.String())
	require.Equal(t, "ratesim: --redis redis://"+addr+": the connection is refused: no Redis listens at "+addr+
		" (want the address of a running redis-server, redis://host:port/db or unix:///path/redis.sock)\n", stderr.String())
}
