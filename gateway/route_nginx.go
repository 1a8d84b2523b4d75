package gateway

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/traffic"
)

// nginx's routing, as ngx_http_core_module documents it
// (https://nginx.org/en/docs/http/ngx_http_core_module.html#location and
// #server_name) and src/http/ngx_http_core_module.c does it
// (ngx_http_core_find_location, ngx_http_core_find_static_location):
//
//   - The server: the one whose server_name is the request's host
//     exactly, else the longest wildcard name starting with *, else the
//     longest ending with *, else the first regular expression (~) that
//     matches, in order; else the default server (listen ... default_server,
//     or the first server).
//   - The location, among a level's locations: an exact match (= /path)
//     ends the search; else the longest prefix that starts the path is
//     remembered, and its nested locations are searched the same way;
//     unless that prefix is ^~, the regular expressions of the level (~
//     case-sensitive, ~* case-insensitive) are then tried in the order of
//     the config, the first that matches winning (its nested locations
//     searched in turn); else the remembered prefix is used. Named
//     locations (@name) take no request by the path.
//   - A request that no location takes is the server's: a route only
//     when the server has no location (its scope), else no route.

// nginxServer is one server block as the router matches it.
type nginxServer struct {
	names  []string // server_name, as written
	regexs []*regexp.Regexp
	def    bool // listen ... default_server
	locs   []*nginxLoc
	route  int // the route of a request no location takes, -1 when none
}

// nginxLoc is one location.
type nginxLoc struct {
	op    string // "", "=", "^~", "~", "~*"
	path  string
	re    *regexp.Regexp
	route int
	locs  []*nginxLoc
}

// Routes returns nginx's routing of the config's servers and locations
// (Router): each location is a route named as its row is ("SERVER
// LOCATION"), limited when it is a scope of o.
func (n *Nginx) Routes(o Options) (*Routing, error) {
	scopes, err := n.pick(o.Scope)
	if err != nil {
		return nil, err
	}
	limited := map[string]bool{}
	for _, s := range scopes {
		limited[scopeLabel(s.Name())] = true
	}
	t := &Routing{needs: traffic.NeedPath}
	var servers []*nginxServer
	for _, d := range n.http {
		if d.name != "server" || !d.hasBlock {
			continue
		}
		srv := &nginxServer{route: -1}
		name := ""
		for _, sd := range d.block {
			switch sd.name {
			case "server_name":
				for _, a := range sd.args {
					if name == "" {
						name = a
					}
					if strings.HasPrefix(a, "~") {
						re, err := nginxRegexp(n.File, sd, a[1:], false)
						if err != nil {
							return nil, err
						}
						srv.regexs = append(srv.regexs, re)
						continue
					}
					srv.names = append(srv.names, strings.ToLower(a))
				}
			case "listen":
				srv.def = srv.def || slices.Contains(sd.args, "default_server") || slices.Contains(sd.args, "default")
			}
		}
		if srv.locs, err = n.locations(t, d.block, name, "", limited); err != nil {
			return nil, err
		}
		if len(srv.locs) == 0 {
			srv.route = t.add(scopeLabel(name), limited[scopeLabel(name)])
		}
		servers = append(servers, srv)
	}
	if len(servers) > 1 {
		t.needs |= traffic.NeedHost
	}
	if len(servers) == 1 && len(t.routes) == 1 && takesAll(servers[0]) {
		return nil, nil // one route takes every request: nothing to route
	}
	t.match = func(req *traffic.Request) int {
		srv := nginxPickServer(servers, string(req.Host))
		if srv == nil {
			return -1
		}
		if r, ok, _ := nginxFind(srv.locs, string(req.Path)); ok {
			return r
		}
		return srv.route
	}
	var zones []string
	users := map[string][]string{}
	rows := map[string][]string{} // each zone's rows, by label
	for _, s := range scopes {
		label := scopeLabel(s.Name())
		if i := slices.IndexFunc(t.routes, func(r traffic.Route) bool { return r.Name == label }); i >= 0 {
			t.row(label, i)
		}
		for _, l := range s.Limits {
			z := fmt.Sprintf("zone=%s (%s:%d)", l.Zone.Name, filepath.Base(n.File), l.Zone.Where.Line)
			if !slices.Contains(zones, z) {
				zones = append(zones, z)
			}
			users[z] = append(users[z], fmt.Sprintf("%s (burst=%d)", label, l.Burst))
			rows[z] = append(rows[z], label)
		}
	}
	for _, z := range zones {
		if len(rows[z]) > 1 {
			note := sharedNote(z, users[z], "nginx keeps one state per key in a zone, which every location that names it charges, each checking its own burst")
			t.shares = append(t.shares, sharedLimit{name: z, rows: rows[z], note: note, perRoute: true, users: strings.Join(users[z], ", "),
				how: "with one state per key as nginx keeps it, each request checked with its location's burst"})
		}
	}
	if o.Scope != "" {
		n.scopeShares(t, scopes, o.Scope)
	}
	return t, nil
}

// scopeShares marks the routes of the locations that --scope left out
// whose limit_req name a zone of a picked scope: nginx charges the zone's
// one state per key with their requests too, which the picked row does
// not see (counted under the table, and said on stderr).
func (n *Nginx) scopeShares(t *Routing, picked []*NginxScope, scope string) {
	for _, s := range picked {
		label := scopeLabel(s.Name())
		for _, l := range s.Limits {
			z := fmt.Sprintf("zone=%s (%s:%d)", l.Zone.Name, filepath.Base(n.File), l.Zone.Where.Line)
			var others []string
			for _, o := range n.Scopes {
				j := slices.IndexFunc(o.Limits, func(ol NginxLimit) bool { return ol.Zone == l.Zone })
				if o == s || j < 0 {
					continue
				}
				other := scopeLabel(o.Name())
				others = append(others, fmt.Sprintf("%s (burst=%d)", other, o.Limits[j].Burst))
				if i := slices.IndexFunc(t.routes, func(r traffic.Route) bool { return r.Name == other }); i >= 0 && t.routes[i].Shares == "" {
					t.routes[i].Shares = z + " with " + label
				}
			}
			if len(others) > 0 {
				t.scopeNotes = append(t.scopeNotes, fmt.Sprintf("--scope %s: %s is also named by %s: nginx charges its one state per key with their requests too, which the row %s does not see, so it may admit more than nginx did; their requests are counted under the table (leave --scope out to replay them in one row)",
					scope, z, strings.Join(others, ", "), label))
			}
		}
	}
}

// takesAll reports whether a server sends every request to one route: it
// has no location, or one location / with none nested.
func takesAll(s *nginxServer) bool {
	return len(s.locs) == 0 || len(s.locs) == 1 && s.locs[0].op == "" && s.locs[0].path == "/" && len(s.locs[0].locs) == 0
}

// scopeLabel is the row label of a scope named name (Scenario).
func scopeLabel(name string) string {
	if name == "" {
		return "server"
	}
	return name
}

// locations reads the locations of a level, named as the reader names
// their scopes.
func (n *Nginx) locations(t *Routing, ds []*directive, server, outer string, limited map[string]bool) ([]*nginxLoc, error) {
	var out []*nginxLoc
	for _, d := range ds {
		if d.name != "location" || !d.hasBlock || len(d.args) == 0 {
			continue
		}
		name := strings.Join(d.args, " ")
		if outer != "" {
			name = outer + " > " + name
		}
		l := &nginxLoc{}
		switch {
		case len(d.args) == 2:
			l.op, l.path = d.args[0], d.args[1]
		case len(d.args) == 1 && strings.HasPrefix(d.args[0], "@"):
			continue // a named location: no request comes by its path
		case len(d.args) == 1:
			// nginx reads "=/a" and "~\.php$" written without a space too
			a := d.args[0]
			for _, op := range []string{"=", "^~", "~*", "~"} {
				if strings.HasPrefix(a, op) && len(a) > len(op) {
					l.op, a = op, a[len(op):]
					break
				}
			}
			l.path = a
		default:
			return nil, &Error{File: n.File, Line: d.line, Col: d.col, Path: d.name, Msg: "want location [ = | ~ | ~* | ^~ ] URI"}
		}
		switch l.op {
		case "", "=", "^~":
		case "~", "~*":
			re, err := nginxRegexp(n.File, d, l.path, l.op == "~*")
			if err != nil {
				return nil, err
			}
			l.re = re
		default:
			return nil, &Error{File: n.File, Line: d.line, Col: d.col, Path: d.name, Msg: fmt.Sprintf("%q: not a location modifier (want =, ~, ~* or ^~)", l.op)}
		}
		label := scopeLabel(strings.TrimSpace(server + " " + name))
		l.route = t.add(label, limited[label])
		var err error
		if l.locs, err = n.locations(t, d.block, server, name, limited); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// nginxRegexp compiles an nginx regular expression (PCRE) as Go's RE2:
// one RE2 cannot read (a lookaround, a backreference) is an error at its
// directive.
func nginxRegexp(file string, d *directive, expr string, fold bool) (*regexp.Regexp, error) {
	src := expr
	if fold {
		src = "(?i)" + src
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, &Error{File: file, Line: d.line, Col: d.col, Path: d.name,
			Msg: fmt.Sprintf("%q: a regular expression ratesim cannot read (%v); RE2 has no lookaround or backreference", expr, err)}
	}
	return re, nil
}

// nginxPickServer picks the server of host (ngx_http_find_virtual_server):
// exact name, longest leading wildcard, longest trailing wildcard, first
// regex, else the default server.
func nginxPickServer(servers []*nginxServer, host string) *nginxServer {
	if len(servers) == 0 {
		return nil
	}
	if host != "" {
		for _, s := range servers {
			if slices.Contains(s.names, host) {
				return s
			}
		}
		var best *nginxServer
		bestLen := 0
		for _, s := range servers {
			for _, n := range s.names {
				// *.example.com, and .example.com, which takes
				// example.com itself too
				var ok bool
				switch {
				case strings.HasPrefix(n, "*."):
					ok = strings.HasSuffix(host, n[1:])
				case strings.HasPrefix(n, "."):
					ok = strings.HasSuffix(host, n) || host == n[1:]
				}
				if ok && len(n) > bestLen {
					best, bestLen = s, len(n)
				}
			}
		}
		if best != nil {
			return best
		}
		for _, s := range servers {
			for _, n := range s.names {
				if prefix, ok := strings.CutSuffix(n, "*"); ok && strings.HasPrefix(host, prefix) && len(n) > bestLen {
					best, bestLen = s, len(n)
				}
			}
		}
		if best != nil {
			return best
		}
		for _, s := range servers {
			for _, re := range s.regexs {
				if re.MatchString(host) {
					return s
				}
			}
		}
	}
	for _, s := range servers {
		if s.def {
			return s
		}
	}
	return servers[0]
}

// nginxFind finds the location of path among locs as
// ngx_http_core_find_location does: its route, whether any location took
// it, and whether the search ends there (nginx's NGX_OK: an exact match,
// or a regex; a prefix found in nested locations lets the outer level
// still try its regexes).
func nginxFind(locs []*nginxLoc, path string) (route int, found, final bool) {
	var best *nginxLoc // the longest prefix
	for _, l := range locs {
		switch l.op {
		case "=":
			if path == l.path {
				return l.route, true, true
			}
		case "", "^~":
			if strings.HasPrefix(path, l.path) && (best == nil || len(l.path) > len(best.path)) {
				best = l
			}
		}
	}
	route, noregex := -1, false
	if best != nil {
		route, found, noregex = best.route, true, best.op == "^~"
		r, ok, fin := nginxFind(best.locs, path)
		if ok {
			route = r
		}
		if fin {
			return route, true, true
		}
	}
	if !noregex {
		for _, l := range locs {
			if l.re != nil && l.re.MatchString(path) {
				if r, ok, _ := nginxFind(l.locs, path); ok {
					return r, true, true
				}
				return l.route, true, true
			}
		}
	}
	return route, found, false
}

var _ Router = (*Nginx)(nil)
