package cmd

import (
	"fmt"
	"os"
	"strings"

	"github.com/ratesim/ratesim/gateway"
	"github.com/spf13/cobra"
)

func newImportCmd() *cobra.Command {
	var from, scope string
	c := &cobra.Command{
		Use:   "import CONFIG",
		Short: "Print a scenario whose rows are the rate limits of a gateway config (nginx, HAProxy)",
		Long: `Reads a gateway's config and prints a scenario (YAML) whose algorithm rows are
the limits in it, each with a comment naming the file and line it came from.

nginx: limit_req_zone, limit_req (burst, nodelay, delay), limit_req_status and
limit_req_dry_run, inherited http -> server -> location as nginx merges them
(a level with any limit_req of its own replaces its parent's). One row per
location; several limit_req in one location are one all-of row with commit
all-or-nothing, as nginx enforces them. --scope picks one location by its
name ("SERVER LOCATION", as the rows are labelled) or by its location alone.

haproxy: in each frontend and listen section, http-request deny on a tracked
sc_http_req_rate (gt L, or ge L), the http-request track-scN before it and
the stick-table storing http_req_rate(PERIOD) that it counts in (the
section's own, or another's named by table). One haproxy row per section,
labelled by its name; --scope picks one section.

Anything the reader cannot map (include, unknown parameters, rates such as
10r/x, zones not defined) is an error naming file:line:col and the directive,
with exit status 2. See docs/gateways.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return usageError{err}
			}
			if from == "" {
				from = gateway.Guess(args[0], data)
				if from == "" {
					return usagef("%s: cannot tell which gateway's config this is: name it with --from (one of %s)", args[0], strings.Join(gateway.Supported(), ", "))
				}
				fmt.Fprintf(c.ErrOrStderr(), "ratesim: reading %s with the %s reader (--from %s)\n", args[0], from, from)
			}
			g, err := gateway.Read(from, args[0], data)
			if err != nil {
				return usageError{err}
			}
			out, err := g.Scenario(gateway.Options{Scope: scope})
			if err != nil {
				return usageError{err}
			}
			_, err = fmt.Fprint(c.OutOrStdout(), out)
			return err
		},
	}
	c.Flags().StringVar(&from, "from", "", "the config's gateway: nginx or haproxy (default: a guess from the file, stated on stderr)")
	c.Flags().StringVar(&scope, "scope", "", "keep one scope: an nginx location (its row label \"SERVER LOCATION\", or its location) or an HAProxy section")
	return c
}
