package cmd

import (
	"io"

	"github.com/spf13/pflag"
)

// timelineFlags are the options of the terminal timeline.
type timelineFlags struct{}

func addTimelineFlags(fl *pflag.FlagSet, f *timelineFlags) {}

// printTimeline prints the terminal timeline of a small comparison under
// the table.
func printTimeline(w io.Writer, o *outcome, f timelineFlags) error { return nil }
