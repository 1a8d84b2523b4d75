package lessons

import (
	"github.com/ratesim/ratesim/scenarios"
)

// File is the scenario file of the run, replaying the trace at path (the
// bundled trace, written out), as `ratesim replay` makes it from the
// run's flags, named Name.
func (r *Replay) File(path string) (*scenarios.File, error) {
	rate, err := scenarios.ParseRate(r.Limit)
	if err != nil {
		return nil, err
	}
	f := scenarios.ReplayFile(path, 1)
	f.Name = scenarios.TextOf(r.Name)
	f.Limit = scenarios.LimitOf(rate)
	for field, v := range r.Fields {
		if err := f.Set("traffic[0]."+field, scenarios.TextOf(v).Value); err != nil {
			return nil, err
		}
	}
	return f, nil
}
