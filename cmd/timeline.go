package cmd

import (
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/output"
	"github.com/ratesim/ratesim/runner"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// timelineFlags are the options of the terminal timeline.
type timelineFlags struct {
	ascii bool // --ascii: plain ASCII marks
	off   bool // --no-timeline
}

func addTimelineFlags(fl *pflag.FlagSet, f *timelineFlags) {
	fl.BoolVar(&f.ascii, "ascii", false, "draw the timeline with plain ASCII marks")
	fl.BoolVar(&f.off, "no-timeline", false, "do not draw the terminal timeline of small runs")
}

// printTimeline prints the terminal timeline of a small comparison under
// the table: nothing when the run was too large to keep its decisions or
// --no-timeline is set.
func printTimeline(w io.Writer, o *runner.Report, f timelineFlags) error {
	if f.off || o.Decisions == nil {
		return nil
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return output.TermTimeline(w, o.Report, o.Decisions, termOptions(w, f))
}

// termOptions are the drawing options for w: its width, and colour when w
// is a terminal and NO_COLOR is not set (https://no-color.org).
func termOptions(w io.Writer, f timelineFlags) output.TermOptions {
	return output.TermOptions{Width: termWidth(w), ASCII: f.ascii, Color: useColor(w)}
}

// isTerminal says whether w is a terminal. Tests replace it.
var isTerminal = func(w io.Writer) bool {
	file, ok := w.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// terminalWidth is the width of the terminal w, if it is one. Tests
// replace it.
var terminalWidth = func(w io.Writer) (int, bool) {
	file, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(file.Fd())) {
		return 0, false
	}
	width, _, err := term.GetSize(int(file.Fd()))
	return width, err == nil && width > 0
}

// termWidth is the width to draw for on w: the terminal's, else the
// COLUMNS environment variable, else 80.
func termWidth(w io.Writer) int {
	if width, ok := terminalWidth(w); ok {
		return width
	}
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	return output.DefaultTermWidth
}

// useColor says whether to colour what goes to w: only a terminal, never
// when NO_COLOR is set to anything but "" or TERM is "dumb".
func useColor(w io.Writer) bool {
	return isTerminal(w) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}
