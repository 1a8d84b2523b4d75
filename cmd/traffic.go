package cmd

import (
	"bufio"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ratesim/ratesim/runner"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/traffic"
	"github.com/spf13/cobra"
)

var trafficFormats = []string{"csv", "jsonl", "combined"}

func newTrafficCmd() *cobra.Command {
	var format, outPath, startAt string
	var budget budgetFlags
	c := &cobra.Command{
		Use:   "traffic SCENARIO",
		Short: "Write a scenario's arrivals as CSV, JSON lines or a combined log",
		Long: `Writes the arrivals of a scenario's traffic (its first attempts, open loop:
no retries) to standard output, one a line, so that ratesim's traffic can be
replayed into a real gateway or load tool, or read back with 'ratesim replay'.
csv and jsonl carry times to the nanosecond (time_ns, key, cost); combined
writes an access log stamped to the second. Synthetic traffic starts at time 0
(the Unix epoch); --start-at moves it to a date of your choosing. Traffic
over its budget (--max-requests, --max-memory) is refused before a line is
written, with its estimate.`,
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
			var shift time.Duration
			if startAt != "" {
				at, err := time.Parse(time.RFC3339Nano, startAt)
				if err != nil || at.Before(time.Unix(0, 0)) {
					return usagef("--start-at: %q: want an instant after 1970 like 2026-11-29T00:00:00Z", startAt)
				}
				shift = time.Duration(at.UnixNano())
			}
			est, err := runner.TrafficEstimateOf(sc)
			if err != nil {
				return inputError(err)
			}
			if err := budget.budget().Check(est); err != nil {
				if be, ok := errors.AsType[*runner.BudgetError](err); ok {
					be.What = "the traffic"
				}
				return usageError{err}
			}
			keys, stream, err := sc.Traffic.Open()
			if err != nil {
				return inputError(err)
			}
			defer closeStream(stream)
			if shift != 0 {
				stream = &shifted{Stream: stream, by: shift}
			}
			out := c.OutOrStdout()
			// a bar on a terminal's stderr, unless the arrivals go to that
			// terminal too
			if bar := newProgress(c.ErrOrStderr()); bar != nil && (outPath != "" || !isTerminal(out)) {
				stream = &progressStream{Stream: stream, report: bar.hook(), total: sc.Duration, shift: shift}
				defer bar.done()
			}
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
	c.Flags().StringVar(&startAt, "start-at", "", "move the traffic so that its time 0 falls at this instant (RFC 3339), as a real log's would")
	addBudgetFlags(c.Flags(), &budget, "traffic")
	c.Flags().Lookup("max-requests").Usage = "refuse traffic whose estimate sends more requests than this (2e9, unlimited)"
	return c
}

// shifted moves every arrival of a stream by the same amount.
type shifted struct {
	traffic.Stream
	by time.Duration
}

func (s *shifted) Next(a *traffic.Arrival) bool {
	if !s.Stream.Next(a) {
		return false
	}
	a.At += s.by
	return true
}

// progressStream tells a progress bar how far a stream of arrivals has
// got, every progressArrivals arrivals.
type progressStream struct {
	traffic.Stream
	report       func(done, total time.Duration)
	total, shift time.Duration
	n            int
}

// progressArrivals is how many arrivals pass between two reports.
const progressArrivals = 1 << 16

func (s *progressStream) Next(a *traffic.Arrival) bool {
	if !s.Stream.Next(a) {
		return false
	}
	if s.n++; s.n%progressArrivals == 0 {
		s.report(a.At-s.shift, s.total)
	}
	return true
}

// closeStream closes a stream that has a Close method (a replay's file and
// its reading ahead), for a reader that may stop before the stream's end.
func closeStream(s traffic.Stream) {
	if c, ok := s.(io.Closer); ok {
		_ = c.Close()
	}
}
