package cmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/runner"
	"github.com/spf13/pflag"
)

// chartFlags are the chart options of compare, replay and demo.
type chartFlags struct {
	dir    string // --charts DIR: write charts there
	format string // --chart-format: png or svg
	key    string // --chart-key: the key whose state is drawn ("": the busiest)
	lead   string // a lesson's chart to write first ("": the usual order)
}

func addChartFlags(fl *pflag.FlagSet, f *chartFlags) {
	fl.StringVar(&f.dir, "charts", "", "write charts (window, rate, multiples, peaks, delay, state, timeline, extra, backend) to this directory, creating it")
	fl.StringVar(&f.format, "chart-format", "png", "chart image format: "+strings.Join(output.ChartFormats(), ", "))
	fl.StringVar(&f.key, "chart-key", "", "draw the state of this key (default: the key with the most requests)")
}

// checkChartFlags checks the values of the chart flags.
func checkChartFlags(f chartFlags) error {
	if f.format == "" {
		f.format = "png"
	}
	if !slices.Contains(output.ChartFormats(), f.format) {
		return usagef("--chart-format: %q is not a chart format (want %s)", f.format,
			strings.Join(output.ChartFormats(), " or "))
	}
	return nil
}

// writeCharts writes the charts of a finished comparison, when asked to,
// and says on stderr which files it wrote.
func writeCharts(stderr io.Writer, o *runner.Report, f chartFlags) error {
	if f.dir == "" {
		return nil
	}
	if err := checkChartFlags(f); err != nil {
		return err
	}
	format := f.format
	if format == "" {
		format = "png"
	}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return usagef("--charts: %v", err)
	}
	for _, c := range runCharts(o, f.lead) {
		path := filepath.Join(f.dir, c.Name+"."+format)
		if err := writeChart(path, c, format); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s\n", path)
	}
	return nil
}

// writeChart renders one chart to path.
func writeChart(path string, c output.Chart, format string) error {
	file, err := os.Create(path)
	if err != nil {
		return usagef("--charts: %v", err)
	}
	if err := c.Render(file, format); err != nil {
		file.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
