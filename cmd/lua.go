package cmd

import (
	"fmt"

	"github.com/ratesim/ratesim/redislua"
	"github.com/spf13/cobra"
)

func newLuaCmd() *cobra.Command {
	var clock string
	c := &cobra.Command{
		Use:   "lua ALGORITHM",
		Short: "Print an algorithm's Redis Lua script, checked decision by decision against the simulation",
		Long: `Prints the Lua script of an algorithm for Redis 7 (every algorithm but
x-time-rate), whose decisions ratesim's tests check one by one against the Go
algorithm on a real redis-server. Its header states its KEYS, ARGV, return value
and exact range. Call it as

  EVALSHA sha 1 KEY now cost rate per burst [OPTION VALUE]...

--clock arg (the default) takes now from ARGV[1] in ns, as a replay of a
simulation does; --clock redis is the production variant: it reads Redis TIME
(microseconds) and sets a PEXPIRE so that idle keys vanish. See docs/redis.md.

ratesim lua all-of prints the script of an all-of row: several limits (nginx,
fixed-window, sliding-window, token-bucket), each with its own key, in any
commit mode; its header states its own calling convention.`,
		Example: `  ratesim lua gcra --clock redis > gcra.lua
  redis-cli -x SCRIPT LOAD < gcra.lua`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ck, err := redislua.ParseClock(clock)
			if err != nil {
				return usagef("--clock: %v", err)
			}
			src, err := redislua.Script(args[0], ck)
			if err != nil {
				return usageError{err}
			}
			_, err = fmt.Fprint(c.OutOrStdout(), src)
			return err
		},
	}
	c.Flags().StringVar(&clock, "clock", "arg", "where now comes from: arg (ARGV[1], ns) or redis (Redis TIME, us; sets PEXPIRE)")
	return c
}
