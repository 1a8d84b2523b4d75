package gateway

import (
	"fmt"
	"strconv"
	"strings"
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
}

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
	r := &nginxReader{n: &Nginx{File: file}, zones: map[string]*NginxZone{}}
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
	if err := r.level(http, limitConf{}, "http", "", "", Pos{}); err != nil {
		return nil, err
	}
	if len(r.n.Scopes) == 0 {
		return nil, &Error{File: file, Msg: "no limits at all: the config has no limit_req that applies to any server or location"}
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
func (r *nginxReader) level(ds []*directive, parent limitConf, kind, server, location string, where Pos) error {
	var own limitConf
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
		}
	}
	conf := own.merge(parent)
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
		if err := r.level(s.block, conf, "server", "", "", r.pos(s)); err != nil {
			return err
		}
	}
	for _, l := range locations {
		name := strings.Join(l.args, " ")
		if location != "" {
			name = location + " > " + name
		}
		if err := r.level(l.block, conf, "location", server, name, r.pos(l)); err != nil {
			return err
		}
	}
	// A server without locations answers its requests with its own conf;
	// a location is a scope whether or not it has locations inside (a
	// request matching it and none of them uses its conf).
	if (kind == "location" || (kind == "server" && len(locations) == 0)) && len(conf.limits) > 0 {
		r.n.Scopes = append(r.n.Scopes, &NginxScope{Server: server, Location: location,
			Limits: conf.limits, Status: conf.status, DryRun: conf.dryRun == 2, Where: where})
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
