package play

import (
	"errors"
	"fmt"
	"time"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/traffic"
)

// Controls are the values the page's controls show for a scenario
// (docs/playground.md, "Controls"); a section the scenario lacks is nil.
type Controls struct {
	Rate  int64  `json:"rate"`
	Per   string `json:"per"`
	PerNs int64  `json:"per_ns"`
	Burst int64  `json:"burst"`
	// Bursts are the burst sources: the size of each and the offset of
	// their middle from the nearest window boundary.
	Bursts *BurstControls `json:"bursts,omitempty"`
	// Flow is the first steady or Poisson source.
	Flow *FlowControls `json:"flow,omitempty"`
	// Nodes and Mode are the cluster's nodes and the first row's
	// coordination; Nodes is 0 without a cluster.
	Nodes int    `json:"nodes"`
	Mode  string `json:"mode,omitempty"`
	// Workers are the backend's, 0 without workers.
	Workers int `json:"workers"`
	// Algorithms are the rows' labels, and those the scenario leaves out.
	Algorithms []string `json:"algorithms"`
	Skipped    []string `json:"skipped,omitempty"`
}

// BurstControls are the values of the burst sources.
type BurstControls struct {
	Count    int64 `json:"count"`
	OffsetNs int64 `json:"offset_ns"`
}

// FlowControls are the values of a steady or Poisson source.
type FlowControls struct {
	Type    string `json:"type"`
	Rate    string `json:"rate"`
	Clients int    `json:"clients"`
}

// Describe reads the controls' values from the scenario in text.
func Describe(file, text string) (*Controls, error) {
	sc, err := scenarios.Parse(file, []byte(text))
	if err != nil {
		return nil, err
	}
	c := &Controls{Rate: sc.Limit.Rate, PerNs: int64(sc.Limit.Per), Per: formatDuration(sc.Limit.Per),
		Burst: sc.Limit.Burst}
	if lo, hi, n, ok := burstSpan(sc); ok {
		c.Bursts = &BurstControls{Count: n, OffsetNs: int64(offset(lo, hi, sc.Limit.Per))}
	}
	f, _ := scenarios.Read(file, []byte(text)) // Parse took it
	for i, src := range f.Traffic {
		if t := src.Type.Text; t == "steady" || t == "poisson" {
			fc := &FlowControls{Type: t, Rate: src.Rate.Text, Clients: 1}
			switch s := sc.Traffic.Sources[i].(type) {
			case *traffic.Steady:
				fc.Clients = max(s.Clients.N, 1)
			case *traffic.Poisson:
				fc.Clients = max(s.Clients.N, 1)
			}
			c.Flow = fc
			break
		}
	}
	if sc.Cluster != nil {
		c.Nodes = sc.Cluster.Nodes
	}
	if sc.Backend != nil {
		c.Workers = sc.Backend.Workers
	}
	for i, a := range sc.Algorithms {
		if i == 0 && sc.Cluster != nil {
			c.Mode = string(a.Coord.Mode)
		}
		c.Algorithms = append(c.Algorithms, a.Label)
	}
	for _, sk := range sc.Skipped {
		c.Skipped = append(c.Skipped, sk.Name)
	}
	return c, nil
}

// burstSpan is the span of the burst sources, from the first's start to
// the last's end, and the size of the first.
func burstSpan(sc *scenarios.Scenario) (lo, hi time.Duration, count int64, ok bool) {
	for _, src := range sc.Traffic.Sources {
		b, isBurst := src.(*traffic.Burst)
		if !isBurst {
			continue
		}
		if !ok {
			lo, hi, count, ok = b.At, b.At+b.Over, b.Count, true
			continue
		}
		lo, hi = min(lo, b.At), max(hi, b.At+b.Over)
	}
	return lo, hi, count, ok
}

// offset is how far the middle of [lo, hi) lies from the nearest
// boundary of windows of per (negative: before it).
func offset(lo, hi, per time.Duration) time.Duration {
	mid := lo + (hi-lo)/2
	b := (mid + per/2) / per * per
	return mid - b
}

// Edit sets the control named to value in the scenario in text, and
// returns the scenario's new text. The text is written out again from its
// fields, with its keys in their order and its comments above the field
// or item they were at (docs/playground.md says so).
func Edit(file, text, control, value string) (string, error) {
	f, err := scenarios.Read(file, []byte(text))
	if err != nil {
		return "", err
	}
	set := func(path string, v scenarios.Value) error { return f.Set(path, v) }
	switch control {
	case "rate":
		err = set("limit.rate", scenarios.ValueOf(value))
	case "per":
		err = set("limit.per", scenarios.ValueOf(value))
	case "burst":
		err = set("limit.burst", scenarios.ValueOf(value))
	case "burst-count":
		err = eachSource(f, []string{"burst"}, "count", scenarios.ValueOf(value))
	case "burst-offset":
		err = moveBursts(f, file, text, value)
	case "flow":
		err = setFlow(f, file, text, value)
	case "flow-rate":
		err = eachSource(f, []string{"steady", "poisson"}, "rate", scenarios.ValueOf(value))
	case "clients":
		err = eachSource(f, []string{"steady", "poisson"}, "clients", scenarios.ValueOf(value))
	case "nodes":
		err = set("cluster.nodes", scenarios.ValueOf(value))
	case "mode":
		err = setMode(f, file, text, value)
	case "workers":
		err = set("backend.workers", scenarios.ValueOf(value))
	default:
		err = fmt.Errorf("no control %q", control)
	}
	if err != nil {
		return "", err
	}
	out, err := scenarios.MarshalLayout(f, layoutOf(text))
	return string(out), err
}

// eachSource sets field to v in every source of one of the types.
func eachSource(f *scenarios.File, types []string, field string, v scenarios.Value) error {
	n := 0
	for i, src := range f.Traffic {
		for _, t := range types {
			if src.Type.Text == t {
				if err := f.Set(fmt.Sprintf("traffic[%d].%s", i, field), v); err != nil {
					return err
				}
				n++
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("the scenario has no %s source", types[0])
	}
	return nil
}

// moveBursts moves every burst source by the same time, so that the
// middle of their span lies value from the nearest window boundary.
func moveBursts(f *scenarios.File, file, text, value string) error {
	want, err := time.ParseDuration(value)
	if err != nil {
		return fmt.Errorf("burst offset: %v", err)
	}
	sc, err := scenarios.Parse(file, []byte(text))
	if err != nil {
		return err
	}
	lo, hi, _, ok := burstSpan(sc)
	if !ok {
		return errors.New("the scenario has no burst source")
	}
	by := want - offset(lo, hi, sc.Limit.Per)
	if lo+by < 0 {
		return fmt.Errorf("burst offset %s would start a burst before 0s", value)
	}
	for i, src := range sc.Traffic.Sources {
		if b, ok := src.(*traffic.Burst); ok {
			if err := f.Set(fmt.Sprintf("traffic[%d].at", i), scenarios.ValueOf(formatDuration(b.At+by))); err != nil {
				return err
			}
		}
	}
	return nil
}

// setFlow replaces the traffic with one steady or Poisson source, at the
// rate of the scenario's first such source, else twice the limit.
func setFlow(f *scenarios.File, file, text, typ string) error {
	if typ != "steady" && typ != "poisson" {
		return fmt.Errorf("traffic %q: want steady or poisson", typ)
	}
	c, err := Describe(file, text)
	if err != nil {
		return err
	}
	src := scenarios.Source{Type: scenarios.TextOf(typ)}
	if c.Flow != nil {
		src.Rate = scenarios.RateOf(c.Flow.Rate)
		if c.Flow.Clients > 1 {
			src.Clients = scenarios.IntOf(int64(c.Flow.Clients))
		}
	} else {
		src.Rate = scenarios.RateOf(fmt.Sprintf("%d/%s", 2*c.Rate, c.Per))
	}
	f.Traffic = []scenarios.Source{src}
	return nil
}

// setMode sets every row's coordination on the cluster; rows the
// scenario leaves to the default list are written out first.
func setMode(f *scenarios.File, file, text, mode string) error {
	if f.Cluster == nil {
		return errors.New("the scenario has no cluster: set nodes first")
	}
	if len(f.Algorithms) == 0 {
		sc, err := scenarios.Parse(file, []byte(text))
		if err != nil {
			return err
		}
		for _, a := range sc.Algorithms {
			f.Algorithms = append(f.Algorithms, scenarios.AlgEntry{Name: scenarios.TextOf(a.Name)})
		}
	}
	for i := range f.Algorithms {
		if err := f.Set(fmt.Sprintf("algorithms[%d].coordination", i), scenarios.ValueOf(mode)); err != nil {
			return err
		}
	}
	return nil
}

// formatDuration writes d as a scenario file would (900ms, 1s, 2m), and
// 0 as 0s.
func formatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return scenarios.DurationText(d)
}
