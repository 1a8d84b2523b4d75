package cmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/ratesim/ratesim/gateway"
	"github.com/ratesim/ratesim/traffic"
)

// gatewayReplay is what replay --gateway takes from a gateway config: the
// scenario document its import gives (rows, limit, cluster; traffic and
// duration left out for the trace's), the key field of the log, the log's
// format when the config says it, and the statuses its limits reject
// with.
type gatewayReplay struct {
	doc map[string]any
	// keyField is the replay source's key-field ("" when the user set it)
	keyField string
	// logFormat and logEscape are the log_format the config writes the
	// log with ("" when it does not say, or the user said otherwise);
	// formatName names it in errors ("log_format check (nginx.conf:3:5)")
	logFormat, logEscape, formatName string
	// timeField and timeUnit are the log format's time when it is a
	// number since the epoch (HAProxy's %[date(0,us)]), "" otherwise
	timeField, timeUnit string
	rejects             []int
	// traceFormat names the trace's format in its summary when the log
	// format is the config's: the gateway's (--from), where the trace is
	// read as an nginx log_format
	traceFormat string
}

// source sets the replay source's fields that come from the config.
func (g *gatewayReplay) source(src map[string]any) {
	if g.keyField != "" {
		src["key-field"] = g.keyField
	}
	if g.logFormat != "" {
		src["log-format"] = g.logFormat
		if g.logEscape != "" && g.logEscape != "default" {
			src["log-escape"] = g.logEscape
		}
		if _, set := src["time-field"]; g.timeField != "" && !set {
			src["time-field"] = g.timeField
			if _, set := src["time-unit"]; !set && src["time-layout"] == nil {
				src["time-unit"] = g.timeUnit
			}
		}
	}
}

// readGateway reads --gateway CONFIG for a replay of the trace at path.
func readGateway(stderr io.Writer, path string, f replayFlags, burstSet bool) (*gatewayReplay, error) {
	switch {
	case f.limit != "":
		return nil, usagef("--limit: with --gateway the limits are the config's: leave --limit out")
	case burstSet:
		return nil, usagef("--burst: with --gateway the limits are the config's: leave --burst out")
	}
	file := f.gateway
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, usagef("--gateway: %v", err)
	}
	from := f.from
	if from == "" {
		if from = gateway.Guess(file, data); from == "" {
			return nil, usagef("--gateway %s: cannot tell which gateway's config this is: name it with --from (one of %s)", file, strings.Join(gateway.Supported(), ", "))
		}
		fmt.Fprintf(stderr, "ratesim: reading %s with the %s reader (--from %s)\n", file, from, from)
	}
	cfg, err := gateway.Read(from, file, data)
	if err != nil {
		return nil, usageError{err}
	}
	o := gateway.Options{Scope: f.scope}
	text, err := cfg.Scenario(o)
	if err != nil {
		return nil, usageError{err}
	}
	g := &gatewayReplay{}
	if err := yaml.Unmarshal([]byte(text), &g.doc); err != nil {
		return nil, fmt.Errorf("--gateway %s: the scenario of its import does not read back: %v", file, err)
	}
	delete(g.doc, "traffic")
	delete(g.doc, "duration")
	delete(g.doc, "name")
	if r, ok := cfg.(gateway.Rejecter); ok {
		if g.rejects, err = r.RejectStatuses(o); err != nil {
			return nil, usageError{err}
		}
	}
	keys, err := cfg.Keys(o)
	if err != nil {
		return nil, usageError{err}
	}
	var tmpl *traffic.LogTemplate
	userFormat := f.field("format") != "" || f.field("log-format") != ""
	if l, ok := cfg.(gateway.Logger); ok && !userFormat {
		lf, err := logFormatOf(l, o, file, path)
		if err != nil {
			return nil, err
		}
		if lf != nil {
			g.logFormat, g.logEscape = lf.Text, lf.Escape
			g.traceFormat = from
			g.timeField, g.timeUnit = lf.TimeField, lf.TimeUnit
			switch {
			case lf.Label != "":
				g.formatName = lf.Label
			case lf.Where.Line > 0:
				g.formatName = "log_format " + lf.Name + " (" + lf.Where.String() + ")"
			default:
				g.formatName = "log_format " + lf.Name + " (nginx's predefined format)"
			}
			// a text nginx would refuse is an error at the log_format
			if tmpl, err = traffic.ParseLogTemplate(lf.Text, lf.Escape); err != nil {
				return nil, usagef("%s: %v", g.formatName, err)
			}
		}
	}
	if f.field("key-field") != "" {
		return g, nil // the user says where the key is
	}
	if len(keys) > 1 {
		var what []string
		for _, k := range keys {
			what = append(what, fmt.Sprintf("%s (%s)", k, k.Where))
		}
		return nil, usagef("--gateway %s: its limits count by different keys, %s: replay takes one key per request; keep one scope with --scope (ratesim import %s lists them as row labels), or name one field with --key-field",
			file, strings.Join(what, ", "), file)
	}
	if len(keys) == 0 {
		g.keyField = traffic.KeyFieldNone
		return g, nil
	}
	g.keyField, err = keyFieldOf(keys[0], tmpl, g.formatName, f.field("format"), file)
	return g, err
}

// logFormatOf picks the log format the config writes the trace at path
// with: the one format of the scope's access logs, or among several the
// one of the log whose file name is the trace's; nil when the scopes log
// nothing (access_log off).
func logFormatOf(l gateway.Logger, o gateway.Options, file, path string) (*gateway.LogFormat, error) {
	logs, err := l.AccessLogs(o)
	if err != nil {
		return nil, usageError{err}
	}
	var formats []*gateway.LogFormat
	for _, a := range logs {
		if !containsFormat(formats, a.Format) {
			formats = append(formats, a.Format)
		}
	}
	switch len(formats) {
	case 0:
		return nil, nil
	case 1:
		return formats[0], nil
	}
	base := filepath.Base(path)
	for _, a := range logs {
		if filepath.Base(a.Path) == base || filepath.Base(a.Path)+".gz" == base {
			return a.Format, nil
		}
	}
	var list []string
	for _, a := range logs {
		list = append(list, fmt.Sprintf("%s in %s (%s)", a.Path, a.Format.Name, a.Where))
	}
	return nil, usagef("--gateway %s: its access logs have different formats (%s) and %s is named like none of them: name the format with --log-format or --trace-format, or keep one scope with --scope",
		file, strings.Join(list, ", "), base)
}

func containsFormat(list []*gateway.LogFormat, f *gateway.LogFormat) bool {
	for _, g := range list {
		if g == f {
			return true
		}
	}
	return false
}

// keyFieldOf says which field of the log holds key k: in a log_format
// template, the variable that holds it; in a combined or common log, ip
// for the address (and referer or agent for those headers). A key the log
// does not carry is an error that says which field would be needed.
func keyFieldOf(k gateway.Key, tmpl *traffic.LogTemplate, formatName, traceFormat, file string) (string, error) {
	what := fmt.Sprintf("the limits of %s count by %s (%s)", file, k, k.Where)
	switch k.Kind {
	case gateway.KeyGlobal:
		return traffic.KeyFieldNone, nil
	case gateway.KeyOther:
		return "", usagef("%s, which replay cannot take from a log: name the log field that holds it with --key-field", what)
	}
	if tmpl != nil {
		var want []string
		if k.Kind == gateway.KeyAddr {
			want = []string{"remote_addr", "binary_remote_addr", "realip_remote_addr"}
		} else {
			want = []string{"http_" + strings.ReplaceAll(k.Name, "-", "_")}
		}
		for _, v := range want {
			if tmpl.Index(v) >= 0 {
				return v, nil
			}
		}
		return "", usagef("%s, and %s does not log it: add $%s to that log_format (or name the log field that holds it with --key-field)", what, formatName, want[0])
	}
	switch traceFormat {
	case "csv", "tsv", "jsonl":
		return "", usagef("%s: name the %s field that holds it with --key-field", what, traceFormat)
	}
	switch {
	case k.Kind == gateway.KeyAddr:
		return "ip", nil
	case k.Name == "user-agent" && traceFormat != "common":
		return "agent", nil
	case k.Name == "referer" && traceFormat != "common":
		return "referer", nil
	}
	return "", usagef("%s, which a combined or common log does not carry: log it (nginx: $http_%s in a log_format) and name that field with --key-field, or give the log's format with --log-format",
		what, strings.ReplaceAll(k.Name, "-", "_"))
}

// field is the value of the replay source field's flag, "" when unset.
func (f *replayFlags) field(name string) string {
	if v := f.fields[name]; v != nil {
		return *v
	}
	return ""
}
