package play

import (
	"github.com/ratesim/ratesim/runner"
	"github.com/ratesim/ratesim/scenarios"
)

// Preset is a built-in scenario as the page lists it: its text, and
// whether a run of it fits the browser's Budget (a preset that does not
// is listed with its estimate and the command that runs it).
type Preset struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Text        string   `json:"text"`
	Fits        bool     `json:"fits"`
	Estimate    []string `json:"estimate"`
}

// Presets lists every built-in scenario in `ratesim scenarios`' order.
// It reads the built-ins' texts as the command line finds them, so it is
// for the build of the page (web/gen), not for the browser, which has no
// files to look in first.
func Presets() ([]Preset, error) {
	var out []Preset
	for _, b := range scenarios.Builtins() {
		file, data, err := scenarios.ResolveText(b.Name)
		if err != nil {
			return nil, err
		}
		sc, err := scenarios.Parse(file, data)
		if err != nil {
			return nil, err
		}
		est, err := runner.EstimateOf(sc)
		if err != nil {
			return nil, err
		}
		out = append(out, Preset{
			Name: b.Name, Description: b.Description, Text: string(data),
			Fits: Budget().Check(est) == nil, Estimate: est.Lines(),
		})
	}
	return out, nil
}
