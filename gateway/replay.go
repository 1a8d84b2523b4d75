package gateway

import (
	"cmp"
	"fmt"
	"net/textproto"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/scenarios"
	"github.com/ratesim/ratesim/traffic"
)

// Replay is what a replay of a trace through a gateway's config takes from
// the config (replay --gateway, docs/replay.md): the scenario its import
// makes (rows, limit, cluster; name, traffic and duration left out for
// the trace's), the key field of the log, the log's format when the
// config says it, and the statuses its limits reject with.
type Replay struct {
	// Doc is the scenario file of the config's import, without its name,
	// traffic and duration.
	Doc *scenarios.File
	// KeyField is the replay source's key-field ("" when the user set it).
	KeyField string
	// KeyFor says which limits need KeyField, for errors.
	KeyFor string
	// LogFormat and LogEscape are the log_format the config writes the
	// log with ("" when it does not say, or the user said otherwise);
	// FormatName names it in errors ("log_format check (nginx.conf:3:5)").
	LogFormat, LogEscape, FormatName string
	// TimeField and TimeUnit are the log format's time when it is a
	// number since the epoch (HAProxy's %[date(0,us)]), or the field of a
	// gateway's JSON log that holds the request's arrival (Traefik's
	// StartUTC), "" otherwise.
	TimeField, TimeUnit string
	// Attrs are the attributes each request carries from its own field
	// of the log: the keys of the limits that count by another key than
	// the request's (KeyField).
	Attrs []traffic.AttrField
	// Rejects are the HTTP statuses the config's limits reject with
	// (Rejecter).
	Rejects []int
	// TraceFormat names the trace's format in its summary when the log
	// format is the config's: the gateway's name, where the trace is read
	// as an nginx log_format.
	TraceFormat string
	// Router sends each request of the trace to the scope the gateway
	// would (route.go); nil when the config's gateway has no router here,
	// or when every request goes to one row.
	Router *Routing
	// Notes are what replay says on stderr of how it read the config
	// (a log that cannot be routed, with a single row).
	Notes []string
	// RouteNotes are what Route says on stderr of the rows it made one
	// (an nginx zone named by several locations) or left apart.
	RouteNotes []string
	// merged are the rows Route made one, for ShareDoc
	merged []mergedRows
}

// ReplayOptions say what a replay through a config reads.
type ReplayOptions struct {
	Options
	// From is the gateway's name (Supported); File the config's file.
	From, File string
	// Trace is the path of the trace replayed.
	Trace string
	// Fields are the replay source's fields the user set, by name
	// (key-field, format, log-format: then the config does not say them).
	Fields map[string]string
}

// ReadReplay reads what a replay of o.Trace through cfg takes from it:
// the rows, the field of the log that holds each request's key, the log's
// format. A key the log does not carry, limits that count by different
// keys, access logs of different formats are errors that say which flag
// or scope would do.
func ReadReplay(cfg Config, o ReplayOptions) (*Replay, error) {
	file := o.File
	so := o.Options
	so.LimitLabels = true
	im, err := cfg.Scenario(so)
	if err != nil {
		return nil, err
	}
	g := &Replay{Doc: im.File}
	if rt, ok := cfg.(Router); ok {
		if g.Router, err = rt.Routes(o.Options); err != nil {
			return nil, err
		}
		if g.Router != nil {
			g.Notes = append(g.Notes, g.Router.notes...)
		}
	}
	g.Doc.Traffic, g.Doc.Duration, g.Doc.Name = nil, scenarios.Duration{}, scenarios.String{}
	if r, ok := cfg.(Rejecter); ok {
		if g.Rejects, err = r.RejectStatuses(o.Options); err != nil {
			return nil, err
		}
	}
	keys, err := cfg.Keys(o.Options)
	if err != nil {
		return nil, err
	}
	var tmpl *traffic.LogTemplate
	userFormat := o.Fields["format"] != "" || o.Fields["log-format"] != ""
	if l, ok := cfg.(Logger); ok && !userFormat {
		lf, err := logFormatOf(l, o.Options, file, o.Trace)
		if err != nil {
			return nil, err
		}
		if lf != nil {
			g.LogFormat, g.LogEscape = lf.Text, lf.Escape
			g.TraceFormat = o.From
			g.TimeField, g.TimeUnit = lf.TimeField, lf.TimeUnit
			switch {
			case lf.Label != "":
				g.FormatName = lf.Label
			case lf.Where.Line > 0:
				g.FormatName = "log_format " + lf.Name + " (" + lf.Where.String() + ")"
			default:
				g.FormatName = "log_format " + lf.Name + " (nginx's predefined format)"
			}
			// a text nginx would refuse is an error at the log_format
			if tmpl, err = traffic.ParseLogTemplate(lf.Text, lf.Escape); err != nil {
				return nil, fmt.Errorf("%s: %v", g.FormatName, err)
			}
		}
	}
	// a trace of no log_format: where the fields are named (CSV, TSV,
	// JSON lines) each key is read from the field named after it, which a
	// combined or common log does not have; auto recognises the trace
	traceFormat := o.Fields["format"]
	var fields []string
	if tmpl == nil && (traceFormat == "" || traceFormat == "auto" || traceFormat == "jsonl" || traceFormat == "csv" || traceFormat == "tsv") && o.Trace != "" {
		format, names := (&traffic.Replay{Path: o.Trace}).Recognise()
		if traceFormat == "" || traceFormat == "auto" {
			traceFormat = format
		}
		if format == traceFormat {
			fields = names
		}
	}
	if g.Router != nil {
		if err := g.routable(tmpl, traceFormat, fields, o, file); err != nil {
			return nil, err
		}
		if g.Router != nil {
			g.Notes = append(g.Notes, g.Router.scopeNotes...)
		}
	}
	if tmpl == nil && traceFormat == "jsonl" && o.From == "traefik" && slices.Contains(fields, "StartUTC") {
		// Traefik's JSON access log: time is when the line was written,
		// after the response (and any wait of the limiter); StartUTC is
		// when the request came (pkg/middlewares/accesslog/logdata.go)
		g.TimeField = "StartUTC"
	}
	if o.Fields["key-field"] != "" {
		// the user says where the key is: every limit that counts by a
		// variable of the request counts by that field
		keyOnly(g.Doc.Algorithms)
		return g, nil
	}
	primary, ok := primaryOf(keys)
	if _, each := cfg.(keyedLimits); !each && ok && slices.ContainsFunc(keys, func(k Key) bool { return !sameKey(k, primary) }) {
		var what []string
		for _, k := range keys {
			what = append(what, fmt.Sprintf("%s (%s)", k, k.Where))
		}
		return nil, fmt.Errorf("--gateway %s: its limits count by different keys, %s: replay takes one key per request from the log, %s, and cannot give a limit the second; keep one scope with --scope (ratesim import %s lists them as row labels), or name one field for all with --key-field",
			file, strings.Join(what, ", "), keys[0], file)
	}
	if !ok {
		g.KeyField = traffic.KeyFieldNone
	} else {
		if g.KeyField, err = keyFieldOf(primary, tmpl, g.FormatName, traceFormat, o.From, fields, file); err != nil {
			return nil, err
		}
		g.KeyFor = fmt.Sprintf("the limits of %s by %s (%s)", file, primary.short(), primary.Where)
	}
	// every other key a limit counts by is an attribute of each request,
	// read from its own field of the log (docs/gateways.md)
	for _, k := range keys {
		if k.Kind == KeyGlobal || sameKey(k, primary) {
			continue
		}
		name := k.attr()
		if slices.ContainsFunc(g.Attrs, func(a traffic.AttrField) bool { return a.Name == name }) {
			continue
		}
		a := traffic.AttrField{Name: name, For: fmt.Sprintf("the limits of %s by %s (%s)", file, k.short(), k.Where), Default: k.Default}
		if k.cond != nil {
			// an HAProxy counter whose track has a condition: its key
			// where the condition holds for the line's request
			base := k
			base.cond = nil
			field, err := keyFieldOf(base, tmpl, g.FormatName, traceFormat, o.From, fields, file)
			if err != nil {
				return nil, err
			}
			if tmpl == nil {
				return nil, fmt.Errorf("the limits of %s count by %s (%s) where its track's condition holds, which replay reads from a log written with the section's log-format, not a %s trace", file, base, k.Where, traceFormat)
			}
			d, missing, how := haproxyDeriverOf(k.cond, field, tmpl)
			if missing != "" {
				return nil, fmt.Errorf("the limits of %s count by %s (%s) where its track's condition holds, which reads each request's %s, and %s does not log it: add %s to it",
					file, base, k.Where, missing, g.FormatName, how)
			}
			a.Field, a.Derive = field, d
			g.Attrs = append(g.Attrs, a)
			continue
		}
		if k.kongPath != "" {
			d, err := kongPathDeriverOf(k, tmpl, traceFormat, o.From, fields, g.FormatName, file)
			if err != nil {
				return nil, err
			}
			a.Field, a.Derive = d.vars[0], d
			g.Attrs = append(g.Attrs, a)
			continue
		}
		if k.mapped != nil && tmpl != nil && tmpl.Index(name) < 0 {
			// the log has not the map's value: replay evaluates the map
			// on the variables it reads, which the log must have
			d, missing, log := mapDeriverOf(k.mapped, tmpl)
			if missing != "" {
				m := k.mapped
				return nil, fmt.Errorf("the limits of %s count by %s (%s), the map of %s (%s), and %s does not log $%s, which the map reads: add $%s to that log_format (or log $%s itself)",
					file, k.Name, k.Where, m.Source, m.Where, g.FormatName, missing, log, m.Var)
			}
			a.Derive = d
			if a.Field = tmpl.Vars[0]; len(d.vars) > 0 {
				a.Field = d.vars[0]
			}
		} else if a.Field, err = keyFieldOf(k, tmpl, g.FormatName, traceFormat, o.From, fields, file); err != nil {
			return nil, err
		}
		g.Attrs = append(g.Attrs, a)
	}
	return g, nil
}

// Source sets the fields of a replay source that come from the config:
// the key field, the log format and its time.
func (g *Replay) Source(src *scenarios.Source) {
	if g.KeyField != "" {
		src.KeyField = scenarios.TextOf(g.KeyField)
	}
	for _, a := range g.Attrs {
		src.AttributeFields = append(src.AttributeFields, scenarios.Attribute{Name: a.Name, Value: scenarios.TextOf(a.Field)})
	}
	if g.LogFormat == "" && g.TimeField != "" && !src.TimeField.Set() {
		src.TimeField = scenarios.TextOf(g.TimeField)
	}
	if g.LogFormat != "" {
		src.LogFormat = scenarios.TextOf(g.LogFormat)
		if g.LogEscape != "" && g.LogEscape != "default" {
			src.LogEscape = scenarios.TextOf(g.LogEscape)
		}
		if g.TimeField != "" && !src.TimeField.Set() {
			src.TimeField = scenarios.TextOf(g.TimeField)
			if !src.TimeUnit.Set() && !src.TimeLayout.Set() {
				src.TimeUnit = scenarios.TextOf(g.TimeUnit)
			}
		}
	}
}

// NameTrace names the format of the scenario's traces after the gateway
// when they are read with its config's log format, and says in their
// attributes which limits of the config need each.
func (g *Replay) NameTrace(sc *scenarios.Scenario) {
	for _, src := range sc.Traffic.Sources {
		r, ok := src.(*traffic.Replay)
		if !ok {
			continue
		}
		if g.TraceFormat != "" {
			r.FormatName = g.TraceFormat
		}
		if r.KeyField == g.KeyField {
			r.KeyFor = g.KeyFor
		}
		// errors on an attribute's field say which limits need it; a
		// map's value is evaluated from the variables it reads
		for i := range r.AttrFields {
			for _, a := range g.Attrs {
				if a.Name == r.AttrFields[i].Name {
					r.AttrFields[i].For, r.AttrFields[i].Default = a.For, a.Default
					if a.Field == r.AttrFields[i].Field {
						r.AttrFields[i].Derive = a.Derive
					}
				}
			}
		}
	}
}

// logFormatOf picks the log format the config writes the trace at path
// with: the one format of the scope's access logs, or among several the
// one of the log whose file name is the trace's; nil when the scopes log
// nothing (access_log off).
func logFormatOf(l Logger, o Options, file, path string) (*LogFormat, error) {
	logs, err := l.AccessLogs(o)
	if err != nil {
		return nil, err
	}
	var formats []*LogFormat
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
	return nil, fmt.Errorf("--gateway %s: its access logs have different formats (%s) and %s is named like none of them: name the format with --log-format or --trace-format, or keep one scope with --scope",
		file, strings.Join(list, ", "), base)
}

func containsFormat(list []*LogFormat, f *LogFormat) bool {
	for _, g := range list {
		if g == f {
			return true
		}
	}
	return false
}

// keyFieldOf says which field of the log holds key k: in a log_format
// template, the variable that holds it; in a combined or common log, ip
// for the address (and referer or agent for those headers); in a trace
// whose fields are named (CSV, TSV, JSON lines: fields are its first
// line's names, when known), the first of the names the key goes by
// that the trace has (fieldNames), else the first of them. A key the log
// does not carry is an error that says which field would be needed.
func keyFieldOf(k Key, tmpl *traffic.LogTemplate, formatName, traceFormat, from string, fields []string, file string) (string, error) {
	what := fmt.Sprintf("the limits of %s count by %s (%s)", file, k, k.Where)
	switch {
	case k.Kind == KeyGlobal:
		return traffic.KeyFieldNone, nil
	case k.Kind == KeyOther && k.Attr == "" && strings.Contains(k.Name, " "):
		// a key no field of a log names (envoy's downstream connection)
		return "", fmt.Errorf("%s, which replay cannot take from a log: name the log field that holds it with --key-field", what)
	}
	if tmpl != nil {
		var want []string
		switch k.Kind {
		case KeyAddr:
			want = []string{"remote_addr", "binary_remote_addr", "realip_remote_addr"}
		case KeyHeader:
			want = []string{"http_" + strings.ReplaceAll(k.Name, "-", "_")}
		default:
			want = []string{k.attr()}
		}
		for _, v := range want {
			if tmpl.Index(v) >= 0 {
				return v, nil
			}
		}
		return "", fmt.Errorf("%s, and %s does not log it: add $%s to that log_format (or name the log field that holds it with --key-field)", what, formatName, want[0])
	}
	switch traceFormat {
	case "csv", "tsv", "jsonl":
		names := fieldNames(k, from, traceFormat)
		for _, n := range names {
			if slices.Contains(fields, n) {
				return n, nil
			}
		}
		return names[0], nil
	}
	switch {
	case k.Kind == KeyOther:
		return "", fmt.Errorf("%s, which a combined or common log does not carry: log it in a field named %s (a CSV, TSV or JSON lines trace, or an nginx log_format with --log-format), or name the log field that holds it with --key-field", what, k.attr())
	case k.Kind == KeyAddr:
		return "ip", nil
	case k.Name == "user-agent" && traceFormat != "common":
		return "agent", nil
	case k.Name == "referer" && traceFormat != "common":
		return "referer", nil
	}
	return "", fmt.Errorf("%s, which a combined or common log does not carry: log it (nginx: $http_%s in a log_format) and name that field with --key-field, or give the log's format with --log-format",
		what, strings.ReplaceAll(k.Name, "-", "_"))
}

// kongPathDeriverOf is the deriver of k, the key of a Kong plugin with
// limit_by path, from a log_format's variables or a JSON lines trace's
// fields (whose first line's names are fields): the request's path (or
// request line) and its client address. Another trace is an error.
func kongPathDeriverOf(k Key, tmpl *traffic.LogTemplate, traceFormat, from string, fields []string, formatName, file string) (*kongPathDeriver, error) {
	what := fmt.Sprintf("the limits of %s count by the path %s for a request to it, else by the client address (%s)", file, k.kongPath, k.Where)
	addr, err := keyFieldOf(Key{Kind: KeyAddr, Where: k.Where}, tmpl, formatName, traceFormat, from, fields, file)
	if err != nil {
		return nil, err
	}
	d := &kongPathDeriver{path: k.kongPath}
	var paths []string
	switch {
	case tmpl != nil:
		paths = []string{"uri", "document_uri", "request_uri", "request"}
		for _, v := range paths {
			if tmpl.Index(v) >= 0 {
				d.vars, d.request = []string{v, addr}, v == "request"
				return d, nil
			}
		}
		return nil, fmt.Errorf("%s, and %s does not log the path: add $uri (or $request) to that log_format", what, formatName)
	case traceFormat == "jsonl":
		paths = []string{"RequestPath", "path", "uri", "request_uri", "url"}
		for _, v := range paths {
			if slices.Contains(fields, v) {
				d.vars = []string{v, addr}
				return d, nil
			}
		}
		d.vars = []string{"path", addr}
		return d, nil
	}
	return nil, fmt.Errorf("%s, which replay derives from each request's path and address in a JSON lines trace or an nginx log_format (--log-format), not a %s trace", what, cmp.Or(traceFormat, "combined or common"))
}

// fieldNames are the names a field of a CSV, TSV or JSON lines trace
// that holds key k goes by, the first preferred: the name of the key's
// attribute (remote_addr, http_x_client, consumer...); for the address
// also ip (as in a combined log) and client_ip (Kong's log serializer,
// kong/pdk/log.lua); in Traefik's JSON access log (from traefik), the
// fields it writes (pkg/middlewares/accesslog/logdata.go): ClientHost,
// the address without its port, RequestHost, the host, and for a header
// that accessLog.fields.headers keeps, request_ and its name.
func fieldNames(k Key, from, traceFormat string) []string {
	names := []string{k.attr()}
	traefik := from == "traefik" && traceFormat == "jsonl"
	switch {
	case k.Kind == KeyAddr && traefik:
		names = []string{"ClientHost", "remote_addr", "ip", "client_ip"}
	case k.Kind == KeyAddr:
		names = append(names, "ip", "client_ip")
	case k.Kind == KeyHeader && traefik && k.Name == "host":
		names = append([]string{"RequestHost"}, names...)
	case k.Kind == KeyHeader && traefik:
		names = append([]string{"request_" + textproto.CanonicalMIMEHeaderKey(k.Name)}, names...)
	}
	return names
}

// CheckRejects lists the HTTP statuses that mean a rejection in a log
// that r's gateway wrote, for replay --check-field: 429, and the statuses
// r's config rejects with (nginx's limit_req_status, say). r may be nil:
// a log of no config, where 429 alone is a rejection.
func CheckRejects(r *Replay) []int {
	rejects := []int{429}
	if r == nil {
		return rejects
	}
	for _, st := range r.Rejects {
		if !slices.Contains(rejects, st) {
			rejects = append(rejects, st)
		}
	}
	return rejects
}

// keyOnly makes every all-of member of rows that counts by an attribute
// count by the request's key (by: global stays).
func keyOnly(rows []scenarios.AlgEntry) {
	for i := range rows {
		for j := range rows[i].Limits {
			if m := &rows[i].Limits[j]; m.By.Set() && m.By.Text != "global" {
				m.By = scenarios.String{}
			}
		}
	}
}
