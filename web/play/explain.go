package play

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/sim"
)

// Why is one row's decision on the request the page asks about: what the
// rule decided, and the key's state just before and just after
// (algorithms.Inspector's gauges), when the row's limiter can be made to
// decide again what it decided in the run.
type Why struct {
	Label     string `json:"label"`
	Algorithm string `json:"algorithm"`
	Rule      string `json:"rule"`
	// Found is false when the row saw no such attempt (a retry that only
	// another row's rejection made).
	Found bool `json:"found"`
	// Index is the decision's index in the row.
	Index      int    `json:"index"`
	Verdict    string `json:"verdict,omitempty"`
	TimeNs     int64  `json:"time_ns"` // from the report's start_ns
	Key        string `json:"key,omitempty"`
	Attempt    int    `json:"attempt,omitempty"`
	Cost       int64  `json:"cost,omitempty"`
	DelayNs    int64  `json:"delay_ns"`
	RetryAfter int64  `json:"retry_after_ns"` // -1: never
	// Node is the node that decided and DecidedNs when, for a cluster
	// row.
	Node      *int  `json:"node,omitempty"`
	DecidedNs int64 `json:"decided_ns,omitempty"`
	// Where the cluster row's rule decided ("node 2", "store") and AtNs
	// when, on the clock it read (from start_ns); InFlight the row's store
	// operations in flight then, InFlightKey those of the request's key;
	// Note what else the mode decided on (sim.ClusterView).
	Where       string `json:"where,omitempty"`
	AtNs        int64  `json:"at_ns,omitempty"`
	InFlight    *int   `json:"in_flight,omitempty"`
	InFlightKey int    `json:"in_flight_key,omitempty"`
	Note        string `json:"note,omitempty"`
	// Before and After are the key's state around the decision; State
	// says why there is none.
	Before []Gauge `json:"before,omitempty"`
	After  []Gauge `json:"after,omitempty"`
	State  string  `json:"state,omitempty"`
}

// Gauge is one figure of a key's state (tokens, a window's count, the
// TAT), as algorithms.Gauge.
type Gauge struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// Explain says, for every row, why the request of decision index of row
// row was decided as it was. The request is the same arrival (time, key,
// attempt) in every row.
func (s *Session) Explain(row, index int) ([]Why, error) {
	if s.rep == nil || s.rows == nil {
		return nil, errors.New("no run with its decisions to explain")
	}
	if row < 0 || row >= len(s.rows) || index < 0 || index >= len(s.rows[row].r.T) {
		return nil, errors.New("no such decision")
	}
	want := arrivalOf(&s.rows[row].r, index)
	// the same arrival may come several times (a burst at one instant):
	// the nth of them in every row
	nth := countBefore(&s.rows[row].r, index, want)
	start := time.Duration(s.rep.Report.StartNs)
	out := make([]Why, len(s.rows))
	for i := range s.rows {
		res := &s.rep.Report.Results[i]
		w := Why{Label: res.Label, Algorithm: res.Algorithm, Rule: rule(res.Algorithm), Index: -1}
		k := nthSame(&s.rows[i].r, want, nth)
		if k >= 0 {
			d := s.decision(i, k)
			w.Found, w.Index = true, k
			w.Verdict = d.Verdict.String()
			w.TimeNs = int64(d.Time - start)
			w.Key, w.Attempt, w.Cost = d.Key, d.Attempt, d.Cost
			w.DelayNs, w.RetryAfter = int64(d.Delay), int64(d.RetryAfter)
			if s.rep.Config.Cluster != nil {
				node := d.Node
				w.Node, w.DecidedNs = &node, int64(d.Decided-start)
				s.clusterView(&w, i, k, start)
			} else {
				w.Before, w.After, w.State = s.state(i, k)
			}
		}
		out[i] = w
	}
	return out, nil
}

// decision is decision j of row i of the last run, as the engine gave it
// to the row's recorder.
func (s *Session) decision(i, j int) sim.Decision {
	c := s.rows[i]
	r := &c.r
	start := time.Duration(s.rep.Report.StartNs)
	d := sim.Decision{Time: start + time.Duration(r.T[j]), Key: s.keys[r.Key[j]], Cost: 1,
		Attempt: int(r.Attempt[j]), Node: -1}
	switch r.V[j] {
	case 'a':
		d.Verdict = algorithms.Accept
	case 'd':
		d.Verdict = algorithms.Delay
	default:
		d.Verdict = algorithms.Reject
	}
	d.Delay, d.RetryAfter = time.Duration(r.Delay[j]), time.Duration(r.Retry[j])
	if r.Cost != nil {
		d.Cost = r.Cost[j]
	}
	if c.granted != nil {
		d.Granted = c.granted[j]
	}
	d.Decided = d.Time
	if r.Node != nil {
		d.Node, d.Decided = int(r.Node[j]), start+time.Duration(r.Decided[j])
	}
	return d
}

// arrival is what makes two rows' decisions the same request's attempt.
type arrival struct {
	t       int64
	key     int32
	attempt int32
}

func arrivalOf(r *Row, j int) arrival { return arrival{r.T[j], r.Key[j], r.Attempt[j]} }

// countBefore counts the decisions of r before index that are the same
// arrival as want.
func countBefore(r *Row, index int, want arrival) int {
	n := 0
	for j := range index {
		if arrivalOf(r, j) == want {
			n++
		}
	}
	return n
}

// nthSame is the index in r of the nth decision (from 0) on the same
// arrival as want, or -1.
func nthSame(r *Row, want arrival, nth int) int {
	for j := range r.T {
		if arrivalOf(r, j) == want {
			if nth == 0 {
				return j
			}
			nth--
		}
	}
	return -1
}

// clusterView fills w, the why of decision k of cluster row i, with what
// the row saw when its rule decided it: the run again, with the engine
// asked to record that decision (sim.Config.Explain): the nodes, the
// balancer and the store interleave as no one limiter replays, and the
// run is deterministic.
func (s *Session) clusterView(w *Why, i, k int, start time.Duration) {
	cfg := s.rep.Config
	cfg.Explain = &sim.Explain{Row: i, Seq: uint64(k)}
	cfg.Observe, cfg.ObserveStore, cfg.Progress = nil, nil, nil
	rep, err := sim.Run(cfg)
	if err != nil {
		w.State = err.Error()
		return
	}
	v := rep.Results[i].View
	if v == nil {
		w.State = "the row decided this request without its rule (a store failure, a lease's stock, a request waiting for a take)"
		return
	}
	w.Where, w.AtNs, w.Note = v.Where, int64(v.At-start), v.Note
	n := v.InFlight
	w.InFlight, w.InFlightKey = &n, v.InFlightKey
	w.Before, w.After = gauges(v.Before), gauges(v.After)
}

// state makes row i's limiter decide again, on a fresh limiter, every
// decision of the row up to decision k, and returns the key's gauges just
// before and after decision k. Only a row whose limiter decides alone can
// be made to decide again: not one that learns from a backend's
// completions, nor one that counts by several attributes (a cluster's
// rows are run again instead: clusterView). Every verdict is held against
// the run's; on a difference the row's state is not shown.
func (s *Session) state(i, k int) (before, after []Gauge, why string) {
	cfg := &s.rep.Config
	alg := cfg.Algorithms[i]
	info, _ := algorithms.Lookup(alg.Name)
	switch {
	case info.Adaptive || cfg.Backend != nil && alg.Name == "concurrency":
		return nil, nil, "this row learns from the backend's completions: its state is not replayed here"
	}
	p := alg.Params
	p.Seed = cfg.Seed
	lim, err := algorithms.New(alg.Name, p)
	if err != nil {
		return nil, nil, err.Error()
	}
	if at, ok := lim.(algorithms.Attributed); ok && at.ByAttributes() {
		return nil, nil, "this row counts by several attributes of a request: its state is not replayed here"
	}
	ins, ok := lim.(algorithms.Inspector)
	if !ok {
		return nil, nil, alg.Name + " shows no state"
	}
	ids := map[string]algorithms.Key{}
	for j := 0; j <= k; j++ {
		d := s.decision(i, j)
		id, ok := ids[d.Key]
		if !ok {
			id = algorithms.Key(len(ids))
			ids[d.Key] = id
		}
		if j == k {
			before = gauges(ins.Inspect(d.Time, id))
		}
		got := lim.Decide(d.Time, id, d.Cost)
		if got != d.Decision {
			return nil, nil, "the row's limiter, run again alone, decided otherwise: its state is not shown"
		}
		if j == k {
			after = gauges(ins.Inspect(d.Time, id))
		}
	}
	return before, after, ""
}

func gauges(gs []algorithms.Gauge) []Gauge {
	out := make([]Gauge, len(gs))
	for i, g := range gs {
		out[i] = Gauge{Name: g.Name, Value: g.Value}
	}
	return out
}

// rule is the algorithm's rule in one line, as `ratesim algorithms` lists
// it.
func rule(name string) string {
	info, ok := algorithms.Lookup(name)
	if !ok {
		return ""
	}
	return info.Summary
}

// CSV is the last run's decisions as `ratesim compare --decisions`
// writes them (docs/commands.md): the same header and rows.
func (s *Session) CSV() (string, error) {
	if s.rep == nil || s.rows == nil {
		return "", errors.New("no run with its decisions")
	}
	var b strings.Builder
	b.WriteString("algorithm,label,time_ns,key,cost,attempt,verdict,delay_ns,retry_after_ns")
	cluster := s.rep.Config.Cluster != nil
	if cluster {
		b.WriteString(",node,decided_ns")
	}
	b.WriteByte('\n')
	for i, c := range s.rows {
		res := &s.rep.Report.Results[i]
		prefix := csvField(res.Algorithm) + "," + csvField(res.Label) + ","
		for j := range c.r.T {
			d := s.decision(i, j)
			b.WriteString(prefix)
			fmt.Fprintf(&b, "%d,%s,%d,%d,%s,%d,", int64(d.Time), csvField(d.Key), d.Cost, d.Attempt, d.Verdict, int64(d.Delay))
			if d.Verdict == algorithms.Reject {
				b.WriteString(strconv.FormatInt(int64(d.RetryAfter), 10))
			}
			if cluster {
				fmt.Fprintf(&b, ",%d,%d", d.Node, int64(d.Decided))
			}
			b.WriteByte('\n')
		}
	}
	return b.String(), nil
}

// csvField quotes s as encoding/csv does.
func csvField(s string) string {
	if s == "" || !strings.ContainsAny(s, ",\"\r\n") && s[0] != ' ' && s != `\.` {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
