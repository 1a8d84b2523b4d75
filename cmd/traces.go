package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

// traceSummaries reads the statistics of every replay source of sc after
// a run.
func traceSummaries(sc *scenarios.Scenario) []sim.TraceSummary {
	var out []sim.TraceSummary
	for _, src := range sc.Traffic.Sources {
		r, ok := src.(*traffic.Replay)
		if !ok {
			continue
		}
		st := r.Stats()
		if st == nil {
			continue
		}
		ts := sim.TraceSummary{
			Path: st.Path, Format: st.Format,
			Lines: st.Lines, Used: st.Used, Malformed: st.Malformed, Late: st.Late, Sliced: st.Sliced,
			ByReason: st.ByReason,
			FirstNs:  int64(st.First), LastNs: int64(st.Last),
			Keys: st.Keys, PeakPerSecond: st.PeakPerSecond,
		}
		for _, b := range st.FirstBad {
			ts.FirstBad = append(ts.FirstBad, b.Error())
		}
		out = append(out, ts)
	}
	return out
}

// inputError marks the errors of a run that come from its input (a trace
// file that is missing or, in strict mode, malformed) as usage errors: they
// exit 2.
func inputError(err error) error {
	var le *traffic.LineError
	var re *traffic.ReplayError
	if errors.As(err, &le) || errors.As(err, &re) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return usageError{err}
	}
	return err
}

// warnReplays has every replay source of sc print, once, on stderr, when
// its reorder window holds more lines than it should (traffic.Replay.Warn):
// the memory a dense trace takes with a wide window.
func warnReplays(sc *scenarios.Scenario, stderr io.Writer) {
	for _, src := range sc.Traffic.Sources {
		if r, ok := src.(*traffic.Replay); ok {
			r.Warn = func(msg string) { fmt.Fprintf(stderr, "ratesim: warning: %s\n", msg) }
		}
	}
}
