package gateway

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/traffic"
)

// NginxZone is one limit_req_zone.
type NginxZone struct {
	Name string
	Key  string // the key, as written ($binary_remote_addr)
	Size string // as written (10m); not modelled
	// Rate is nginx's rate=N r/s or r/m: N requests per Per (1s or 1m).
	Rate  int64
	PerS  int64 // 1 (r/s) or 60 (r/m)
	Where Pos
	// Map is the map whose variable is the key, nil when the key is not
	// one map's variable (nginxmap.go).
	Map *NginxMap
}

// Pos is where a directive is: file, line and column.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// NginxLimit is one limit_req as it applies in a scope.
type NginxLimit struct {
	Zone    *NginxZone
	Burst   int64 // burst=N, default 0
	Delay   int64 // delay=N, default 0
	Nodelay bool
	Text    string // the directive as written
	Where   Pos
}

// NginxScope is where requests meet limits: a location (or a server that
// has none), with the limit_req that apply there after inheritance.
type NginxScope struct {
	Server   string // the server's first server_name, or "" when none
	Location string // the location's arguments ("/api", "= /login"), "" for a server without locations
	Limits   []NginxLimit
	Status   int  // limit_req_status, default 503
	DryRun   bool // limit_req_dry_run on
	Where    Pos  // the location (or server) directive
	// Logs are the access_log that write the scope's requests, after
	// inheritance (nginx's logs/access.log in combined when no level
	// names one); none with access_log off.
	Logs []AccessLog
}

// Name is the scope's name as --scope and the rows' labels spell it:
// "SERVER LOCATION", without the parts that are empty.
func (s *NginxScope) Name() string {
	return strings.TrimSpace(s.Server + " " + s.Location)
}

// Nginx is what an nginx config limits: its zones and its scopes, in the
// order of the file.
type Nginx struct {
	File   string
	Zones  []*NginxZone
	Scopes []*NginxScope
	// Formats are the log_format of the config by name, with nginx's
	// predefined combined.
	Formats map[string]*LogFormat
	// Maps are the config's map blocks, in the order of the file.
	Maps []*NginxMap
	// http is the http block's directives (the top level's for a
	// snippet), which route_nginx.go reads its servers and locations from
	http []*directive
}

// logConf is ngx_http_log_loc_conf_t as far as replay needs it: the
// access_log of one level, and access_log off.
type logConf struct {
	logs []AccessLog
	off  bool
}

// merge is ngx_http_log_merge_loc_conf: a level with any access_log (or
// off) keeps its own; one without takes its parent's.
func (c logConf) merge(parent logConf) logConf {
	if len(c.logs) > 0 || c.off {
		return c
	}
	return parent
}

// nginxDefaultLog is where nginx writes a scope's requests when no level
// names an access_log: NGX_HTTP_LOG_PATH (logs/access.log, under the
// prefix), in combined.
const nginxDefaultLog = "logs/access.log"

// limitConf is ngx_http_limit_req_conf_t: the limits of one level, and its
// status and dry run, each unset until written.
type limitConf struct {
	limits    []NginxLimit
	hasLimits bool
	status    int // 0: unset
	dryRun    int // 0 unset, 1 off, 2 on
}

// merge is ngx_http_limit_req_merge_conf: a level without limit_req takes
// its parent's (all of them; a level with any keeps only its own), and the
// status (default 503) and dry run (default off) inherit one by one.
func (c limitConf) merge(parent limitConf) limitConf {
	if !c.hasLimits {
		c.limits, c.hasLimits = parent.limits, parent.hasLimits
	}
	if c.status == 0 {
		c.status = parent.status
	}
	if c.dryRun == 0 {
		c.dryRun = parent.dryRun
	}
	return c
}

// ReadNginx reads the limit_req configuration of an nginx config: the
// http block's (or, for a file without one, such as a conf.d snippet, the
// top level's) limit_req_zone, limit_req, limit_req_status and
// limit_req_dry_run, inherited http -> server -> location (nested
// locations too) as ngx_http_limit_req_module.c merges them.
//
// Refused, with the file, line and directive: include (import the
// included file's content), a rate or parameter nginx itself refuses, a
// zone referenced but not defined, a zone defined twice, the same zone
// twice in one level, and a config with no limit_req at all.
func ReadNginx(file string, data []byte) (*Nginx, error) {
	top, err := parseConf(file, data)
	if err != nil {
		return nil, err
	}
	combined := &LogFormat{Name: "combined", Text: traffic.CombinedTemplate, Escape: "default"}
	r := &nginxReader{n: &Nginx{File: file, Formats: map[string]*LogFormat{"combined": combined}}, zones: map[string]*NginxZone{}}
	http := top
	for _, d := range top {
		if d.name == "http" && d.hasBlock {
			http = d.block
		}
	}
	// Zones first: nginx resolves zone names once the whole config is read.
	if err := r.collectZones(top); err != nil {
		return nil, err
	}
	if err := r.collectFormats(top); err != nil {
		return nil, err
	}
	if err := r.collectMaps(top); err != nil {
		return nil, err
	}
	for _, z := range r.n.Zones {
		z.Map = r.n.zoneMap(z)
	}
	r.n.http = http
	if err := r.level(http, limitConf{}, logConf{}, "http", "", "", Pos{}); err != nil {
		return nil, err
	}
	if len(r.n.Scopes) == 0 {
		return nil, noLimits(file, "the config has no limit_req that applies to any server or location")
	}
	return r.n, nil
}

type nginxReader struct {
	n     *Nginx
	zones map[string]*NginxZone
}

func (r *nginxReader) errAt(d *directive, format string, args ...any) error {
	return &Error{File: r.n.File, Line: d.line, Col: d.col, Path: d.name, Msg: fmt.Sprintf(format, args...)}
}

func (r *nginxReader) pos(d *directive) Pos { return Pos{File: r.n.File, Line: d.line, Col: d.col} }

// collectZones reads every limit_req_zone, wherever it is written (nginx
// allows it in http only, and says so: so do we).
func (r *nginxReader) collectZones(ds []*directive) error {
	for _, d := range ds {
		if d.name == "include" {
			return r.errAt(d, "include is not supported: paste the included file's content in its place, or import that file")
		}
		if d.name == "limit_req_zone" {
			z, err := r.zone(d)
			if err != nil {
				return err
			}
			if prev, dup := r.zones[z.Name]; dup {
				return r.errAt(d, "zone %q is defined twice (also at %s)", z.Name, prev.Where)
			}
			r.zones[z.Name] = z
			r.n.Zones = append(r.n.Zones, z)
		}
		if d.hasBlock {
			if err := r.collectZones(d.block); err != nil {
				return err
			}
		}
	}
	return nil
}

// zone reads limit_req_zone KEY zone=NAME:SIZE rate=RATE [sync] as
// ngx_http_limit_req_zone does: the rate is a positive integer followed by
// r/s or r/m (without a suffix nginx reads it as r/s).
func (r *nginxReader) zone(d *directive) (*NginxZone, error) {
	if len(d.args) < 3 {
		return nil, r.errAt(d, "want limit_req_zone KEY zone=NAME:SIZE rate=Nr/s (found %d arguments)", len(d.args))
	}
	z := &NginxZone{Key: d.args[0], Where: r.pos(d)}
	for _, a := range d.args[1:] {
		switch {
		case strings.HasPrefix(a, "zone="):
			name, size, ok := strings.Cut(a[len("zone="):], ":")
			if !ok || name == "" {
				return nil, r.errAt(d, "invalid zone size %q (want zone=NAME:SIZE, e.g. zone=one:10m)", a)
			}
			if _, err := parseSize(size); err != nil {
				return nil, r.errAt(d, "invalid zone size %q (want a size like 10m, 64k or 1048576)", a)
			}
			z.Name, z.Size = name, size
		case strings.HasPrefix(a, "rate="):
			v := a[len("rate="):]
			z.PerS = 1
			switch {
			case strings.HasSuffix(v, "r/s"):
				v = strings.TrimSuffix(v, "r/s")
			case strings.HasSuffix(v, "r/m"):
				v, z.PerS = strings.TrimSuffix(v, "r/m"), 60
			}
			n, err := atoi(v)
			if err != nil || n <= 0 {
				return nil, r.errAt(d, "invalid rate %q (want rate=Nr/s or rate=Nr/m, N a whole number >= 1)", a)
			}
			z.Rate = n
		case a == "sync":
			return nil, r.errAt(d, "sync (nginx plus's zone synchronisation across a cluster) is not supported")
		default:
			return nil, r.errAt(d, "invalid parameter %q (want zone=NAME:SIZE, rate=Nr/s or rate=Nr/m)", a)
		}
	}
	if z.Name == "" {
		return nil, r.errAt(d, "no zone=NAME:SIZE")
	}
	if z.Rate == 0 {
		return nil, r.errAt(d, "no rate=Nr/s or rate=Nr/m")
	}
	return z, nil
}

// atoi is ngx_atoi: decimal digits only, no sign, no overflow.
func atoi(s string) (int64, error) {
	if s == "" {
		return 0, strconv.ErrSyntax
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// parseSize is ngx_parse_size: N, Nk or NK, Nm or NM.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1024, s[:len(s)-1]
	case strings.HasSuffix(s, "m"), strings.HasSuffix(s, "M"):
		mult, s = 1024*1024, s[:len(s)-1]
	}
	n, err := atoi(s)
	if err != nil || n > (1<<40)/mult {
		return 0, strconv.ErrSyntax
	}
	return n * mult, nil
}

// level reads one level (http, server or location) of directives, given
// its parent's merged conf, and records its scopes.
func (r *nginxReader) level(ds []*directive, parent limitConf, parentLog logConf, kind, server, location string, where Pos) error {
	var own limitConf
	var ownLog logConf
	seen := map[string]*directive{}
	for _, d := range ds {
		switch d.name {
		case "limit_req":
			l, err := r.limit(d)
			if err != nil {
				return err
			}
			if prev, dup := seen[l.Zone.Name]; dup {
				return r.errAt(d, "duplicate limit %q (also at %d:%d)", l.Zone.Name, prev.line, prev.col)
			}
			seen[l.Zone.Name] = d
			own.limits = append(own.limits, l)
			own.hasLimits = true
		case "limit_req_status":
			if len(d.args) != 1 {
				return r.errAt(d, "want one status code")
			}
			n, err := atoi(d.args[0])
			if err != nil || n < 400 || n > 599 {
				return r.errAt(d, "%q: value must be between 400 and 599", d.args[0])
			}
			own.status = int(n)
		case "limit_req_dry_run":
			if len(d.args) != 1 || (d.args[0] != "on" && d.args[0] != "off") {
				return r.errAt(d, "want on or off")
			}
			own.dryRun = 1
			if d.args[0] == "on" {
				own.dryRun = 2
			}
		case "limit_req_log_level":
			// only what nginx logs: no decision
		case "access_log":
			l, off, err := r.accessLog(d)
			if err != nil {
				return err
			}
			if off {
				ownLog.off = true
			} else {
				ownLog.logs = append(ownLog.logs, l)
			}
		}
	}
	conf := own.merge(parent)
	logs := ownLog.merge(parentLog)
	if conf.status == 0 && kind != "http" {
		conf.status = 503
	}
	var servers, locations []*directive
	for _, d := range ds {
		switch {
		case d.name == "server" && d.hasBlock && kind == "http":
			servers = append(servers, d)
		case d.name == "location" && d.hasBlock && kind != "http":
			locations = append(locations, d)
		case d.name == "server_name" && kind == "server" && server == "" && len(d.args) > 0:
			server = d.args[0]
		}
	}
	for _, s := range servers {
		if err := r.level(s.block, conf, logs, "server", "", "", r.pos(s)); err != nil {
			return err
		}
	}
	for _, l := range locations {
		name := strings.Join(l.args, " ")
		if location != "" {
			name = location + " > " + name
		}
		if err := r.level(l.block, conf, logs, "location", server, name, r.pos(l)); err != nil {
			return err
		}
	}
	// A server without locations answers its requests with its own conf;
	// a location is a scope whether or not it has locations inside (a
	// request matching it and none of them uses its conf).
	if (kind == "location" || (kind == "server" && len(locations) == 0)) && len(conf.limits) > 0 {
		scope := &NginxScope{Server: server, Location: location,
			Limits: conf.limits, Status: conf.status, DryRun: conf.dryRun == 2, Where: where}
		switch {
		case logs.off:
			// access_log off wins over any access_log beside it (the log
			// handler returns at once when off is set)
		case len(logs.logs) == 0:
			scope.Logs = []AccessLog{{Path: nginxDefaultLog, Format: r.n.Formats["combined"]}}
		default:
			scope.Logs = logs.logs
		}
		r.n.Scopes = append(r.n.Scopes, scope)
	}
	return nil
}

// limit reads limit_req zone=NAME [burst=N] [nodelay | delay=N] as
// ngx_http_limit_req does: burst and delay whole numbers >= 1, nodelay
// and delay the last written winning.
func (r *nginxReader) limit(d *directive) (NginxLimit, error) {
	l := NginxLimit{Text: d.text(), Where: r.pos(d)}
	var zone string
	for _, a := range d.args {
		switch {
		case strings.HasPrefix(a, "zone="):
			zone = a[len("zone="):]
		case strings.HasPrefix(a, "burst="):
			n, err := atoi(a[len("burst="):])
			if err != nil || n <= 0 {
				return l, r.errAt(d, "invalid burst value %q (want burst=N, N >= 1)", a)
			}
			l.Burst = n
		case strings.HasPrefix(a, "delay="):
			n, err := atoi(a[len("delay="):])
			if err != nil || n <= 0 {
				return l, r.errAt(d, "invalid delay value %q (want delay=N, N >= 1)", a)
			}
			l.Delay, l.Nodelay = n, false
		case a == "nodelay":
			l.Nodelay, l.Delay = true, 0
		default:
			return l, r.errAt(d, "invalid parameter %q (want zone=NAME, burst=N, nodelay or delay=N)", a)
		}
	}
	if zone == "" {
		return l, r.errAt(d, "no zone=NAME")
	}
	z, ok := r.zones[zone]
	if !ok {
		return l, r.errAt(d, "zone %q is unknown (no limit_req_zone defines it)", zone)
	}
	l.Zone = z
	return l, nil
}

// collectFormats reads every log_format NAME [escape=default|json|none]
// STRING...: the strings concatenated, as ngx_http_log_set_format and
// ngx_http_log_compile_format read them. nginx allows log_format in http
// only; the text is compiled when a replay reads a log with it.
func (r *nginxReader) collectFormats(ds []*directive) error {
	for _, d := range ds {
		if d.name == "log_format" {
			if len(d.args) < 2 {
				return r.errAt(d, "want log_format NAME [escape=default|json|none] STRING ... (found %d arguments)", len(d.args))
			}
			f := &LogFormat{Name: d.args[0], Escape: "default", Where: r.pos(d)}
			if prev, dup := r.n.Formats[f.Name]; dup {
				if prev.Where.Line == 0 {
					return r.errAt(d, "duplicate log_format name %q (nginx predefines combined)", f.Name)
				}
				return r.errAt(d, "duplicate log_format name %q (also at %s)", f.Name, prev.Where)
			}
			args := d.args[1:]
			if e, ok := strings.CutPrefix(args[0], "escape="); ok {
				switch e {
				case "default", "json", "none":
				default:
					return r.errAt(d, "unknown log format escaping %q (want escape=default, json or none)", e)
				}
				f.Escape, args = e, args[1:]
			}
			f.Text = strings.Join(args, "")
			r.n.Formats[f.Name] = f
		}
		if d.hasBlock {
			if err := r.collectFormats(d.block); err != nil {
				return err
			}
		}
	}
	return nil
}

// accessLog reads access_log off or access_log PATH [FORMAT [PARAMS]]
// as ngx_http_log_set_log does (the format combined when none is named);
// buffer=, gzip, flush= and if= do not change what a line holds and are
// not read (if= may leave some requests out of the log).
func (r *nginxReader) accessLog(d *directive) (AccessLog, bool, error) {
	if len(d.args) == 0 {
		return AccessLog{}, false, r.errAt(d, "want access_log PATH [FORMAT] or access_log off")
	}
	if d.args[0] == "off" {
		if len(d.args) > 1 {
			return AccessLog{}, false, r.errAt(d, "invalid parameter %q (access_log off takes none)", d.args[1])
		}
		return AccessLog{}, true, nil
	}
	l := AccessLog{Path: d.args[0], Format: r.n.Formats["combined"], Where: r.pos(d)}
	if len(d.args) > 1 && !strings.Contains(d.args[1], "=") && d.args[1] != "gzip" {
		f, ok := r.n.Formats[d.args[1]]
		if !ok {
			return l, false, r.errAt(d, "unknown log format %q (no log_format defines it)", d.args[1])
		}
		l.Format = f
	}
	return l, false, nil
}
