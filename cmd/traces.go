package cmd

import (
	"fmt"
	"io"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/traffic"
)

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
