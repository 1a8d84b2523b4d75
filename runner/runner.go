// Package runner runs a scenario and returns its report: the one way in
// for `ratesim compare` and `replay`, a sweep's points and the lessons of
// `ratesim demo`, and for any other caller (a browser page) that holds a
// validated scenario.
//
// Run takes the scenario and Options, compare's choices as values: which
// algorithms, the baseline row, the check field, the key to inspect, who
// writes the decisions, a progress hook. It edits the scenario as those
// choices say (the algorithms kept, the seed), runs every row on the
// engine (sim.Run) and returns the Report: the engine's report, the
// scenario and configuration as run, and the decisions of a small run.
//
// It never prints, exits, reads flags or opens a file: what a run has to
// say goes to the caller's hooks (Options.Note, Options.Warn), decisions
// go to the caller's writers (Decisions), and problems come back as errors
// (an *OptionError for a choice the scenario cannot take). It imports
// neither sweep nor output, nor anything of the terminal, Redis or charts,
// so that it builds small (GOOS=js GOARCH=wasm).
package runner

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/ratesim/ratesim/cluster/coord"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traffic"
)

// TimelineDecisions is how many decisions per row compare and the lessons
// keep for a timeline (Options.KeepDecisions): a few hundred requests and
// their retries.
const TimelineDecisions = 2000

// Options are the choices of one run, each named after the compare flag
// that sets it. The zero value runs every algorithm of the scenario as it
// is.
type Options struct {
	// Algorithms keeps only the rows named here (comma-separated labels
	// or names, --algorithms), in the scenario's order; rows the scenario
	// left out because they would decide nothing come back when named
	// (scenarios.Skipped). "" keeps every row.
	Algorithms string
	// Seed, when set, replaces the scenario's seed and its traffic's
	// (--seed).
	Seed *uint64
	// Baseline holds every row against this row (--baseline): a label,
	// or the name of exactly one row.
	Baseline string
	// TopKeys is how many keys per row the report lists by rejections
	// (--top; 0 is sim.DefaultTopKeys).
	TopKeys int
	// KeyGlobs are key patterns whose totals each row reports.
	KeyGlobs []string
	// Check holds every row against a verdict the trace logged
	// (replay --check-field).
	Check *sim.Check
	// Inspect samples one key's state for the charts of the rows that
	// can show it (algorithms.Inspector): InspectKey, or the key with the
	// most requests when that is "" (--charts, --chart-key).
	Inspect    bool
	InspectKey string
	// Windows counts, for each row, the cost released in the trailing
	// policy window at every instant (sim.Result.Window), and with several
	// keys the same for the key of the row's key peak (KeyWindow), for
	// charts (--charts). The key's is counted on a second run of the
	// scenario, which is deterministic: no key but that one is followed.
	Windows bool
	// KeepDecisions keeps each row's decisions in the report (for a
	// timeline) when no row makes more than this many; 0 keeps none.
	KeepDecisions int
	// Decisions, when set, writes every decision of the run (--decisions).
	Decisions *Decisions
	// Watch, when set, makes an observer of row i's decisions (nil for
	// none): what the expectations of docs/expect.md read of single
	// decisions.
	Watch func(i int) sim.Observer
	// Progress is told the virtual time the run has reached
	// (sim.Config.Progress).
	Progress func(done, total time.Duration)
	// KeyProgress is told, as Progress is, the virtual time the second
	// run of Windows has reached: the one that follows each row's busiest
	// key, which runs only when the traffic has several keys and some row
	// a key peak over its policy window.
	KeyProgress func(done, total time.Duration)
	// Note is told, before the run, of each algorithm the scenario left
	// out that the caller should hear of: every one without Algorithms;
	// with it, the named ones that cannot come back.
	Note func(scenarios.Skipped)
	// Warn is told the warnings of the scenario's replays (a trace read
	// out of order, say).
	Warn func(msg string)
	// Budget, when not zero, bounds the run's estimate (EstimateOf): a
	// run over it does not start, and Run returns a *BudgetError.
	Budget Budget
}

// Report is a finished run.
type Report struct {
	// Report is the engine's report, with a summary of each trace the
	// scenario replays.
	*sim.Report
	// Scenario is the scenario as run: the algorithms kept, the seed set.
	Scenario *scenarios.Scenario
	// Config is the engine's configuration of the run (what a replay of
	// its rows elsewhere, on Redis say, needs).
	Config sim.Config
	// Decisions[i] are row i's decisions in processing order, or nil
	// when Options.KeepDecisions is 0 or a row made more than it.
	Decisions [][]sim.Decision
}

// OptionError is a choice of Options that the scenario cannot take: it
// names the option as compare's flag (--algorithms, --baseline).
type OptionError struct {
	Option, Msg string
}

func (e *OptionError) Error() string { return e.Option + ": " + e.Msg }

func optionErrorf(option, format string, args ...any) error {
	return &OptionError{Option: option, Msg: fmt.Sprintf(format, args...)}
}

// Run runs the scenario with the options and returns its report. It
// edits sc (the algorithms kept, the seed set): give it a scenario of its
// own.
func Run(sc *scenarios.Scenario, o Options) (*Report, error) {
	cfg, err := prepare(sc, o)
	if err != nil {
		return nil, err
	}
	if o.Budget != (Budget{}) {
		est, err := EstimateOf(sc)
		if err != nil {
			return nil, err
		}
		if err := o.Budget.Check(est); err != nil {
			return nil, err
		}
	}
	if o.Inspect {
		if cfg.Inspect, err = inspect(sc, &cfg, o.InspectKey); err != nil {
			return nil, err
		}
	}
	var parts *decisionParts
	if o.Decisions != nil {
		if parts, err = o.Decisions.open(cfg.Algorithms, cfg.Cluster != nil); err != nil {
			return nil, err
		}
	}
	var kept []*keeper
	if o.KeepDecisions > 0 {
		kept = make([]*keeper, len(cfg.Algorithms))
	}
	var counters []*sim.WindowCounter
	if o.Windows {
		counters = allKeysCounters(&cfg)
	}
	if kept != nil || parts != nil || counters != nil || o.Watch != nil {
		cfg.Observe = func(i int) sim.Observer {
			var t tee
			if o.Watch != nil {
				if w := o.Watch(i); w != nil {
					t = append(t, w)
				}
			}
			if kept != nil {
				kept[i] = &keeper{max: o.KeepDecisions}
				t = append(t, kept[i])
			}
			if parts != nil {
				t = append(t, parts.writers[i])
			}
			if counters != nil {
				t = append(t, counters[i])
			}
			switch len(t) {
			case 0:
				return nil
			case 1:
				return t[0]
			}
			return &t
		}
	}
	if o.Warn != nil {
		for _, src := range sc.Traffic.Sources {
			if r, ok := src.(*traffic.Replay); ok {
				r.Warn = o.Warn
			}
		}
	}
	rep, err := sim.Run(cfg)
	if err != nil {
		return nil, err
	}
	rep.Traces = sim.TraceSummaries(sc.Traffic)
	rep.CostUnit = traffic.CostUnit(sc.Traffic)
	rep.NamedWindowsNs = namedWindows(sc)
	clusterFaults(&cfg, rep)
	if parts != nil {
		if err := parts.join(o.Decisions); err != nil {
			return nil, err
		}
	}
	if counters != nil {
		if err := countWindows(sc, cfg, rep, counters, o.KeyProgress); err != nil {
			return nil, err
		}
	}
	r := &Report{Report: rep, Scenario: sc, Config: cfg}
	if kept != nil {
		r.Decisions = make([][]sim.Decision, len(kept))
		for i, k := range kept {
			if k == nil || k.over {
				r.Decisions = nil // too many to keep
				break
			}
			r.Decisions[i] = k.got
		}
	}
	return r, nil
}

// prepare edits the scenario as the options say and returns the engine's
// configuration of the run.
func prepare(sc *scenarios.Scenario, o Options) (sim.Config, error) {
	notes := restoreLeftOut(sc, o.Algorithms)
	if o.Note != nil {
		for _, sk := range notes {
			o.Note(sk)
		}
	}
	if o.Seed != nil {
		// every draw derives from the scenario's seed: the traffic's, the
		// backend's service times (the cluster's read sc.Seed)
		sc.Seed = *o.Seed
		sc.Traffic.Seed = *o.Seed
		if sc.Backend != nil {
			sc.Backend.Seed = *o.Seed
		}
	}
	if err := selectAlgorithms(sc, o.Algorithms); err != nil {
		return sim.Config{}, err
	}
	cfg := ConfigOf(sc)
	cfg.TopKeys = o.TopKeys
	cfg.KeyGlobs = o.KeyGlobs
	cfg.Check = o.Check
	cfg.Progress = o.Progress
	var err error
	if cfg.Baseline, err = baselineOf(sc, o.Baseline, o.Algorithms != ""); err != nil {
		return sim.Config{}, err
	}
	return cfg, nil
}

// ConfigOf turns a validated scenario into the engine's configuration:
// its rows, traffic, limit, cluster and backend, with no option of a run.
func ConfigOf(sc *scenarios.Scenario) sim.Config {
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
	if sc.Cluster != nil {
		cfg.Coordinate = coord.New // each row on the cluster's nodes
	}
	for _, a := range sc.Algorithms {
		cfg.Algorithms = append(cfg.Algorithms, sim.Algorithm{
			Name: a.Name, Label: a.Label, Params: a.Params, Set: a.Set, Coord: a.Coord, Route: a.Route, Routes: a.Routes,
		})
	}
	return cfg
}

// inspect is the sampling of key's state (the busiest key's when key is
// ""), or nil when no row can show its state or the traffic has no key.
func inspect(sc *scenarios.Scenario, cfg *sim.Config, key string) (*sim.Inspect, error) {
	if !anyInspector(cfg) {
		return nil, nil
	}
	if key == "" {
		var err error
		if key, err = traffic.BusiestKey(sc.Traffic, cfg.Start, cfg.Duration); err != nil {
			return nil, err
		}
		if key == "" {
			return nil, nil // no traffic
		}
	}
	// ten samples a bucket, so that a window's count shows before it
	// resets (the engine halves the rate past MaxSeriesBuckets samples)
	return &sim.Inspect{Key: key, Every: max(cfg.Bucket/10, 1)}, nil
}

// anyInspector reports whether a row of cfg can show its state
// (algorithms.Inspector): only then is the busiest key worth finding.
func anyInspector(cfg *sim.Config) bool {
	for _, a := range cfg.Algorithms {
		var lim algorithms.Limiter
		var err error
		if a.New != nil {
			lim, err = a.New()
		} else {
			lim, err = algorithms.New(a.Name, a.Params)
		}
		if err != nil {
			continue // the run reports it
		}
		if _, ok := lim.(algorithms.Inspector); ok {
			return true
		}
	}
	return false
}

// keeper keeps the decisions of a small run, up to max.
type keeper struct {
	got  []sim.Decision
	max  int
	over bool
}

func (k *keeper) Observe(d *sim.Decision) error {
	if len(k.got) == k.max {
		k.got, k.over = nil, true
		return sim.ErrStopObserving
	}
	k.got = append(k.got, *d)
	return nil
}

// tee sends every decision to several observers, until each stops
// observing.
type tee []sim.Observer

func (t *tee) Observe(d *sim.Decision) error {
	live := false
	for i, o := range *t {
		if o == nil {
			continue
		}
		err := o.Observe(d)
		if err == nil {
			live = true
		} else if errors.Is(err, sim.ErrStopObserving) {
			(*t)[i] = nil
		} else {
			return err
		}
	}
	if !live {
		return sim.ErrStopObserving
	}
	return nil
}

// Decisions has every decision of a run written by the caller's writers
// (a CSV file's, say). The rows run in parallel, each writing into a part
// of its own; once the run is over the parts are joined in the rows'
// order, so each row's decisions stay in processing order and none is
// held in memory. Only the first row's writer writes a header. Nothing is
// joined when the run fails.
type Decisions struct {
	// Part makes the store of one row's part (a temporary file).
	Part func() (io.ReadWriteSeeker, error)
	// Writer makes the writer of row's decisions into part; cluster says
	// the rows run on a cluster (their decisions name a node), header
	// that the writer writes the header first.
	Writer func(part io.Writer, row sim.Algorithm, cluster, header bool) DecisionWriter
	// Create makes the destination the parts are joined into.
	Create func() (io.WriteCloser, error)
}

// DecisionWriter writes decisions; Flush writes out what it holds.
type DecisionWriter interface {
	sim.Observer
	Flush() error
}

// decisionParts are the parts and writers of one run's decisions.
type decisionParts struct {
	parts   []io.ReadWriteSeeker
	writers []DecisionWriter
}

func (d *Decisions) open(rows []sim.Algorithm, cluster bool) (*decisionParts, error) {
	p := &decisionParts{}
	for i, row := range rows {
		part, err := d.Part()
		if err != nil {
			return nil, err
		}
		p.parts = append(p.parts, part)
		p.writers = append(p.writers, d.Writer(part, row, cluster, i == 0))
	}
	return p, nil
}

// join copies the parts, in the rows' order, into a destination.
func (p *decisionParts) join(d *Decisions) error {
	out, err := d.Create()
	if err != nil {
		return err
	}
	for i, part := range p.parts {
		if err := p.writers[i].Flush(); err != nil {
			out.Close()
			return err
		}
		if _, err := part.Seek(0, io.SeekStart); err != nil {
			out.Close()
			return err
		}
		if _, err := io.Copy(out, part); err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}
