package output

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"

	"github.com/ratesim/ratesim/sim"
)

// clusterTints are the tints of a cluster's faults, as faultTints are the
// backend's: translucent, one per type.
var clusterTints = map[string]color.NRGBA{
	"node-down":   {R: 0x7f, G: 0x7f, B: 0x7f, A: 0x48},
	"store-down":  {R: 0xd6, G: 0x27, B: 0x28, A: 0x38},
	"store-slow":  {R: 0xbc, G: 0xbd, B: 0x22, A: 0x50},
	"store-flush": {R: 0x94, G: 0x67, B: 0xbd, A: 0x60},
}

// clusterShades are the windows of a cluster's faults on tb's axis (a
// store flush, an instant, as a thin band of a thousandth of the span),
// with a legend entry per type, in the order the faults come; none
// without a cluster or faults.
func clusterShades(r *sim.Report, tb timeBase) (*faultShades, []legendItem) {
	var faults []sim.ClusterFault
	for i := range r.Results {
		if c := r.Results[i].Cluster; c != nil && len(c.Faults) > 0 {
			faults = c.Faults
			break
		}
	}
	if len(faults) == 0 {
		return nil, nil
	}
	thin := math.Max(float64(r.DurationNs)/1e12, 1e-3)
	s := &faultShades{}
	var legend []legendItem
	seen := map[string]bool{}
	for _, f := range faults {
		tint, ok := clusterTints[f.Type]
		if !ok {
			tint = color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0x40}
		}
		x0, x1 := tb.x(f.StartNs), faultEndX(tb, f.EndNs)
		if x1 <= x0 {
			x1 = x0 + thin
		}
		s.windows = append(s.windows, faultShade{x0: x0, x1: x1, tint: tint})
		if !seen[f.Type] {
			seen[f.Type] = true
			legend = append(legend, legendItem{"fault: " + f.Type, &faultShade{tint: tint}})
		}
	}
	return s, legend
}

// addShades puts the shades behind what p draws.
func addShades(p *plot.Plot, s *faultShades) {
	if s != nil {
		p.Add(s)
	}
}
