package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/expect"
	"github.com/ratesim/ratesim/gateway"
	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/sim"
	"github.com/spf13/cobra"
)

// replayFlags are the options of `ratesim replay`: the limit, the trace's
// reading options (each a replay source field of the same name, but
// --trace-format for the trace's format), and the output flags of compare.
type replayFlags struct {
	compareFlags
	limit  string
	burst  int64
	fields map[string]*string // replay source field -> flag value
	strict bool
	speed  string
	// gateway: --gateway CONFIG (several: APIM's policy scopes), read
	// --from (a guess when empty), its scope --scope; --check-field and
	// --check-first
	gateway     []string
	from, scope string
	checkField  string
	checkFirst  int
	// expect are the --expect claims, ROW: ASSERTION each
	expect []string
}

// replayStringFields are the replay source's string fields, each a flag of
// the same name ("format" is --trace-format: --format is the output's).
var replayStringFields = []struct{ field, flag, usage string }{
	{"format", "trace-format", "the trace's format: auto, combined, common, csv, tsv, jsonl"},
	{"time-field", "time-field", "the field holding the time: a header name, a 1-based column or a JSON field"},
	{"key-field", "key-field", `the field holding the key (logs: "ip"); "none" puts every request under one key`},
	{"cost-field", "cost-field", "a numeric field holding each request's cost (default: cost 1)"},
	{"time-layout", "time-layout", `a Go reference layout for the time, e.g. "2006-01-02 15:04:05.000000"`},
	{"time-unit", "time-unit", "the unit of numeric times: s, ms, us, ns"},
	{"timezone", "timezone", "the zone of times written without one (an IANA name; default UTC)"},
	{"reorder", "reorder", "reorder lines within this window (default 5m)"},
	{"spread", "spread", "spread requests stamped with one whole second: even, none, random"},
	{"start", "start", "skip the trace before this offset from its first line"},
	{"end", "end", "stop the trace at this offset from its first line"},
	{"log-format", "log-format", `an nginx log_format the trace is written with, e.g. '$msec $remote_addr "$request" $status'`},
}

func newReplayCmd() *cobra.Command {
	f := replayFlags{fields: map[string]*string{}}
	c := &cobra.Command{
		Use:   "replay FILE",
		Short: "Compare every algorithm on a recorded trace (access log, CSV, JSON lines)",
		Long: `Replays a recorded trace through every algorithm, without a scenario file, and
prints the comparison, a summary of the trace (lines read, used, malformed and
out of order, its time span, keys and peak rate) and the keys each algorithm
limited. Access logs (combined or common log format), CSV, TSV and JSON lines
are recognised by themselves; gzip is read transparently.

With --gateway CONFIG the rows and the limit are a gateway config's (as
ratesim import prints them) and each request's key is the log field the
config's limits count by; for nginx, the log_format of the config's
access_log says how the log is written, so a log written by that config
needs no other flag. --check-field holds each row against what the gateway
logged of each request ($limit_req_status, or an HTTP status). See
docs/replay.md and docs/gateways.md.`,
		Example: `  ratesim replay access.log --limit 100/s --burst 200
  ratesim replay access.log.gz --limit 10/s --key-field ip --algorithms gcra,sliding-window
  ratesim replay llm.csv --limit 90000/m --time-field TIMESTAMP --cost-field ContextTokens --key-field none
  ratesim replay access.log --gateway nginx.conf --check-field limit_req_status`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f.seedSet = c.Flags().Changed("seed")
			f.page.Command = commandLine(c)
			if len(f.gateway) == 0 && !c.Flags().Changed("limit") {
				return usagef(`required flag(s) "limit" not set (or replay through a gateway config with --gateway)`)
			}
			return runReplay(c.OutOrStdout(), c.ErrOrStderr(), args[0], f, c.Flags().Changed("burst"))
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.limit, "limit", "", "the limit every algorithm enforces, e.g. 100/s, 600/m (required without --gateway)")
	fl.Int64Var(&f.burst, "burst", 0, "the burst (default: the rate)")
	for _, sf := range replayStringFields {
		v := new(string)
		f.fields[sf.field] = v
		fl.StringVar(v, sf.flag, "", sf.usage)
	}
	fl.StringVar(&f.speed, "speed", "", "replay faster (2) or slower (0.5) than recorded")
	fl.BoolVar(&f.strict, "strict", false, "stop at the first malformed line (exit 2) instead of counting it")
	fl.StringVar(&f.format, "format", "table", "output format: "+strings.Join(formats, ", "))
	fl.StringVar(&f.algorithms, "algorithms", "", "run only these algorithms (comma-separated names)")
	fl.StringVar(&f.decisions, "decisions", "", "write every decision to this CSV file")
	fl.Uint64Var(&f.seed, "seed", 1, "the seed of random spreading")
	fl.IntVar(&f.top, "top", 5, "list this many keys per algorithm by rejections")
	fl.StringArrayVar(&f.gateway, "gateway", nil, "replay through the limits of this gateway config (nginx.conf): its rows, its limit, its keys; repeat it for Azure APIM's policy files of several scopes, outermost first")
	fl.StringVar(&f.from, "from", "", "the --gateway config's gateway: "+strings.Join(gateway.Supported(), ", ")+" (default: a guess from the file, stated on stderr)")
	fl.StringVar(&f.scope, "scope", "", "with --gateway, keep one scope (an nginx location: its row label or its location)")
	fl.StringVar(&f.checkField, "check-field", "", "hold every row against the gateway's verdict in this log field: limit_req_status, status, ...")
	fl.IntVar(&f.checkFirst, "check-first", sim.DefaultCheckFirst, "with --check-field, list this many disagreements per row")
	fl.StringArrayVar(&f.expect, "expect", nil, `a claim on the run, printed under the table as a scenario's expect: section's: "ROW: ASSERTION" (a label or all), e.g. "all: reject_pct <= 1"; repeat it for more (docs/expect.md)`)
	addOutputFlags(fl, &f.compareFlags)
	return c
}

func runReplay(stdout, stderr io.Writer, path string, f replayFlags, burstSet bool) error {
	var gw *gateway.Replay
	if len(f.gateway) > 0 {
		var err error
		if gw, err = readGateway(stderr, path, f, burstSet); err != nil {
			return err
		}
	} else {
		switch {
		case f.from != "":
			return usagef("--from: applies to --gateway only")
		case f.scope != "":
			return usagef("--scope: applies to --gateway only")
		}
	}
	if f.checkFirst < 1 {
		return usagef("--check-first: %d: want at least 1", f.checkFirst)
	}
	sc, doc, err := replayScenario(path, f, burstSet, gw)
	if err != nil {
		return err
	}
	if gw != nil {
		for _, n := range gw.RouteNotes {
			fmt.Fprintf(stderr, "ratesim: %s\n", n)
		}
	}
	f.page.Title, f.page.Scenario = pageTitle("replay", path), string(doc)
	f.seedSet = false // the seed is already the scenario's
	if f.checkField != "" {
		f.compareFlags.check = &sim.Check{Field: f.checkField, Rejects: gateway.CheckRejects(gw), First: f.checkFirst}
	}
	return compareScenario(stdout, stderr, sc, f.compareFlags)
}

// replayScenario builds the scenario of a replay from the flags: a
// scenario file of one replay source, checked as a file is, with every
// problem named by its flag (or the trace file). It returns the file's
// text too.
func replayScenario(path string, f replayFlags, burstSet bool, gw *gateway.Replay) (*scenarios.Scenario, []byte, error) {
	file := scenarios.ReplayFile(path, f.seed)
	if gw != nil {
		// the config's rows and limit, with the trace's source
		rf := file
		file = gw.Doc
		file.From, file.Name, file.Seed, file.Traffic = rf.From, rf.Name, rf.Seed, rf.Traffic
	} else {
		rate, err := scenarios.ParseRate(f.limit)
		if err != nil {
			return nil, nil, usagef("--limit: %v", err)
		}
		file.Limit = scenarios.LimitOf(rate)
		if burstSet {
			file.Limit.Burst = scenarios.IntOf(f.burst)
		}
	}
	src := "traffic[0]."
	flags := map[string]string{"limit": "--limit", "limit.rate": "--limit", "limit.per": "--limit", "limit.burst": "--burst"}
	set := func(field, flag string, v scenarios.Value) {
		flags[src+field] = flag
		if v.Set() {
			// the source has every field a flag names
			_ = file.Set(src+field, v)
		}
	}
	for _, sf := range replayStringFields {
		v := scenarios.Value{}
		if text := f.fields[sf.field]; text != nil && *text != "" {
			v = scenarios.TextOf(*text).Value
		}
		set(sf.field, "--"+sf.flag, v)
	}
	v := scenarios.Value{}
	if f.checkField != "" {
		v = scenarios.TextOf(f.checkField).Value
	}
	set("check-field", "--check-field", v)
	if gw != nil {
		gw.Source(&file.Traffic[0])
		if gw.FormatName != "" {
			flags[src+"log-format"] = gw.FormatName
		}
	}
	set("log-escape", "--log-escape", scenarios.Value{})
	v = scenarios.Value{}
	if f.strict {
		v = scenarios.BoolOf(true).Value
	}
	set("strict", "--strict", v)
	v = scenarios.Value{}
	if f.speed != "" {
		if _, err := json.Marshal(json.Number(f.speed)); err != nil {
			return nil, nil, usagef("--speed: %q: want a number, e.g. 2 or 0.5", f.speed)
		}
		v = scenarios.NumberOf(f.speed).Value
	}
	set("speed", "--speed", v)
	flags[src+"path"] = path
	if err := expectFlags(file, f.expect, flags); err != nil {
		return nil, nil, err
	}
	sc, err := scenarios.Build(file)
	if err == nil && gw != nil {
		// the trace is the gateway's, read with its config's log format;
		// an attribute's field it lacks names the limits that need it
		gw.NameTrace(sc)
	}
	if err == nil {
		err = scenarios.CheckFiles(sc)
	}
	if err == nil {
		_, err = expect.Compile(sc)
	}
	if err != nil {
		return nil, nil, usageError{flagErrors(err, flags)}
	}
	if gw != nil {
		// each row takes the requests the gateway routes to its scope
		if err := gw.Route(sc); err != nil {
			return nil, nil, usageError{err}
		}
		// the text lists the rows Route made one as that row
		if l, ok := gw.ShareDoc(file); ok {
			text, err := scenarios.MarshalLayout(file, l)
			return sc, text, err
		}
	}
	text, err := scenarios.Marshal(file)
	return sc, text, err
}

// expectFlags writes the --expect claims into the file's expect section,
// each named by its flag in errors.
func expectFlags(file *scenarios.File, claims []string, flags map[string]string) error {
	for _, c := range claims {
		row, text, ok := strings.Cut(c, ":")
		row, text = strings.TrimSpace(row), strings.TrimSpace(text)
		if !ok || row == "" || text == "" {
			return usagef("--expect: %q: want ROW: ASSERTION, a label or all and a claim (\"all: reject_pct <= 1\")", c)
		}
		i := slices.IndexFunc(file.Expect, func(r scenarios.ExpectRow) bool { return r.Row == row })
		if i < 0 {
			i = len(file.Expect)
			file.Expect = append(file.Expect, scenarios.ExpectRow{Row: row, That: scenarios.Assertions{List: []scenarios.String{}}})
		}
		that := &file.Expect[i].That
		flags[fmt.Sprintf("expect.%s[%d]", row, len(that.List))] = "--expect"
		flags["expect."+row] = "--expect"
		that.List = append(that.List, scenarios.StringOf(text))
	}
	return nil
}

// flagErrors rewrites the errors of a scenario built from flags so that
// each names the flag (or the trace file) of its field path, in the
// order of the paths.
func flagErrors(err error, flags map[string]string) error {
	list, ok := err.(scenarios.Errors)
	if !ok {
		return err
	}
	list = slices.Clone(list)
	slices.SortStableFunc(list, func(a, b *scenarios.Error) int { return strings.Compare(a.Path, b.Path) })
	var lines []string
	for _, e := range list {
		name, msg := e.Path, e.Msg
		if flag, ok := flags[e.Path]; ok {
			name = flag
		}
		if e.Path == "traffic[0].path" {
			// the message starts with the path, quoted (and shortened when
			// long): the file is named already
			if i := strings.Index(msg, `": `); strings.HasPrefix(msg, `"`) && i > 0 {
				msg = msg[i+3:]
			}
		}
		lines = append(lines, name+": "+msg)
	}
	return fmt.Errorf("%s", strings.Join(lines, "\n"))
}
