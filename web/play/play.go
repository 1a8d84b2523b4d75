// Package play is what the playground's page asks of the engine
// (docs/playground.md): run a scenario's text and return what the page
// draws, explain one decision, read and edit the values its controls
// show, and list the presets. It holds no JavaScript: web/wasm exposes it
// to the page, and its tests run it natively, so the page and the command
// line make the same decisions from the same code (runner.Run).
//
// Like runner it imports neither output nor sweep nor anything of the
// terminal, Redis or charts, so that the WebAssembly build stays small.
package play

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/expect"
	"github.com/ratesim/ratesim/internal/version"
	"github.com/ratesim/ratesim/runner"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
)

// Budget is the most a run in the browser may cost. The engine decides
// about 15M requests a CPU-second natively (docs/commands.md, "Budgets")
// and the WebAssembly build several times slower, so 2M decisions stay a
// few seconds at worst in the page's worker; every built-in fits. A run
// over it is refused with its estimate and the command that runs it
// instead.
func Budget() runner.Budget {
	return runner.Budget{MaxRequests: 2_000_000, MaxMemory: 256 << 20}
}

// KeepDecisions is the most decisions per row the page receives for its
// timeline; a run with a row over it comes back without decisions (the
// counts and the window chart still show).
const KeepDecisions = 20_000

// Options are the page's choices of a run besides the scenario's text.
type Options struct {
	// Algorithms keeps only these rows (compare's --algorithms); "" keeps
	// every one.
	Algorithms string `json:"algorithms,omitempty"`
}

// Result is what the page receives of a run: Error, Refused or the run.
type Result struct {
	Version string `json:"version"`
	// Error is a scenario the engine cannot take, each problem at its
	// line:col when it has one.
	Error *Error `json:"error,omitempty"`
	// Refused is a run over Budget.
	Refused *Refused `json:"refused,omitempty"`
	// Report is the engine's report, the figures `ratesim compare
	// --format json` prints under "results".
	Report *sim.Report `json:"report,omitempty"`
	// Rows are each row's decisions and window counts, in Report's order.
	Rows []Row `json:"rows,omitempty"`
	// Keys are the keys that the rows' decisions name by index.
	Keys []string `json:"keys,omitempty"`
	// Cluster says the rows run on a cluster (decisions name a node).
	Cluster bool `json:"cluster,omitempty"`
	// Command is the command line that makes the same run.
	Command string `json:"command,omitempty"`
	// Notes are what the command line prints on stderr before the run
	// (the algorithms the scenario leaves out).
	Notes []string `json:"notes,omitempty"`
	// Needs are the files the scenario replays that the session has not
	// been given (AddFile): nothing ran, the page is to fetch them and
	// run again.
	Needs []string `json:"needs,omitempty"`
}

// Error is a scenario that does not run: its problems, each at a line and
// column when it has one, as `ratesim validate` prints them.
type Error struct {
	Message  string    `json:"message"`
	Problems []Problem `json:"problems,omitempty"`
}

// Problem is one problem of a scenario's text.
type Problem struct {
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
	Path string `json:"path,omitempty"`
	Msg  string `json:"msg"`
	Text string `json:"text"` // as the command line prints it
}

// Refused is a run too large for the browser.
type Refused struct {
	Message  string   `json:"message"`
	Estimate []string `json:"estimate"`
	Command  string   `json:"command"`
}

// Row is one row's decisions, column by column (a decision is index i of
// every column), and its trailing-window counts.
type Row struct {
	Label     string `json:"label"`
	Algorithm string `json:"algorithm"`
	// Rule is the algorithm's rule in one line (algorithms.Info.Summary).
	Rule string `json:"rule"`
	// Kept is false when the row made more than KeepDecisions.
	Kept bool `json:"kept"`
	// T is each decision's arrival, in ns from the report's start_ns.
	T []int64 `json:"t"`
	// Key indexes Result.Keys; V is "a" (accept), "d" (delay) or "r"
	// (reject) per decision.
	Key     []int32 `json:"key"`
	V       string  `json:"v"`
	Delay   []int64 `json:"delay"`
	Retry   []int64 `json:"retry_after"` // ns, -1 never, 0 unless rejected
	Attempt []int32 `json:"attempt"`
	Cost    []int64 `json:"cost,omitempty"`    // nil when every cost is 1
	Node    []int32 `json:"node,omitempty"`    // a cluster row's
	Decided []int64 `json:"decided,omitempty"` // a cluster row's, from start_ns
	// Window is the cost released in the trailing policy window, the
	// largest per step (sim.WindowSeries), against Limit.
	Window *sim.WindowSeries `json:"window,omitempty"`
	// Bound is the most the row's rule lets through in one window (the
	// limit, or the rate plus the burst).
	Limit int64 `json:"limit"`
}

// Session holds the last run, so that the page can ask why a decision of
// it was made without running it again.
type Session struct {
	text string
	opt  Options
	rep  *runner.Report
	keys []string
	// rows are the last run's decisions by column (nil when a row made
	// more than KeepDecisions), with what the page is not sent of them.
	rows []*recorder
	// files are those the page gave (AddFile) for replays to read.
	files files
}

// Version is the version the page shows: the module's, "dev" for the
// build of the repository (web/build.sh builds it without a VCS stamp).
func Version() string { return version.String() }

// Run runs the scenario in text, named file in its messages, with the
// options.
func (s *Session) Run(file, text string, opt Options) *Result {
	res := &Result{Version: Version()}
	sc, err := scenarios.Parse(file, []byte(text))
	if err != nil {
		res.Error = errorOf(err)
		return res
	}
	if res.Needs = s.replaysFrom(sc); res.Needs != nil {
		return res
	}
	claims, err := expect.Compile(sc)
	if err != nil {
		res.Error = errorOf(err)
		return res
	}
	o := runner.Options{
		Algorithms: opt.Algorithms,
		Budget:     Budget(),
		Windows:    true,
		Note: func(sk scenarios.Skipped) {
			res.Notes = append(res.Notes, fmt.Sprintf("note: %s left out: %s", sk.Name, sk.Reason))
		},
	}
	// the report windows the expectations read, which compare adds
	// (docs/expect.md), so that the page's report is compare's
	expect.AddWindows(claims, sc)
	// each row's columns sized at once for the attempts the traffic and
	// its retries may make, up to what the page keeps
	size := 0
	if est, err := runner.EstimateOf(sc); err == nil {
		size = int(min(max(est.Requests+est.Retries, 0), KeepDecisions))
	}
	var recs []*recorder
	o.Watch = func(i int) sim.Observer {
		for len(recs) <= i {
			recs = append(recs, nil)
		}
		recs[i] = newRecorder(size, sc.Cluster != nil)
		return recs[i]
	}
	res.Command = command(file, opt)
	rep, err := runner.Run(sc, o)
	if err != nil {
		var be *runner.BudgetError
		if errors.As(err, &be) {
			res.Refused = &Refused{Message: be.Error(), Estimate: be.Estimate.Lines(), Command: res.Command}
			return res
		}
		res.Error = errorOf(err)
		return res
	}
	s.text, s.opt, s.rep = text, opt, rep
	res.Report = rep.Report
	res.Cluster = rep.Config.Cluster != nil
	res.Rows, res.Keys = rows(rep, recs)
	s.keys = res.Keys
	s.rows = nil
	if len(res.Rows) > 0 && res.Rows[0].Kept {
		s.rows = recs
	}
	return res
}

// command is the command line of the run: the file as the page saves it
// (a built-in's name when the text is the built-in's own).
func command(file string, opt Options) string {
	name := strings.TrimPrefix(file, "builtin:")
	if name == file {
		name = "scenario.yaml"
	}
	c := "ratesim compare " + name
	if opt.Algorithms != "" {
		c += " --algorithms " + opt.Algorithms
	}
	return c
}

// errorOf is err as the page shows it: each problem of a scenario file at
// its line and column.
func errorOf(err error) *Error {
	e := &Error{Message: err.Error()}
	var list scenarios.Errors
	var one *scenarios.Error
	switch {
	case errors.As(err, &list):
		for _, p := range list {
			e.Problems = append(e.Problems, problemOf(p))
		}
	case errors.As(err, &one):
		e.Problems = append(e.Problems, problemOf(one))
	}
	return e
}

func problemOf(p *scenarios.Error) Problem {
	return Problem{Line: p.Line, Col: p.Col, Path: p.Path, Msg: p.Msg, Text: p.Error()}
}

// recorder is the observer of one row's decisions during the run: it
// writes them straight into the columns the page receives (Row), rather
// than keeping every sim.Decision and laying them out afterwards, which
// cost the retry storms most of their time in WebAssembly
// (docs/playground.md, "Measured"). Keys are indexed by the row's own
// order of first sight; rows joins them across rows.
type recorder struct {
	r       Row
	v       []byte  // r.V
	granted []int64 // nil while every decision granted its whole cost
	keys    []string
	index   map[string]int32
	last    int32 // index of the key of the previous decision
	cluster bool  // a cluster row's: the node and when it decided
	over    bool  // more than KeepDecisions
}

func (c *recorder) Observe(d *sim.Decision) error {
	n := len(c.v)
	if n == KeepDecisions {
		*c = recorder{over: true}
		return sim.ErrStopObserving
	}
	k := c.last
	if n == 0 || c.keys[k] != d.Key {
		var ok bool
		if k, ok = c.index[d.Key]; !ok {
			if c.index == nil {
				c.index = map[string]int32{}
			}
			k = int32(len(c.keys))
			c.index[d.Key] = k
			c.keys = append(c.keys, d.Key)
		}
		c.last = k
	}
	r := &c.r
	if n == cap(c.v) {
		c.grow()
	}
	r.T = append(r.T, int64(d.Time)) // from start_ns once the run is over
	r.Key = append(r.Key, k)
	c.v = append(c.v, verdictLetter(d))
	r.Delay = append(r.Delay, int64(d.Delay))
	r.Retry = append(r.Retry, int64(d.RetryAfter))
	r.Attempt = append(r.Attempt, int32(d.Attempt))
	if d.Cost != 1 && r.Cost == nil {
		r.Cost = ones(n, cap(c.v))
	}
	if r.Cost != nil {
		r.Cost = append(r.Cost, d.Cost)
	}
	if d.Granted != 0 && c.granted == nil {
		c.granted = make([]int64, n, cap(c.v))
	}
	if c.granted != nil {
		c.granted = append(c.granted, d.Granted)
	}
	if c.cluster {
		r.Node = append(r.Node, int32(d.Node))
		r.Decided = append(r.Decided, int64(d.Decided))
	}
	return nil
}

// newRecorder is a recorder with room for size decisions.
func newRecorder(size int, cluster bool) *recorder {
	c := &recorder{cluster: cluster}
	if size > 0 {
		c.v = make([]byte, 0, size)
		c.grow()
	}
	return c
}

// grow doubles the room of every column at once: append's own growth is
// a quarter at a time for long slices, which for the columns of a retry
// storm allocated five times their size.
func (c *recorder) grow() {
	n := max(2*len(c.v), cap(c.v), 1024)
	r := &c.r
	c.v = slices.Grow(c.v, n-len(c.v))
	r.T = slices.Grow(r.T, n-len(r.T))
	r.Key = slices.Grow(r.Key, n-len(r.Key))
	r.Delay = slices.Grow(r.Delay, n-len(r.Delay))
	r.Retry = slices.Grow(r.Retry, n-len(r.Retry))
	r.Attempt = slices.Grow(r.Attempt, n-len(r.Attempt))
	if r.Cost != nil {
		r.Cost = slices.Grow(r.Cost, n-len(r.Cost))
	}
	if c.granted != nil {
		c.granted = slices.Grow(c.granted, n-len(c.granted))
	}
	if c.cluster {
		r.Node = slices.Grow(r.Node, n-len(r.Node))
		r.Decided = slices.Grow(r.Decided, n-len(r.Decided))
	}
}

// ones is n costs of 1, with room for c.
func ones(n, c int) []int64 {
	s := make([]int64, n, c)
	for i := range s {
		s[i] = 1
	}
	return s
}

// rows lays out each row's report with the decisions its recorder took,
// the keys indexed by their first sight in row order.
func rows(rep *runner.Report, recs []*recorder) ([]Row, []string) {
	start := time.Duration(rep.Report.StartNs)
	keep := len(recs) == len(rep.Report.Results)
	for _, c := range recs {
		keep = keep && c != nil && !c.over
	}
	keyIndex := map[string]int32{}
	var keys []string
	out := make([]Row, len(rep.Report.Results))
	for i := range rep.Report.Results {
		res := &rep.Report.Results[i]
		r := Row{Label: res.Label, Algorithm: res.Algorithm, Rule: rule(res.Algorithm), Window: res.Window,
			Limit: bound(res)}
		if keep {
			c := recs[i]
			// the row's key indexes, made the run's
			remap := make([]int32, len(c.keys))
			same := true
			for j, k := range c.keys {
				g, ok := keyIndex[k]
				if !ok {
					g = int32(len(keys))
					keyIndex[k] = g
					keys = append(keys, k)
				}
				remap[j] = g
				same = same && g == int32(j)
			}
			if !same {
				for j, k := range c.r.Key {
					c.r.Key[j] = remap[k]
				}
			}
			c.keys, c.index = nil, nil
			for j := range c.r.T {
				c.r.T[j] -= int64(start)
			}
			for j := range c.r.Decided {
				c.r.Decided[j] -= int64(start)
			}
			c.r.V = string(c.v)
			c.v = nil
			r.Kept = true
			r.T, r.Key, r.V, r.Delay, r.Retry = c.r.T, c.r.Key, c.r.V, c.r.Delay, c.r.Retry
			r.Attempt, r.Cost, r.Node, r.Decided = c.r.Attempt, c.r.Cost, c.r.Node, c.r.Decided
		}
		out[i] = r
	}
	return out, keys
}

func verdictLetter(d *sim.Decision) byte {
	switch d.Verdict.String() {
	case "accept":
		return 'a'
	case "delay":
		return 'd'
	}
	return 'r'
}

// bound is the most a row's rule lets one key through in a policy window:
// its limit (the window chart's line).
func bound(res *sim.Result) int64 {
	return res.Limit.Rate
}

// Int formats n for a control's value.
func Int(n int64) string { return strconv.FormatInt(n, 10) }
