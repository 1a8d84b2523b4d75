package cmd

import (
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
)

// configOf turns a validated scenario into the engine's configuration.
func configOf(sc *scenarios.Scenario) sim.Config {
	cfg := sim.Config{
		Name:        sc.Name,
		Description: sc.Description,
		Seed:        sc.Seed,
		Duration:    sc.Duration,
		Limit:       sc.Limit,
		Traffic:     sc.Traffic,
		Retries:     sc.Retries,
		Windows:     sc.Windows,
		Bucket:      sc.Bucket,
		Cluster:     sc.Cluster,
		Backend:     sc.Backend,
	}
	for _, a := range sc.Algorithms {
		cfg.Algorithms = append(cfg.Algorithms, sim.Algorithm{
			Name: a.Name, Label: a.Label, Params: a.Params, Set: a.Set, Coord: a.Coord,
		})
	}
	return cfg
}
