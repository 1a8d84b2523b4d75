package cmd

import (
	"io"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
	"github.com/spf13/pflag"
)

// chartFlags are the chart options of compare, replay and demo.
type chartFlags struct {
	dir string // --charts DIR: write charts there
}

func addChartFlags(fl *pflag.FlagSet, f *chartFlags) {}

// prepareCharts sets up what the charts need from the run (the key whose
// state to sample) before it starts.
func prepareCharts(sc *scenarios.Scenario, cfg *sim.Config, f chartFlags) error { return nil }

// writeCharts writes the charts of a finished comparison, when asked to.
func writeCharts(stderr io.Writer, o *outcome, f chartFlags) error { return nil }
