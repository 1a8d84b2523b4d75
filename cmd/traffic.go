package cmd

import (
	"bufio"
	"os"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/traffic"
	"github.com/spf13/cobra"
)

var trafficFormats = []string{"csv", "jsonl", "combined"}

func newTrafficCmd() *cobra.Command {
	var format, outPath string
	c := &cobra.Command{
		Use:   "traffic SCENARIO",
		Short: "Write a scenario's arrivals as CSV, JSON lines or a combined log",
		Long: `Writes the arrivals of a scenario's traffic (its first attempts, open loop:
no retries) to standard output, one a line, so that ratesim's traffic can be
replayed into a real gateway or load tool, or read back with 'ratesim replay'.
csv and jsonl carry times to the nanosecond (time_ns, key, cost); combined
writes an access log stamped to the second.`,
		Example: `  ratesim traffic api-gateway --output api.csv
  ratesim replay api.csv --limit 10/s --burst 20 --time-unit ns --time-field time_ns --key-field key --cost-field cost`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if !slices.Contains(trafficFormats, format) {
				return usagef("--format: %q is not a traffic format (want %s)", format, strings.Join(trafficFormats, ", "))
			}
			sc, err := scenarios.Resolve(args[0])
			if err != nil {
				return usageError{err}
			}
			keys, stream, err := sc.Traffic.Open()
			if err != nil {
				return inputError(err)
			}
			out := c.OutOrStdout()
			if outPath != "" {
				f, err := os.Create(outPath)
				if err != nil {
					return usagef("--output: %v", err)
				}
				defer f.Close()
				out = f
			}
			w := bufio.NewWriter(out)
			if err := traffic.WriteArrivals(w, format, keys, stream); err != nil {
				return inputError(err)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if f, ok := out.(*os.File); ok && outPath != "" {
				return f.Close()
			}
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "csv", "output format: "+strings.Join(trafficFormats, ", "))
	c.Flags().StringVarP(&outPath, "output", "o", "", "write to this file instead of standard output")
	return c
}
