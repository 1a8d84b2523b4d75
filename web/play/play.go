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
	"strconv"
	"strings"
	"time"

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
	o := runner.Options{
		Algorithms:    opt.Algorithms,
		Budget:        Budget(),
		Windows:       true,
		KeepDecisions: KeepDecisions,
		Note: func(sk scenarios.Skipped) {
			res.Notes = append(res.Notes, fmt.Sprintf("note: %s left out: %s", sk.Name, sk.Reason))
		},
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
	res.Rows, res.Keys = rows(rep)
	s.keys = res.Keys
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

// rows lays the report's decisions out by column, the keys by index.
func rows(rep *runner.Report) ([]Row, []string) {
	start := time.Duration(rep.Report.StartNs)
	keyIndex := map[string]int32{}
	var keys []string
	out := make([]Row, len(rep.Report.Results))
	for i := range rep.Report.Results {
		res := &rep.Report.Results[i]
		r := Row{Label: res.Label, Algorithm: res.Algorithm, Rule: rule(res.Algorithm), Window: res.Window,
			Limit: bound(res)}
		if rep.Decisions != nil {
			r.Kept = true
			ds := rep.Decisions[i]
			var v strings.Builder
			anyCost := false
			for j := range ds {
				d := &ds[j]
				k, ok := keyIndex[d.Key]
				if !ok {
					k = int32(len(keys))
					keyIndex[d.Key] = k
					keys = append(keys, d.Key)
				}
				r.T = append(r.T, int64(d.Time-start))
				r.Key = append(r.Key, k)
				v.WriteByte(verdictLetter(d))
				r.Delay = append(r.Delay, int64(d.Delay))
				r.Retry = append(r.Retry, int64(d.RetryAfter))
				r.Attempt = append(r.Attempt, int32(d.Attempt))
				r.Cost = append(r.Cost, d.Cost)
				anyCost = anyCost || d.Cost != 1
				if rep.Config.Cluster != nil {
					r.Node = append(r.Node, int32(d.Node))
					r.Decided = append(r.Decided, int64(d.Decided-start))
				}
			}
			r.V = v.String()
			if !anyCost {
				r.Cost = nil
			}
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
