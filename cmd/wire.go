package cmd

import (
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/sweep"
)

// configOf turns a validated scenario into the engine's configuration
// (one function for compare and sweep, so that a sweep's point runs
// exactly what compare runs).
func configOf(sc *scenarios.Scenario) sim.Config { return sweep.ConfigOf(sc) }
