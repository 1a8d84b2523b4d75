package play_test

import (
	"testing"

	"github.com/ratesim/ratesim/web/play"
)

// BenchmarkRun is the engine's share of a rerun in the page, natively
// (docs/playground.md, "Measured"), on the teaching built-ins with the
// most decisions and the smallest.
func BenchmarkRun(b *testing.B) {
	ps, err := play.Presets()
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"double-burst", "retry-storm", "retry-storm-jitter", "metastable-retry", "choose-burst"} {
		var text string
		for _, p := range ps {
			if p.Name == name {
				text = p.Text
			}
		}
		b.Run(name, func(b *testing.B) {
			var s play.Session
			for b.Loop() {
				if res := s.Run("builtin:"+name, text, play.Options{}); res.Report == nil {
					b.Fatalf("%s did not run", name)
				}
			}
		})
	}
}
