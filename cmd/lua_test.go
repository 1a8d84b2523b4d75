package cmd

import (
	"strings"
	"testing"

	"github.com/ratesim/ratesim/redislua"
	"github.com/stretchr/testify/require"
)

func TestLua(t *testing.T) {
	for _, name := range redislua.Names() {
		for _, clock := range []string{"arg", "redis"} {
			status, out, errOut := run(t, "lua", name, "--clock", clock)
			require.Equal(t, 0, status, errOut)
			want, err := redislua.Script(name, map[string]redislua.Clock{"arg": redislua.ClockArg, "redis": redislua.ClockRedis}[clock])
			require.NoError(t, err)
			require.Equal(t, want, out)
			require.Contains(t, out, "-- Call:    EVALSHA sha 1 KEY now cost rate per burst [OPTION VALUE]...")
			require.Contains(t, out, "`ratesim lua "+name+" --clock "+clock+"`")
		}
	}
	for _, clock := range []string{"arg", "redis"} {
		status, out, errOut := run(t, "lua", "all-of", "--clock", clock)
		require.Equal(t, 0, status, errOut)
		want, err := redislua.Script("all-of", map[string]redislua.Clock{"arg": redislua.ClockArg, "redis": redislua.ClockRedis}[clock])
		require.NoError(t, err)
		require.Equal(t, want, out)
		require.Contains(t, out, "-- Call:    EVALSHA sha K KEY... now cost commit N LIMIT...")
	}
	status, out, _ := run(t, "lua", "gcra")
	require.Equal(t, 0, status)
	require.Contains(t, out, "Clock:   arg:")
}

func TestLuaErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lua", "x-time-rate"}, "ratesim: x-time-rate has no Lua script: it is the golang.org/x/time/rate library, which decides in floating point (want one of fixed-window, sliding-log, sliding-window, token-bucket, gcra, leaky-bucket, nginx, concurrency)\n"},
		{[]string{"lua", "bucket"}, `ratesim: unknown algorithm "bucket" (want one of fixed-window, sliding-log, sliding-window, token-bucket, gcra, leaky-bucket, nginx, concurrency)` + "\n"},
		{[]string{"lua", "gcra", "--clock", "wall"}, `ratesim: --clock: clock "wall": want arg (now passed as ARGV[1], ns) or redis (now from Redis TIME, us)` + "\n"},
		{[]string{"lua"}, "ratesim: ratesim lua: accepts 1 arg(s), received 0\n"},
	} {
		status, out, errOut := run(t, tc.args...)
		require.Equal(t, 2, status, strings.Join(tc.args, " "))
		require.Empty(t, out)
		require.Equal(t, tc.want, errOut)
	}
}
