package coord

import (
	"time"

	"github.com/ratesim/ratesim/internal/clustertest"
	"github.com/ratesim/ratesim/sim"
)

const (
	ms = time.Millisecond
	us = time.Microsecond
)

// The configurations shared with package sim's tests.
var (
	clusterConfig        = clustertest.Config
	randomClusterBackend = clustertest.RandomBackend
	timesPlan            = clustertest.Times
	baseConfig           = clustertest.Base
	adaptive             = clustertest.Adaptive
)

// simRun runs cfg (sim.Run), its rows on its cluster when it has one.
func simRun(cfg sim.Config) (*sim.Report, error) {
	cfg.Coordinate = nil
	if cfg.Cluster != nil {
		cfg.Coordinate = New
	}
	return sim.Run(cfg)
}

// recorder keeps the decisions it is shown.
type recorder struct{ got []sim.Decision }

func (r *recorder) Observe(d *sim.Decision) error { r.got = append(r.got, *d); return nil }
