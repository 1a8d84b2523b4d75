package cmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/runner"
)

// commandLineKey is the context key of the command line a command runs
// with (commandLine).
type commandLineKey struct{}

// withCommandLine is ctx holding the command line of args, for the
// pages of --report.
func withCommandLine(ctx context.Context, args []string) context.Context {
	words := []string{"ratesim"}
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	return context.WithValue(ctx, commandLineKey{}, strings.Join(words, " "))
}

// commandLine is the command line c runs with, as a shell takes it.
func commandLine(c *cobra.Command) string {
	if ctx := c.Context(); ctx != nil {
		if s, ok := ctx.Value(commandLineKey{}).(string); ok {
			return s
		}
	}
	return c.CommandPath()
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+%@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runCharts are the charts of a finished run: what --charts writes and
// what --report draws, the same list in the same order, a lesson's lead
// chart first (lead "": the usual order).
func runCharts(o *runner.Report, lead string) []output.Chart {
	charts := output.Charts(o.Report, o.Decisions)
	if i := slices.IndexFunc(charts, func(c output.Chart) bool { return c.Name == lead }); i > 0 {
		charts = slices.Concat(charts[i:i+1], charts[:i], charts[i+1:])
	}
	return charts
}

// writeReport writes the page of --report to path and says so on stderr.
func writeReport(stderr io.Writer, path string, p output.Page) error {
	if path == "" {
		return nil
	}
	file, err := os.Create(path)
	if err != nil {
		return usagef("--report: %v", err)
	}
	bw := bufio.NewWriter(file)
	if err := output.HTML(bw, p); err != nil {
		file.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		file.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fmt.Fprintf(stderr, "wrote %s\n", path)
	return nil
}

// pageTitle is a page's title: the command's subject.
func pageTitle(what, name string) string {
	return "ratesim " + what + ": " + name
}
